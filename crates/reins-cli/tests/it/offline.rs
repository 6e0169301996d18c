//! The README's main job, `scripts/demo.sh`: `reins run` on the offline example agent on the
//! embedded local model (SmolLM2-135M by default; `--model` another GGUF): its first turn is
//! made to call `write_note`, the approval shows in the terminal, and the note is written
//! only after it is approved; a question about the time goes to the MCP time server
//! (`mcp-server-time`) with no approval.

use crate::common::{AgentDir, outcome, tool_results};
use reins_test_servers::Tmux;
use serde_json::Value;

fn example_agent() -> AgentDir {
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("agents")
        .join("offline-assistant.toml");
    AgentDir::new(&std::fs::read_to_string(example).expect("the example agent"))
}

#[test]
fn the_offline_example_asks_the_mcp_time_server_for_the_time() {
    let model = reins::providers::local::model_path_from_env()
        .unwrap_or_else(|error| panic!("the model is not available: {error}"));
    let agent = example_agent();
    let model = model.display().to_string();
    let (code, stdout, stderr) = outcome(agent.reins(&[
        "run",
        "AGENT",
        "What time is it in UTC?",
        "--model",
        &model,
        "--json",
    ]));
    assert_eq!(code, 0, "{stderr}\n{stdout}");
    let events: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let called: Vec<&Value> = events
        .iter()
        .filter(|event| event["event"] == "tool_call")
        .collect();
    assert_eq!(called.len(), 1, "{stdout}");
    assert_eq!(called[0]["tool"], "get_current_time", "{stdout}");
    let result = tool_results(&events)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no tool result: {stdout}"));
    assert_eq!(result["tool"], "get_current_time");
    // Whatever zone the small model wrote, the answer is the server's: a time it read, or its
    // complaint about the zone.
    let text = result["result"].as_str().unwrap_or_default().to_lowercase();
    assert!(
        text.contains("datetime") || text.contains("timezone"),
        "{result}"
    );
    assert!(
        events.iter().any(|event| event["event"] == "done"),
        "{stdout}"
    );
    assert!(
        !agent.dir.path().join("notes.txt").exists(),
        "the time route writes no note"
    );
}

#[test]
fn the_offline_example_writes_a_note_after_approval_in_the_terminal() {
    let model = reins::providers::local::model_path_from_env()
        .unwrap_or_else(|error| panic!("the model is not available: {error}"));
    let agent = example_agent();
    let reins = env!("CARGO_BIN_EXE_reins");
    let tmux = Tmux::start(&format!(
        "cd '{dir}' && '{reins}' run '{file}' --model '{model}'; echo EXIT=$?; sleep 600",
        dir = agent.dir.path().display(),
        model = model.display(),
        file = agent.file.display(),
    ));
    let screen = tmux.wait_for("(a)pprove, (d)eny, (e)dit arguments?");
    assert!(
        screen.contains("the model wants to run `write_note`"),
        "{screen}"
    );
    assert!(
        !agent.dir.path().join("notes.txt").exists(),
        "nothing is written before the approval"
    );
    tmux.type_line("a");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    let notes = std::fs::read_to_string(agent.dir.path().join("notes.txt")).expect("notes.txt");
    assert!(!notes.trim().is_empty(), "{screen}");
}
