//! The inbox's guards against plain HTTP requests: a token given (and how it is carried;
//! the one a default inbox makes: [`super::token`]), a token off loopback, anti-forgery,
//! and a refusal answered with a page that says why.

use super::{RULES, agent, suspended_run};
use crate::common::fakellm::FakeLlm;
use crate::common::inbox::{Inbox, form_field, http};
use crate::common::outcome;
use serde_json::Value;

/// Whatever the inbox refuses, it answers with a page that says why, its guarding headers
/// kept: also a form it cannot read, an address it does not serve, a request an address
/// does not take.
#[test]
fn every_refusal_is_a_page_that_says_why() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let inbox = Inbox::start(&agent, &[]);
    let http = || inbox.http();
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

/// The headers that guard a page — no framing, no sniffing, no cache, the security policy —
/// are on every answer, those refused before the token or the origin is even checked too:
/// the page saying a token is required, a name other than loopback's, another site's form.
#[test]
fn a_request_refused_at_the_door_carries_the_guarding_headers() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let guarded = |response: reqwest::blocking::Response, status: u16| {
        assert_eq!(response.status(), status);
        let headers = response.headers();
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|value| value.to_str().ok())
                .unwrap_or_else(|| panic!("{status} has no {name}: {headers:?}"))
                .to_owned()
        };
        assert_eq!(header("x-frame-options"), "DENY");
        assert_eq!(header("x-content-type-options"), "nosniff");
        assert_eq!(header("cache-control"), "no-store");
        assert_eq!(header("cross-origin-resource-policy"), "same-origin");
        let policy = header("content-security-policy");
        assert!(
            policy.contains("frame-ancestors 'none'") && policy.contains("base-uri 'none'"),
            "{policy}"
        );
    };
    let with_token = Inbox::start(&agent, &["--token", "s3cret-token"]);
    let no_token = http().get(format!("{}/", with_token.url)).send();
    guarded(no_token.expect("get"), 401);
    let cross_site = http()
        .post(format!(
            "{}/runs/r/resume?token=s3cret-token",
            with_token.url
        ))
        .header("Origin", "http://evil.example")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("csrf=x")
        .send();
    guarded(cross_site.expect("post"), 403);
    drop(with_token);
    let open = Inbox::start(&agent, &["--no-token"]);
    let port = open.url.rsplit(':').next().expect("a port");
    let rebound = http()
        .get(format!("{}/", open.url))
        .header("Host", format!("evil.example:{port}"))
        .send();
    guarded(rebound.expect("get"), 403);
}

/// With `--no-token`, loopback is trusted as before the inbox made a token: a request must
/// name a loopback host, and a decision carry the page's anti-forgery token.
#[test]
fn with_no_token_a_decision_without_the_anti_forgery_token_or_from_another_site_is_refused() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let inbox = Inbox::start(&agent, &["--no-token"]);
    assert!(!inbox.printed.contains("token"), "{}", inbox.printed);
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

/// The address a token is given at is shown again without it, on the inbox: a path that starts
/// with two slashes (or a slash and a backslash) is never sent as `//host/…`, which a browser
/// reads as another site's address.
#[test]
fn the_address_without_the_token_stays_on_the_inbox() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let inbox = Inbox::start(&agent, &["--token", "s3cret-token"]);
    for path in ["//evil.example/", "///evil.example", "/%5Cevil.example"] {
        let answer = http()
            .get(format!("{}{path}?token=s3cret-token", inbox.url))
            .send()
            .expect("get");
        assert_eq!(answer.status(), 303, "{path}");
        let location = answer.headers()["location"].to_str().expect("a location");
        assert!(location.starts_with('/'), "{path}: {location}");
        assert!(
            !location[1..].starts_with(['/', '\\']),
            "{path}: {location} leads to another site"
        );
    }
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
    let port = inbox.url.rsplit(':').next().expect("a port");
    let cookie = http()
        .get(format!("{}/", inbox.url))
        .header("Cookie", format!("reins_token_{port}=00"))
        .send()
        .expect("get");
    assert_eq!(cookie.status(), 429);
    assert_eq!(status_of(format!("{}/?token=s3cret-token", inbox.url)), 303);
}

/// A browser sends a host's cookies to all its ports: a page of another server on this
/// machine can set a cookie of the inbox's name, for a path of the inbox more specific than
/// its own, which the browser then sends first. The person's own cookie still opens the inbox.
#[test]
fn a_cookie_of_the_inbox_s_name_set_by_another_port_does_not_lock_the_person_out() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let inbox = Inbox::start(&agent, &["--token", "s3cret-token"]);
    let given = http()
        .get(format!("{}/?token=s3cret-token", inbox.url))
        .send()
        .expect("get");
    let own = given.headers()["set-cookie"].to_str().expect("a cookie");
    let own = own.split(';').next().unwrap_or_default().to_owned();
    let (name, _) = own.split_once('=').expect("name=value");
    let page = http()
        .get(format!("{}/", inbox.url))
        .header("Cookie", format!("{name}=00; {own}"))
        .send()
        .expect("get");
    assert_eq!(page.status(), 200, "{own}");
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

/// `--bind` takes a host name as `reins serve --listen` does: `localhost` listens on
/// loopback and needs no token given (it makes its own).
#[test]
fn binding_a_loopback_name_needs_no_token_given() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let inbox = Inbox::start_bound(&agent.file, "localhost:0", &[]);
    let page = inbox
        .http()
        .get(format!("{}/", inbox.url))
        .send()
        .expect("get");
    assert_eq!(page.status(), 200, "{}", inbox.url);
}

/// A name that resolves off loopback (`0` is 0.0.0.0, every interface) is refused without a
/// long token like the address itself, naming what it resolved to and never the token.
#[test]
fn binding_a_name_off_loopback_without_a_long_token_is_refused() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let (code, _, stderr) = outcome(agent.keyed(&["ui", "AGENT", "--bind", "0:0"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("0:0 (0.0.0.0:0) is not a loopback address"),
        "{stderr}"
    );
    let bind = ["ui", "AGENT", "--bind", "0:0", "--token", "short-s3cret"];
    let (code, _, stderr) = outcome(agent.keyed(&bind));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("at least 16 characters"), "{stderr}");
    assert!(!stderr.contains("short-s3cret"), "{stderr}");
}

/// An IPv4-mapped loopback address is loopback, as it is to `reins serve --listen`.
#[test]
fn binding_a_mapped_loopback_address_needs_no_token_given() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let inbox = Inbox::start_bound(&agent.file, "[::ffff:127.0.0.1]:0", &[]);
    let page = inbox
        .http()
        .get(format!("{}/", inbox.url))
        .send()
        .expect("get");
    assert_eq!(page.status(), 200, "{}", inbox.url);
}
