//! A run stored as running, seen in the inbox: its page and the runs list say who drives it
//! (the process holding its lease, until when) or that it was left. One a process left
//! (Ctrl-C) is resumed from its page; one a process drives offers no resume, and a resume
//! sent anyway (from a page shown before that process took the run) is refused, saying who
//! took it.

use crate::common::fakellm::FakeLlm;
use crate::common::inbox::{Inbox, form_field};
use crate::common::{events, outcome};
use crate::interrupt::{RULES, interrupt, interrupted_run, run_waiting_in_its_tool};
use serde_json::Value;
use std::time::{Duration, Instant};

/// Sends `run`'s resume form with the anti-forgery token of `page` (one of the inbox's pages).
fn send_resume(inbox: &Inbox, run: &str, page: &str) -> reqwest::blocking::Response {
    inbox
        .http()
        .post(format!("{}/runs/{run}/resume", inbox.url))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!("csrf={}", form_field(page, "csrf")))
        .send()
        .expect("post")
}

/// The cell of the runs page's column `class` in `run`'s row.
fn runs_list_cell(inbox: &Inbox, run: &str, class: &str) -> String {
    let list = inbox
        .http()
        .get(format!("{}/", inbox.url))
        .send()
        .and_then(|r| r.text())
        .expect("runs page");
    let row = list
        .split("<tr class=\"run\"")
        .find(|row| row.contains(&format!(">{run}</a>")))
        .unwrap_or_else(|| panic!("{run} is not listed: {list}"));
    row.split(&format!("<td class=\"{class}\">"))
        .nth(1)
        .and_then(|cell| cell.split("</td>").next())
        .unwrap_or_else(|| panic!("no {class} cell: {row}"))
        .to_owned()
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
    assert_eq!(runs_list_cell(&inbox, &run, "lease"), "left (resumable)");
    let page = inbox.run_page(&run);
    assert!(
        page.contains("id=\"not-finished\"><span id=\"lease\">left (resumable)</span>"),
        "{page}"
    );
    assert_eq!(send_resume(&inbox, &run, &page).status(), 303);
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
fn a_run_a_process_drives_offers_no_resume_and_a_resume_sent_anyway_says_who_took_it() {
    let llm = FakeLlm::start(RULES);
    let (agent, mut child) = run_waiting_in_its_tool(&llm);
    let pid = child.id().to_string();
    let driven = format!("driven by reins run, pid {pid} on ");
    let (_, listed, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    let run = events(&listed).pop().expect("the run")["run"]
        .as_str()
        .expect("its id")
        .to_owned();

    let inbox = Inbox::start(&agent, &[]);
    let cell = runs_list_cell(&inbox, &run, "lease");
    assert!(
        cell.starts_with(&driven) && cell.ends_with(" UTC"),
        "{cell}"
    );
    let page = inbox.run_page(&run);
    assert!(
        page.contains(&format!("<span id=\"lease\">{driven}")),
        "{page}"
    );
    assert!(!page.contains("name=\"resume\""), "{page}");

    // As from the page of a moment ago, when nobody drove it yet.
    let refused = send_resume(&inbox, &run, &page);
    assert_eq!(refused.status(), 409);
    let said = refused.text().expect("the refusal");
    assert!(
        said.contains(&format!("another process took run `{run}`"))
            && said.contains(&format!("it is {driven}")),
        "{said}"
    );
    // Nothing was tried in the background either.
    assert!(!inbox.run_page(&run).contains("resume-failed"));
    // The process that drives it still does; stopped, it ends its tool too.
    assert!(child.try_wait().expect("poll").is_none());
    interrupt(child, &pid);
}
