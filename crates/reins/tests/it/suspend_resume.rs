//! Suspending a run for a person's decision and resuming it, in memory.

use crate::common::echo_tool;
use reins::agent::*;
use reins::message::Message;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::ToolOutcome;
use serde_json::json;
use std::sync::{Arc, Mutex};

/// Suspends every call to `pay`; records entries so resumed hooks can see them.
struct NeedsApproval;
impl AgentHook for NeedsApproval {
    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.tool_name() {
            Some("pay") => {
                ctx.append_entry("asked", &event.internal_call_id())
                    .unwrap();
                DispatchAction::suspend("payments need a person's approval")
            }
            _ => DispatchAction::proceed(),
        }
    }
}

/// Records what resumed hooks see.
#[derive(Clone, Default)]
struct SeenOnResume(Arc<Mutex<Vec<String>>>);
impl AgentHook for SeenOnResume {
    async fn on_outcome(&self, ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(result) = event.tool_outcome() {
            let asked: Vec<Option<String>> = ctx.entries("asked").unwrap();
            self.0.lock().unwrap().push(format!(
                "{} {} {:?} asked={asked:?}",
                ctx.run_id(),
                result.tool_name(),
                result.outcome()
            ));
        }
        OutcomeAction::proceed()
    }
}

fn script() -> Vec<Turn> {
    vec![
        Turn::tool_calls([
            ("echo", json!({"text": "lookup"})),
            ("pay", json!({"text": "100 to bob"})),
        ]),
        Turn::text("Paid."),
    ]
}

fn agent(model: ScriptedModel, log: Arc<Mutex<Vec<String>>>, seen: SeenOnResume) -> Agent {
    AgentBuilder::new(model)
        .tool(echo_tool("echo", log.clone()))
        .tool(echo_tool("pay", log))
        .add_hook(NeedsApproval)
        .add_hook(seen)
        .build()
}

async fn suspend() -> (SuspendedRun, ScriptedModel, Arc<Mutex<Vec<String>>>) {
    let model = ScriptedModel::new(script());
    let log = Arc::new(Mutex::new(Vec::new()));
    let error = agent(model.clone(), log.clone(), SeenOnResume::default())
        .prompt("look up and pay")
        .await
        .unwrap_err();
    let PromptError::Suspended { run } = error else {
        panic!("expected a suspended run, got {error:?}");
    };
    (*run, model, log)
}

#[tokio::test]
async fn a_suspended_call_is_not_executed_and_the_run_holds_it() {
    let (run, model, log) = suspend().await;
    assert_eq!(
        *log.lock().unwrap(),
        vec!["lookup"],
        "only the approved call ran"
    );
    let pending: Vec<_> = run.pending().collect();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].call.name, "pay");
    assert_eq!(pending[0].internal_call_id, "t1c1");
    assert_eq!(
        pending[0].suspended.as_deref(),
        Some("payments need a person's approval")
    );
    assert_eq!(run.state.status, RunStatus::Suspended);
    assert_eq!(
        model.remaining(),
        1,
        "the model is not asked again while suspended"
    );
    // The finished call's result is kept, with the call as the model made it (an outcome
    // hook saw it meanwhile).
    let finished = &run.state.pending_calls[0];
    assert!(finished.result.is_some());
    assert_eq!(finished.internal_call_id, "t1c0");
    assert_eq!(finished.call.name, "echo");
    assert_eq!(finished.call.arguments, json!({"text": "lookup"}));
    assert!(!finished.call.id.is_empty());
    // The run survives a round trip through JSON (another process).
    let text = serde_json::to_string(&run).unwrap();
    let back: SuspendedRun = serde_json::from_str(&text).unwrap();
    assert_eq!(back, run);
}

#[tokio::test]
async fn resuming_with_approval_runs_the_call_and_finishes() {
    let (run, model, log) = suspend().await;
    let run_id = run.run_id().to_string();
    let seen = SeenOnResume::default();
    let response = agent(model.clone(), log.clone(), seen.clone())
        .resume(run)
        .decide("t1c1", ToolDecision::approve())
        .extended_details()
        .await
        .unwrap();
    assert_eq!(response.output, "Paid.");
    assert_eq!(response.run_id(), run_id);
    assert_eq!(
        *log.lock().unwrap(),
        vec!["lookup", "100 to bob"],
        "lookup ran once"
    );
    assert_eq!(
        *seen.0.lock().unwrap(),
        vec![format!("{run_id} pay Success asked=[Some(\"t1c1\")]")],
        "resumed hooks see the entries saved before the pause"
    );
    let history = &model.requests()[1].history;
    assert_eq!(
        history[2],
        Message::tool_result("call_1_0", "echo", "lookup")
    );
    assert_eq!(
        history[3],
        Message::tool_result("call_1_1", "pay", "100 to bob")
    );
    assert_eq!(response.state.status, RunStatus::Completed);
}

#[tokio::test]
async fn a_call_can_be_denied_or_approved_with_edited_arguments() {
    let (run, model, log) = suspend().await;
    agent(model.clone(), log.clone(), SeenOnResume::default())
        .resume(run)
        .decide("t1c1", ToolDecision::deny("The user declined the payment."))
        .await
        .unwrap();
    assert_eq!(*log.lock().unwrap(), vec!["lookup"]);
    assert_eq!(
        model.requests()[1].history[3],
        Message::tool_result("call_1_1", "pay", "The user declined the payment.")
    );

    let (run, model, log) = suspend().await;
    let seen = SeenOnResume::default();
    agent(model, log.clone(), seen.clone())
        .resume(run)
        .decide(
            "t1c1",
            ToolDecision::approve_with_args(json!({"text": "50 to bob"})),
        )
        .await
        .unwrap();
    assert_eq!(*log.lock().unwrap(), vec!["lookup", "50 to bob"]);
    assert!(seen.0.lock().unwrap()[0].contains("Success"));

    // Edited arguments that are not an object (which no tool takes) are not run.
    let (run, model, log) = suspend().await;
    agent(model.clone(), log.clone(), SeenOnResume::default())
        .resume(run)
        .decide("t1c1", ToolDecision::approve_with_args(json!("50 to bob")))
        .await
        .unwrap();
    assert_eq!(*log.lock().unwrap(), vec!["lookup"]);
    let answered = model.requests()[1].history[3].text();
    assert!(answered.contains("not a JSON object"), "{answered}");
}

#[tokio::test]
async fn without_a_decision_the_run_stays_suspended() {
    let (run, model, log) = suspend().await;
    let error = agent(model.clone(), log.clone(), SeenOnResume::default())
        .resume(run.clone())
        .await
        .unwrap_err();
    let PromptError::Suspended { run: again } = error else {
        panic!("expected the run to stay suspended");
    };
    assert_eq!(again.pending().count(), 1);
    assert_eq!(*log.lock().unwrap(), vec!["lookup"]);
    assert_eq!(model.remaining(), 1);
}

#[tokio::test]
async fn a_denied_outcome_is_reported_to_outcome_hooks() {
    let (run, model, log) = suspend().await;
    let seen = SeenOnResume::default();
    agent(model, log, seen.clone())
        .resume(run)
        .decide("t1c1", ToolDecision::deny("no"))
        .await
        .unwrap();
    let line = seen.0.lock().unwrap()[0].clone();
    let expected = format!(
        "{:?}",
        ToolOutcome::Denied {
            report: "no".into()
        }
    );
    assert!(line.contains(&expected), "{line}");
}

#[tokio::test]
async fn a_suspended_runs_error_names_the_run_its_waiting_calls_and_what_to_do() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let one = agent(
        ScriptedModel::new(script()),
        log.clone(),
        SeenOnResume::default(),
    )
    .prompt("look up and pay")
    .run_id("pay-7")
    .await
    .unwrap_err();
    assert_eq!(
        one.to_string(),
        "run `pay-7` is suspended: call t1c1 waits for a decision (record it with \
         RunStore::decide or give it with PromptRequest::decide, then resume the run)"
    );
    let two_payments = ScriptedModel::new([Turn::tool_calls([
        ("pay", json!({"text": "100 to bob"})),
        ("pay", json!({"text": "5 to eve"})),
    ])]);
    let two = agent(two_payments, log, SeenOnResume::default())
        .prompt("pay both")
        .run_id("pay-8")
        .await
        .unwrap_err();
    assert!(
        two.to_string()
            .starts_with("run `pay-8` is suspended: calls t1c0, t1c1 wait for a decision ("),
        "{two}"
    );
}

#[tokio::test]
async fn a_decision_about_a_call_that_does_not_wait_is_ignored_and_the_run_waits_again() {
    let (run, model, log) = suspend().await;
    let run_id = run.run_id().to_owned();
    let error = agent(model, log.clone(), SeenOnResume::default())
        .resume(run)
        .decide("t9c9", ToolDecision::approve())
        .await
        .unwrap_err();
    assert!(matches!(error, PromptError::Suspended { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with(&format!("run `{run_id}` is suspended: call t1c1 waits")),
        "{error}"
    );
    assert_eq!(*log.lock().unwrap(), vec!["lookup"], "`pay` did not run");
}

/// `main` returning `Result<_, Box<dyn Error>>` prints a suspended run's error with `{:?}`:
/// it names the run and its waiting calls, not the whole history with every tool's
/// arguments (a page long, and what should not reach a log). The state keeps its full Debug.
#[tokio::test]
async fn a_suspended_runs_debug_names_the_run_and_its_waiting_calls_not_its_history() {
    let model = ScriptedModel::new(script());
    let log = Arc::new(Mutex::new(Vec::new()));
    let error = agent(model, log, SeenOnResume::default())
        .prompt("look up and pay")
        .await
        .unwrap_err();
    let shown = format!("{error:?}");
    let PromptError::Suspended { run } = error else {
        panic!("expected a suspended run, got {shown}");
    };
    assert!(shown.contains(run.run_id()), "{shown}");
    assert!(shown.contains("t1c1") && shown.contains("pay"), "{shown}");
    assert!(!shown.contains("100 to bob"), "no arguments: {shown}");
    assert!(!shown.contains("look up and pay"), "no prompt: {shown}");
    assert!(format!("{:?}", run.state).contains("100 to bob"));
}
