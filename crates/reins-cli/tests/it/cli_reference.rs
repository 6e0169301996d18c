//! docs/CLI.md, the reference scripts read, names every `--json` event and field the command
//! prints and every exit code it exits with: checked against real runs.

use crate::common::fakellm::FakeLlm;
use crate::common::{events, notes_agent, outcome, save_note_rules};
use serde_json::Value;

/// The reference's text.
fn reference() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/CLI.md");
    std::fs::read_to_string(path).expect("docs/CLI.md")
}

/// Asserts that the reference names `value`'s keys (each as `` `key` ``), and `what`.
fn documented(reference: &str, what: &str, value: &Value) {
    assert!(
        reference.contains(&format!("`{what}`")),
        "{what} is not documented"
    );
    for key in value
        .as_object()
        .into_iter()
        .flat_map(|object| object.keys())
    {
        assert!(
            reference.contains(&format!("`{key}`")),
            "`{key}` of {what} is not documented"
        );
    }
}

#[test]
fn the_reference_names_every_event_field_and_exit_code_a_run_prints() {
    let reference = reference();
    let ask = "[hooks.approval]\nrules = [{ tool = \"save_note\", action = \"ask\" }]\n";
    let limited = "[limits]\nmax_turns = 1\n";
    let mut run = None;
    let mut servers = Vec::new();
    for (extra, code) in [("", 0), (ask, 3), (limited, 4)] {
        // A server of its own: fakellm remembers a conversation's tool results.
        let server = FakeLlm::start(&save_note_rules("", ""));
        let agent = notes_agent(&server.openai_url(), extra);
        let (exit, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "--json"]));
        assert_eq!(exit, code, "{stdout}\n{stderr}");
        assert!(reference.contains(&format!("| {code} |")), "exit {code}");
        for event in events(&stdout) {
            let name = event["event"].as_str().unwrap_or_default().to_owned();
            documented(&reference, &name, &event);
        }
        if code == 3 {
            run = Some(agent);
        }
        servers.push(server);
    }

    // A waiting run's listing and record, with its decision trail.
    let agent = run.expect("the suspended run's agent");
    let (_, listed, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    let listed = events(&listed).pop().expect("a run");
    documented(&reference, "reins runs list --json", &listed);
    let id = listed["run"].as_str().expect("its id").to_owned();
    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &id]));
    assert_eq!(code, 0, "{stderr}");
    let (_, shown, _) = outcome(agent.reins(&["runs", "show", "AGENT", &id, "--json"]));
    let shown: Value = serde_json::from_str(&shown).expect("one JSON object");
    documented(&reference, "reins runs show --json", &shown);
    documented(&reference, "decisions", &shown["decisions"][0]);
}
