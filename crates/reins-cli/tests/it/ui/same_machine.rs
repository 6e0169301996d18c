//! What another program on this machine, or a site a person visits, can do to an inbox that
//! listens on loopback with its token: nothing by a name other than loopback's (a site
//! whose name an attacker points at 127.0.0.1 — DNS rebinding — is the same origin to the
//! browser), and nothing with a token read off the inbox's command line, which every user of
//! the machine sees (`ps`): the inbox warns of one given there.

use super::{RULES, agent, suspended_run};
use crate::common::fakellm::FakeLlm;
use crate::common::inbox::{Inbox, form_field, http};

/// Whether the call `t1c0` of `run` still waits, as the inbox's own page shows it.
fn still_waits(inbox: &Inbox, run: &str) -> bool {
    inbox
        .run_page(run)
        .contains("<div class=\"waiting\" data-call=\"t1c0\">")
}

#[test]
fn a_loopback_inbox_with_its_token_answers_no_other_name() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let inbox = Inbox::start(&agent, &[]);
    let port = inbox.url.rsplit(':').next().expect("a port");
    let rebound = format!("evil.example:{port}");
    // What the browser sends once the site's name points at 127.0.0.1: the site's name in
    // `Host`, and, to the browser, the same origin. The inbox's cookie too, were the browser
    // ever to send it there.
    let read = inbox
        .http()
        .get(format!("{}/runs/{run}", inbox.url))
        .header("Host", &rebound)
        .send()
        .expect("get");
    assert_eq!(read.status(), 403);
    let said = read.text().expect("page");
    assert!(said.contains("localhost, 127.0.0.1 or [::1]"), "{said}");
    assert!(!said.contains("csrf"), "{said}");

    let page = inbox.run_page(&run);
    let approved = inbox
        .http()
        .post(format!("{}/runs/{run}/calls/t1c0/approve", inbox.url))
        .header("Host", &rebound)
        .header("Origin", format!("http://{rebound}"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!(
            "csrf={}&binding={}&args=",
            form_field(&page, "csrf"),
            form_field(&page, "binding")
        ))
        .send()
        .expect("post");
    assert_eq!(approved.status(), 403);
    assert!(still_waits(&inbox, &run), "nothing was decided");

    // The token itself, given under that name, sets no cookie for it.
    let given = http()
        .get(&inbox.printed)
        .header("Host", &rebound)
        .send()
        .expect("get");
    assert_eq!(given.status(), 403);
    assert!(given.headers().get("set-cookie").is_none());

    // Loopback's names are answered as before.
    for host in [
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
    ] {
        let read = inbox
            .http()
            .get(format!("{}/runs/{run}", inbox.url))
            .header("Host", &host)
            .send()
            .expect("get");
        assert_eq!(read.status(), 200, "{host}");
    }
}

#[test]
fn a_token_given_on_the_command_line_is_warned_of_and_one_in_the_environment_is_not() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let token = "s3cret-token-of-the-inbox";

    let inbox = Inbox::start(&agent, &["--token", token]);
    let (status, stderr) = inbox.stop("INT");
    assert!(status.success(), "{status}\n{stderr}");
    assert!(
        stderr.contains("reins: warning: --token shows the token to every user")
            && stderr.contains("REINS_UI_TOKEN"),
        "{stderr}"
    );
    assert!(!stderr.contains(token), "{stderr}");

    let inbox = Inbox::start(&agent, &[&format!("--token={token}")]);
    let (_, stderr) = inbox.stop("INT");
    assert!(stderr.contains("reins: warning: --token"), "{stderr}");

    let inbox = Inbox::start_limited(
        &agent.file,
        "127.0.0.1:0",
        &[],
        &[("REINS_UI_TOKEN", token)],
        None,
    );
    let opened = http()
        .get(format!("{}/?token={token}", inbox.url))
        .send()
        .expect("get");
    assert_eq!(opened.status(), 303, "the token is the environment's");
    let (status, stderr) = inbox.stop("INT");
    assert!(status.success(), "{status}\n{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
}
