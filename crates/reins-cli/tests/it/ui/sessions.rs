//! The inbox's session cookie, over real HTTP. A browser sends a host's cookies to every one
//! of its ports (cookies know no ports), so whatever else listens on 127.0.0.1 receives the
//! inbox's cookie too: the cookie carries a secret of this inbox alone, made when it
//! starts, never the token itself, which a `--token` given to several inboxes (or kept for
//! the next start) would open them all with. Inboxes side by side keep their own sessions.

use super::{RULES, agent};
use crate::common::fakellm::FakeLlm;
use crate::common::inbox::{Inbox, http};

const TOKEN: &str = "the-same-token-for-both";

/// Opens `inbox` with the token, as a browser does; the cookie (`name=value`) it sets.
fn session(inbox: &Inbox) -> String {
    let given = http()
        .get(format!("{}/?token={TOKEN}", inbox.url))
        .send()
        .expect("get");
    assert_eq!(given.status(), 303);
    let cookie = given.headers()["set-cookie"].to_str().expect("a cookie");
    cookie.split(';').next().unwrap_or_default().to_owned()
}

/// The status of the front page of `inbox` asked for with `cookie` (a `Cookie` header).
fn status_with(inbox: &Inbox, cookie: &str) -> u16 {
    http()
        .get(format!("{}/", inbox.url))
        .header("Cookie", cookie)
        .send()
        .expect("get")
        .status()
        .as_u16()
}

fn hex(text: &str) -> String {
    text.bytes().map(|byte| format!("{byte:02x}")).collect()
}

#[test]
fn the_cookie_another_port_receives_opens_no_other_inbox_and_holds_no_token() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let first = Inbox::start(&agent, &["--token", TOKEN]);
    let second = Inbox::start(&agent, &["--token", TOKEN]);
    let (first_name, first_value) = session(&first)
        .split_once('=')
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .expect("name=value");
    let (second_name, _) = session(&second)
        .split_once('=')
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .expect("name=value");
    assert_ne!(
        first_name, second_name,
        "each inbox names its cookie for its port"
    );

    // What a server on another port of the machine receives is not the token.
    assert!(!first_value.contains(TOKEN), "{first_value}");
    assert!(!first_value.contains(&hex(TOKEN)), "{first_value}");
    // Nor does it open the other inbox, though both were given the same token.
    assert_eq!(
        status_with(&second, &format!("{second_name}={first_value}")),
        401
    );

    // The browser sends both cookies to both inboxes: each opens its own, and neither
    // replaced the other's.
    let both = format!("{}; {}", session(&first), session(&second));
    assert_eq!(status_with(&first, &both), 200, "{both}");
    assert_eq!(status_with(&second, &both), 200, "{both}");
}
