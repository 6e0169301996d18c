//! A run stored as running, seen in the inbox: one a process left (Ctrl-C) is resumed from
//! its page; one a process still drives keeps its lease, and the page says why the resume
//! was refused.

use crate::common::fakellm::FakeLlm;
use crate::common::inbox::{Inbox, form_field, http};
use crate::common::{events, outcome};
use crate::interrupt::{RULES, interrupt, interrupted_run, run_waiting_in_its_tool};
use serde_json::Value;
use std::time::{Duration, Instant};

/// Presses the resume button of `run`'s page.
fn resume_from_the_page(inbox: &Inbox, run: &str) {
    let page = inbox.run_page(run);
    assert!(page.contains("id=\"not-finished\""), "{page}");
    let resumed = http()
        .post(format!("{}/runs/{run}/resume", inbox.url))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!("csrf={}", form_field(&page, "csrf")))
        .send()
        .expect("post");
    assert_eq!(resumed.status(), 303);
}

/// Waits until `done` holds, failing after a minute.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "{what} never happened");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_run_left_by_ctrl_c_is_resumed_from_its_page() {
    let llm = FakeLlm::start(RULES);
    let (agent, child) = run_waiting_in_its_tool(&llm);
    let pid = child.id().to_string();
    let stderr = interrupt(child, &pid);
    let (_, run) = interrupted_run(&stderr);

    let inbox = Inbox::start(&agent, &[]);
    resume_from_the_page(&inbox, &run);
    // Resumed by the inbox: the call cut off by Ctrl-C waits for a person, in doubt.
    eventually("the resume", || {
        let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
        let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
        shown["status"] == "suspended"
    });
    let page = inbox.run_page(&run);
    assert!(!page.contains("resume-failed"), "{page}");
}

#[test]
fn a_run_a_process_still_drives_is_not_taken_and_its_page_says_why() {
    let llm = FakeLlm::start(RULES);
    let (agent, mut child) = run_waiting_in_its_tool(&llm);
    let (_, listed, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    let run = events(&listed).pop().expect("the run")["run"]
        .as_str()
        .expect("its id")
        .to_owned();

    let inbox = Inbox::start(&agent, &[]);
    resume_from_the_page(&inbox, &run);
    let mut page = String::new();
    eventually("the refusal", || {
        page = inbox.run_page(&run);
        page.contains("id=\"resume-failed\"")
    });
    assert!(page.contains("is being worked on by"), "{page}");
    // The process that drives it still does; stopped, it ends its tool too.
    assert!(child.try_wait().expect("poll").is_none());
    let pid = child.id().to_string();
    interrupt(child, &pid);
}
