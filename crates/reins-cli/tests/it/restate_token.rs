//! `[store] restate_token_env` and `restate_admin_token_env`: `check` wants the variables
//! set, the commands send the ingress's token to the ingress as `Authorization: Bearer`, never
//! printing it, and `reins serve` wants only the admin API's, and only with `--register`. A
//! tiny HTTP server on loopback stands in for an authenticating ingress or admin API (the
//! open-source `restate-server` checks no token).

use crate::common::{AgentDir, model_table, outcome, serve_until};

/// Where a worker listens when the test does not call it: any free port.
const FREE_PORT: &str = "127.0.0.1:0";
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Child;
use std::sync::{Arc, Mutex};

const TOKEN: &str = "tok-5c4b3a";

/// Serves one request per connection: 401 unless it carries `Authorization: Bearer <TOKEN>`;
/// else a run's status (one step) or its output (any other path, e.g. the admin API's
/// `/deployments`, gets the status: a success). Returns the URL and every `Authorization`
/// header seen.
fn ingress() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut request = Vec::new();
            let mut buffer = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buffer[..n]),
                }
            }
            let head = String::from_utf8_lossy(&request).into_owned();
            // Read the body too: a connection closed with unread bytes is reset, and the
            // client may then miss the answer.
            let length: usize = head
                .lines()
                .filter_map(|line| line.split_once(':'))
                .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
                .and_then(|(_, value)| value.trim().parse().ok())
                .unwrap_or(0);
            let header_end = request
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .map_or(request.len(), |at| at + 4);
            let mut body_read = request.len() - header_end;
            while body_read < length {
                match stream.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => body_read += n,
                }
            }
            let path = head.split(' ').nth(1).unwrap_or_default().to_owned();
            let authorization = head
                .lines()
                .filter_map(|line| line.split_once(':'))
                .find(|(name, _)| name.eq_ignore_ascii_case("authorization"))
                .map(|(_, value)| value.trim().to_owned())
                .unwrap_or_default();
            let allowed = authorization == format!("Bearer {TOKEN}");
            log.lock().expect("the log").push(authorization);
            let (status, body) = match (allowed, path.ends_with("/output")) {
                (false, _) => ("401 Unauthorized", "no valid token".to_owned()),
                (true, false) => (
                    "200 OK",
                    r#"{"steps":["run-1/model/1"],"pending":[]}"#.to_owned(),
                ),
                (true, true) => (
                    "200 OK",
                    r#"{"run_id":"run-1","answer":"hi","turns":1,"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}"#
                        .to_owned(),
                ),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (url, seen)
}

fn stop(mut worker: Child) {
    let _ = worker.kill();
    let _ = worker.wait();
}

/// `reins serve AGENT` on a free port, registering with the admin API at `admin`: the
/// arguments of [`AgentDir::keyed`].
fn serve_registering(admin: &str) -> [&str; 6] {
    [
        "serve",
        "AGENT",
        "--listen",
        "127.0.0.1:0",
        "--register",
        admin,
    ]
}

/// `reins check` of an agent whose `[store]` names only `key = "variable"`: refused, as the
/// key means nothing without `restate`.
fn needs_restate(key: &str, variable: &str) {
    let alone = AgentDir::new(&format!(
        "{}\n[store]\n{key} = \"{variable}\"\n",
        model_table("http://127.0.0.1:9/v1").trim_end()
    ));
    let (code, _, stderr) = outcome(alone.keyed(&["check", "AGENT"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("`{key}` needs `restate")),
        "{stderr}"
    );
}

fn agent(store: &str) -> AgentDir {
    AgentDir::new(&format!(
        "{}\n[store]\n{store}\n",
        model_table("http://127.0.0.1:9/v1").trim_end()
    ))
}

#[test]
fn check_wants_the_restate_token_variable_set() {
    let agent = agent(
        "restate = \"http://127.0.0.1:8080\"\nrestate_token_env = \"REINS_TEST_RESTATE_TOKEN\"",
    );
    let check = |token: Option<&str>| {
        let mut command = agent.reins(&["check", "AGENT"]);
        command.env("REINS_TEST_KEY", "k");
        match token {
            Some(token) => command.env("REINS_TEST_RESTATE_TOKEN", token),
            None => command.env_remove("REINS_TEST_RESTATE_TOKEN"),
        };
        outcome(command)
    };
    let (code, _, stderr) = check(None);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("agent.toml:8:")
            && stderr.contains(
                "environment variable REINS_TEST_RESTATE_TOKEN is not set (the Restate \
                 ingress token)"
            ),
        "{stderr}"
    );
    let (code, _, stderr) = check(Some(TOKEN));
    assert_eq!(code, 0, "{stderr}");

    needs_restate("restate_token_env", "REINS_TEST_RESTATE_TOKEN");
}

#[test]
fn the_restate_token_is_sent_to_the_ingress_and_never_printed() {
    let (url, seen) = ingress();
    let agent = agent(&format!(
        "restate = \"{url}\"\nrestate_token_env = \"REINS_TEST_RESTATE_TOKEN\""
    ));
    let show = |token: &str| {
        outcome(
            agent
                .reins(&["runs", "show", "AGENT", "run-1", "--json"])
                .env("REINS_TEST_RESTATE_TOKEN", token),
        )
    };
    let (code, stdout, stderr) = show(TOKEN);
    assert_eq!(code, 0, "{stderr}");
    let shown: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(shown["status"], "completed", "{shown}");
    let sent = seen.lock().expect("the log").clone();
    assert!(!sent.is_empty());
    assert!(
        sent.iter()
            .all(|header| *header == format!("Bearer {TOKEN}")),
        "{sent:?}"
    );

    let stale = format!("{TOKEN}-stale");
    let (code, stdout, stderr) = show(&stale);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("refused the bearer token of `restate_token_env` (HTTP 401"),
        "{stderr}"
    );
    assert!(
        !stderr.contains(TOKEN) && !stdout.contains(TOKEN),
        "{stderr}"
    );
}

#[test]
fn serve_without_register_needs_no_restate_token() {
    // The worker only answers Restate: the ingress (unreachable here) is never called.
    let agent =
        agent("restate = \"http://127.0.0.1:9\"\nrestate_token_env = \"REINS_TEST_RESTATE_TOKEN\"");
    let unset = [("REINS_TEST_RESTATE_TOKEN", None)];
    let (worker, printed) = serve_until(&agent, FREE_PORT, &[], &unset, "reins: register it once");
    stop(worker);
    assert!(
        printed
            .iter()
            .any(|line| line.starts_with("reins: serving agent")),
        "{printed:?}"
    );

    // `--register` sends it to the admin API (the file names no admin token of its own): it
    // must be set, and nothing is served without it.
    let (code, _, stderr) = outcome(
        agent
            .keyed(&serve_registering("http://127.0.0.1:9"))
            .env_remove("REINS_TEST_RESTATE_TOKEN"),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "environment variable REINS_TEST_RESTATE_TOKEN is not set (the Restate ingress \
             token, which `--register` sends to the admin API without \
             `restate_admin_token_env`)"
        ),
        "{stderr}"
    );
}

#[test]
fn register_sends_the_admin_token_of_its_own_variable_else_the_ingress_token() {
    let (admin, seen) = ingress();
    let own = agent(
        "restate = \"http://127.0.0.1:9\"\nrestate_token_env = \"REINS_TEST_RESTATE_TOKEN\"\n\
         restate_admin_token_env = \"REINS_TEST_RESTATE_ADMIN_TOKEN\"",
    );
    let shared =
        agent("restate = \"http://127.0.0.1:9\"\nrestate_token_env = \"REINS_TEST_RESTATE_TOKEN\"");
    let stale = format!("{TOKEN}-ingress");
    // With a variable of its own, the ingress's is not needed (unset) nor sent (stale).
    for ingress_token in [None, Some(stale.as_str())] {
        let env = [
            ("REINS_TEST_RESTATE_TOKEN", ingress_token),
            ("REINS_TEST_RESTATE_ADMIN_TOKEN", Some(TOKEN)),
        ];
        let (worker, printed) = serve_until(
            &own,
            FREE_PORT,
            &["--register", &admin],
            &env,
            "reins: registered",
        );
        stop(worker);
        assert!(
            printed.iter().all(|line| !line.contains(TOKEN)),
            "{printed:?}"
        );
    }
    let env = [
        ("REINS_TEST_RESTATE_TOKEN", Some(TOKEN)),
        ("REINS_TEST_RESTATE_ADMIN_TOKEN", None),
    ];
    let (worker, _) = serve_until(
        &shared,
        FREE_PORT,
        &["--register", &admin],
        &env,
        "reins: registered",
    );
    stop(worker);
    let sent = seen.lock().expect("the log").clone();
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert!(
        sent.iter()
            .all(|header| *header == format!("Bearer {TOKEN}")),
        "{sent:?}"
    );

    // `check` wants the admin token's variable set; the commands on runs do not.
    let check = outcome(
        own.keyed(&["check", "AGENT"])
            .env("REINS_TEST_RESTATE_TOKEN", TOKEN)
            .env_remove("REINS_TEST_RESTATE_ADMIN_TOKEN"),
    );
    let (code, _, stderr) = check;
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "environment variable REINS_TEST_RESTATE_ADMIN_TOKEN is not set (the Restate admin \
             API token)"
        ),
        "{stderr}"
    );
    let (ingress, _) = ingress();
    let runs = agent(&format!(
        "restate = \"{ingress}\"\nrestate_token_env = \"REINS_TEST_RESTATE_TOKEN\"\n\
         restate_admin_token_env = \"REINS_TEST_RESTATE_ADMIN_TOKEN\""
    ));
    let (code, _, stderr) = outcome(
        runs.reins(&["runs", "show", "AGENT", "run-1", "--json"])
            .env("REINS_TEST_RESTATE_TOKEN", TOKEN)
            .env_remove("REINS_TEST_RESTATE_ADMIN_TOKEN"),
    );
    assert_eq!(code, 0, "{stderr}");

    needs_restate("restate_admin_token_env", "REINS_TEST_RESTATE_ADMIN_TOKEN");
}

/// An admin API that refuses the registration's token (or wants one) is answered with the
/// key of the agent file to set, and the token is not printed.
#[test]
fn a_refused_registration_names_the_variable_whose_token_it_wants() {
    let (admin, _) = ingress();
    let stale = "tok-stale-9f8e";
    let cases = [
        (
            "restate_token_env = \"REINS_TEST_RESTATE_TOKEN\"\n\
             restate_admin_token_env = \"REINS_TEST_RESTATE_ADMIN_TOKEN\"",
            "it refused the bearer token of `restate_admin_token_env`",
        ),
        (
            "restate_token_env = \"REINS_TEST_RESTATE_TOKEN\"",
            "it refused the bearer token of `restate_token_env` (an admin API with a token of \
             its own takes it from the variable `[store] restate_admin_token_env` names)",
        ),
        (
            "",
            "it wants credentials: name the variable holding its bearer token in `[store] \
             restate_admin_token_env`",
        ),
    ];
    for (store, said) in cases {
        let agent = agent(&format!("restate = \"http://127.0.0.1:9\"\n{store}"));
        let (code, _, stderr) = outcome(
            agent
                .keyed(&serve_registering(&admin))
                .env("REINS_TEST_RESTATE_TOKEN", stale)
                .env("REINS_TEST_RESTATE_ADMIN_TOKEN", stale),
        );
        assert_ne!(code, 0, "{stderr}");
        assert!(stderr.contains("401"), "{stderr}");
        assert!(stderr.contains(said), "{store}: {stderr}");
        assert!(!stderr.contains(stale), "{stderr}");
    }
}
