//! `reins check` of a local agent: the model file it would run on exists, whether the agent
//! file names it (`path`) or the `REINS_MODEL` variable does.

use crate::common::{AgentDir, outcome};

/// A local agent without `path` runs on the file `REINS_MODEL` names: `reins check` says when
/// that file does not exist, and that the path came from the variable.
#[test]
fn check_says_when_the_model_file_reins_model_names_does_not_exist() {
    let agent = AgentDir::new("[model]\nprovider = \"local\"\n");
    let missing = agent.dir.path().join("big.gguf");
    let missing = missing.to_string_lossy();
    let (code, _, stderr) = outcome(
        agent
            .reins(&["check", "AGENT"])
            .env("REINS_MODEL", missing.as_ref()),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "model file {missing} does not exist (the REINS_MODEL"
        )),
        "{stderr}"
    );
    // With the file there, nothing is said of it.
    std::fs::write(agent.dir.path().join("big.gguf"), "GGUF").expect("write");
    let (_, _, stderr) = outcome(
        agent
            .reins(&["check", "AGENT"])
            .env("REINS_MODEL", missing.as_ref()),
    );
    assert!(!stderr.contains("REINS_MODEL"), "{stderr}");
}
