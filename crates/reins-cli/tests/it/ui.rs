//! `reins ui`, the web inbox: in headless Chromium a suspended run appears, is approved with
//! edited arguments and finishes; and its guards (token off loopback, anti-forgery, HTML
//! escaping) hold against plain HTTP requests.

use crate::common::fakellm::FakeLlm;
use crate::common::inbox::{Inbox, form_field, http};
use crate::common::webdriver::Browser;
use crate::common::{AgentDir, approve_with_args, model_table, notes_agent, outcome};
use serde_json::Value;

pub const RULES: &str = r#"
version: 1
rules:
  - name: answer
    when:
      tool_result_contains: "note:"
    respond:
      content: "Done: the note is saved."
  - name: save
    when:
      messages_contain: "note"
    respond:
      tool_calls:
        - name: save_note
          arguments: {text: "draft <img src=x onerror=alert(1)>"}
"#;

/// The notes agent whose `save_note` calls wait for a person, with a trace link.
pub fn agent(server: &FakeLlm) -> AgentDir {
    notes_agent(
        &server.openai_url(),
        r#"
[hooks.approval]
rules = [{ tool = "save_note", action = "ask" }]

[ui]
trace_link = "http://127.0.0.1:16686/trace?run={run}&x=<b>"
"#,
    )
}

/// Runs the agent until it suspends; the run's id.
pub fn suspended_run(agent: &AgentDir) -> String {
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "--json"]));
    assert_eq!(code, 3, "{stdout}\n{stderr}");
    let last: Value = serde_json::from_str(stdout.lines().last().expect("events")).expect("json");
    last["run"].as_str().expect("run id").to_owned()
}

#[test]
fn in_a_browser_a_suspended_run_is_approved_with_edited_arguments_and_finishes() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let inbox = Inbox::start(&agent, &[]);
    let browser = Browser::start();

    browser.goto(&format!("{}/", inbox.url));
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

/// Two people deciding the same call at once: one decision is taken and the other refused,
/// as when they come one after the other; never both accepted, the later silently replacing
/// the earlier (a denial shown as taken while the tool runs).
#[test]
fn two_decisions_sent_at_once_take_one_and_refuse_the_other() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let inbox = Inbox::start(&agent, &[]);
    for round in 0..6 {
        // A prompt of its own each round: the mock server goes by what the prompt was told.
        let prompt = format!("Save a note, number {round}.");
        let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", &prompt, "--json"]));
        assert_eq!(code, 3, "{stdout}\n{stderr}");
        let waiting: Value =
            serde_json::from_str(stdout.lines().last().expect("events")).expect("json");
        let run = waiting["run"].as_str().expect("run id").to_owned();
        let page = inbox.run_page(&run);
        let decide = |verdict: &str, fields: &str| {
            inbox
                .decide(&page, &run, "t1c0", verdict, fields)
                .status()
                .as_u16()
        };
        let mut answers = std::thread::scope(|scope| {
            let deny = scope.spawn(|| decide("deny", "message=no"));
            let approve = scope.spawn(|| decide("approve", "args="));
            [deny.join().unwrap(), approve.join().unwrap()]
        });
        answers.sort_unstable();
        assert_eq!(answers, [303, 409], "round {round}");
        let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
        let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
        assert_eq!(
            shown["decisions"].as_array().map(Vec::len),
            Some(1),
            "round {round}: {stdout}"
        );
    }
}

/// Whatever the inbox refuses, it answers with a page that says why, its guarding headers
/// kept: also a form it cannot read, an address it does not serve, a request an address
/// does not take.
#[test]
fn every_refusal_is_a_page_that_says_why() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let inbox = Inbox::start(&agent, &[]);
    let run = suspended_run(&agent);
    let page = |response: reqwest::blocking::Response| {
        let status = response.status().as_u16();
        let kind = response.headers()["content-type"]
            .to_str()
            .unwrap_or("")
            .to_owned();
        let framed = response.headers()["x-frame-options"].clone();
        let body = response.text().expect("body");
        assert!(kind.starts_with("text/html"), "{status}: {kind}: {body}");
        assert_eq!(framed, "DENY", "{status}");
        (status, body)
    };
    let unreadable = http()
        .post(format!("{}/runs/{run}/fork", inbox.url))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("Origin", &inbox.url)
        .body("x=<b>1</b>")
        .send()
        .expect("post");
    let (status, body) = page(unreadable);
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("missing field `csrf`"), "{body}");
    let missing = http()
        .get(format!("{}/nowhere", inbox.url))
        .send()
        .expect("get");
    let (status, body) = page(missing);
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("no page at this address"), "{body}");
    let wrong_method = http()
        .get(format!("{}/runs/{run}/resume", inbox.url))
        .send()
        .expect("get");
    let (status, body) = page(wrong_method);
    assert_eq!(status, 405, "{body}");
}

#[test]
fn a_decision_without_the_anti_forgery_token_or_from_another_site_is_refused() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let inbox = Inbox::start(&agent, &[]);
    let approve = format!("{}/runs/{run}/calls/t1c0/approve", inbox.url);

    let forged = http()
        .post(&approve)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("csrf=guess&args=")
        .send()
        .expect("post");
    assert_eq!(forged.status(), 403);

    let page = inbox.run_page(&run);
    assert!(
        page.contains(&format!(
            "<a id=\"trace\" href=\"http://127.0.0.1:16686/trace?run={run}&amp;x=&lt;b&gt;\">"
        )),
        "the run links to its trace, escaped\n{page}"
    );
    let csrf = form_field(&page, "csrf");
    let cross_site = http()
        .post(&approve)
        .header("Origin", "http://evil.example")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!("csrf={csrf}&args="))
        .send()
        .expect("post");
    assert_eq!(cross_site.status(), 403);

    // A page of another site whose name was rebound to this address (DNS rebinding) is the
    // same origin to the browser, and could read the page's token: a name other than a
    // loopback one is refused, for reading as for deciding.
    let port = inbox.url.rsplit(':').next().expect("a port");
    let rebound = format!("evil.example:{port}");
    let read = http()
        .get(format!("{}/runs/{run}", inbox.url))
        .header("Host", &rebound)
        .send()
        .expect("get");
    assert_eq!(read.status(), 403);
    let decided = http()
        .post(&approve)
        .header("Host", &rebound)
        .header("Origin", format!("http://{rebound}"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!("csrf={csrf}&args="))
        .send()
        .expect("post");
    assert_eq!(decided.status(), 403);
    // Loopback names are served.
    let by_name = http()
        .get(format!("http://localhost:{port}/runs/{run}"))
        .send()
        .expect("get");
    assert_eq!(by_name.status(), 200);

    // Nothing was decided: the call still waits.
    let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
    assert_eq!(
        shown["pending"].as_array().map(Vec::len),
        Some(1),
        "{stdout}"
    );
}

#[test]
fn with_a_token_every_request_must_carry_it() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let inbox = Inbox::start(&agent, &["--token", "s3cret-token"]);
    let refused = http().get(format!("{}/", inbox.url)).send().expect("get");
    assert_eq!(refused.status(), 401);
    // The token opens the page it was given with, which is shown again without it: the
    // address bar and the browser's history keep no token.
    let allowed = http()
        .get(format!(
            "{}/runs?token=s3cret-token&x=1&tokens=2",
            inbox.url
        ))
        .send()
        .expect("get");
    assert_eq!(allowed.status(), 303);
    assert_eq!(allowed.headers()["location"], "/runs?tokens=2&x=1");
    // However the address spells the parameter's name, it does not stay (nor loop).
    let spelled = http()
        .get(format!("{}/runs?%74oken=s3cret-token", inbox.url))
        .send()
        .expect("get");
    assert_eq!(spelled.status(), 303);
    assert_eq!(spelled.headers()["location"], "/runs");
    let allowed = http()
        .get(format!("{}/?token=s3cret-token", inbox.url))
        .send()
        .expect("get");
    assert_eq!(allowed.status(), 303);
    assert_eq!(allowed.headers()["location"], "/");
    let cookie = allowed
        .headers()
        .get("set-cookie")
        .and_then(|c| c.to_str().ok())
        .expect("a cookie")
        .to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let with_cookie = http()
        .get(format!("{}/", inbox.url))
        .header("Cookie", cookie.split(';').next().unwrap_or_default())
        .send()
        .expect("get");
    assert_eq!(with_cookie.status(), 200);
    // A link to another site (a trace viewer) is not told the inbox's addresses.
    assert_eq!(with_cookie.headers()["referrer-policy"], "same-origin");
    // Pages carry the anti-forgery token and the calls' arguments: no cache keeps them.
    assert_eq!(with_cookie.headers()["cache-control"], "no-store");
    assert_eq!(with_cookie.headers()["x-content-type-options"], "nosniff");
    // No inline script runs: the pages' one script is a file of the inbox's own.
    let policy = with_cookie.headers()["content-security-policy"]
        .to_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        policy.contains("script-src 'self';") && !policy.contains("unsafe-inline'; connect"),
        "{policy}"
    );
    let page = with_cookie.text().expect("page");
    assert!(page.contains("<script src=\"/inbox.js\""), "{page}");
    assert!(!page.contains("<script>"), "{page}");
}

#[test]
fn wrong_tokens_past_a_few_a_minute_are_refused_and_the_right_one_still_gets_in() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let inbox = Inbox::start(&agent, &["--token", "s3cret-token"]);
    let status_of = |address: String| http().get(address).send().expect("get").status();
    // No token at all is no guess: as often as a page is opened, it is asked for one.
    for _ in 0..12 {
        assert_eq!(status_of(format!("{}/", inbox.url)), 401);
    }
    for guess in 0..10 {
        assert_eq!(
            status_of(format!("{}/?token=guess-{guess}", inbox.url)),
            401
        );
    }
    let refused = http()
        .get(format!("{}/?token=guess-10", inbox.url))
        .send()
        .expect("get");
    assert_eq!(refused.status(), 429);
    let wait: u64 = refused.headers()["retry-after"]
        .to_str()
        .ok()
        .and_then(|seconds| seconds.parse().ok())
        .expect("a Retry-After in seconds");
    assert!((1..=60).contains(&wait), "{wait}");
    // A wrong cookie is a guess too; the right token still opens the inbox.
    let cookie = http()
        .get(format!("{}/", inbox.url))
        .header("Cookie", "reins_token=00")
        .send()
        .expect("get");
    assert_eq!(cookie.status(), 429);
    assert_eq!(status_of(format!("{}/?token=s3cret-token", inbox.url)), 303);
}

#[test]
fn a_token_with_spaces_and_semicolons_opens_the_inbox_through_its_cookie() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let inbox = Inbox::start(&agent, &["--token", "two words; and=more"]);
    let given = http()
        .get(format!("{}/?token=two%20words%3B%20and%3Dmore", inbox.url))
        .send()
        .expect("get");
    assert_eq!(given.status(), 303);
    let cookie = given.headers()["set-cookie"].to_str().unwrap().to_owned();
    let with_cookie = http()
        .get(format!("{}/", inbox.url))
        .header("Cookie", cookie.split(';').next().unwrap_or_default())
        .send()
        .expect("get");
    assert_eq!(with_cookie.status(), 200, "{cookie}");
}

#[test]
fn binding_off_loopback_without_a_long_token_is_refused() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let (code, _, stderr) = outcome(agent.keyed(&["ui", "AGENT", "--bind", "0.0.0.0:0"]));
    // A usage mistake, like any other.
    assert_eq!(code, 2);
    assert!(stderr.contains("not a loopback address"), "{stderr}");
    // Nor with a token short enough to guess.
    let bind = ["ui", "AGENT", "--bind", "0.0.0.0:0", "--token", "s3cret"];
    let (code, _, stderr) = outcome(agent.keyed(&bind));
    assert_eq!(code, 2);
    assert!(stderr.contains("at least 16 characters"), "{stderr}");
}

#[test]
fn a_run_decided_on_the_command_line_is_resumed_from_the_inbox() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let (code, _, stderr) = approve_with_args(&agent, &run, r#"{"text": "from the shell"}"#);
    assert_eq!(code, 0, "{stderr}");
    let inbox = Inbox::start(&agent, &[]);
    let page = inbox.run_page(&run);
    assert!(page.contains("name=\"resume\""), "{page}");
    let csrf = form_field(&page, "csrf");
    let resumed = http()
        .post(format!("{}/runs/{run}/resume", inbox.url))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!("csrf={csrf}"))
        .send()
        .expect("post");
    assert_eq!(resumed.status(), 303);
    // The run finishes in the inbox's process; the store says so.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
        let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
        if shown["status"] == "completed" {
            assert!(
                shown["history"]
                    .to_string()
                    .contains("note: from the shell"),
                "{stdout}"
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the run never finished: {stdout}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn the_inbox_of_another_agent_beside_it_neither_lists_nor_opens_its_runs() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    // Another agent in the same directory shares the store, and so sees the run in it.
    let other = agent.dir.path().join("other.toml");
    std::fs::write(
        &other,
        format!("name = \"other\"\n{}", model_table(&server.openai_url())),
    )
    .expect("the other agent file");
    let inbox = Inbox::start_file(&other, &[]);
    let listed = http()
        .get(format!("{}/", inbox.url))
        .send()
        .and_then(|r| r.text())
        .expect("page");
    assert!(!listed.contains(&run), "{listed}");
    let page = http()
        .get(format!("{}/runs/{run}", inbox.url))
        .send()
        .expect("page");
    assert_eq!(page.status(), 404);
    let message = page.text().expect("text");
    assert!(
        message.contains("is a run of the agent `notes`, not `other`"),
        "{message}"
    );

    // Its own inbox lists it.
    let own = Inbox::start(&agent, &[]);
    let listed = http()
        .get(format!("{}/", own.url))
        .send()
        .and_then(|r| r.text())
        .expect("page");
    assert!(listed.contains(&run), "{listed}");
}

/// With a token, anyone holding it may decide: the decision is recorded as made by a holder
/// of the token, not as made by the user running the inbox; without one, by that user.
#[test]
fn a_decision_through_an_inbox_with_a_token_is_recorded_as_a_token_holders() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let inbox = Inbox::start(&agent, &["--token", "s3cret-token"]);
    let opened = http()
        .get(format!("{}/runs/{run}?token=s3cret-token", inbox.url))
        .send()
        .expect("get");
    let cookie = opened
        .headers()
        .get("set-cookie")
        .and_then(|c| c.to_str().ok())
        .and_then(|c| c.split(';').next())
        .expect("a cookie")
        .to_owned();
    let page = http()
        .get(format!("{}/runs/{run}", inbox.url))
        .header("Cookie", &cookie)
        .send()
        .and_then(|r| r.text())
        .expect("page");
    let (_, shown, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    let shown: Value = serde_json::from_str(shown.trim()).expect("json");
    let call = shown["pending"][0]["call"]
        .as_str()
        .expect("a waiting call")
        .to_owned();
    let decided = http()
        .post(format!("{}/runs/{run}/calls/{call}/deny", inbox.url))
        .header("Cookie", &cookie)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!(
            "csrf={}&binding={}&message=no",
            form_field(&page, "csrf"),
            form_field(&page, "binding")
        ))
        .send()
        .expect("post");
    assert_eq!(decided.status(), 303);
    let (_, shown, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    let shown: Value = serde_json::from_str(shown.trim()).expect("json");
    let by = shown["decisions"][0]["decided_by"]
        .as_str()
        .unwrap_or_default();
    assert!(
        by.starts_with("a holder of the token of the reins web inbox "),
        "{shown}"
    );
}
