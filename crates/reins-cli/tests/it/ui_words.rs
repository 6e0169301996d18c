//! What a person reads about a call that waits for them: in the inbox, what to do there (not
//! a command to open the inbox they are in) and why the policy asks, as `runs show` says it;
//! in the runs table, what a suspended run waits for; a denial that says "denied" once; and
//! once the run went on, the call and arguments a decision was about rather than a digest —
//! in the inbox and in `reins runs show` alike.

use crate::common::fakellm::FakeLlm;
use crate::common::inbox::Inbox;
use crate::common::webdriver::Browser;
use crate::common::{AgentDir, notes_agent, outcome, save_note_rules, waiting_save_note};
use serde_json::{Value, json};

/// The notes agent whose `save_note` calls wait for a person, and the run that waits.
fn waiting_run(server: &FakeLlm) -> (AgentDir, String) {
    let agent = notes_agent(
        &server.openai_url(),
        "\n[hooks.approval]\nrules = [{ tool = \"save_note\", action = \"ask\" }]\n",
    );
    let run = another_waiting_run(&agent);
    (agent, run)
}

/// Another run of `agent` that waits.
fn another_waiting_run(agent: &AgentDir) -> String {
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "--json"]));
    waiting_save_note(code, &stdout, &stderr).0
}

/// The first decision of `run` as `reins runs show --json` lists it.
fn first_decision(agent: &AgentDir, run: &str) -> Value {
    let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", run, "--json"]));
    let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
    shown["decisions"][0].clone()
}

#[test]
fn in_the_inbox_a_waiting_call_says_to_decide_it_on_the_page() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let (agent, run) = waiting_run(&server);
    let inbox = Inbox::start(&agent, &[]);
    let page = inbox.run_page(&run);
    assert!(
        page.contains("<b>save_note</b> waits for your decision: approve or deny it below</p>"),
        "{page}"
    );
    assert!(
        !page.contains("reins ui"),
        "the person is in the inbox\n{page}"
    );
    // Editing the arguments is offered, not asked for.
    assert!(
        page.contains("arguments (you may change them before approving)"),
        "{page}"
    );

    // In the terminal the commands say where to decide it, once: the stored reason, which
    // says it too, is not repeated above them.
    let (_, shown, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run]));
    assert_eq!(shown.matches("reins ui").count(), 1, "{shown}");
    assert_eq!(shown.matches("reins runs approve").count(), 1, "{shown}");
    assert!(!shown.contains("waiting for a person"), "{shown}");
}

#[test]
fn why_the_policy_asks_is_kept_with_the_waiting_call_for_runs_show_and_the_inbox() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let agent = notes_agent(
        &server.openai_url(),
        "\n[hooks.approval]\nrules = [{ tool = \"save_note\", action = \"ask\", message = \"notes need \
         your approval\" }]\n",
    );
    let run = another_waiting_run(&agent);
    let (_, shown, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run]));
    assert!(
        shown.contains("\n  (notes need your approval)\n"),
        "{shown}"
    );
    assert!(!shown.contains("waiting for a person"), "{shown}");
    let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
    let reason = shown["pending"][0]["reason"].as_str().unwrap_or_default();
    assert!(reason.starts_with("notes need your approval"), "{shown}");

    let inbox = Inbox::start(&agent, &[]);
    let page = inbox.run_page(&run);
    assert!(
        page.contains(
            "<b>save_note</b> waits for your decision (notes need your approval): approve or \
             deny it below</p>"
        ),
        "{page}"
    );
}

#[test]
fn the_runs_and_run_pages_say_what_a_suspended_run_waits_for_and_do_not_link_to_themselves() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let (agent, run) = waiting_run(&server);
    let inbox = Inbox::start(&agent, &[]);
    let get = |path: &str| {
        inbox
            .http()
            .get(format!("{}{path}", inbox.url))
            .send()
            .and_then(|r| r.text())
            .expect("page")
    };
    let runs = get("/");
    assert!(
        runs.contains("data-status=\"suspended\"")
            && runs.contains("<td class=\"status\">waiting for a decision</td>"),
        "{runs}"
    );
    assert!(!runs.contains("<a href=\"/\">"), "{runs}");
    let page = get(&format!("/runs/{run}"));
    assert!(page.contains("<a href=\"/\">runs</a>"), "{page}");
    // The run's own page says it the same way.
    assert!(
        page.contains("data-status=\"suspended\">waiting for a decision</b>"),
        "{page}"
    );

    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    let runs = get("/");
    assert!(
        runs.contains("<td class=\"status\">decided, waiting to resume</td>"),
        "{runs}"
    );
    let page = get(&format!("/runs/{run}"));
    assert!(page.contains(">decided, waiting to resume</b>"), "{page}");
}

#[test]
fn a_denial_says_denied_once_from_the_command_line_and_from_the_inbox() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let (agent, run) = waiting_run(&server);
    let (code, _, stderr) = outcome(agent.reins(&[
        "runs",
        "deny",
        "AGENT",
        &run,
        "--message",
        "not today",
        "--as",
        "dana",
    ]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(first_decision(&agent, &run)["verdict"], "denied: not today");
    let (_, text, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run]));
    assert!(
        text.contains(" denied: not today by dana via reins runs deny at "),
        "{text}"
    );
    assert!(!text.contains("denied: denied"), "{text}");

    // Denied in the inbox without a message: just "denied".
    let run = another_waiting_run(&agent);
    let inbox = Inbox::start(&agent, &[]);
    let page = inbox.run_page(&run);
    let denied = inbox.decide(&page, &run, "t1c0", "deny", "message=");
    assert_eq!(denied.status(), 303);
    assert_eq!(first_decision(&agent, &run)["verdict"], "denied");
}

#[test]
fn in_a_browser_a_denied_call_still_shows_its_arguments_after_the_run_went_on() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let (agent, run) = waiting_run(&server);
    let inbox = Inbox::start(&agent, &[]);
    let browser = Browser::start();
    browser.goto(&inbox.printed);
    browser.goto(&format!("{}/runs/{run}", inbox.url));
    let waiting = browser.text(&browser.find(".waiting p"));
    assert_eq!(
        waiting,
        "save_note waits for your decision: approve or deny it below"
    );

    browser.click(&browser.find("button[name=deny]"));
    browser.wait_for_text("#status", "completed");
    let timeline = browser.text(&browser.find("#timeline"));
    assert!(timeline.contains("I did not save it."), "{timeline}");

    // The call waits no more: the decision still names it and its arguments, and the digest
    // it is bound to is only a tooltip.
    let trail = browser.text(&browser.find("#decisions-trail"));
    assert!(
        trail.contains("call t1c0 (save_note): denied by "),
        "{trail}"
    );
    assert!(trail.contains("for the arguments"), "{trail}");
    assert!(trail.contains("\"text\": \"draft\""), "{trail}");
    assert!(!trail.contains("sha256"), "{trail}");
    let tooltip = browser.script(
        "return document.querySelector('.decision').title;",
        json!([]),
    );
    assert!(
        tooltip
            .as_str()
            .is_some_and(|t| t.starts_with("bound to sha256:")),
        "{tooltip}"
    );
    if let Ok(dir) = std::env::var("REINS_SCREENSHOTS") {
        std::fs::write(format!("{dir}/denied.png"), browser.screenshot()).expect("screenshot");
    }
}

#[test]
fn runs_show_names_a_decided_calls_arguments_after_the_run_went_on() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let (agent, run) = waiting_run(&server);
    let (code, _, stderr) = outcome(agent.reins(&["runs", "deny", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = outcome(agent.keyed(&["runs", "resume", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "I did not save it.");

    let (_, text, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run]));
    assert!(
        text.contains("decision: call t1c0 (save_note) denied by "),
        "{text}"
    );
    assert!(
        text.contains(r#"bound to the arguments {"text":"draft"}"#),
        "{text}"
    );
    assert!(!text.contains("sha256"), "{text}");

    // The digest stays in the JSON listing, for programs.
    let decision = first_decision(&agent, &run);
    assert_eq!(decision["tool"], "save_note", "{decision}");
    assert_eq!(decision["bound_arguments"]["text"], "draft", "{decision}");
    assert!(
        decision["binding"]
            .as_str()
            .is_some_and(|b| b.starts_with("sha256:")),
        "{decision}"
    );
}
