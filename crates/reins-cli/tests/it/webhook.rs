//! `[hooks.approval] webhook`: an HTTP service answers the approval rules' `ask` instead of
//! the terminal, with the file's token and signature; the file is checked before anything
//! runs.

use crate::common::approval_service::{approval_service, raw_service, silent_service};
use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, last_run_shown, notes_agent, outcome, save_note_rules};
use serde_json::Value;
use std::io::Write;

const TOKEN: &str = "approvals-t0ken";
const SIGNING_SECRET: &str = "whsec-approvals";

/// An agent on fakellm whose `save_note` calls are asked about at `webhook`.
fn agent_file(server: &FakeLlm, webhook: &str) -> AgentDir {
    notes_agent(
        &server.openai_url(),
        &format!(
            r#"
[hooks.approval]
rules = [{{ tool = "save_note", action = "ask" }}]
webhook = "{webhook}"
webhook_token_env = "APPROVAL_TOKEN"
webhook_signing_secret_env = "APPROVAL_SIGNING_SECRET"
timeout_secs = 30
"#
        ),
    )
}

fn run(agent: &AgentDir) -> (i32, String, String) {
    outcome(
        agent
            .keyed(&["run", "AGENT"])
            .env("APPROVAL_TOKEN", TOKEN)
            .env("APPROVAL_SIGNING_SECRET", SIGNING_SECRET),
    )
}

/// The header `name` of a received request.
fn header<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(header, _)| header == name)
        .map(|(_, value)| value.as_str())
}

/// `sha256=` and the hex HMAC-SHA256 of `<timestamp>.<body>` keyed by `SIGNING_SECRET`, by
/// Python's `hmac` module: how a service written in another language checks a request.
fn python_signature(timestamp: &str, body: &[u8]) -> String {
    let script = "import hmac, hashlib, sys\n\
                  key, stamp = sys.argv[1].encode(), sys.argv[2].encode()\n\
                  body = sys.stdin.buffer.read()\n\
                  print('sha256=' + hmac.new(key, stamp + b'.' + body, hashlib.sha256).hexdigest())";
    let mut python = std::process::Command::new("python3")
        .args(["-c", script, SIGNING_SECRET, timestamp])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    python
        .stdin
        .take()
        .expect("stdin")
        .write_all(body)
        .expect("body to python3");
    let output = python.wait_with_output().expect("python3 ran");
    String::from_utf8(output.stdout)
        .expect("text")
        .trim()
        .to_owned()
}

#[test]
fn the_webhook_is_asked_with_the_token_and_its_approval_runs_the_call() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let (url, received) = approval_service(r#"{"decision": "approve"}"#);
    let agent = agent_file(&server, &url);
    let (code, stdout, stderr) = run(&agent);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Done: the note is saved.", "{stderr}");
    assert!(stderr.contains("note: draft"), "the call ran\n{stderr}");

    let received = received.lock().expect("log");
    assert_eq!(received.len(), 1, "one call, asked once");
    let (headers, body) = &received[0];
    assert_eq!(
        header(headers, "authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    let timestamp = header(headers, "x-reins-timestamp").expect("a signed request");
    assert_eq!(
        header(headers, "x-reins-signature"),
        Some(python_signature(timestamp, body).as_str())
    );
    let body: Value = serde_json::from_slice(body).expect("a JSON body");
    assert_eq!(
        header(headers, "idempotency-key"),
        Some(format!("{}/t1c0", body["run_id"].as_str().unwrap_or_default()).as_str()),
        "names the call, for a service to recognise a retry"
    );
    assert_eq!(body["tool_name"], "save_note");
    assert_eq!(body["args"]["text"], "draft");
    assert!(body["run_id"].as_str().is_some_and(|id| !id.is_empty()));
}

#[test]
fn the_webhooks_denial_reaches_the_model_and_the_call_does_not_run() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let (url, _) = approval_service(r#"{"decision": "deny", "message": "denied: not today"}"#);
    let agent = agent_file(&server, &url);
    let (code, stdout, stderr) = run(&agent);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "I did not save it.", "{stderr}");
    assert!(
        !stderr.contains("note: draft"),
        "the call did not run\n{stderr}"
    );
}

/// The webhook's decision is in the run's decision trail, as the approval webhook's (its URL,
/// which may hold a token, is not named).
#[test]
fn the_webhooks_decision_is_in_the_runs_trail() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let (url, _) = approval_service(r#"{"decision": "deny", "message": "denied: not today"}"#);
    let agent = agent_file(&server, &url);
    let (code, _, stderr) = run(&agent);
    assert_eq!(code, 0, "{stderr}");
    let shown = last_run_shown(&agent);
    let decisions = shown["decisions"].as_array().expect("the trail");
    assert_eq!(decisions.len(), 1, "{shown}");
    assert_eq!(decisions[0]["tool"], "save_note");
    assert_eq!(decisions[0]["verdict"], "denied: not today");
    assert_eq!(decisions[0]["decided_by"], "the approval webhook");
    assert!(!shown.to_string().contains(&url), "{shown}");
}

/// A webhook that never answers: the policy denies the call at its timeout, and that denial
/// is in the run's trail as the policy's, saying why.
#[test]
fn the_policys_denial_of_a_webhook_that_timed_out_is_in_the_runs_trail() {
    let unanswered = r#"  - name: unanswered
    when:
      tool_result_contains: "nobody approved it"
    respond:
      content: "Nobody approved it."
"#;
    let server = FakeLlm::start(&save_note_rules(unanswered, ""));
    let url = silent_service();
    let agent = agent_file(&server, &url);
    let toml = std::fs::read_to_string(&agent.file).expect("the agent file");
    std::fs::write(
        &agent.file,
        toml.replace("timeout_secs = 30", "timeout_secs = 1"),
    )
    .expect("the agent file");
    let (code, stdout, stderr) = run(&agent);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Nobody approved it.", "{stderr}");
    let shown = last_run_shown(&agent);
    let decisions = shown["decisions"].as_array().expect("the trail");
    assert_eq!(decisions.len(), 1, "{shown}");
    assert_eq!(decisions[0]["tool"], "save_note");
    assert_eq!(
        decisions[0]["decided_by"],
        "the approval policy: the decider timed out after 1 s"
    );
    assert!(
        decisions[0]["verdict"]
            .as_str()
            .is_some_and(|verdict| verdict.contains("nobody approved it within 1 s")),
        "{shown}"
    );
}

/// A webhook that fails (answers `500`, answers something that is not a decision, or closes
/// the connection) decides nothing: the call is denied by the policy, and the run's trail
/// says so, with why, rather than that the webhook denied it.
#[test]
fn the_policys_denial_of_a_failing_webhook_is_in_the_runs_trail() {
    let no_decision = r#"  - name: no_decision
    when:
      tool_result_contains: "gave no decision"
    respond:
      content: "The approval service failed."
"#;
    let failures = [
        (
            "HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            "it answered with status 500",
        ),
        (
            "HTTP/1.1 200 OK\r\ncontent-length: 9\r\nconnection: close\r\n\r\nnot json!",
            "its answer was not a decision",
        ),
        ("", "the connection to it failed"),
    ];
    for (response, why) in failures {
        let server = FakeLlm::start(&save_note_rules(no_decision, ""));
        let (url, _) = raw_service(response.to_owned());
        let agent = agent_file(&server, &url);
        let (code, stdout, stderr) = run(&agent);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(stdout.trim(), "The approval service failed.", "{stderr}");
        assert!(
            !stderr.contains("note: draft"),
            "the call did not run\n{stderr}"
        );
        let shown = last_run_shown(&agent);
        let decisions = shown["decisions"].as_array().expect("the trail");
        assert_eq!(decisions.len(), 1, "{shown}");
        assert_eq!(
            decisions[0]["decided_by"],
            format!("the approval policy: the approval service gave no decision ({why})"),
            "{shown}"
        );
        assert_eq!(
            decisions[0]["verdict"],
            format!(
                "denied: `save_note` was not run: the approval service gave no decision ({why})"
            ),
            "{shown}"
        );
    }
}

#[test]
fn a_bad_webhook_or_a_missing_token_is_an_error_at_its_line() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let agent = agent_file(&server, "approvals.example.com/hook");
    let (code, _, stderr) = outcome(
        agent
            .keyed(&["check", "AGENT"])
            .env("APPROVAL_TOKEN", TOKEN),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("`webhook` must be an absolute http:// or https:// URL"),
        "{stderr}"
    );

    let agent = agent_file(&server, "http://127.0.0.1:9/approve");
    let (code, _, stderr) = outcome(agent.keyed(&["run", "AGENT"]).env_remove("APPROVAL_TOKEN"));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("APPROVAL_TOKEN is not set (the approval webhook's token)"),
        "{stderr}"
    );
}
