//! What a person reads in `reins ui` beyond the happy path: a refused request is a page
//! that says why and leads back, an empty inbox says how to fill it.

use crate::common::fakellm::FakeLlm;
use crate::common::inbox::{Inbox, form_field, http};
use crate::ui::{RULES, agent, suspended_run};

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
    let missing = http()
        .get(format!("{}/runs/%3Cb%3Enope", inbox.url))
        .send()
        .expect("get");
    assert_eq!(missing.status(), 404);
    let (kind, page) = read(missing);
    assert!(kind.starts_with("text/html"), "{kind}\n{page}");
    assert!(page.contains("no run `&lt;b&gt;nope` is stored"), "{page}");
    assert!(page.contains("<a href=\"/\">runs</a>"), "{page}");

    // Arguments that are not JSON: the decision is refused, and the page leads back.
    let page = http()
        .get(format!("{}/runs/{run}", inbox.url))
        .send()
        .and_then(|r| r.text())
        .expect("page");
    let refused = http()
        .post(format!("{}/runs/{run}/calls/t1c0/approve", inbox.url))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!(
            "csrf={}&binding={}&args=%7Bnot+json",
            form_field(&page, "csrf"),
            form_field(&page, "binding")
        ))
        .send()
        .expect("post");
    assert_eq!(refused.status(), 400);
    let (kind, page) = read(refused);
    assert!(kind.starts_with("text/html"), "{kind}\n{page}");
    assert!(
        page.contains("the arguments are not valid JSON"),
        "the page says why\n{page}"
    );
    assert!(
        page.contains(&format!("<a id=\"back\" href=\"/runs/{run}\">")),
        "the page leads back to the run\n{page}"
    );
}

#[test]
fn an_inbox_without_runs_says_how_to_start_one() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let inbox = Inbox::start(&agent, &[]);
    let page = http()
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
