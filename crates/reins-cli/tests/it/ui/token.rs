//! The token a default inbox makes: another process on this machine — a tool the agent runs,
//! with `curl` — cannot read the pages or approve its own waiting calls; the person running
//! the inbox opens the address it printed, and decides as themself. `--no-token` trusts
//! loopback as before, and only loopback.

use super::{RULES, agent, suspended_run};
use crate::common::fakellm::FakeLlm;
use crate::common::inbox::{Inbox, form_field, http};
use crate::common::outcome;
use serde_json::Value;

/// The calls of `run` still waiting.
fn waiting(agent: &crate::common::AgentDir, run: &str) -> usize {
    let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", run, "--json"]));
    let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
    shown["pending"].as_array().map_or(0, Vec::len)
}

#[test]
fn a_default_inbox_refuses_a_request_without_its_token_to_read_or_to_approve() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let inbox = Inbox::start(&agent, &[]);
    // What a local process sends, naming loopback as a browser here would.
    for path in ["/".to_owned(), format!("/runs/{run}")] {
        let read = http()
            .get(format!("{}{path}", inbox.url))
            .send()
            .expect("get");
        assert_eq!(read.status(), 401, "{path}");
    }
    // Even with a page's anti-forgery token (read with the token), no decision without it.
    let page = inbox.run_page(&run);
    let approved = http()
        .post(format!("{}/runs/{run}/calls/t1c0/approve", inbox.url))
        .header("Origin", &inbox.url)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!(
            "csrf={}&binding={}&args=",
            form_field(&page, "csrf"),
            form_field(&page, "binding")
        ))
        .send()
        .expect("post");
    assert_eq!(approved.status(), 401);
    assert_eq!(waiting(&agent, &run), 1, "the call still waits");
}

#[test]
fn the_printed_address_carries_a_made_token_that_opens_the_inbox_to_decide_as_its_user() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let inbox = Inbox::start(&agent, &[]);
    let token = inbox
        .printed
        .strip_prefix(&format!("{}/?token=", inbox.url))
        .unwrap_or_else(|| panic!("no token in the address: {}", inbox.printed));
    assert!(
        token.len() >= 32 && token.bytes().all(|b| b.is_ascii_hexdigit()),
        "at least 128 bits, in hex: {token}"
    );
    // Opened, it gives its cookie and shows the page without the token.
    let opened = http().get(&inbox.printed).send().expect("get");
    assert_eq!(opened.status(), 303);
    assert_eq!(opened.headers()["location"], "/");
    let cookie = opened.headers()["set-cookie"].to_str().expect("a cookie");
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    // Another inbox makes another token.
    let other = Inbox::start(&agent, &[]);
    assert_ne!(other.printed.split("token=").nth(1), Some(token));

    // The person who opened it decides, as themself: the token was shown only to them.
    let page = inbox.run_page(&run);
    let denied = inbox.decide(&page, &run, "t1c0", "deny", "message=no");
    assert_eq!(denied.status(), 303);
    let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
    let by = shown["decisions"][0]["decided_by"]
        .as_str()
        .unwrap_or_default();
    assert!(by.ends_with("via the reins web inbox"), "{stdout}");
}

#[test]
fn with_no_token_a_loopback_inbox_is_open_to_this_machine() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let inbox = Inbox::start(&agent, &["--no-token"]);
    assert_eq!(inbox.printed, format!("{}/", inbox.url));
    let page = http()
        .get(format!("{}/runs/{run}", inbox.url))
        .send()
        .and_then(|r| r.text())
        .expect("page");
    let approved = inbox.decide(&page, &run, "t1c0", "approve", "args=");
    assert_eq!(approved.status(), 303);
    super::finished(&agent, &run);
}

#[test]
fn no_token_off_loopback_is_refused() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let bind = ["ui", "AGENT", "--bind", "0.0.0.0:0", "--no-token"];
    let (code, _, stderr) = outcome(agent.keyed(&bind));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--no-token is for loopback addresses only, and 0.0.0.0:0 is not one"),
        "{stderr}"
    );
}
