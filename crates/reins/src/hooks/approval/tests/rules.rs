//! Rules: globs, order, argument and traits checks, suspension.

use super::*;

#[tokio::test]
async fn glob_rules_allow_and_unmatched_calls_are_denied_by_default() {
    let policy = ApprovalPolicy::new().rule(Rule::allow("read_*"));
    let out = run(
        Turn::tool_calls([("read_file", json!({})), ("delete_file", json!({}))]),
        policy,
        same,
    )
    .await;
    assert_eq!(out.answer.unwrap(), "done");
    assert_eq!(names(&out.ran), ["read_file"]);
    assert_eq!(out.results[0], "ran read_file");
    assert!(
        out.results[1].contains("`delete_file` is not allowed"),
        "{}",
        out.results[1]
    );
}

#[tokio::test]
async fn the_first_matching_rule_wins() {
    let policy = ApprovalPolicy::new()
        .rule(Rule::deny("delete_file", "never delete"))
        .rule(Rule::allow("*"));
    let out = run(
        Turn::tool_calls([("delete_file", json!({})), ("read_file", json!({}))]),
        policy,
        same,
    )
    .await;
    assert_eq!(names(&out.ran), ["read_file"]);
    assert_eq!(out.results, ["never delete", "ran read_file"]);
}

#[tokio::test]
async fn argument_checks_narrow_a_rule() {
    let policy = ApprovalPolicy::new()
        .rule(
            Rule::allow("transfer")
                .when_args(|args| args["amount"].as_u64().is_some_and(|amount| amount <= 100)),
        )
        .rule(Rule::deny("transfer", "too much"));
    let out = run(
        Turn::tool_calls([
            ("transfer", json!({"amount": 40})),
            ("transfer", json!({"amount": 5000})),
            ("transfer", json!({})),
        ]),
        policy,
        same,
    )
    .await;
    assert_eq!(out.ran, [("transfer".to_owned(), json!({"amount": 40}))]);
    assert_eq!(out.results, ["ran transfer", "too much", "too much"]);
}

#[test]
fn unreadable_arguments_never_match_an_allow_rule_but_match_restrictive_ones() {
    let traits = ToolTraits::default();
    let allow = Rule::allow("*").when_args(|_| true);
    let deny = Rule::deny("*", "no").when_args(|_| false);
    let ask = Rule::ask("*").when_args(|_| false);
    let empty = json!({});
    assert!(!allow.matches("t", &|| None, &traits));
    assert!(allow.matches("t", &|| Some(&empty), &traits));
    assert!(deny.matches("t", &|| None, &traits));
    assert!(ask.matches("t", &|| None, &traits));
    assert!(!deny.matches("t", &|| Some(&empty), &traits));
}

#[tokio::test]
async fn a_panicking_check_fails_closed_and_the_run_goes_on() {
    let policy = ApprovalPolicy::new()
        .rule(Rule::allow("transfer").when_args(|_| panic!("bad check")))
        .rule(Rule::allow("read_file"));
    let out = run(
        Turn::tool_calls([("transfer", json!({"amount": 1})), ("read_file", json!({}))]),
        policy,
        same,
    )
    .await;
    assert_eq!(out.answer.unwrap(), "done");
    assert_eq!(names(&out.ran), ["read_file"]);
    assert!(out.results[0].contains("not allowed"), "{}", out.results[0]);
}

#[tokio::test]
async fn tool_traits_drive_rules_and_unknown_tools_count_as_destructive() {
    let policy = ApprovalPolicy::new()
        .tool_traits("read_file", ToolTraits::read_only())
        .tool_traits("delete_file", ToolTraits::destructive())
        .rule(Rule::allow("*").when_traits(|traits| traits.read_only))
        .rule(Rule::deny("*", "destructive").when_traits(|traits| traits.destructive))
        .rule(Rule::allow("*"));
    let out = run(
        Turn::tool_calls([
            ("read_file", json!({})),
            ("delete_file", json!({})),
            ("mystery", json!({})),
        ]),
        policy.clone(),
        same,
    )
    .await;
    assert_eq!(names(&out.ran), ["read_file"]);
    assert_eq!(out.results[1..], ["destructive", "destructive"]);

    // Told that unknown tools are harmless, the policy lets `mystery` through.
    let out = run(
        Turn::tool_call("mystery", json!({})),
        policy.unknown_traits(ToolTraits::additive()),
        same,
    )
    .await;
    assert_eq!(names(&out.ran), ["mystery"]);
}

#[tokio::test]
async fn suspend_rules_and_decisions_suspend_the_run() {
    let policy = ApprovalPolicy::new().rule(Rule::suspend("delete_*", "needs a manager"));
    let out = run(Turn::tool_call("delete_file", json!({})), policy, same).await;
    let Err(PromptError::Suspended { run: suspended }) = out.answer else {
        panic!("expected a suspended run, got {:?}", out.answer);
    };
    let pending: Vec<_> = suspended.pending().collect();
    assert_eq!(pending[0].suspended.as_deref(), Some("needs a manager"));
    assert!(out.ran.is_empty());

    let (decider, _) = recording(Decision::suspend("ask tomorrow"));
    let policy = ApprovalPolicy::new().rule(Rule::ask("*")).decider(decider);
    let out = run(Turn::tool_call("delete_file", json!({})), policy, same).await;
    let Err(PromptError::Suspended { run: suspended }) = out.answer else {
        panic!("expected a suspended run");
    };
    assert_eq!(
        suspended
            .pending()
            .next()
            .and_then(|p| p.suspended.as_deref()),
        Some("ask tomorrow")
    );
}

#[tokio::test]
async fn a_suspended_call_resumes_with_the_persons_decision() {
    let ran = Ran::default();
    let model = ScriptedModel::resumable([
        Turn::tool_call("delete_file", json!({})),
        Turn::text("done"),
    ]);
    let agent = AgentBuilder::new(model)
        .tool(tool("delete_file", &ran))
        .add_hook(ApprovalPolicy::new().rule(Rule::suspend("*", "wait")))
        .build();
    let Err(PromptError::Suspended { run }) = agent.prompt("go").await else {
        panic!("expected a suspended run");
    };
    let call = run.pending().next().unwrap().internal_call_id.clone();
    let answer = agent
        .resume(*run)
        .decide(call, ToolDecision::approve())
        .await
        .unwrap();
    assert_eq!(answer, "done");
    assert_eq!(names(&ran.lock().unwrap()), ["delete_file"]);
}

#[test]
fn a_rule_describes_what_it_checks_even_after_it_was_read_once() {
    let rule = Rule::ask("write_*");
    assert_eq!(rule.description(), "ask `write_*`");
    let rule = rule.when_args(|_| true);
    assert_eq!(rule.description(), "ask `write_*` (arguments checked)");
    let rule = rule.when_traits(|traits| traits.destructive);
    assert_eq!(
        rule.description(),
        "ask `write_*` (arguments and traits checked)"
    );
    // Asked again, the same text.
    assert_eq!(
        rule.description(),
        "ask `write_*` (arguments and traits checked)"
    );
    assert_eq!(rule.describe("writes").description(), "writes");
}
