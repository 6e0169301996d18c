//! The runs list as a person approving calls reads it: the runs that wait for a decision
//! first, however long ago they were written, then the others, newest first; and a run whose
//! provider gave no token counts shown so, not as having used none.

use super::{RULES, agent, suspended_run};
use crate::common::fakellm::FakeLlm;
use crate::common::inbox::Inbox;
use crate::common::outcome;

/// The runs page's rows, top to bottom: each run's id.
fn listed(inbox: &Inbox) -> (Vec<String>, String) {
    let page = inbox
        .http()
        .get(format!("{}/", inbox.url))
        .send()
        .and_then(|r| r.text())
        .expect("runs page");
    let runs = page
        .split("<tr class=\"run\"")
        .skip(1)
        .map(|row| {
            row.split("</a>")
                .next()
                .and_then(|link| link.rsplit('>').next())
                .expect("a run's link")
                .to_owned()
        })
        .collect();
    (runs, page)
}

#[test]
fn the_runs_waiting_for_a_decision_are_listed_first() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let waiting = suspended_run(&agent);
    let first_done = suspended_run(&agent);
    let last_done = suspended_run(&agent);
    // Decided and finished at the terminal after `waiting` was written: written last.
    for run in [&first_done, &last_done] {
        let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", run]));
        assert_eq!(code, 0, "{stderr}");
        let (code, stdout, stderr) = outcome(agent.keyed(&["runs", "resume", "AGENT", run]));
        assert_eq!(code, 0, "{stdout}\n{stderr}");
    }
    let inbox = Inbox::start(&agent, &[]);
    let (runs, page) = listed(&inbox);
    assert_eq!(runs, [waiting, last_done, first_done], "{page}");
}

#[test]
fn a_run_without_token_counts_from_its_provider_is_listed_so() {
    // fakellm reports no token counts: the run's page says so, and so does the list.
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let inbox = Inbox::start(&agent, &[]);
    assert!(
        inbox
            .run_page(&run)
            .contains("no token counts from the provider"),
        "the run's page"
    );
    let (_, page) = listed(&inbox);
    assert!(
        page.contains(
            "<td class=\"tokens\"><span title=\"no token counts from the provider\">—</span></td>"
        ),
        "{page}"
    );
}
