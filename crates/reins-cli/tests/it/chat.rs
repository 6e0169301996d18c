//! `reins chat` without a terminal: each line of stdin is one message, each message one run
//! that goes on from the conversation's history.

use crate::common::strict_model::strict_model;
use crate::common::{events, model_table, notes_agent, outcome};
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

/// A run that used its last model call on a tool call ends with the call not run (exit 4 for
/// `reins run`). The conversation goes on from it all the same: the call is answered as having
/// no result in the history the next message is sent with, which a model would otherwise
/// refuse (OpenAI: "must be followed by tool messages"), failing every later message.
#[test]
fn a_chat_goes_on_after_a_run_that_ran_out_of_model_calls_on_a_tool_call() {
    let agent = notes_agent(&strict_model(), "[limits]\nmax_turns = 1\n");
    let (code, stdout, stderr) = outcome(
        agent
            .keyed(&["chat", "AGENT"])
            .write_stdin("Save a note.\nAnd then?\n"),
    );
    assert!(stderr.contains("limit of 1 model calls"), "{stderr}");
    assert!(!stderr.contains("tool_call_id"), "{stderr}");
    assert_eq!(stdout.trim(), "Answered.", "{stderr}");
    assert_eq!(code, 0, "{stderr}");

    // So does a chat resumed from that run.
    let (_, listed, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    let cut_short = events(&listed)
        .into_iter()
        .find(|run| run["status"] == "failed")
        .expect("the run that ran out of model calls");
    let run = cut_short["run"].as_str().expect("its id");
    let (code, stdout, stderr) = outcome(
        agent
            .keyed(&["chat", "AGENT", "--resume", run])
            .write_stdin("Go on.\n"),
    );
    assert_eq!(stdout.trim(), "Answered.", "{stderr}");
    assert_eq!(code, 0, "{stderr}");
}

/// A line that is not UTF-8 (text in another encoding, a stray byte) is a message like any
/// other, its bytes that are not text shown as U+FFFD; the conversation goes on after it
/// rather than ending as if input had.
#[test]
fn a_line_that_is_not_utf8_does_not_end_the_chat() {
    let agent = notes_agent(&strict_model(), "");
    let (code, stdout, stderr) = outcome(
        agent
            .keyed(&["chat", "AGENT"])
            .write_stdin(&b"Caf\xe9 or tea?\nAnd then?\n"[..]),
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.matches("Answered.").count(), 2, "{stdout}\n{stderr}");
    let (_, listed, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    let first = events(&listed)
        .into_iter()
        .find(|run| run["conversation"] == run["run"])
        .expect("the conversation's first run");
    let run = first["run"].as_str().expect("its id");
    let (_, shown, _) = outcome(agent.reins(&["runs", "show", "AGENT", run]));
    assert!(shown.contains("Caf\u{fffd} or tea?"), "{shown}");
}

/// Agents beside each other share the default store (`.reins/runs.sqlite`). A conversation of
/// one is not taken on by another, with its own model, tools and preamble: refused as `reins
/// runs resume` refuses another agent's run (exit 2), and no run is started.
#[test]
fn a_chat_resumes_only_a_conversation_of_its_own_agent() {
    let url = strict_model();
    let agent = notes_agent(&url, "");
    let (code, _, stderr) = outcome(agent.keyed(&["chat", "AGENT"]).write_stdin("Hello?\n"));
    assert_eq!(code, 0, "{stderr}");
    let (_, listed, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    let run = events(&listed).pop().expect("the run")["run"]
        .as_str()
        .expect("its id")
        .to_owned();

    let other = agent.dir.path().join("other.toml");
    std::fs::write(&other, format!("name = \"other\"\n{}", model_table(&url))).expect("write");
    let other = other.to_string_lossy().into_owned();
    let (code, stdout, stderr) = outcome(
        agent
            .keyed(&["chat", &other, "--resume", &run])
            .write_stdin("And then?\n"),
    );
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!(
            "`{run}` is a run of the agent `notes`, not `other`"
        )),
        "{stderr}"
    );
    let (_, listed, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    assert_eq!(events(&listed).len(), 1, "no run started: {listed}");
}

/// The chat's exit code says how the chat ended, not how its last run did (each run said
/// that when it ended): end of input after a run that hit its turn limit is 0, not 4.
#[test]
fn end_of_input_ends_a_chat_with_0_whatever_its_last_run_did() {
    let agent = notes_agent(&strict_model(), "[limits]\nmax_turns = 1\n");
    let (code, _, stderr) = outcome(
        agent
            .keyed(&["chat", "AGENT"])
            .write_stdin("Save a note.\n"),
    );
    assert!(stderr.contains("limit of 1 model calls"), "{stderr}");
    assert_eq!(code, 0, "{stderr}");
}

/// Ctrl-C once a message was answered ends the chat as a shell expects (exit 130), and says
/// how to go on with the conversation: `reins chat --resume` with its last run.
#[test]
fn ctrl_c_in_a_chat_exits_130_and_names_the_chat_to_go_on_with() {
    let agent = notes_agent(&strict_model(), "");
    let mut chat = std::process::Command::new(env!("CARGO_BIN_EXE_reins"))
        .args(["chat", &agent.file.to_string_lossy()])
        .current_dir(agent.dir.path())
        .env("REINS_TEST_KEY", "k")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("reins chat starts");
    // The input stays open: the chat waits at its prompt once the message is answered.
    let mut input = chat.stdin.take().expect("its stdin");
    input.write_all(b"Hello?\n").expect("a message");
    let mut answer = BufReader::new(chat.stdout.take().expect("its stdout"));
    let mut line = String::new();
    answer.read_line(&mut line).expect("the answer");
    assert_eq!(line.trim(), "Answered.");
    let sent = std::process::Command::new("kill")
        .args(["-INT", &chat.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let ended = chat.wait_with_output().expect("the chat ends");
    let stderr = String::from_utf8_lossy(&ended.stderr);
    assert_eq!(ended.status.code(), Some(130), "{stderr}");
    let file = agent.file.to_string_lossy();
    assert!(
        stderr.contains(&format!("`reins chat {file} --resume run-")),
        "{stderr}"
    );
    drop(input);
}

/// When a message's run cannot be read back from the store, the next message goes on
/// without that exchange: said on stderr, not dropped without a word.
#[test]
fn a_run_that_cannot_be_read_back_is_said_not_silently_dropped() {
    let agent = notes_agent(&strict_model(), "");
    // The store, made by a chat with no message.
    let (code, _, stderr) = outcome(agent.keyed(&["chat", "AGENT"]).write_stdin(""));
    assert_eq!(code, 0, "{stderr}");
    // Every finished run's state is garbled as it is written.
    let store = agent.dir.path().join(".reins").join("runs.sqlite");
    let connection = rusqlite::Connection::open(&store).expect("the store");
    connection
        .execute_batch(
            "CREATE TRIGGER unreadable AFTER UPDATE OF status ON reins_runs
             WHEN NEW.status = 'completed'
             BEGIN UPDATE reins_runs SET state = 'garbled' WHERE run_id = NEW.run_id; END;",
        )
        .expect("the trigger");
    let (code, stdout, stderr) = outcome(
        agent
            .keyed(&["chat", "AGENT"])
            .write_stdin("Hello?\nAnd then?\n"),
    );
    assert_eq!(stdout.matches("Answered.").count(), 2, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("could not be read back from the store"),
        "{stderr}"
    );
    assert!(stderr.contains("without this exchange"), "{stderr}");
    assert_eq!(code, 0, "{stderr}");
}

/// A message over the limit of 1 MiB (a file of one huge line piped in, a paste gone wrong) is
/// refused, saying the limit, and nothing of it is sent; the chat goes on with the next line.
#[test]
fn a_message_over_1_mib_is_refused_and_the_chat_goes_on() {
    let agent = notes_agent(&strict_model(), "");
    let mut input = "x".repeat((1 << 20) + 1).into_bytes();
    input.extend_from_slice(b"\nAnd then?\n");
    let (code, stdout, stderr) = outcome(agent.keyed(&["chat", "AGENT"]).write_stdin(input));
    assert!(
        stderr.contains(
            "nothing was sent: that message is 1048577 bytes, over the limit of 1048576 bytes"
        ),
        "{stderr}"
    );
    assert_eq!(stdout.matches("Answered.").count(), 1, "{stdout}\n{stderr}");
    assert_eq!(code, 0, "{stderr}");
    let (_, listed, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    let runs = events(&listed);
    assert_eq!(runs.len(), 1, "only the next line ran: {listed}");
    let run = runs[0]["run"].as_str().expect("its id");
    let (_, shown, _) = outcome(agent.reins(&["runs", "show", "AGENT", run]));
    assert!(shown.contains("And then?"), "{shown}");
}
