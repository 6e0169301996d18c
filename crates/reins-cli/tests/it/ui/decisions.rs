//! Decisions through the inbox: two at once take one, a run decided on the command line is
//! resumed from its page, who a decision is recorded as made by, and which agent's runs an
//! inbox serves.

use super::{RULES, agent, finished, opened_with_token, suspended_run};
use crate::common::fakellm::FakeLlm;
use crate::common::inbox::{Inbox, form_field, http};
use crate::common::{approve_with_args, model_table, outcome};
use serde_json::Value;

/// Two people deciding the same call at once: one decision is taken and the other refused,
/// as when they come one after the other; never both accepted, the later silently replacing
/// the earlier (a denial shown as taken while the tool runs).
#[test]
fn two_decisions_sent_at_once_take_one_and_refuse_the_other() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let inbox = Inbox::start(&agent, &[]);
    for round in 0..6 {
        // A prompt of its own each round: the mock server goes by what the prompt was told.
        let prompt = format!("Save a note, number {round}.");
        let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", &prompt, "--json"]));
        assert_eq!(code, 3, "{stdout}\n{stderr}");
        let waiting: Value =
            serde_json::from_str(stdout.lines().last().expect("events")).expect("json");
        let run = waiting["run"].as_str().expect("run id").to_owned();
        let page = inbox.run_page(&run);
        let decide = |verdict: &str, fields: &str| {
            inbox
                .decide(&page, &run, "t1c0", verdict, fields)
                .status()
                .as_u16()
        };
        let mut answers = std::thread::scope(|scope| {
            let deny = scope.spawn(|| decide("deny", "message=no"));
            let approve = scope.spawn(|| decide("approve", "args="));
            [deny.join().unwrap(), approve.join().unwrap()]
        });
        answers.sort_unstable();
        assert_eq!(answers, [303, 409], "round {round}");
        let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
        let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
        assert_eq!(
            shown["decisions"].as_array().map(Vec::len),
            Some(1),
            "round {round}: {stdout}"
        );
    }
}

#[test]
fn a_run_decided_on_the_command_line_is_resumed_from_the_inbox() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let (code, _, stderr) = approve_with_args(&agent, &run, r#"{"text": "from the shell"}"#);
    assert_eq!(code, 0, "{stderr}");
    let inbox = Inbox::start(&agent, &[]);
    let page = inbox.run_page(&run);
    assert!(page.contains("name=\"resume\""), "{page}");
    let csrf = form_field(&page, "csrf");
    let resumed = inbox
        .http()
        .post(format!("{}/runs/{run}/resume", inbox.url))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!("csrf={csrf}"))
        .send()
        .expect("post");
    assert_eq!(resumed.status(), 303);
    // The run finishes in the inbox's process; the store says so.
    let shown = finished(&agent, &run);
    assert!(
        shown["history"]
            .to_string()
            .contains("note: from the shell"),
        "{shown}"
    );
}

#[test]
fn the_inbox_of_another_agent_beside_it_neither_lists_nor_opens_its_runs() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    // Another agent in the same directory shares the store, and so sees the run in it.
    let other = agent.dir.path().join("other.toml");
    std::fs::write(
        &other,
        format!("name = \"other\"\n{}", model_table(&server.openai_url())),
    )
    .expect("the other agent file");
    let inbox = Inbox::start_file(&other, &[]);
    let listed = inbox
        .http()
        .get(format!("{}/", inbox.url))
        .send()
        .and_then(|r| r.text())
        .expect("page");
    assert!(!listed.contains(&run), "{listed}");
    let page = inbox
        .http()
        .get(format!("{}/runs/{run}", inbox.url))
        .send()
        .expect("page");
    assert_eq!(page.status(), 404);
    let message = page.text().expect("text");
    assert!(
        message.contains("is a run of the agent `notes`, not `other`"),
        "{message}"
    );

    // Its own inbox lists it.
    let own = Inbox::start(&agent, &[]);
    let listed = own
        .http()
        .get(format!("{}/", own.url))
        .send()
        .and_then(|r| r.text())
        .expect("page");
    assert!(listed.contains(&run), "{listed}");
}

/// With a token, anyone holding it may decide: the decision is recorded as made by a holder
/// of the token, not as made by the user running the inbox; without one, by that user.
#[test]
fn a_decision_through_an_inbox_with_a_token_is_recorded_as_a_token_holders() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let inbox = Inbox::start(&agent, &["--token", "s3cret-token"]);
    let (cookie, page) = opened_with_token(&inbox, &run, "s3cret-token");
    let (_, shown, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    let shown: Value = serde_json::from_str(shown.trim()).expect("json");
    let call = shown["pending"][0]["call"]
        .as_str()
        .expect("a waiting call")
        .to_owned();
    let decided = http()
        .post(format!("{}/runs/{run}/calls/{call}/deny", inbox.url))
        .header("Cookie", &cookie)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!(
            "csrf={}&binding={}&message=no",
            form_field(&page, "csrf"),
            form_field(&page, "binding")
        ))
        .send()
        .expect("post");
    assert_eq!(decided.status(), 303);
    let (_, shown, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    let shown: Value = serde_json::from_str(shown.trim()).expect("json");
    let by = shown["decisions"][0]["decided_by"]
        .as_str()
        .unwrap_or_default();
    assert!(
        by.starts_with("a holder of the token of the reins web inbox "),
        "{shown}"
    );
}
