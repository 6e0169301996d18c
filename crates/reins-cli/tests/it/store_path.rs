//! A `[store] sqlite` that names a directory (`sqlite = "runs"` meant as "keep the runs in
//! `runs/`") is a mistake of the agent file: shown at its line, with the file meant, by
//! `reins check` and by every command before it opens the store, instead of SQLite's
//! "unable to open database file" once a command runs.

use crate::common::{AgentDir, model_table, outcome};

#[test]
fn a_store_that_names_a_directory_is_shown_at_its_line() {
    let agent = AgentDir::new(&format!(
        "default_prompt = \"hi\"\n{}\n[store]\nsqlite = \"runs\"\n",
        model_table("http://127.0.0.1:9")
    ));
    std::fs::create_dir(agent.dir.path().join("runs")).expect("the directory");
    for command in [
        &["check", "AGENT"][..],
        &["runs", "list", "AGENT"],
        &["run", "AGENT"],
    ] {
        let (code, _, stderr) = outcome(agent.keyed(command));
        assert_eq!(code, 2, "{command:?}: {stderr}");
        assert!(
            stderr.contains("agent.toml:")
                && stderr.contains("error: `sqlite` names the directory"),
            "{command:?}: {stderr}"
        );
        assert!(
            stderr.contains("`sqlite = \"runs/runs.sqlite\"`"),
            "{command:?}: {stderr}"
        );
    }
}
