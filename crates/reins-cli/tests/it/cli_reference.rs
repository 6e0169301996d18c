//! docs/CLI.md, the reference scripts read, names every `--json` event and field the command
//! prints and every exit code it exits with: checked against real runs.

use crate::common::fakellm::FakeLlm;
use crate::common::{
    TIME_SERVER_TOOLS, events, model_table, notes_agent, outcome, save_note_rules,
    waiting_save_note,
};
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

/// A run that cannot start ends with the `error` event too (its `run` null: none started),
/// whatever stopped it, and exits as the reference says: the command's failure is never only
/// a line on stderr for a script reading the events.
#[test]
fn a_json_run_that_cannot_start_ends_with_the_documented_error_event() {
    let reference = reference();
    let server = FakeLlm::start(&save_note_rules("", ""));
    let url = server.openai_url();
    let gone = "[[tools.mcp]]\nname = \"gone\"\ncommand = \"/nonexistent/mcp-server\"\n";
    // An approval rule naming no tool of the MCP server: a mistake found once it lists them.
    let unmatched = format!(
        "{TIME_SERVER_TOOLS}\n[hooks.approval]\n\
         rules = [{{ tool = \"get_current_time\", action = \"ask\" }}]\n"
    );
    let cases: [(&str, String, &[&str], i32); 5] = [
        ("an MCP server that cannot start", gone.to_owned(), &[], 1),
        ("a tool the approval rule names", unmatched, &[], 2),
        ("an invalid agent file", "max_turn = 3\n".to_owned(), &[], 2),
        (
            "a local model for a hosted agent",
            String::new(),
            &["--model", "AGENT"],
            2,
        ),
        ("a store that cannot open", String::new(), &[], 1),
    ];
    for (what, extra, args, code) in cases {
        let agent = notes_agent(&url, &extra);
        if what == "a store that cannot open" {
            // The store's file is where a directory must be.
            std::fs::write(agent.dir.path().join(".reins"), "").expect("a file");
        }
        let command = [&["run", "AGENT", "--json"][..], args].concat();
        let (exit, stdout, stderr) = outcome(agent.keyed(&command));
        assert_eq!(exit, code, "{what}: {stdout}\n{stderr}");
        assert!(reference.contains(&format!("| {code} |")), "exit {code}");
        let events = events(&stdout);
        assert_eq!(events.len(), 1, "{what}: {stdout}");
        let error = &events[0];
        documented(&reference, "error", error);
        assert_eq!(error["event"], "error", "{what}: {stdout}");
        assert_eq!(error["run"], Value::Null, "{what}: {stdout}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            !message.is_empty() && stderr.contains(message.lines().next().unwrap_or_default()),
            "{what}: the event says what stderr says\n{stdout}\n{stderr}"
        );
    }

    // `runs resume --json` of a run that is not stored, and of another agent's run.
    let agent = notes_agent(
        &url,
        "[hooks.approval]\nrules = [{ tool = \"save_note\", action = \"ask\" }]\n",
    );
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "--json"]));
    let (run, _) = waiting_save_note(code, &stdout, &stderr);
    let other = agent.dir.path().join("other.toml");
    std::fs::write(&other, format!("name = \"other\"\n{}", model_table(&url))).expect("other");
    let other = other.to_string_lossy().into_owned();
    for (args, code) in [
        (["runs", "resume", "AGENT", "run-nope", "--json"], 1),
        (["runs", "resume", &other, &run, "--json"], 2),
    ] {
        let (exit, stdout, stderr) = outcome(agent.keyed(&args));
        assert_eq!(exit, code, "{args:?}: {stdout}\n{stderr}");
        let events = events(&stdout);
        assert_eq!(events.len(), 1, "{args:?}: {stdout}");
        assert_eq!(events[0]["event"], "error", "{args:?}: {stdout}");
        assert_eq!(events[0]["run"], Value::Null, "{args:?}: {stdout}");
    }
}
