//! A store the user may only read: `reins runs list|show|checkpoints` read it (they write
//! nothing), and a command that writes says once, with why, that it cannot, instead of
//! SQLite's "unable to open database file" or "attempt to write a readonly database".
//!
//! The root user may write whatever the permissions say: run as root (as CI does), the
//! commands run as `nobody` through `setpriv`; a test says why it did nothing only where
//! neither is possible.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, model_table, outcome};
use std::os::unix::fs::PermissionsExt;

/// `line` (`reins ...` in the agent's directory) as a user that is not root: `nobody` via
/// `setpriv` when the tests run as root. `None` (said why) where that cannot be.
fn as_reader(agent: &AgentDir, line: &str) -> Option<(i32, String, String)> {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0");
    let line = if root {
        let setpriv = std::process::Command::new("setpriv")
            .arg("--version")
            .output();
        if setpriv.is_err() {
            println!("skipped: run as root, and no `setpriv` to run as another user");
            return None;
        }
        line.replacen(
            "reins ",
            "setpriv --reuid=65534 --regid=65534 --clear-groups \"$REINS_BINARY\" ",
            1,
        )
    } else {
        line.to_owned()
    };
    Some(outcome(agent.shell(&line).env("REINS_TEST_KEY", "k")))
}

fn chmod(path: &std::path::Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

#[test]
fn a_store_the_user_may_only_read_is_listed_and_shown() {
    let server = FakeLlm::start(
        "version: 1\nrules:\n  - name: answer\n    when:\n      messages_contain: \"hi\"\n    \
         respond:\n      content: \"Hello.\"\n",
    );
    let agent = AgentDir::new(&format!(
        "name = \"reader\"\n{}\n[store]\nsqlite = \"runs/runs.sqlite\"\n",
        model_table(&server.openai_url())
    ));
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "hi", "--json"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let run = crate::common::events(&stdout)[0]["run"]
        .as_str()
        .expect("the run's id")
        .to_owned();
    // Readable by all, writable by none: the directory, the file, the agent file.
    let runs = agent.dir.path().join("runs");
    chmod(&runs.join("runs.sqlite"), 0o444);
    chmod(&runs, 0o555);
    chmod(agent.dir.path(), 0o755);
    chmod(&agent.file, 0o644);

    for (line, shows) in [
        ("reins runs list agent.toml".to_owned(), run.clone()),
        (
            format!("reins runs show agent.toml {run}"),
            "Hello.".to_owned(),
        ),
        (
            format!("reins runs checkpoints agent.toml {run}"),
            "completed".to_owned(),
        ),
    ] {
        let Some((code, stdout, stderr)) = as_reader(&agent, &line) else {
            return;
        };
        assert_eq!(code, 0, "{line}: {stderr}");
        assert!(stdout.contains(&shows), "{line}: {stdout}\n{stderr}");
    }
    assert_eq!(
        std::fs::read_dir(&runs).expect("the directory").count(),
        1,
        "nothing was written beside the file"
    );
    chmod(&runs, 0o755);
}

#[test]
fn a_store_directory_the_user_may_not_write_is_said_once_with_why() {
    let agent = AgentDir::new(&format!(
        "name = \"writer\"\n{}\n[store]\nsqlite = \"runs/runs.sqlite\"\n",
        model_table("http://127.0.0.1:9")
    ));
    let runs = agent.dir.path().join("runs");
    std::fs::create_dir(&runs).expect("the directory");
    chmod(&runs, 0o555);
    chmod(agent.dir.path(), 0o755);
    chmod(&agent.file, 0o644);
    let Some((code, _, stderr)) = as_reader(&agent, "reins run agent.toml hi") else {
        return;
    };
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stderr.matches("runs.sqlite").count(), 1, "{stderr}");
    assert!(
        stderr.contains("cannot open the run store")
            && stderr.contains("permission denied")
            && stderr.contains("[store] sqlite"),
        "{stderr}"
    );
    chmod(&runs, 0o755);
}
