//! `[store] restate_token_env`: `check` wants the variable set, and the commands send its
//! value to the ingress as `Authorization: Bearer`, never printing it. A tiny HTTP server on
//! loopback stands in for an authenticating ingress (the open-source `restate-server` checks
//! no token).

use crate::common::{AgentDir, model_table, outcome};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

const TOKEN: &str = "tok-5c4b3a";

/// Serves one request per connection: 401 unless it carries `Authorization: Bearer <TOKEN>`;
/// else a run's status (one step) or its output. Returns the URL and every `Authorization`
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

    let alone = AgentDir::new(&format!(
        "{}\n[store]\nrestate_token_env = \"REINS_TEST_RESTATE_TOKEN\"\n",
        model_table("http://127.0.0.1:9/v1").trim_end()
    ));
    let (code, _, stderr) = outcome(alone.reins(&["check", "AGENT"]).env("REINS_TEST_KEY", "k"));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("`restate_token_env` needs `restate"),
        "{stderr}"
    );
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
