//! In headless Chromium, as a person uses the inbox: a suspended run appears, is approved
//! with edited arguments and finishes; two inboxes with tokens are open side by side; a form
//! under the pointer is never replaced by another call's.

use super::{RULES, agent, suspended_run};
use crate::common::fakellm::FakeLlm;
use crate::common::inbox::Inbox;
use crate::common::outcome;
use crate::common::webdriver::Browser;

#[test]
fn in_a_browser_a_suspended_run_is_approved_with_edited_arguments_and_finishes() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let inbox = Inbox::start(&agent, &[]);
    let browser = Browser::start();

    // The address `reins ui` printed, with the token it made: the runs, the token gone
    // from the address.
    browser.goto(&inbox.printed);
    let shown = browser.script("return location.href;", serde_json::json!([]));
    assert_eq!(shown, format!("{}/", inbox.url).as_str());
    let link = browser.find("tr.run a");
    assert_eq!(browser.text(&link), run);
    browser.wait_for_text("tr.run .status", "waiting for a decision");
    browser.wait_for_text("tr.run .model", "openai/gpt-5-mini");
    if let Ok(dir) = std::env::var("REINS_SCREENSHOTS") {
        std::fs::write(format!("{dir}/inbox.png"), browser.screenshot()).expect("screenshot");
    }
    browser.click(&link);

    // The model's arguments are shown as text, never as markup.
    let args = browser.find("textarea[name=args]");
    let images = browser.script(
        "return document.querySelectorAll('img').length;",
        serde_json::json!([]),
    );
    assert_eq!(images, 0, "nothing from the model is rendered as HTML");
    let timeline = browser.text(&browser.find("#timeline"));
    assert!(
        timeline.contains("<img src=x onerror=alert(1)>"),
        "{timeline}"
    );

    browser.clear(&args);
    browser.type_text(&args, r#"{"text": "edited"}"#);
    if let Ok(dir) = std::env::var("REINS_SCREENSHOTS") {
        std::fs::write(format!("{dir}/approval.png"), browser.screenshot()).expect("screenshot");
    }
    browser.click(&browser.find("button[name=approve]"));

    // Live updates: the page follows the run to its end without a reload.
    browser.wait_for_text("#status", "completed");
    let timeline = browser.text(&browser.find("#timeline"));
    assert!(timeline.contains("note: edited"), "{timeline}");
    assert!(timeline.contains("Done: the note is saved."), "{timeline}");
    if let Ok(dir) = std::env::var("REINS_SCREENSHOTS") {
        std::fs::write(format!("{dir}/run.png"), browser.screenshot()).expect("screenshot");
    }
}

/// Arguments edited into bad JSON: the run's page comes back with the person's text in the
/// box and why next to it; the page's refresh keeps it (the live part is what the server
/// sends now), and the text mended is approved.
#[test]
fn in_a_browser_bad_json_in_the_arguments_is_kept_with_why_beside_it() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let inbox = Inbox::start(&agent, &[]);
    let browser = Browser::start();
    browser.goto(&inbox.printed);
    browser.goto(&format!("{}/runs/{run}", inbox.url));
    let args = browser.find("textarea[name=args]");
    browser.clear(&args);
    let typed = r#"{"text": "edited <b>"#;
    browser.type_text(&args, typed);
    browser.click(&browser.find("button[name=approve]"));

    let error = browser.find("#args-error");
    assert!(
        browser
            .text(&error)
            .contains("the arguments are not valid JSON"),
        "{}",
        browser.text(&error)
    );
    let kept = browser.script(
        "return document.querySelector('textarea[name=args]').value;",
        serde_json::json!([]),
    );
    assert_eq!(kept, typed);
    if let Ok(dir) = std::env::var("REINS_SCREENSHOTS") {
        std::fs::write(format!("{dir}/bad-json.png"), browser.screenshot()).expect("screenshot");
    }
    // What the refresh compares: the part shown is the one the live address answers, so it
    // is not replaced by a form with the model's arguments.
    let shown = browser.script(
        "return document.getElementById('decisions').dataset.digest;",
        serde_json::json!([]),
    );
    let live: serde_json::Value = inbox
        .http()
        .get(format!("{}/live/runs/{run}", inbox.url))
        .send()
        .and_then(|r| r.json())
        .expect("the live parts");
    assert_eq!(shown, live["decisions"]["digest"]);

    let args = browser.find("textarea[name=args]");
    browser.clear(&args);
    browser.type_text(&args, r#"{"text": "mended"}"#);
    browser.click(&browser.find("button[name=approve]"));
    browser.wait_for_text("#status", "completed");
    let timeline = browser.text(&browser.find("#timeline"));
    assert!(timeline.contains("note: mended"), "{timeline}");
}

/// A browser sends a host's cookies to every port of it: two inboxes on one machine, each
/// opened with its token, both stay open (neither replaces the other's cookie).
#[test]
fn in_a_browser_two_inboxes_with_tokens_on_one_machine_both_stay_open() {
    let server = FakeLlm::start(RULES);
    let first = Inbox::start(&agent(&server), &["--token", "first-token"]);
    let second = Inbox::start(&agent(&server), &["--token", "second-token"]);
    let browser = Browser::start();
    let title = || browser.script("return document.title;", serde_json::json!([]));
    browser.goto(&format!("{}/?token=first-token", first.url));
    assert_eq!(title(), "runs of notes");
    browser.goto(&format!("{}/?token=second-token", second.url));
    assert_eq!(title(), "runs of notes");
    for inbox in [&first, &second] {
        browser.goto(&format!("{}/", inbox.url));
        assert_eq!(title(), "runs of notes", "{}", inbox.url);
    }
}

/// The model saves a first note, then a second: each call waits for a person.
const TWO_NOTES: &str = r#"
version: 1
rules:
  - name: done
    when:
      tool_result_contains: "note: second"
    respond:
      content: "Both notes are saved."
  - name: second
    when:
      tool_result_contains: "note: first"
    respond:
      tool_calls:
        - name: save_note
          arguments: {text: "second"}
  - name: first
    when:
      messages_contain: "note"
    respond:
      tool_calls:
        - name: save_note
          arguments: {text: "first LONG"}
"#;

/// A person about to approve the first call (its long argument wrapped), the pointer on its button, while it is decided
/// elsewhere and the run goes on to wait for a second call: the page keeps the first call's
/// form under the pointer and says the run changed, rather than putting the second call's
/// form there; the click meant for the first call is refused, and the second call still
/// waits for someone to read it.
#[test]
fn in_a_browser_the_form_under_the_pointer_never_becomes_another_calls() {
    // The first note ends in a word longer than the page is wide.
    let server = FakeLlm::start(&TWO_NOTES.replace("LONG", &"A".repeat(2_000)));
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let inbox = Inbox::start(&agent, &[]);
    let browser = Browser::start();
    browser.goto(&inbox.printed);
    browser.goto(&format!("{}/runs/{run}", inbox.url));
    // The model's long word is wrapped: the page is never wider than the window, where the
    // end of an argument would be out of sight.
    let overflow = browser.script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth;",
        serde_json::json!([]),
    );
    assert_eq!(overflow, 0, "the page is wider than the window");
    let approve = browser.find("#decisions .waiting[data-call=t1c0] button[name=approve]");
    browser.hover(&approve);

    // Decided on the command line; resumed there, the run waits for the second call.
    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = outcome(agent.keyed(&["runs", "resume", "AGENT", &run]));
    assert_eq!(code, 3, "{stdout}\n{stderr}");

    browser.wait_for_text("#changed b", "The run changed.");
    let shown = browser.script(
        "return [...document.querySelectorAll('#decisions .waiting')].map(e => e.dataset.call);",
        serde_json::json!([]),
    );
    assert_eq!(shown, serde_json::json!(["t1c0"]), "the form read is kept");
    if let Ok(dir) = std::env::var("REINS_SCREENSHOTS") {
        std::fs::write(format!("{dir}/changed.png"), browser.screenshot()).expect("screenshot");
    }
    browser.click(&approve);
    browser.wait_for_text("h1", "not done");

    // Nothing was decided about the second call.
    let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    let shown: serde_json::Value = serde_json::from_str(stdout.trim()).expect("json");
    let pending = shown["pending"].as_array().expect("pending calls");
    assert_eq!(pending.len(), 1, "{stdout}");
    assert!(pending[0].to_string().contains("second"), "{stdout}");
    assert_eq!(
        shown["decisions"].as_array().map(Vec::len),
        Some(1),
        "{stdout}"
    );
}
