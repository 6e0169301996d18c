//! `reins runs` on a run id that is wrong for the command: the message says what is wrong
//! with it, not only that nothing waits.

use crate::common::{AgentDir, model_table, outcome};

#[test]
fn deciding_a_run_that_is_not_stored_says_so() {
    let agent = AgentDir::new(&model_table("http://127.0.0.1:9"));
    for command in [
        &["runs", "approve", "AGENT", "run-nope"][..],
        &["runs", "edit", "AGENT", "run-nope", "--args", "{}"],
        &["runs", "deny", "AGENT", "run-nope", "--message", "no"],
    ] {
        let (code, _, stderr) = outcome(agent.reins(command));
        assert_eq!(code, 1, "{command:?}: {stderr}");
        assert!(
            stderr.contains("no run `run-nope` is stored"),
            "{command:?}: {stderr}"
        );
    }
}

#[test]
fn deciding_a_run_that_is_not_suspended_says_what_it_is() {
    // No model answers: the run fails at its first model call.
    let agent = AgentDir::new(&format!(
        "default_prompt = \"hi\"\n{}",
        model_table("http://127.0.0.1:9")
    ));
    let (code, _, stderr) = outcome(agent.reins(&["run", "AGENT"]).env("REINS_TEST_KEY", "k"));
    assert_eq!(code, 1, "{stderr}");
    let (_, stdout, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    let run = stdout
        .split('"')
        .find(|word| word.starts_with("run-"))
        .unwrap_or_else(|| panic!("a run id in {stdout}"))
        .to_owned();
    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &run]));
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("(its status: failed)"), "{stderr}");
}
