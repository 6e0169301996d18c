//! Asking: the request, each decision, and every way a decider fails closed.

use super::*;

#[tokio::test]
async fn ask_sends_the_request_and_approval_runs_the_call() {
    let (decider, seen) = recording(Decision::approve());
    let policy = ApprovalPolicy::new()
        .tool_traits("delete_file", ToolTraits::destructive())
        .rule(
            Rule::ask("delete_*")
                .describe("deletions need a person")
                .because("deleting cannot be undone"),
        )
        .decider(decider);
    let out = run(
        Turn::tool_call("delete_file", json!({"path": "a"})),
        policy,
        same,
    )
    .await;
    assert_eq!(names(&out.ran), ["delete_file"]);
    let seen = seen.lock().unwrap();
    let request = &seen[0];
    assert_eq!(request.tool_name, "delete_file");
    assert_eq!(request.args, json!({"path": "a"}));
    assert_eq!(request.turn, 1);
    assert_eq!(request.internal_call_id, "t1c0");
    assert!(!request.run_id.is_empty());
    assert_eq!(request.rule.as_deref(), Some("deletions need a person"));
    assert_eq!(request.reason.as_deref(), Some("deleting cannot be undone"));
    assert_eq!(request.traits, Some(ToolTraits::destructive()));
}

#[tokio::test]
async fn a_decider_can_deny_or_rewrite_the_arguments() {
    let (decider, _) = recording(Decision::deny("the user said no"));
    let policy = ApprovalPolicy::new().rule(Rule::ask("*")).decider(decider);
    let out = run(Turn::tool_call("transfer", json!({})), policy, same).await;
    assert!(out.ran.is_empty());
    assert_eq!(out.results, ["the user said no"]);

    let (decider, _) = recording(Decision::approve_with_args(json!({"amount": 1})));
    let policy = ApprovalPolicy::new().rule(Rule::ask("*")).decider(decider);
    let out = run(
        Turn::tool_call("transfer", json!({"amount": 9})),
        policy,
        same,
    )
    .await;
    assert_eq!(out.ran, [("transfer".to_owned(), json!({"amount": 1}))]);
}

#[tokio::test]
async fn replacement_arguments_that_are_not_an_object_deny_the_call() {
    for replacement in [json!("not an object"), json!([1, 2]), Value::Null] {
        let (decider, _) = recording(Decision::approve_with_args(replacement.clone()));
        let policy = ApprovalPolicy::new().rule(Rule::ask("*")).decider(decider);
        let out = run(
            Turn::tool_call("transfer", json!({"amount": 9})),
            policy,
            same,
        )
        .await;
        assert!(out.ran.is_empty(), "{replacement} ran: {:?}", out.ran);
        assert_eq!(out.results.len(), 1);
        assert!(
            out.results[0].contains("the approval's replacement arguments are not a JSON object"),
            "{:?}",
            out.results
        );
        assert_eq!(out.answer.unwrap(), "done");
    }
}

#[tokio::test]
async fn the_default_asks_when_a_decider_is_set() {
    let (decider, seen) = recording(Decision::approve());
    let policy = ApprovalPolicy::new().decider(decider);
    let out = run(Turn::tool_call("mystery", json!({})), policy, same).await;
    assert_eq!(names(&out.ran), ["mystery"]);
    assert_eq!(seen.lock().unwrap()[0].rule, None);
    assert_eq!(seen.lock().unwrap()[0].reason, None);

    // An explicit default overrides it.
    let (decider, seen) = recording(Decision::approve());
    let policy = ApprovalPolicy::new()
        .decider(decider)
        .default_outcome(RuleOutcome::Deny("closed".into()));
    let out = run(Turn::tool_call("mystery", json!({})), policy, same).await;
    assert_eq!(out.results, ["closed"]);
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn ask_without_a_decider_denies() {
    let policy = ApprovalPolicy::new().rule(Rule::ask("*"));
    let out = run(Turn::tool_call("transfer", json!({})), policy, same).await;
    assert!(out.ran.is_empty());
    assert!(
        out.results[0].contains("no approver is configured"),
        "{}",
        out.results[0]
    );
}

#[tokio::test]
async fn a_panicking_decider_denies_and_the_run_goes_on() {
    let policy = ApprovalPolicy::new()
        .rule(Rule::ask("*"))
        .decider(decider_fn(|_| async { panic!("decider bug") }));
    let out = run(Turn::tool_call("transfer", json!({})), policy, same).await;
    assert_eq!(out.answer.unwrap(), "done");
    assert!(out.ran.is_empty());
    assert!(out.results[0].contains("panicked"), "{}", out.results[0]);
}

#[tokio::test]
async fn a_decider_that_never_answers_is_denied_at_the_timeout() {
    let policy = ApprovalPolicy::new()
        .rule(Rule::ask("*"))
        .decider(decider_fn(|_| std::future::pending()))
        .timeout(Duration::from_millis(20));
    let out = run(Turn::tool_call("transfer", json!({})), policy, same).await;
    assert!(out.ran.is_empty());
    assert!(
        out.results[0].contains("nobody approved it within 20 ms"),
        "{}",
        out.results[0]
    );
}

#[tokio::test]
async fn the_channel_decider_carries_requests_and_answers() {
    let (decider, mut requests) = ChannelDecider::new(4);
    let answering = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(pending) = requests.recv().await {
            seen.push(pending.request().tool_name.clone());
            let decision = match pending.request().tool_name.as_str() {
                "read_file" => Decision::approve(),
                _ => Decision::deny("refused over the channel"),
            };
            assert!(pending.respond(decision));
        }
        seen
    });
    let policy = ApprovalPolicy::new().decider(decider);
    let out = run(
        Turn::tool_calls([("read_file", json!({})), ("transfer", json!({}))]),
        policy,
        same,
    )
    .await;
    assert_eq!(names(&out.ran), ["read_file"]);
    assert_eq!(out.results[1], "refused over the channel");
    // The policy (and its sender) went with the agent, so the answering task ends.
    assert_eq!(answering.await.unwrap(), ["read_file", "transfer"]);
}

#[tokio::test]
async fn the_channel_decider_fails_closed() {
    // Nobody listens.
    let (decider, requests) = ChannelDecider::new(1);
    drop(requests);
    let policy = ApprovalPolicy::new().decider(decider);
    let out = run(Turn::tool_call("transfer", json!({})), policy, same).await;
    assert!(out.ran.is_empty());
    assert!(out.results[0].contains("no approver is listening"));

    // The listener drops the request unanswered.
    let (decider, mut requests) = ChannelDecider::new(1);
    tokio::spawn(async move { while requests.recv().await.is_some() {} });
    let policy = ApprovalPolicy::new().decider(decider);
    let out = run(Turn::tool_call("transfer", json!({})), policy, same).await;
    assert!(out.ran.is_empty());
    assert!(out.results[0].contains("without answering"));
}

#[tokio::test]
async fn the_terminal_decider_approves_only_yes_and_fails_closed_without_a_terminal() {
    let cases = [
        (Some("y\n"), true),
        (Some(" YES \n"), true),
        (Some("n\n"), false),
        (Some("sure\n"), false),
        (None, false),
    ];
    for (answer, approved) in cases {
        let policy = ApprovalPolicy::new().decider(TerminalDecider::scripted(answer));
        let out = run(Turn::tool_call("transfer", json!({})), policy, same).await;
        assert_eq!(out.ran.len(), usize::from(approved), "{answer:?}");
        if !approved {
            assert!(out.results[0].contains("not run"), "{}", out.results[0]);
        }
    }
}

#[test]
fn the_terminal_question_shows_control_sequences_in_the_arguments_as_text() {
    // Arguments that would clear the screen and write a harmless-looking call in its place,
    // and a name reversed by a bidirectional override.
    let request = ApprovalRequest {
        run_id: "run-1".into(),
        turn: 1,
        tool_name: "shell\u{202e}".into(),
        tool_call_id: "call-1".into(),
        internal_call_id: "call-1".into(),
        args: json!({"cmd": "rm -rf ~\u{1b}[2J\u{1b}[Hls", "note": "\u{9b}8m"}),
        rule: Some("ask `shell`\r".into()),
        reason: None,
        traits: None,
    };
    let shown = super::super::decider::question(&request);
    assert!(
        shown
            .contains(r#"run shell\u202e {"cmd":"rm -rf ~\u001b[2J\u001b[Hls","note":"\u009b8m"}"#),
        "{shown}"
    );
    assert!(shown.contains("rule: ask `shell`\\u000d\n"), "{shown}");
    assert!(
        !shown.chars().any(|c| c.is_control() && c != '\n'),
        "{shown:?}"
    );
}

/// An answer too long to be read whole (a paste gone wrong) is no answer, even one that reads
/// as yes once trimmed: the call is denied, as for any answer but yes.
#[tokio::test]
async fn the_terminal_decider_denies_an_answer_too_long_to_read() {
    let answer = format!("yes{}\n", " ".repeat(4096));
    let policy = ApprovalPolicy::new().decider(TerminalDecider::scripted(Some(&answer)));
    let out = run(Turn::tool_call("transfer", json!({})), policy, same).await;
    assert!(out.ran.is_empty());
    assert!(out.results[0].contains("not run"), "{}", out.results[0]);
}
