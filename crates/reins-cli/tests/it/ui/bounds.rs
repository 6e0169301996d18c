//! What bounds the inbox's pages, fetched again every two seconds while they are open: a store
//! of many runs lists some of them (those waiting first) and says how to list the rest, and a
//! decision's huge arguments or message are cut in the run's trail.

use super::{agent, suspended_run};
use crate::common::fakellm::FakeLlm;
use crate::common::inbox::{Inbox, RunCopies, copy_run_records};
use crate::common::outcome;

/// The most runs the inbox's first page lists (`ui::runs_list::MOST_RUNS_LISTED`).
const MOST_RUNS_LISTED: usize = 200;

#[test]
fn a_store_of_many_runs_lists_the_waiting_and_newest_and_says_how_many_more() {
    let server = FakeLlm::start(super::RULES);
    let agent = agent(&server);
    // The oldest run waits for a decision: listed however many runs came after it.
    let waiting = suspended_run(&agent);
    drop(server);
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "Save a note.", "--json"]));
    assert_eq!(
        code, 1,
        "nothing answers, so the run fails\n{stdout}\n{stderr}"
    );
    let failed = stdout
        .lines()
        .last()
        .and_then(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .and_then(|event| event["run"].as_str().map(str::to_owned))
        .expect("the failed run's id");
    // Many more failed runs, written after it: copies of its record under ids of their own.
    let copies = MOST_RUNS_LISTED + 50;
    copy_run_records(&agent, &failed, copies, RunCopies::Readable);
    let total = copies + 2;

    let inbox = Inbox::start(&agent, &[]);
    let page = inbox.runs_page();
    assert_eq!(
        page.matches("<tr class=\"run\"").count(),
        MOST_RUNS_LISTED,
        "{page}"
    );
    assert!(
        page.contains(&format!("href=\"/runs/{waiting}\"")),
        "the run waiting for a decision is listed: {page}"
    );
    let newest = format!("copy-{:04}", copies - 1);
    assert!(page.contains(&format!("href=\"/runs/{newest}\"")), "{page}");
    assert!(
        page.contains(&format!(
            "{} older run(s) are not listed here",
            total - MOST_RUNS_LISTED
        )),
        "{page}"
    );
    assert!(page.contains("reins runs list"), "{page}");
}

#[test]
fn huge_arguments_and_messages_of_a_decision_are_cut_in_the_run_trail() {
    let huge = "x".repeat(40_000);
    let rules = super::RULES.replace("draft <img src=x onerror=alert(1)>", &huge);
    let server = FakeLlm::start(&rules);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let inbox = Inbox::start(&agent, &[]);
    let page = inbox.run_page(&run);
    assert!(
        page.contains(&huge),
        "the waiting call's form shows its arguments whole"
    );
    // The model answers once a tool's result says `note:` (and asks again otherwise).
    let message = format!("note: {}", "y".repeat(40_000));
    let denied = inbox.decide(&page, &run, "t1c0", "deny", &format!("message={message}"));
    assert_eq!(denied.status().as_u16(), 303);
    let page = inbox.run_page(&run);
    assert!(
        page.contains("bound to"),
        "the trail is on the page: {page}"
    );
    assert!(!page.contains(&huge), "{} bytes", page.len());
    assert!(!page.contains(&message), "{} bytes", page.len());
    assert!(page.contains("more bytes: `reins runs show`"), "{page}");
}
