//! A call in doubt answered through the inbox: its page marks it and offers skip, supply and
//! run-it-again; skip and supply record the decision `reins runs skip|supply` records, by the
//! inbox's decider, and the run goes on without running the tool again. Refused: a call that
//! is not in doubt, a form without the token or the anti-forgery token, a result too large.

use super::{
    RULES as NOTES_RULES, agent as notes_agent, finished, opened_with_token, suspended_run,
};
use crate::common::fakellm::FakeLlm;
use crate::common::inbox::{Inbox, form_field, http};
use crate::runs_in_doubt::{RULES, charge_result, effects, run_cut_off_in_doubt, shown};

/// Sends the `answer` form (`skip`, `supply`) of `page` about the call in doubt with
/// `fields`, and waits for the inbox to finish the run: the tool did not run again, and the
/// decision is recorded by the inbox's decider. The run as `runs show --json` gives it.
fn answered(
    inbox: &Inbox,
    agent: &crate::common::AgentDir,
    (page, run, call): (&str, &str, &str),
    answer: &str,
    fields: &str,
) -> serde_json::Value {
    let sent = inbox.decide(page, run, call, answer, fields);
    assert_eq!(sent.status(), 303, "{answer}");
    let done = finished(agent, run);
    assert_eq!(effects(agent), 1, "the charge did not run again");
    let trail = &done["decisions"][0];
    assert_eq!(trail["call"], call, "{trail}");
    let by = trail["decided_by"].as_str().unwrap_or_default();
    assert!(by.ends_with("via the reins web inbox"), "{trail}");
    done
}

#[test]
fn a_call_in_doubt_skipped_in_the_inbox_is_not_run_again_and_the_model_reads_why() {
    let llm = FakeLlm::start(RULES);
    let (agent, run, call) = run_cut_off_in_doubt(&llm);
    let inbox = Inbox::start(&agent, &[]);
    let page = inbox.run_page(&run);
    assert!(
        page.contains(&format!("data-call=\"{call}\" data-in-doubt=\"true\""))
            && page.contains("in doubt</strong>")
            && page.contains(&format!("action=\"/runs/{run}/calls/{call}/skip\""))
            && page.contains(&format!("action=\"/runs/{run}/calls/{call}/supply\""))
            && page.contains("the model reads this text as the tool's output")
            && page.contains("runs the tool again: its effect may happen twice"),
        "{page}"
    );

    let answer = "message=checked+by+hand%3A+the+card+was+charged";
    let done = answered(&inbox, &agent, (&page, &run, &call), "skip", answer);
    assert_eq!(
        charge_result(&done),
        "skipped by the user: checked by hand: the card was charged"
    );
    let trail = &done["decisions"][0];
    assert_eq!(
        trail["verdict"], "skipped: skipped by the user: checked by hand: the card was charged",
        "{trail}"
    );
    assert!(done.to_string().contains("Saw the skip."), "{done}");
}

#[test]
fn a_result_supplied_in_the_inbox_is_the_tools_output_and_the_tool_does_not_run_again() {
    let llm = FakeLlm::start(RULES);
    let (agent, run, call) = run_cut_off_in_doubt(&llm);
    let inbox = Inbox::start(&agent, &[]);
    let page = inbox.run_page(&run);

    // Bounded: a result over 64 KiB is refused, saying so, and nothing is recorded.
    let huge = format!("result={}", "x".repeat(64 * 1024 + 1));
    let refused = inbox.decide(&page, &run, &call, "supply", &huge);
    assert_eq!(refused.status(), 413);
    let why = refused.text().expect("page");
    assert!(
        why.contains("the result is 65537 bytes; the inbox takes at most 65536 (64 KiB)"),
        "{why}"
    );
    // Far larger, it is not read whole, and refused in the inbox's words all the same.
    let vast = format!("result={}&message={0}", "x".repeat(3 * 1024 * 1024));
    for answer in ["supply", "skip"] {
        let refused = inbox.decide(&page, &run, &call, answer, &vast);
        assert_eq!(refused.status(), 413, "{answer}");
        let why = refused.text().expect("page");
        assert!(
            why.contains("the inbox takes a result of at most 65536 bytes (64 KiB)"),
            "{answer}: {why}"
        );
    }
    let empty = inbox.decide(&page, &run, &call, "supply", "result=+");
    assert_eq!(empty.status(), 400);
    assert_eq!(shown(&agent, &run)["decisions"], serde_json::json!([]));

    let answer = "result=%7B%22receipt%22%3A+%22receipt+42%22%7D";
    let done = answered(&inbox, &agent, (&page, &run, &call), "supply", answer);
    assert_eq!(charge_result(&done), "{\"receipt\": \"receipt 42\"}");
    assert!(done.to_string().contains("Saw the receipt."), "{done}");
    let trail = &done["decisions"][0];
    assert_eq!(
        trail["verdict"], "result supplied: {\"receipt\": \"receipt 42\"}",
        "{trail}"
    );
}

/// A call an approval rule asks about never started: skip and supply are refused as on the
/// command line, nothing recorded, and its page offers neither.
#[test]
fn skip_and_supply_in_the_inbox_refuse_a_call_that_is_not_in_doubt() {
    let llm = FakeLlm::start(NOTES_RULES);
    let agent = notes_agent(&llm);
    let run = suspended_run(&agent);
    let inbox = Inbox::start(&agent, &[]);
    let page = inbox.run_page(&run);
    assert!(
        !page.contains("/skip\"") && !page.contains("/supply\"") && !page.contains("in doubt"),
        "{page}"
    );
    for (answer, fields) in [("skip", "message=no"), ("supply", "result=note%3A+draft")] {
        let refused = inbox.decide(&page, &run, "t1c0", answer, fields);
        assert_eq!(refused.status(), 409, "{answer}");
        let why = refused.text().expect("page");
        assert!(
            why.contains(&format!("call `t1c0` of run `{run}` is not in doubt")),
            "{why}"
        );
    }
    let listed = shown(&agent, &run);
    assert_eq!(listed["pending"][0]["call"], "t1c0", "still waiting");
    assert_eq!(
        listed["decisions"],
        serde_json::json!([]),
        "nothing recorded"
    );
}

#[test]
fn skip_and_supply_without_the_token_or_the_anti_forgery_token_are_refused() {
    let llm = FakeLlm::start(RULES);
    let (agent, run, call) = run_cut_off_in_doubt(&llm);
    let inbox = Inbox::start(&agent, &["--token", "s3cret-token"]);
    let (cookie, page) = opened_with_token(&inbox, &run, "s3cret-token");
    let binding = form_field(&page, "binding");
    let post = |answer: &str, cookie: Option<&str>, csrf: &str| {
        let mut request = http()
            .post(format!("{}/runs/{run}/calls/{call}/{answer}", inbox.url))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(format!(
                "csrf={csrf}&binding={binding}&message=no&result=receipt+42"
            ));
        if let Some(cookie) = cookie {
            request = request.header("Cookie", cookie);
        }
        request.send().expect("post").status().as_u16()
    };
    let csrf = form_field(&page, "csrf");
    for answer in ["skip", "supply"] {
        assert_eq!(post(answer, None, &csrf), 401, "{answer} without the token");
        assert_eq!(post(answer, Some(&cookie), "guess"), 403, "{answer} forged");
    }
    assert_eq!(shown(&agent, &run)["decisions"], serde_json::json!([]));
    assert_eq!(effects(&agent), 1);
}
