//! In headless Chromium, as a person uses the inbox: a suspended run appears, is approved
//! with edited arguments and finishes; two inboxes with tokens are open side by side.

use super::{RULES, agent, suspended_run};
use crate::common::fakellm::FakeLlm;
use crate::common::inbox::Inbox;
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
