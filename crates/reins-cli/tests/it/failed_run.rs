//! A failed run says why: `reins runs show` and the inbox show the error it ended with (its
//! model's server was unreachable, or refused the call), and never the model's key.

use crate::common::inbox::Inbox;
use crate::common::{AgentDir, events, model_table, outcome};
use serde_json::Value;
use std::io::{Read, Write};

#[test]
fn runs_show_says_why_a_run_failed_without_its_key() {
    // Nothing listens on the model's port.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let dead_url = format!("http://{}/v1", closed.local_addr().expect("its address"));
    drop(closed);
    let agent = AgentDir::new(&model_table(&dead_url));
    let key = "sk-test-d0-not-print-7f3a";

    let (code, stdout, stderr) = outcome(
        agent
            .reins(&["run", "AGENT", "Hello.", "--json"])
            .env("REINS_TEST_KEY", key),
    );
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let failed = events(&stdout).pop().expect("events");
    assert_eq!(failed["event"], "error", "{stdout}");
    let run = failed["run"].as_str().expect("a run id").to_owned();

    let (code, stdout, stderr) = outcome(agent.reins(&["runs", "show", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    let reason = stdout
        .lines()
        .find_map(|line| line.strip_prefix("failed: "))
        .unwrap_or_else(|| panic!("no line says why the run failed:\n{stdout}"));
    assert!(
        reason.starts_with("the model call failed: "),
        "the reason names the model call: {reason}"
    );
    assert_eq!(
        Some(reason),
        failed["message"].as_str(),
        "the reason is the error the run ended with"
    );
    assert!(!stdout.contains(key), "{stdout}");

    let (code, stdout, stderr) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    assert_eq!(code, 0, "{stderr}");
    let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
    assert_eq!(shown["status"], "failed");
    assert_eq!(shown["failure"].as_str(), Some(reason));
    assert!(!stdout.contains(key), "{stdout}");
}

/// A model server that refuses every call with `400` and an error whose text is markup;
/// its `/v1` URL.
fn refusing_server() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let url = format!("http://{}/v1", listener.local_addr().expect("its address"));
    std::thread::spawn(move || {
        for mut stream in listener.incoming().map_while(Result::ok) {
            // The request's head is enough: the answer is the same for every request.
            let mut request = [0u8; 8192];
            let _ = stream.read(&mut request);
            let body = r#"{"error":{"message":"bad <img src=x onerror=alert(1)> request","type":"invalid_request_error"}}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

#[test]
fn the_inbox_says_why_a_run_failed_escaped_and_without_its_key() {
    let agent = AgentDir::new(&model_table(&refusing_server()));
    let key = "sk-test-d0-not-print-7f3a";
    let (code, stdout, stderr) = outcome(
        agent
            .reins(&["run", "AGENT", "Hello.", "--json"])
            .env("REINS_TEST_KEY", key),
    );
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let failed = events(&stdout).pop().expect("events");
    let run = failed["run"].as_str().expect("a run id").to_owned();
    let reason = failed["message"].as_str().expect("a message").to_owned();
    assert!(reason.contains("<img src=x"), "{reason}");

    let inbox = Inbox::start(&agent, &[]);
    let escaped = "bad &lt;img src=x onerror=alert(1)&gt; request";
    let page = inbox.run_page(&run);
    let shown = page
        .split("<pre id=\"failure\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("the run's page does not say why it failed\n{page}"));
    assert!(
        shown.starts_with("the model call failed: ") && shown.contains(escaped),
        "the page shows the error the run ended with, as text: {shown}"
    );
    assert!(!page.contains("<img"), "{page}");
    assert!(!page.contains(key), "{page}");

    // The runs table says it too, in the failed run's status cell.
    let table = inbox
        .http()
        .get(format!("{}/", inbox.url))
        .send()
        .and_then(|r| r.text())
        .expect("page");
    let cell = table
        .split("<td class=\"status\"")
        .nth(1)
        .and_then(|rest| rest.split("</td>").next())
        .unwrap_or_else(|| panic!("no status cell\n{table}"));
    assert!(cell.contains(escaped), "{cell}");
    assert!(!table.contains("<img") && !table.contains(key), "{table}");
}
