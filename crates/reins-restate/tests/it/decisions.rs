//! Decisions a run must refuse, through the ingress: each gets a clear error and leaves the
//! call waiting for a decision that can be taken.

use crate::harness::{Cluster, wait_for};
use reins::agent::ToolDecision;
use reins_restate::{ClientError, PendingDecision, RestateRuns, RunFailure};
use serde_json::json;

pub(crate) async fn pending(runs: &RestateRuns, run: &str) -> PendingDecision {
    wait_for("the run to suspend for a decision", || async {
        runs.status(run).await.ok()?.pending.into_iter().next()
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn edited_arguments_that_are_not_an_object_are_refused_and_the_call_keeps_waiting() {
    let mut cluster = Cluster::start("edit-args").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    runs.start("args-1", "approve")
        .await
        .expect("the run starts");
    let waiting = pending(&runs, "args-1").await;

    match runs
        .approve_with_args("args-1", &waiting.call, json!("amount=5"))
        .await
    {
        Err(ClientError::Http { status, body }) => {
            assert_eq!(status, 400, "{body}");
            assert!(
                body.contains("must be a JSON object, not a string"),
                "{body}"
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(
        pending(&runs, "args-1").await,
        waiting,
        "the call still waits"
    );

    runs.approve_with_args("args-1", &waiting.call, json!({"amount": 5}))
        .await
        .expect("an object is accepted");
    let output = runs.output("args-1").await.expect("the run finishes");
    assert_eq!(output.answer, "result: transferred 5");
}

/// `skip` and `supply_result` answer a call in doubt; a call that waits for approval never
/// started, so they are refused (as a stored run's are), and it still waits for an approval
/// or a denial. Before, the call was answered as skipped or with the supplied result.
#[tokio::test(flavor = "multi_thread")]
async fn a_skip_or_supplied_result_for_a_call_waiting_for_approval_is_refused() {
    let mut cluster = Cluster::start("not-in-doubt").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    runs.start("approval-1", "approve")
        .await
        .expect("the run starts");
    let waiting = pending(&runs, "approval-1").await;
    assert!(!waiting.in_doubt);

    for decision in [
        ToolDecision::skip("done by hand"),
        ToolDecision::supply_result("transferred 5"),
    ] {
        match runs.decide("approval-1", &waiting.call, decision).await {
            Err(ClientError::Http { status, body }) => {
                assert_eq!(status, 400, "{body}");
                assert!(
                    body.contains(&format!(
                        "call `{}` of run `approval-1` is not in doubt (it never started, so \
                         it had no effect): `skip` and `supply_result` answer a call a stopped \
                         run may have run; approve or deny this one",
                        waiting.call
                    )),
                    "{body}"
                );
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
    assert_eq!(
        pending(&runs, "approval-1").await,
        waiting,
        "the call still waits"
    );
    runs.decide("approval-1", &waiting.call, ToolDecision::approve())
        .await
        .expect("an approval is taken");
    let output = runs.output("approval-1").await.expect("the run finishes");
    assert_eq!(output.answer, "result: transferred 100");
}

/// The call `run` waits on once it waits on an awakeable other than `before`.
pub(crate) async fn waiting_anew(runs: &RestateRuns, run: &str, before: &str) -> PendingDecision {
    wait_for("the call to wait on a fresh awakeable", || async {
        let waiting = runs.status(run).await.ok()?.pending.into_iter().next()?;
        (waiting.awakeable != before).then_some(waiting)
    })
    .await
}

/// Completes the awakeable `awakeable` through Restate's awakeable API, bypassing `decide`:
/// `verb` is `resolve` or `reject`.
pub(crate) async fn complete_directly(cluster: &Cluster, awakeable: &str, verb: &str, body: &str) {
    let answer = reqwest::Client::new()
        .post(format!(
            "{}/restate/awakeables/{awakeable}/{verb}",
            cluster.ingress
        ))
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .expect("the ingress answers");
    assert!(answer.status().is_success(), "{answer:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_awakeable_resolved_directly_with_no_usable_decision_leaves_the_call_waiting() {
    let mut cluster = Cluster::start("direct").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    runs.start("direct-1", "approve")
        .await
        .expect("the run starts");
    let first = pending(&runs, "direct-1").await;

    complete_directly(
        &cluster,
        &first.awakeable,
        "resolve",
        r#"{"decision": "bogus"}"#,
    )
    .await;
    // The run reads the payload, refuses it and waits on a fresh awakeable (before, it failed
    // on every replay and Restate retried it without end).
    let rearmed = waiting_anew(&runs, "direct-1", &first.awakeable).await;
    assert_eq!(
        (rearmed.call.as_str(), rearmed.tool.as_str()),
        ("t1c0", "transfer")
    );

    complete_directly(
        &cluster,
        &rearmed.awakeable,
        "resolve",
        r#"{"decision": "approve_with_args", "args": 5}"#,
    )
    .await;
    let again = waiting_anew(&runs, "direct-1", &rearmed.awakeable).await;

    runs.approve("direct-1", &again.call)
        .await
        .expect("a decision through decide is taken");
    let output = runs.output("direct-1").await.expect("the run finishes");
    assert_eq!(output.answer, "result: transferred 100");
    assert_eq!(cluster.effects().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_awakeable_rejected_directly_fails_the_run_and_its_status_says_so() {
    let mut cluster = Cluster::start("reject").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    runs.start("reject-1", "approve")
        .await
        .expect("the run starts");
    let waiting = pending(&runs, "reject-1").await;

    complete_directly(
        &cluster,
        &waiting.awakeable,
        "reject",
        "nobody may decide this",
    )
    .await;
    match runs.output("reject-1").await {
        Err(ClientError::Http { body, .. }) => {
            assert!(
                body.contains("the decision on `t1c0` was rejected"),
                "{body}"
            );
            assert!(body.contains("nobody may decide this"), "{body}");
        }
        other => panic!("expected the run to fail, got {other:?}"),
    }
    let progress = runs.status("reject-1").await.expect("the run's status");
    assert_eq!(progress.failure, Some(RunFailure::Error));
    assert!(progress.pending.is_empty(), "{progress:?}");
    assert!(cluster.effects().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn of_concurrent_decisions_about_a_call_one_is_taken_and_the_others_are_refused() {
    let mut cluster = Cluster::start("twice").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    // Two transfers wait; the second keeps the run suspended while the first is decided.
    runs.start("twice-1", "pair").await.expect("the run starts");
    wait_for("both transfers to wait", || async {
        let waiting = runs.status("twice-1").await.ok()?.pending;
        (waiting.len() == 2).then_some(())
    })
    .await;

    // Eight people decide the first transfer at once, half approving, half denying. Before,
    // every one was answered 200 and Restate kept one resolution, silently dropping the
    // others. Now exactly one is taken; the others get 409 (the call is claimed) or 404 (the
    // run has taken the decision and no longer waits on the call).
    let decisions = (0..8).map(|n| {
        let runs = runs.clone();
        async move {
            let decision = if n % 2 == 0 {
                ToolDecision::deny(format!("no {n}"))
            } else {
                ToolDecision::approve()
            };
            (n, runs.decide("twice-1", "t1c0", decision).await)
        }
    });
    let mut taken = Vec::new();
    for (n, answer) in futures::future::join_all(decisions).await {
        match answer {
            Ok(()) => taken.push(n),
            Err(ClientError::Http { status: 409, body }) => {
                assert!(body.contains("already been decided"), "{body}");
            }
            Err(ClientError::Http { status: 404, body }) => {
                assert!(
                    body.contains("not waiting for a decision on `t1c0`"),
                    "{body}"
                );
            }
            Err(other) => panic!("decision {n}: {other}"),
        }
    }
    assert_eq!(taken.len(), 1, "decisions taken: {taken:?}");

    let left = wait_for("the decided call to leave the pending list", || async {
        let waiting = runs.status("twice-1").await.ok()?.pending;
        (waiting.len() == 1).then_some(waiting)
    })
    .await;
    assert_eq!(left[0].call, "t1c1");
    runs.approve("twice-1", "t1c1")
        .await
        .expect("the other call is approved");
    let output = runs.output("twice-1").await.expect("the run finishes");
    assert_eq!(output.answer, "result: transferred 7");

    // The decision that was taken is the one applied: the first transfer ran only if it was
    // an approval.
    let ran: Vec<String> = cluster
        .effects()
        .into_iter()
        .map(|effect| format!("{} {}", effect.effect_id, effect.argument))
        .collect();
    let mut expected = Vec::new();
    if taken[0] % 2 == 1 {
        expected.push("twice-1/t1c0 100".to_owned());
    }
    expected.push("twice-1/t1c1 7".to_owned());
    assert_eq!(ran, expected);
}

/// Edited arguments the tool's schema refuses (`transfer` takes an amount that is a whole
/// number, not negative) are refused, through `decide` with a reason and through the
/// awakeable API by waiting on, and the call keeps waiting; arguments that fit are taken, and
/// the tool runs with them. Before, `decide` took any object and the tool ran with it.
#[tokio::test(flavor = "multi_thread")]
async fn edited_arguments_the_tools_schema_refuses_are_refused_and_the_call_keeps_waiting() {
    let mut cluster = Cluster::start("schema-args").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    runs.start("schema-1", "approve")
        .await
        .expect("the run starts");
    let waiting = pending(&runs, "schema-1").await;

    for (args, said) in [
        (
            json!({"amount": "lots"}),
            r#""lots" is not of type "integer" (at /amount)"#,
        ),
        (json!({"amount": -5}), "(at /amount)"),
        (json!({"sum": 5}), r#""amount" is a required property"#),
    ] {
        match runs
            .approve_with_args("schema-1", &waiting.call, args.clone())
            .await
        {
            Err(ClientError::Http { status, body }) => {
                assert_eq!(status, 400, "{body}");
                // Restate's body is JSON: the handler's reason is its `message`.
                let answer: serde_json::Value = serde_json::from_str(&body).expect("{body}");
                let reason = answer["message"].as_str().unwrap_or_default();
                assert!(
                    reason.starts_with(
                        "the edited arguments for `t1c0` do not fit the schema of `transfer`: "
                    ),
                    "{body}"
                );
                assert!(reason.contains(said), "{args}: {body}");
            }
            other => panic!("expected {args} to be refused, got {other:?}"),
        }
    }
    assert_eq!(
        pending(&runs, "schema-1").await,
        waiting,
        "the call still waits"
    );

    complete_directly(
        &cluster,
        &waiting.awakeable,
        "resolve",
        r#"{"decision": "approve_with_args", "args": {"amount": "lots"}}"#,
    )
    .await;
    let rearmed = waiting_anew(&runs, "schema-1", &waiting.awakeable).await;

    runs.approve_with_args("schema-1", &rearmed.call, json!({"amount": 5}))
        .await
        .expect("arguments that fit are taken");
    let output = runs.output("schema-1").await.expect("the run finishes");
    assert_eq!(output.answer, "result: transferred 5");
    let ran: Vec<(String, String)> = cluster
        .effects()
        .into_iter()
        .map(|effect| (effect.tool, effect.argument))
        .collect();
    assert_eq!(ran, [("transfer".to_owned(), "5".to_owned())]);
}
