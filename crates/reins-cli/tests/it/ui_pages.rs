//! What a person reads in `reins ui` beyond the happy path: a refused request is a page
//! that says why and leads back, an empty inbox says how to fill it, and an approved call's
//! page says the inbox runs the run on, then follows it to its end.

use crate::common::fakellm::FakeLlm;
use crate::common::inbox::{Inbox, form_field};
use crate::common::webdriver::Browser;
use crate::common::{AgentDir, events, model_table, outcome};
use crate::ui::{RULES, agent, suspended_run};
use std::time::{Duration, Instant};

/// The response's content type and text.
fn read(response: reqwest::blocking::Response) -> (String, String) {
    let kind = response
        .headers()
        .get("content-type")
        .and_then(|c| c.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    (kind, response.text().expect("text"))
}

#[test]
fn a_refused_request_is_a_page_that_says_why_and_leads_back_to_the_run() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let inbox = Inbox::start(&agent, &[]);

    // A run that is not there: the name is shown as typed, escaped once.
    let missing = inbox
        .http()
        .get(format!("{}/runs/%3Cb%3Enope", inbox.url))
        .send()
        .expect("get");
    assert_eq!(missing.status(), 404);
    let (kind, page) = read(missing);
    assert!(kind.starts_with("text/html"), "{kind}\n{page}");
    assert!(page.contains("no run `&lt;b&gt;nope` is stored"), "{page}");
    assert!(page.contains("<a href=\"/\">runs</a>"), "{page}");

    // Arguments that are not JSON: the decision is refused, and the run's page is shown
    // again with the person's text kept in the form (escaped) and why next to it.
    let page = inbox.run_page(&run);
    let refused = inbox.decide(
        &page,
        &run,
        "t1c0",
        "approve",
        "args=%7B%22text%22%3A+%3Cb%3E",
    );
    let page_before = page;
    assert_eq!(refused.status(), 400);
    let (kind, page) = read(refused);
    assert!(kind.starts_with("text/html"), "{kind}\n{page}");
    let form = page
        .split("<div class=\"waiting\" data-call=\"t1c0\">")
        .nth(1)
        .and_then(|rest| rest.split("</div>").next())
        .unwrap_or_else(|| panic!("the call's forms are shown again\n{page}"));
    assert!(
        form.contains(">{&quot;text&quot;: &lt;b&gt;</textarea>"),
        "the text is kept, escaped\n{form}"
    );
    assert!(
        form.contains("id=\"args-error\"") && form.contains("the arguments are not valid JSON"),
        "why, next to the text\n{form}"
    );
    assert!(!page.contains("<b>\"") && !form.contains(": <b>"), "{page}");
    // The same anti-forgery token and the call as the person's page showed it.
    assert_eq!(form_field(form, "csrf"), form_field(&page_before, "csrf"));
    assert_eq!(
        form_field(form, "binding"),
        form_field(&page_before, "binding")
    );

    // A call decided on the command line since the page was shown: the page says by whom,
    // and that the run goes on from its page.
    let (code, _, stderr) =
        outcome(agent.reins(&["runs", "approve", "AGENT", &run, "--as", "ana"]));
    assert_eq!(code, 0, "{stderr}");
    let stale = inbox.decide(&page_before, &run, "t1c0", "deny", "message=no");
    assert_eq!(stale.status(), 409);
    let (_, page) = read(stale);
    assert!(
        page.contains(&format!(
            "call `t1c0` of run `{run}` is already approved (by ana via reins runs approve, at "
        )) && page.contains("resume the run from its page"),
        "{page}"
    );
}

#[test]
fn an_inbox_without_runs_says_how_to_start_one() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let inbox = Inbox::start(&agent, &[]);
    let page = inbox
        .http()
        .get(format!("{}/", inbox.url))
        .send()
        .and_then(|r| r.text())
        .expect("page");
    assert!(
        page.contains(&format!(
            "No runs yet. Start one with <code>reins run {} \"your prompt\"</code>",
            agent.file.display()
        )),
        "{page}"
    );
}

/// A tool that runs until the file `go` exists (creating `waiting` first), every call of
/// which waits for a person.
const GATED_TOOL: &str = r#"[[tools.shell]]
name = "wait"
description = "Waits."
command = ["sh", "-c", "touch waiting; while ! test -e go; do sleep 0.1; done; echo finished"]
schema = { type = "object", properties = {} }

[hooks.approval]
rules = [{ tool = "wait", action = "ask" }]
"#;

/// Waits until `script` (JavaScript) returns true in the browser's page.
fn wait_until(browser: &Browser, script: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while browser.script(script, serde_json::json!([])) != serde_json::json!(true) {
        assert!(Instant::now() < deadline, "{what} never happened");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn an_approved_calls_page_says_the_inbox_runs_it_and_follows_it_to_its_end() {
    let llm = FakeLlm::start(crate::interrupt::RULES);
    let agent = AgentDir::new(&format!(
        "{model}\n{GATED_TOOL}",
        model = model_table(&llm.openai_url())
    ));
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "Please wait.", "--json"]));
    assert_eq!(code, 3, "{stdout}\n{stderr}");
    let run = events(&stdout).pop().expect("events")["run"]
        .as_str()
        .expect("a run id")
        .to_owned();
    let inbox = Inbox::start(&agent, &[]);
    // fakellm reports no usage: the page says so rather than "0 tokens".
    assert!(
        inbox
            .run_page(&run)
            .contains("1 turn(s), model openai/gpt-5-mini, no token counts from the provider"),
        "{}",
        inbox.run_page(&run)
    );
    let browser = Browser::start();
    browser.goto(&inbox.printed);
    browser.goto(&format!("{}/runs/{run}", inbox.url));
    browser.click(&browser.find("button[name=approve]"));

    // While the run goes on, the page says so, and offers no second resume of it.
    browser.wait_for_text(
        "#resumed-here",
        "This inbox is running the run now: this page follows it, and a call that waits \
         for a decision shows up here.",
    );
    let offered = browser.script(
        "return document.querySelector('button[name=resume]') !== null;",
        serde_json::json!([]),
    );
    assert_eq!(offered, serde_json::json!(false));

    // Its end shows without a reload, and the note goes with it.
    std::fs::write(agent.dir.path().join("go"), "").expect("let the tool finish");
    browser.wait_for_text("#status", "completed");
    wait_until(
        &browser,
        "return document.querySelector('#resumed-here') === null;",
        "the note going away once the run ended",
    );
    let timeline = browser.text(&browser.find("#timeline"));
    assert!(timeline.contains("Waited."), "{timeline}");
}

/// A second `reins ui` on the port of one already running (the default 7878, for another
/// agent's inbox): it exits 1 saying that the port is taken and how to pick another.
#[test]
fn an_inbox_on_a_port_in_use_says_to_pick_another_with_bind() {
    let agent = AgentDir::new(&model_table("http://127.0.0.1:9"));
    let first = Inbox::start(&agent, &[]);
    let taken = first.url.trim_start_matches("http://").to_owned();
    let port: u16 = taken
        .rsplit(':')
        .next()
        .and_then(|port| port.parse().ok())
        .expect("the first inbox's port");
    let (code, _, stderr) = outcome(agent.keyed(&["ui", "AGENT", "--bind", &taken]));
    assert_eq!(code, 1, "{stderr}");
    let other = format!("`--bind 127.0.0.1:{}`", port.wrapping_add(1));
    assert!(
        stderr.contains(&format!("cannot listen on {taken}: the port is in use"))
            && stderr.contains(&other),
        "{stderr}"
    );
}
