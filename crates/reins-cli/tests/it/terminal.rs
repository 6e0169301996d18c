//! Approvals in a real terminal: tmux runs `reins run` in a pseudo-terminal, the test reads
//! the screen and types the answers (edit the arguments in `$EDITOR`, or deny with a message).

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, SAVE_NOTE_TOOL, asking_time_agent, model_table, save_note_rules};
use crate::common::{last_run_shown, outcome};
use reins_test_servers::Tmux;
use serde_json::json;
use std::process::Command;

/// The save-note flow, with this file's own rules.
pub(crate) fn rules() -> String {
    save_note_rules(
        "",
        "  - name: unanswered
    when:
      tool_result_contains: \"nobody approved it\"
    respond:
      content: \"Nobody approved the note.\"
",
    )
}

pub(crate) fn agent(server: &FakeLlm, timeout_secs: u64) -> AgentDir {
    AgentDir::new(&format!(
        r#"{model}
{SAVE_NOTE_TOOL}
[hooks.approval]
timeout_secs = {timeout_secs}
rules = [{{ tool = "save_note", action = "ask", message = "notes need your approval" }}]
"#,
        model = model_table(&server.openai_url())
    ))
}

/// A program standing in for a person's editor: `script` (a shell script, given the file to
/// edit as `$1`) written beside the agent file. Its path.
pub(crate) fn editor_script(agent: &AgentDir, script: &str) -> String {
    let editor = agent.dir.path().join("edit.sh");
    std::fs::write(&editor, script).expect("write the editor script");
    let status = Command::new("chmod")
        .arg("+x")
        .arg(&editor)
        .status()
        .expect("chmod");
    assert!(status.success());
    editor.to_string_lossy().into_owned()
}

/// `reins COMMAND` in tmux with `editor` as $EDITOR, as the user `ana`; prints its exit code
/// when it ends.
pub(crate) fn in_terminal(agent: &AgentDir, editor: &str, command: &str) -> Tmux {
    let reins = env!("CARGO_BIN_EXE_reins");
    Tmux::start(&format!(
        "cd '{dir}' && env REINS_TEST_KEY=k USER=ana EDITOR='{editor}' '{reins}' {command}; \
         echo EXIT=$?; sleep 600",
        dir = agent.dir.path().display(),
    ))
}

/// `reins run` of the agent on "Save a note." in tmux, as [`in_terminal`].
fn run_in_terminal(agent: &AgentDir, editor: &str) -> Tmux {
    let command = format!("run '{}' 'Save a note.'", agent.file.display());
    in_terminal(agent, editor, &command)
}

#[test]
fn a_call_is_approved_with_arguments_edited_in_the_editor() {
    let server = FakeLlm::start(&rules());
    let agent = agent(&server, 300);
    // An "editor" that changes the note, as a person would.
    let editor = editor_script(&agent, "#!/bin/sh\nsed -i 's/draft/edited/' \"$1\"\n");
    let tmux = run_in_terminal(&agent, &editor);
    let screen = tmux.wait_for("(a)pprove, (d)eny, (e)dit arguments?");
    assert!(
        screen.contains("the model wants to run `save_note`"),
        "{screen}"
    );
    assert!(
        screen.contains("\"text\": \"draft\""),
        "arguments are shown pretty\n{screen}"
    );
    // The rule's description already says it asks; the policy's reason follows it.
    assert!(
        screen.contains("[approval] the rule: ask `save_note` — notes need your approval"),
        "{screen}"
    );
    tmux.type_line("e");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("note: edited"), "{screen}");
    assert!(screen.contains("Done: the note is saved."), "{screen}");
    assert!(screen.contains("EXIT=0"), "{screen}");
}

/// An editor a person types into gets every key: nothing of reins reads the terminal while
/// it runs (a reader that did took the lines typed into the editor).
#[test]
fn what_a_person_types_into_the_editor_reaches_the_editor() {
    let server = FakeLlm::start(&rules());
    let agent = agent(&server, 300);
    // An "editor" that asks for the note's new text on the terminal.
    let editor = editor_script(
        &agent,
        "#!/bin/sh\nprintf 'new text: '\nread -r text\nsed -i \"s/draft/$text/\" \"$1\"\n",
    );
    let tmux = run_in_terminal(&agent, &editor);
    tmux.wait_for("(a)pprove, (d)eny, (e)dit arguments?");
    tmux.type_line("e");
    tmux.wait_for("new text: ");
    tmux.type_line("typed by hand");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("note: typed by hand"), "{screen}");
    assert!(screen.contains("EXIT=0"), "{screen}");
}

/// An editor that leaves its last line open (a script printing without a line feed) does not
/// leave it to reins: what reins says next starts on a line of its own.
#[test]
fn what_follows_an_editor_that_left_its_line_open_starts_on_a_line_of_its_own() {
    let server = FakeLlm::start(&rules());
    let agent = agent(&server, 300);
    let editor = editor_script(&agent, "#!/bin/sh\nprintf 'the editor says bye'\nexit 1\n");
    let tmux = run_in_terminal(&agent, &editor);
    tmux.wait_for("(a)pprove, (d)eny, (e)dit arguments?");
    tmux.type_line("e");
    let screen = tmux.wait_for_count("(a)pprove, (d)eny, (e)dit arguments?", 2);
    let lines: Vec<&str> = screen.lines().map(str::trim_end).collect();
    assert!(lines.contains(&"the editor says bye"), "{screen}");
    assert!(
        lines.iter().any(|line| line.starts_with(
            "[approval] the editor exited with status 1: the arguments are unchanged"
        )),
        "{screen}"
    );
    tmux.type_line("d");
    tmux.wait_for("message for the model");
    tmux.type_line("");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
}

/// Edited arguments that do not fit the tool's schema are not a decision: the prompt says why
/// and asks again, and the person decides (here: denies).
#[test]
fn arguments_edited_out_of_the_tool_s_schema_are_asked_about_again() {
    let server = FakeLlm::start(&rules());
    let agent = agent(&server, 300);
    // An "editor" that misspells the argument's name.
    let editor = editor_script(&agent, "#!/bin/sh\nsed -i 's/\"text\"/\"txt\"/' \"$1\"\n");
    let tmux = run_in_terminal(&agent, &editor);
    tmux.wait_for("(a)pprove, (d)eny, (e)dit arguments?");
    tmux.type_line("e");
    tmux.wait_for("the arguments do not fit the schema of `save_note`");
    let screen = tmux.wait_for_count("(a)pprove, (d)eny, (e)dit arguments?", 2);
    assert!(!screen.contains("EXIT="), "still asking\n{screen}");
    tmux.type_line("d");
    tmux.wait_for("message for the model");
    tmux.type_line("");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("I did not save it."), "{screen}");
    assert!(!screen.contains("note: "), "the tool did not run\n{screen}");
    assert!(screen.contains("EXIT=0"), "{screen}");
}

#[test]
fn a_call_is_denied_with_a_message_in_the_terminal() {
    let server = FakeLlm::start(&rules());
    let agent = agent(&server, 300);
    let tmux = run_in_terminal(&agent, "false");
    tmux.wait_for("(a)pprove, (d)eny, (e)dit arguments?");
    tmux.type_line("d");
    tmux.wait_for("message for the model");
    tmux.type_line("not now");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("denied by the user: not now"), "{screen}");
    assert!(screen.contains("I did not save it."), "{screen}");
    assert!(!screen.contains("note: draft"), "{screen}");
    assert!(screen.contains("EXIT=0"), "{screen}");
}

#[test]
fn a_call_nobody_answers_in_time_is_denied() {
    let server = FakeLlm::start(&rules());
    let agent = agent(&server, 2);
    let tmux = run_in_terminal(&agent, "false");
    tmux.wait_for("(a)pprove, (d)eny, (e)dit arguments?");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("nobody approved it"), "{screen}");
    assert!(screen.contains("Nobody approved the note."), "{screen}");
    assert!(
        !screen.contains("note: draft"),
        "fail closed: the call did not run\n{screen}"
    );
}

/// An MCP server's tool: arguments edited at the prompt are checked against the schema the
/// server gave for it, as a shell tool's are against the file's, and asked about again.
#[test]
fn arguments_edited_out_of_an_mcp_tool_s_schema_are_asked_about_again() {
    let server = FakeLlm::start(
        r#"version: 1
rules:
  - name: refused
    when:
      tool_result_contains: "denied"
    respond:
      content: "No time then."
  - name: ask_the_time
    when:
      messages_contain: "note"
    respond:
      tool_calls:
        - name: time_get_current_time
          arguments: {timezone: "Europe/Paris"}
"#,
    );
    let agent = asking_time_agent(&server.openai_url());
    // `get_current_time` requires `timezone`: the "person" misspells it.
    let editor = editor_script(
        &agent,
        "#!/bin/sh\nsed -i 's/\"timezone\"/\"tz\"/' \"$1\"\n",
    );
    let tmux = run_in_terminal(&agent, &editor);
    tmux.wait_for("(a)pprove, (d)eny, (e)dit arguments?");
    tmux.type_line("e");
    tmux.wait_for("the arguments do not fit the schema of `time_get_current_time`");
    tmux.wait_for_count("(a)pprove, (d)eny, (e)dit arguments?", 2);
    tmux.type_line("d");
    tmux.wait_for("message for the model");
    tmux.type_line("");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("No time then."), "{screen}");
    assert!(screen.contains("EXIT=0"), "{screen}");
}

/// A run stopped (SIGTERM) at the approval question and resumed asks again, and the
/// question stays on the screen: no "thinking" spinner turns over it while the person reads
/// (the call is replayed from the stored turn, not streamed, so nothing else stops it).
#[test]
fn a_resumed_run_asks_at_the_terminal_with_the_question_in_view() {
    let server = FakeLlm::start(&rules());
    let agent = agent(&server, 300);
    let question = "(a)pprove, (d)eny, (e)dit arguments?";
    // SIGTERM (a service manager's, `kill`'s) stops the run where it is, the question too;
    // `sh -c` names the pid it becomes by `exec`.
    let first = Tmux::start(&format!(
        "cd '{dir}' && sh -c 'echo PID=$$; exec env REINS_TEST_KEY=k \"{reins}\" run \"{file}\" \"Save a note.\"'; \
         echo EXIT=$?; sleep 600",
        dir = agent.dir.path().display(),
        reins = env!("CARGO_BIN_EXE_reins"),
        file = agent.file.display(),
    ));
    let screen = first.wait_for(question);
    let pid = screen
        .split_once("PID=")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no pid: {screen}"))
        .to_owned();
    let sent = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill -TERM");
    assert!(sent.success());
    let screen = first.wait_for("EXIT=");
    assert!(screen.contains("EXIT=130"), "{screen}");
    let run = screen
        .split(|c: char| c.is_whitespace() || c == '`')
        .find(|word| word.starts_with("run-"))
        .unwrap_or_else(|| panic!("no run named: {screen}"))
        .to_owned();
    let tmux = Tmux::start(&format!(
        "cd '{dir}' && env REINS_TEST_KEY=k '{reins}' runs resume '{file}' '{run}'; \
         echo EXIT=$?; sleep 600",
        dir = agent.dir.path().display(),
        reins = env!("CARGO_BIN_EXE_reins"),
        file = agent.file.display(),
    ));
    tmux.wait_for(question);
    // A spinner ticks every 100 ms: a second gives it ten chances to write over the line.
    std::thread::sleep(std::time::Duration::from_secs(1));
    let screen = tmux.screen();
    assert!(screen.contains(question), "{screen}");
    assert!(!screen.contains("thinking"), "{screen}");
    tmux.type_line("a");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("Done: the note is saved."), "{screen}");
    assert!(screen.contains("EXIT=0"), "{screen}");
}

/// A decision made at the terminal is in the run's decision trail, as one made with `reins
/// runs approve` is: who made it (the user, at the terminal), when, and what they decided
/// about which arguments; `runs show` lists it, in words and in JSON.
#[test]
fn a_decision_made_at_the_terminal_is_in_the_runs_trail() {
    let server = FakeLlm::start(&rules());
    let agent = agent(&server, 300);
    let editor = editor_script(&agent, "#!/bin/sh\nsed -i 's/draft/edited/' \"$1\"\n");
    let tmux = run_in_terminal(&agent, &editor);
    tmux.wait_for("(a)pprove, (d)eny, (e)dit arguments?");
    tmux.type_line("e");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");

    let shown = last_run_shown(&agent);
    let decisions = shown["decisions"].as_array().expect("the trail");
    assert_eq!(decisions.len(), 1, "{shown}");
    let decision = &decisions[0];
    assert_eq!(decision["call"], "t1c0");
    assert_eq!(decision["tool"], "save_note");
    assert_eq!(decision["verdict"], "approved with edited arguments");
    assert_eq!(decision["decided_by"], "ana via the terminal");
    assert_eq!(decision["bound_arguments"], json!({"text": "draft"}));
    assert_eq!(decision["new_arguments"], json!({"text": "edited"}));
    assert_eq!(decision["replaced"], false);
    assert!(
        decision["decided_at_ms"].as_i64().is_some_and(|ms| ms > 0),
        "{decision}"
    );

    let run = shown["run"].as_str().expect("its id");
    let (_, text, _) = outcome(agent.reins(&["runs", "show", "AGENT", run]));
    assert!(text.contains("ana via the terminal"), "{text}");
}

/// Ctrl-C at the question leaves the call to someone else: the run suspends with the call
/// waiting, as a run without a terminal does (exit 3), and the commands that decide it are
/// printed; the call is decided and the run goes on as any suspended run's.
#[test]
fn ctrl_c_at_the_question_leaves_the_call_waiting_for_a_decision() {
    let server = FakeLlm::start(&rules());
    let agent = agent(&server, 300);
    let tmux = run_in_terminal(&agent, "false");
    // The question says what Ctrl-C does.
    let screen = tmux.wait_for("(a)pprove, (d)eny, (e)dit arguments?");
    assert!(screen.contains("Ctrl-C: leave it waiting"), "{screen}");
    tmux.press("C-c");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=3"), "{screen}");
    assert!(
        !screen.contains("note: draft"),
        "the call did not run\n{screen}"
    );
    let shown = last_run_shown(&agent);
    assert_eq!(shown["status"], "suspended", "{shown}");
    assert_eq!(shown["pending"][0]["call"], "t1c0", "{shown}");
    assert_eq!(shown["decisions"], json!([]), "nobody decided: {shown}");
    let run = shown["run"].as_str().expect("its id");
    let file = agent.file.display();
    assert!(
        screen.contains(&format!("  reins runs approve {file} {run}\n")),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("  reins runs deny {file} {run}\n")),
        "{screen}"
    );

    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", run]));
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = outcome(agent.keyed(&["runs", "resume", "AGENT", run]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Done: the note is saved.");
}

/// A Ctrl-C after the one that left a call waiting stops the run, as Ctrl-C does outside a
/// question: here the run's other call (a tool that runs until stopped) keeps it from
/// suspending, and the second Ctrl-C interrupts it (exit 130).
#[test]
fn a_second_ctrl_c_stops_the_run() {
    let server = FakeLlm::start(
        r#"version: 1
rules:
  - name: both
    when:
      messages_contain: "note"
    respond:
      tool_calls:
        - name: save_note
          arguments: {text: "draft"}
        - name: wait
          arguments: {}
"#,
    );
    let agent = AgentDir::new(&format!(
        r#"{model}
{SAVE_NOTE_TOOL}
{WAIT_TOOL}
[hooks.approval]
rules = [{{ tool = "save_note", action = "ask" }}, {{ tool = "wait", action = "allow" }}]
"#,
        model = model_table(&server.openai_url()),
        WAIT_TOOL = crate::interrupt::WAIT_TOOL,
    ));
    let tmux = run_in_terminal(&agent, "false");
    tmux.wait_for("(a)pprove, (d)eny, (e)dit arguments?");
    tmux.press("C-c");
    tmux.wait_for("left waiting");
    let waiting = agent.dir.path().join("waiting");
    while !waiting.exists() {
        let screen = tmux.screen();
        assert!(!screen.contains("EXIT="), "the tool never ran\n{screen}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    tmux.press("C-c");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=130"), "{screen}");
    assert!(screen.contains("reins: interrupted"), "{screen}");
}

/// After a Ctrl-C left a call to someone else, the run's other calls that need a decision are
/// not asked about: they wait too, and the run suspends with all of them.
#[test]
fn the_calls_after_one_left_waiting_are_not_asked_about() {
    let server = FakeLlm::start(
        r#"version: 1
rules:
  - name: two
    when:
      messages_contain: "note"
    respond:
      tool_calls:
        - name: save_note
          arguments: {text: "one"}
        - name: save_note
          arguments: {text: "two"}
"#,
    );
    let agent = agent(&server, 300);
    let tmux = run_in_terminal(&agent, "false");
    tmux.wait_for("(a)pprove, (d)eny, (e)dit arguments?");
    tmux.press("C-c");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=3"), "{screen}");
    assert_eq!(screen.matches("(a)pprove, (d)eny").count(), 1, "{screen}");
    let shown = last_run_shown(&agent);
    let waiting: Vec<&str> = shown["pending"]
        .as_array()
        .expect("the waiting calls")
        .iter()
        .filter_map(|call| call["call"].as_str())
        .collect();
    assert_eq!(waiting, ["t1c0", "t1c1"], "{shown}");
}
