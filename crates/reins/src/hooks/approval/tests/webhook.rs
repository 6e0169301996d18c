//! The webhook decider against a real HTTP server on loopback: each answer a service can
//! give, and every way a service can fail to give one.

use super::*;
// Named apart: this test file is itself `tests::webhook`.
use crate::hooks::approval::webhook as decider_webhook;
use std::time::Duration;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const TOKEN: &str = "tok-5ecret-approvals";

/// A server answering every `POST /approve` with `response`.
async fn service(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/approve"))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

fn policy_for(server: &MockServer) -> ApprovalPolicy {
    let decider = WebhookDecider::new(&format!("{}/approve", server.uri()))
        .unwrap()
        .bearer_token(TOKEN)
        .header("x-team", "payments")
        .unwrap();
    ApprovalPolicy::new()
        .rule(Rule::ask("*").describe("everything is asked"))
        .decider(decider)
        .timeout(Duration::from_secs(5))
}

fn answering(decision: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(decision)
}

async fn transfer(policy: ApprovalPolicy) -> Outcome {
    run(
        Turn::tool_call("transfer", json!({"amount": 9})),
        policy,
        same,
    )
    .await
}

#[tokio::test]
async fn the_service_receives_the_request_with_its_credentials_and_its_approval_runs_the_call() {
    let server = service(answering(json!({"decision": "approve"}))).await;
    let out = transfer(policy_for(&server)).await;
    assert_eq!(out.ran, [("transfer".to_owned(), json!({"amount": 9}))]);
    assert_eq!(out.results, ["ran transfer"]);

    let received = server.received_requests().await.unwrap();
    assert_eq!(received.len(), 1);
    let posted = &received[0];
    assert_eq!(
        posted.headers.get("authorization").unwrap(),
        &format!("Bearer {TOKEN}")
    );
    assert_eq!(posted.headers.get("x-team").unwrap(), "payments");
    let request: ApprovalRequest = serde_json::from_slice(&posted.body).unwrap();
    assert_eq!(request.tool_name, "transfer");
    assert_eq!(request.args, json!({"amount": 9}));
    assert_eq!(request.internal_call_id, "t1c0");
    assert_eq!(request.turn, 1);
    assert_eq!(request.rule.as_deref(), Some("everything is asked"));
    assert!(!request.run_id.is_empty());
}

#[tokio::test]
async fn a_signed_request_carries_the_hmac_of_its_timestamp_and_exact_body() {
    let server = service(answering(json!({"decision": "approve"}))).await;
    let decider = WebhookDecider::new(&format!("{}/approve", server.uri()))
        .unwrap()
        .signing_secret("whsec-5ecret");
    let policy = ApprovalPolicy::new().rule(Rule::ask("*")).decider(decider);
    let out = transfer(policy).await;
    assert_eq!(out.results, ["ran transfer"]);

    let received = server.received_requests().await.unwrap();
    let posted = &received[0];
    let timestamp = posted
        .headers
        .get(decider_webhook::TIMESTAMP_HEADER)
        .unwrap();
    let timestamp = timestamp.to_str().unwrap();
    let sent_at: u64 = timestamp.parse().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(sent_at.abs_diff(now) < 60, "{sent_at} vs {now}");
    let signed = posted
        .headers
        .get(decider_webhook::SIGNATURE_HEADER)
        .unwrap();
    assert_eq!(
        signed.to_str().unwrap(),
        decider_webhook::signature(b"whsec-5ecret", timestamp, &posted.body)
    );
    // Any other secret, time or body gives another signature.
    assert_ne!(
        signed.to_str().unwrap(),
        decider_webhook::signature(b"whsec-other", timestamp, &posted.body)
    );
    assert_ne!(
        signed.to_str().unwrap(),
        decider_webhook::signature(b"whsec-5ecret", &(sent_at + 1).to_string(), &posted.body)
    );
    assert_eq!(
        posted.headers.get("content-type").unwrap(),
        "application/json"
    );
    let request: ApprovalRequest = serde_json::from_slice(&posted.body).unwrap();
    assert_eq!(request.tool_name, "transfer");

    // Unsigned by default.
    let server = service(answering(json!({"decision": "approve"}))).await;
    transfer(policy_for(&server)).await;
    let received = server.received_requests().await.unwrap();
    assert!(
        received[0]
            .headers
            .get(decider_webhook::SIGNATURE_HEADER)
            .is_none()
    );
    assert!(
        received[0]
            .headers
            .get(decider_webhook::TIMESTAMP_HEADER)
            .is_none()
    );
}

#[tokio::test]
async fn the_service_can_deny_rewrite_or_suspend() {
    let server = service(answering(
        json!({"decision": "deny", "message": "over the daily limit"}),
    ))
    .await;
    let out = transfer(policy_for(&server)).await;
    assert!(out.ran.is_empty());
    assert_eq!(out.results, ["over the daily limit"]);

    // A denial without a message still tells the model the call did not run.
    let server = service(answering(json!({"decision": "deny"}))).await;
    let out = transfer(policy_for(&server)).await;
    assert!(out.ran.is_empty());
    assert!(out.results[0].contains("was not run"), "{:?}", out.results);

    let server = service(answering(
        json!({"decision": "approve", "args": {"amount": 1}, "note": "capped"}),
    ))
    .await;
    let out = transfer(policy_for(&server)).await;
    assert_eq!(out.ran, [("transfer".to_owned(), json!({"amount": 1}))]);

    let server = service(answering(
        json!({"decision": "suspend", "reason": "a manager decides"}),
    ))
    .await;
    let out = transfer(policy_for(&server)).await;
    let Err(PromptError::Suspended { run: suspended }) = out.answer else {
        panic!("expected a suspended run, got {:?}", out.answer);
    };
    let pending: Vec<_> = suspended.pending().collect();
    assert_eq!(pending[0].suspended.as_deref(), Some("a manager decides"));
    assert!(out.ran.is_empty());
}

/// Runs a call against a service that answers with `response`, and checks it was denied
/// with a message that names the reason and holds neither the token nor the address.
async fn assert_denied(response: ResponseTemplate, reason: &str) {
    let server = service(response).await;
    let policy = policy_for(&server).timeout(Duration::from_millis(500));
    let out = transfer(policy).await;
    assert!(out.ran.is_empty(), "{reason}: the call ran");
    assert_eq!(out.results.len(), 1, "{reason}");
    let message = &out.results[0];
    assert!(message.contains("was not run"), "{reason}: {message}");
    assert!(message.contains(reason), "{reason}: {message}");
    assert!(!message.contains(TOKEN), "{message}");
    assert!(
        !message.contains(&server.address().to_string()),
        "{message}"
    );
    assert_eq!(out.answer.unwrap(), "done");
}

#[tokio::test]
async fn anything_but_a_clear_decision_denies_the_call() {
    assert_denied(
        ResponseTemplate::new(500).set_body_json(json!({"decision": "approve"})),
        "status 500",
    )
    .await;
    assert_denied(
        ResponseTemplate::new(200).set_body_string("approve"),
        "not a decision",
    )
    .await;
    assert_denied(answering(json!({"decision": "maybe"})), "not a decision").await;
    assert_denied(answering(json!({"approved": true})), "not a decision").await;
    assert_denied(answering(json!(["approve"])), "not a decision").await;
    let padding = "x".repeat(70 * 1024);
    assert_denied(
        answering(json!({"decision": "approve", "padding": padding})),
        "over 65536 bytes",
    )
    .await;
    // Slower than the policy's timeout: the policy gives up and denies.
    assert_denied(
        answering(json!({"decision": "approve"})).set_delay(Duration::from_secs(3)),
        "within 500 ms",
    )
    .await;
}

#[tokio::test]
async fn a_redirect_is_not_followed_so_the_token_stays_with_the_service() {
    let elsewhere = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(answering(json!({"decision": "approve"})))
        .mount(&elsewhere)
        .await;
    assert_denied(
        ResponseTemplate::new(307).insert_header("location", format!("{}/take", elsewhere.uri())),
        "status 307",
    )
    .await;
    assert!(elsewhere.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn an_unreachable_service_denies_at_once() {
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let decider = WebhookDecider::new(&format!("http://127.0.0.1:{port}/approve"))
        .unwrap()
        .bearer_token(TOKEN)
        .retry_delay(Duration::from_millis(10));
    let policy = ApprovalPolicy::new()
        .rule(Rule::ask("*"))
        .decider(decider)
        .timeout(Duration::from_secs(60));
    let out = transfer(policy).await;
    assert!(out.ran.is_empty());
    assert!(
        out.results[0].contains("could not be reached"),
        "{:?}",
        out.results
    );
}

/// A server answering its first `failures` requests with `failure`, then approving.
async fn recovering(failure: ResponseTemplate, failures: u64) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(failure)
        .up_to_n_times(failures)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(answering(json!({"decision": "approve"})))
        .with_priority(2)
        .mount(&server)
        .await;
    server
}

fn retrying_policy(server: &MockServer, retries: u32) -> ApprovalPolicy {
    let decider = WebhookDecider::new(&format!("{}/approve", server.uri()))
        .unwrap()
        .signing_secret("whsec-retries")
        .retries(retries)
        .retry_delay(Duration::from_millis(10));
    ApprovalPolicy::new()
        .rule(Rule::ask("*"))
        .decider(decider)
        .timeout(Duration::from_secs(5))
}

#[tokio::test]
async fn a_briefly_unavailable_service_is_asked_again_with_the_same_idempotency_key() {
    for (status, retry_after) in [(503, None), (502, None), (504, None), (429, Some("0"))] {
        let mut failure = ResponseTemplate::new(status);
        if let Some(seconds) = retry_after {
            failure = failure.insert_header("retry-after", seconds);
        }
        let server = recovering(failure, 2).await;
        let out = transfer(retrying_policy(&server, 2)).await;
        assert_eq!(out.results, ["ran transfer"], "{status}");

        let received = server.received_requests().await.unwrap();
        assert_eq!(received.len(), 3, "{status}: two failures, then the answer");
        let request: ApprovalRequest = serde_json::from_slice(&received[0].body).unwrap();
        let key = format!("{}/{}", request.run_id, request.internal_call_id);
        for attempt in &received {
            let sent = attempt.headers.get(decider_webhook::IDEMPOTENCY_KEY_HEADER);
            assert_eq!(sent.unwrap().to_str().unwrap(), key, "{status}");
            assert_eq!(attempt.body, received[0].body, "{status}: the same request");
            let timestamp = attempt.headers.get("x-reins-timestamp").unwrap();
            let expected = decider_webhook::signature(
                b"whsec-retries",
                timestamp.to_str().unwrap(),
                &attempt.body,
            );
            assert_eq!(
                attempt.headers.get("x-reins-signature").unwrap(),
                expected.as_str(),
                "{status}: each attempt signed"
            );
        }
    }
}

#[tokio::test]
async fn when_the_retries_run_out_or_the_failure_is_not_transient_the_call_is_denied() {
    let server = recovering(ResponseTemplate::new(503), 5).await;
    let out = transfer(retrying_policy(&server, 1)).await;
    assert!(out.ran.is_empty());
    assert!(out.results[0].contains("status 503"), "{:?}", out.results);
    assert_eq!(server.received_requests().await.unwrap().len(), 2);

    // A 500 or a 401 says something is wrong, not busy: asked once.
    for status in [500, 401] {
        let server = recovering(ResponseTemplate::new(status), 5).await;
        let out = transfer(retrying_policy(&server, 3)).await;
        assert!(out.ran.is_empty(), "{status}");
        assert_eq!(
            server.received_requests().await.unwrap().len(),
            1,
            "{status}"
        );
    }

    // No retries: each call is asked once.
    let server = recovering(ResponseTemplate::new(503), 1).await;
    let out = transfer(retrying_policy(&server, 0)).await;
    assert!(out.ran.is_empty());
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn only_the_right_credentials_are_approved_by_a_service_that_checks_them() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(answering(json!({"decision": "approve"})))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401))
        .mount(&server)
        .await;
    let url = format!("{}/approve", server.uri());
    let wrong = WebhookDecider::new(&url).unwrap().bearer_token("not-it");
    let policy = ApprovalPolicy::new().rule(Rule::ask("*")).decider(wrong);
    let out = transfer(policy).await;
    assert!(out.results[0].contains("status 401"), "{:?}", out.results);

    let out = transfer(policy_for(&server)).await;
    assert_eq!(out.results, ["ran transfer"]);
}

#[test]
fn a_bad_url_or_header_is_refused_and_secrets_never_show_in_debug() {
    for url in [
        "approvals.example.com",
        "ftp://example.com/x",
        "mailto:a@b.c",
        "",
    ] {
        assert!(
            matches!(WebhookDecider::new(url), Err(WebhookError::InvalidUrl)),
            "{url}"
        );
    }
    let decider = WebhookDecider::new("https://ops:pa55@approvals.example.com/hook?key=q5ecret")
        .unwrap()
        .bearer_token(TOKEN)
        .signing_secret("whsec-5ecret");
    assert!(matches!(
        decider.clone().header("bad header", "x"),
        Err(WebhookError::InvalidHeader(_))
    ));
    assert!(matches!(
        decider.clone().header("x-ok", "line\nbreak"),
        Err(WebhookError::InvalidHeader(_))
    ));
    let decider = decider.header("x-shared-secret", "hdr-5ecret").unwrap();
    let shown = format!("{decider:?}");
    assert!(
        shown.contains("https://approvals.example.com/hook"),
        "{shown}"
    );
    assert!(shown.contains("x-shared-secret"), "{shown}");
    for secret in [TOKEN, "pa55", "q5ecret", "hdr-5ecret", "whsec-5ecret"] {
        assert!(!shown.contains(secret), "{shown}");
    }
}
