//! The policy driven through ScriptedModel agents: shared helpers, and composition with
//! other hooks; rules and deciders have their own files.

mod deciders;
mod rules;
mod webhook;

use super::*;
use crate::agent::{
    AgentBuilder, OutcomeAction, OutcomeEvent, PromptError, StepEventKind, ToolDecision,
};
use crate::message::Message;
use crate::testing::{ScriptedModel, Turn};
use crate::tool::{Tool, ToolOutcome, tool_fn};
use serde_json::json;
use std::convert::Infallible;
use std::sync::Mutex;

type Ran = Arc<Mutex<Vec<(String, Value)>>>;

/// A tool that records the arguments it ran with.
fn tool(name: &'static str, ran: &Ran) -> impl Tool {
    let ran = Arc::clone(ran);
    tool_fn(name, "A test tool.", move |args: Value| {
        ran.lock().unwrap().push((name.to_owned(), args));
        async move { Ok::<_, Infallible>(format!("ran {name}")) }
    })
}

struct Outcome {
    answer: Result<String, PromptError>,
    /// The tool results as the model received them, in call order.
    results: Vec<String>,
    /// The calls that actually ran.
    ran: Vec<(String, Value)>,
}

/// Runs one turn of tool calls then a text answer, with `policy` and any `extra` hooks.
async fn run(
    calls: Turn,
    policy: ApprovalPolicy,
    extra: impl FnOnce(AgentBuilder) -> AgentBuilder,
) -> Outcome {
    let ran = Ran::default();
    let model = ScriptedModel::new([calls, Turn::text("done")]);
    let builder = AgentBuilder::new(model.clone())
        .tool(tool("read_file", &ran))
        .tool(tool("delete_file", &ran))
        .tool(tool("transfer", &ran))
        .tool(tool("mystery", &ran))
        .add_hook(policy);
    let answer = extra(builder).build().prompt("go").await;
    let results = model
        .requests()
        .get(1)
        .map(|request| {
            request
                .history
                .iter()
                .filter(|message| matches!(message, Message::Tool(_)))
                .map(Message::text)
                .collect()
        })
        .unwrap_or_default();
    let ran = ran.lock().unwrap().clone();
    Outcome {
        answer,
        results,
        ran,
    }
}

fn names(ran: &[(String, Value)]) -> Vec<&str> {
    ran.iter().map(|(name, _)| name.as_str()).collect()
}

fn same(builder: AgentBuilder) -> AgentBuilder {
    builder
}

/// A decider that records each request and answers with `answer`.
fn recording(answer: Decision) -> (impl ApprovalDecider, Arc<Mutex<Vec<ApprovalRequest>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let decider = decider_fn(move |request| {
        log.lock().unwrap().push(request);
        let answer = answer.clone();
        async move { answer }
    });
    (decider, seen)
}

/// Counts the dispatches it sees and notes each tool outcome.
#[derive(Clone, Default)]
struct Observer {
    dispatched: Arc<Mutex<Vec<String>>>,
    outcomes: Arc<Mutex<Vec<ToolOutcome>>>,
    records: Arc<Mutex<Vec<Option<ApprovalRecord>>>>,
}

impl AgentHook for Observer {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if let Some(name) = event.tool_name() {
            self.dispatched.lock().unwrap().push(name.to_owned());
        }
        DispatchAction::proceed()
    }

    async fn on_outcome(&self, ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(result) = event.tool_outcome() {
            self.outcomes.lock().unwrap().push(result.outcome().clone());
            let record = approval_record(ctx, result.internal_call_id());
            self.records.lock().unwrap().push(record);
        }
        OutcomeAction::proceed()
    }
}

#[tokio::test]
async fn a_denial_ends_the_dispatch_chain_and_later_hooks_see_the_outcome() {
    let observer = Observer::default();
    let policy = ApprovalPolicy::new()
        .rule(Rule::allow("read_file"))
        .rule(Rule::deny("*", "no"));
    let later = observer.clone();
    run(
        Turn::tool_calls([("read_file", json!({})), ("transfer", json!({}))]),
        policy,
        move |builder| builder.add_hook(later),
    )
    .await;
    assert_eq!(*observer.dispatched.lock().unwrap(), ["read_file"]);
    assert_eq!(
        *observer.outcomes.lock().unwrap(),
        [
            ToolOutcome::Success,
            ToolOutcome::Denied {
                report: "no".into()
            }
        ]
    );
    let verdicts: Vec<_> = observer
        .records
        .lock()
        .unwrap()
        .iter()
        .map(|record| record.as_ref().map(|record| record.verdict))
        .collect();
    assert_eq!(verdicts, [Some(Verdict::Allow), Some(Verdict::Deny)]);
}

/// Rewrites `transfer` calls to a large amount.
struct Inflate;

impl AgentHook for Inflate {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        DispatchAction::rewrite_tool_args(event.kind, json!({"amount": 1_000_000}))
    }
}

#[tokio::test]
async fn the_policy_checks_arguments_as_earlier_hooks_rewrote_them() {
    let policy = ApprovalPolicy::new()
        .rule(Rule::allow("transfer").when_args(|args| args["amount"] == json!(1)))
        .rule(Rule::deny("*", "too much"));
    let ran = Ran::default();
    let model = ScriptedModel::new([
        Turn::tool_call("transfer", json!({"amount": 1})),
        Turn::text("done"),
    ]);
    AgentBuilder::new(model)
        .tool(tool("transfer", &ran))
        .add_hook(Inflate)
        .add_hook(policy)
        .build()
        .prompt("go")
        .await
        .unwrap();
    assert!(ran.lock().unwrap().is_empty());
}

#[tokio::test]
async fn records_say_how_each_call_was_decided() {
    let ctx = HookContext::new("run");
    let (decider, _) = recording(Decision::approve());
    let policy = ApprovalPolicy::new()
        .rule(Rule::allow("read_file"))
        .rule(Rule::ask("*"))
        .decider(decider);
    assert!(!policy.observes(StepEventKind::CompletionDispatch));
    assert!(policy.observes(StepEventKind::ToolDispatch));
    let observer = Observer::default();
    let later = observer.clone();
    let out = run(
        Turn::tool_calls([("read_file", json!({})), ("transfer", json!({}))]),
        policy,
        move |builder| builder.add_hook(later),
    )
    .await;
    assert_eq!(names(&out.ran), ["read_file", "transfer"]);
    let records = observer.records.lock().unwrap();
    assert_eq!(
        *records,
        [
            Some(ApprovalRecord {
                rule: Some("allow `read_file`".into()),
                asked: false,
                verdict: Verdict::Allow,
            }),
            Some(ApprovalRecord {
                rule: Some("ask `*`".into()),
                asked: true,
                verdict: Verdict::Allow,
            }),
        ]
    );
    // Another run's context has no record.
    assert_eq!(approval_record(&ctx, "t1c0"), None);
}

#[test]
fn a_call_decided_again_reads_as_its_newest_record() {
    let record = |verdict| ApprovalRecord {
        rule: None,
        asked: false,
        verdict,
    };
    let mut records = Records::default();
    records.put("t1c0", record(Verdict::Suspend));
    records.put("t1c1", record(Verdict::Deny));
    // Decided again once its run was resumed.
    records.put("t1c0", record(Verdict::Allow));
    assert_eq!(records.get("t1c0").map(|r| r.verdict), Some(Verdict::Allow));
    assert_eq!(records.get("t1c1").map(|r| r.verdict), Some(Verdict::Deny));
    assert_eq!(records.get("t2c0"), None);
}
