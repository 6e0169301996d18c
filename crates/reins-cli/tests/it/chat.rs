//! `reins chat` without a terminal: each line of stdin is one message, each message one run
//! that goes on from the conversation's history.

use crate::common::strict_model::strict_model;
use crate::common::{events, notes_agent, outcome};

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
