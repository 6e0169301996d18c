//! Calls cut off between their side effect and their result's checkpoint: in doubt, never
//! executed again unless the tool declares that safe or a decision says so.
//!
//! The "crash" here drops the run's future while the tool hangs after its side effect: the
//! call's start is checkpointed, its result is not, and the dropped claim's lease stays until
//! it expires, as after a SIGKILL (reins-crash-test does the same with real processes).

use super::per_store::per_store;
use super::{decide, uuid_like};
use crate::common::EchoArgs;
use reins::agent::*;
use reins::store::{RunStore, StoreError};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{RetrySafety, tool_fn};
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// How long a dropped claim holds a run.
const LEASE: Duration = Duration::from_millis(100);

/// A `charge` tool that records each execution and, while `hang` is set, hangs after its side
/// effect (signalling `effect_done`) so the run can be cut off there.
#[derive(Clone)]
struct Charge {
    effects: Arc<Mutex<Vec<String>>>,
    hang: Arc<AtomicBool>,
    effect_done: Arc<Notify>,
}

impl Charge {
    fn new() -> Self {
        Charge {
            effects: Arc::default(),
            hang: Arc::new(AtomicBool::new(true)),
            effect_done: Arc::default(),
        }
    }

    fn agent(&self, model: ScriptedModel, safety: RetrySafety) -> Agent {
        self.builder(model, safety).build()
    }

    fn builder(&self, model: ScriptedModel, safety: RetrySafety) -> AgentBuilder {
        let charge = self.clone();
        let tool = tool_fn("charge", "Charges a card.", move |args: EchoArgs| {
            let charge = charge.clone();
            async move {
                charge.effects.lock().unwrap().push(args.text.clone());
                if charge.hang.load(Ordering::SeqCst) {
                    charge.effect_done.notify_one();
                    std::future::pending::<()>().await;
                }
                Ok::<_, std::convert::Infallible>(format!("charged {}", args.text))
            }
        })
        .retry_safety(safety);
        AgentBuilder::new(model).tool(tool)
    }

    fn effects(&self) -> Vec<String> {
        self.effects.lock().unwrap().clone()
    }
}

fn script() -> ScriptedModel {
    ScriptedModel::new([
        Turn::tool_call("charge", json!({"text": "100"})),
        Turn::text("Charged."),
    ])
}

/// Starts a durable run and cuts it off right after the charge's side effect; returns the
/// run's id.
async fn cut_off_after_effect(
    store: &(impl RunStore + Clone),
    charge: &Charge,
    model: &ScriptedModel,
    safety: RetrySafety,
) -> String {
    let run_id = format!("in-doubt-{}", uuid_like());
    let run = charge
        .agent(model.clone(), safety)
        .prompt("charge 100")
        .run_id(run_id.clone())
        .durable(store.clone());
    tokio::select! {
        result = run => panic!("the run should hang in the tool, ended with {result:?}"),
        () = charge.effect_done.notified() => {}
    }
    charge.hang.store(false, Ordering::SeqCst);
    run_id
}

/// Resumes a stored run, waiting out the lease the cut-off claim still holds.
async fn resume(
    agent: &Agent,
    store: &(impl RunStore + Clone),
    run_id: &str,
) -> Result<String, PromptError> {
    resume_as(|| agent.resume_stored(store.clone(), run_id)).await
}

/// Sends the resume `request` makes until no cut-off claim's lease is in its way.
async fn resume_as(request: impl Fn() -> PromptRequest) -> Result<String, PromptError> {
    loop {
        match request().await {
            Err(PromptError::Store {
                source: StoreError::Busy { .. },
                ..
            }) => tokio::time::sleep(LEASE / 4).await,
            other => return other,
        }
    }
}

/// The tool result the model saw for the charge.
fn charge_result(state: &RunState) -> String {
    state
        .history
        .iter()
        .find(|m| matches!(m, reins::message::Message::Tool { .. }))
        .map(reins::message::Message::text)
        .expect("a tool result in the history")
}

/// A call without a declaration is not executed again: the run suspends with it in doubt, the
/// listing shows it, and the supplied result is what the model sees.
async fn undeclared_call_waits_in_doubt(store: impl RunStore + Clone) {
    let (charge, model) = (Charge::new(), script());
    let run_id = cut_off_after_effect(&store, &charge, &model, RetrySafety::Undeclared).await;
    let agent = charge.agent(model.clone(), RetrySafety::Undeclared);

    let error = resume(&agent, &store, &run_id).await.unwrap_err();
    let PromptError::Suspended { run } = error else {
        panic!("expected the run to wait for a decision, got {error:?}");
    };
    let waiting: Vec<&PendingCall> = run.pending().collect();
    assert_eq!(waiting.len(), 1);
    assert!(waiting[0].is_in_doubt());
    assert_eq!(charge.effects(), vec!["100"], "the charge was not repeated");

    let listing = store.pending_approvals().await.unwrap();
    assert_eq!(listing.approvals.len(), 1);
    let pending = &listing.approvals[0];
    assert!(pending.in_doubt);
    assert_eq!(pending.tool_name, "charge");
    assert_eq!(pending.arguments, json!({"text": "100"}));
    assert!(pending.reason.starts_with("in doubt"), "{}", pending.reason);

    // Resuming without a decision leaves it waiting and still does not charge.
    let again = resume(&agent, &store, &run_id).await.unwrap_err();
    assert!(matches!(again, PromptError::Suspended { .. }), "{again:?}");
    assert_eq!(charge.effects(), vec!["100"]);

    decide(
        &store,
        &run_id,
        &pending.internal_call_id,
        ToolDecision::supply_result("charged 100 (checked with the bank)"),
    )
    .await
    .unwrap();
    assert!(
        store
            .pending_approvals()
            .await
            .unwrap()
            .approvals
            .is_empty()
    );
    let answer = resume(&agent, &store, &run_id).await.unwrap();
    assert_eq!(answer, "Charged.");
    assert_eq!(
        charge.effects(),
        vec!["100"],
        "a supplied result runs nothing"
    );
    let finished = store.load(&run_id).await.unwrap();
    assert_eq!(
        charge_result(&finished),
        "charged 100 (checked with the bank)"
    );
}

/// A person may decide to run an in-doubt call again, or to skip it.
async fn in_doubt_call_rerun_or_skipped(store: impl RunStore + Clone) {
    let (charge, model) = (Charge::new(), script());
    let run_id = cut_off_after_effect(&store, &charge, &model, RetrySafety::Undeclared).await;
    let agent = charge.agent(model.clone(), RetrySafety::Undeclared);
    assert!(matches!(
        resume(&agent, &store, &run_id).await,
        Err(PromptError::Suspended { .. })
    ));
    decide(&store, &run_id, "t1c0", ToolDecision::rerun())
        .await
        .unwrap();
    assert_eq!(resume(&agent, &store, &run_id).await.unwrap(), "Charged.");
    assert_eq!(charge.effects(), vec!["100", "100"], "rerun as decided");
    let finished = store.load(&run_id).await.unwrap();
    assert_eq!(charge_result(&finished), "charged 100");

    let (charge, model) = (Charge::new(), script());
    let run_id = cut_off_after_effect(&store, &charge, &model, RetrySafety::Undeclared).await;
    let agent = charge.agent(model.clone(), RetrySafety::Undeclared);
    assert!(matches!(
        resume(&agent, &store, &run_id).await,
        Err(PromptError::Suspended { .. })
    ));
    decide(
        &store,
        &run_id,
        "t1c0",
        ToolDecision::skip("not charged again"),
    )
    .await
    .unwrap();
    assert_eq!(resume(&agent, &store, &run_id).await.unwrap(), "Charged.");
    assert_eq!(charge.effects(), vec!["100"]);
    let finished = store.load(&run_id).await.unwrap();
    assert_eq!(charge_result(&finished), "not charged again");
}

/// A tool that declares re-execution safe runs again on resume, with the arguments it started
/// with, without asking anyone.
async fn declared_call_runs_again(store: impl RunStore + Clone, safety: RetrySafety) {
    let (charge, model) = (Charge::new(), script());
    let run_id = cut_off_after_effect(&store, &charge, &model, safety).await;
    let agent = charge.agent(model.clone(), safety);
    assert_eq!(resume(&agent, &store, &run_id).await.unwrap(), "Charged.");
    assert_eq!(charge.effects(), vec!["100", "100"]);
    let finished = store.load(&run_id).await.unwrap();
    assert_eq!(charge_result(&finished), "charged 100");
    let journal = store.journal(&run_id).await.unwrap();
    let kinds: Vec<&str> = journal.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "model_turn",
            "tool_call_started",
            "tool_call_started",
            "tool_call",
            "model_turn"
        ],
        "both starts are journaled, one result"
    );
}

/// Suspends every call for a person's approval.
struct AskFirst;

impl AgentHook for AskFirst {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.tool_name() {
            Some(_) => DispatchAction::suspend("a person approves charges"),
            None => DispatchAction::proceed(),
        }
    }
}

/// A call a person approved, cut off after its side effect, is in doubt like any other: the
/// approval was used up when it started, so it runs again only on a new decision.
async fn approved_call_cut_off_waits_in_doubt(store: impl RunStore + Clone) {
    let (charge, model) = (Charge::new(), script());
    let asking = |charge: &Charge| {
        charge
            .builder(model.clone(), RetrySafety::Undeclared)
            .add_hook(AskFirst)
            .build()
    };
    let run_id = format!("approved-in-doubt-{}", uuid_like());
    let suspended = asking(&charge)
        .prompt("charge 100")
        .run_id(run_id.clone())
        .durable(store.clone())
        .await;
    assert!(
        matches!(suspended, Err(PromptError::Suspended { .. })),
        "{suspended:?}"
    );
    decide(&store, &run_id, "t1c0", ToolDecision::approve())
        .await
        .unwrap();
    let agent = asking(&charge);
    tokio::select! {
        result = agent.resume_stored(store.clone(), &run_id) => {
            panic!("the run should hang in the tool, ended with {result:?}")
        }
        () = charge.effect_done.notified() => {}
    }
    charge.hang.store(false, Ordering::SeqCst);
    assert_eq!(charge.effects(), vec!["100"]);

    for _ in 0..2 {
        let error = resume(&agent, &store, &run_id).await.unwrap_err();
        let PromptError::Suspended { run } = error else {
            panic!("expected the call to wait in doubt, got {error:?}");
        };
        assert!(run.pending().all(PendingCall::is_in_doubt));
        assert_eq!(
            charge.effects(),
            vec!["100"],
            "the approved charge was not repeated"
        );
    }
    // The rerun is cut off too: the decision it used does not run it a third time.
    decide(&store, &run_id, "t1c0", ToolDecision::rerun())
        .await
        .unwrap();
    charge.hang.store(true, Ordering::SeqCst);
    tokio::select! {
        result = resume(&agent, &store, &run_id) => {
            panic!("the rerun should hang in the tool, ended with {result:?}")
        }
        () = charge.effect_done.notified() => {}
    }
    charge.hang.store(false, Ordering::SeqCst);
    let error = resume(&agent, &store, &run_id).await.unwrap_err();
    assert!(matches!(error, PromptError::Suspended { .. }), "{error:?}");
    assert_eq!(charge.effects(), vec!["100", "100"]);
    decide(&store, &run_id, "t1c0", ToolDecision::rerun())
        .await
        .unwrap();
    assert_eq!(resume(&agent, &store, &run_id).await.unwrap(), "Charged.");
    assert_eq!(
        charge.effects(),
        vec!["100", "100", "100"],
        "rerun as decided"
    );
}

/// A fork of the checkpoint where a call had started and has no result does not run the call
/// again, even for a tool that declares re-execution safe: in the fork the call's effect id is
/// new, so a tool deduplicating by it would repeat the parent's side effect. The call waits in
/// doubt; a decision to run it again runs it.
async fn a_fork_of_a_started_call_waits_in_doubt(
    store: impl RunStore + Clone,
    safety: RetrySafety,
) {
    let (charge, model) = (Charge::new(), script());
    let run_id = cut_off_after_effect(&store, &charge, &model, safety).await;
    let started = store.checkpoints(&run_id).await.unwrap();
    let started = started.last().expect("the start's checkpoint").version;
    let fork_id = format!("fork-{}", uuid_like());
    let forked = reins::store::fork(&store, &run_id, started, &fork_id, |_| {})
        .await
        .unwrap();
    assert_eq!(forked.status, RunStatus::Suspended);
    assert!(forked.pending_calls[0].is_in_doubt());

    let agent = charge.agent(model.clone(), safety);
    let waiting = resume(&agent, &store, &fork_id).await.unwrap_err();
    assert!(
        matches!(waiting, PromptError::Suspended { .. }),
        "{waiting:?}"
    );
    assert_eq!(
        charge.effects(),
        vec!["100"],
        "the fork did not charge again"
    );
    let listing = store.pending_approvals().await.unwrap();
    let pending = listing
        .approvals
        .iter()
        .find(|pending| pending.run_id == fork_id)
        .expect("the fork's call is listed");
    assert!(pending.in_doubt);

    decide(&store, &fork_id, "t1c0", ToolDecision::rerun())
        .await
        .unwrap();
    assert_eq!(resume(&agent, &store, &fork_id).await.unwrap(), "Charged.");
    assert_eq!(charge.effects(), vec!["100", "100"], "rerun as decided");
}

/// A decision passed with the resume of a run whose call was cut off (an application that
/// resumes after a crash with the approval it gave before) does not run the call again: the
/// call waits in doubt for a decision made since.
async fn a_decision_given_with_the_resume_waits_for_the_call_in_doubt(
    store: impl RunStore + Clone,
) {
    let (charge, model) = (Charge::new(), script());
    let run_id = cut_off_after_effect(&store, &charge, &model, RetrySafety::Undeclared).await;
    let agent = charge.agent(model.clone(), RetrySafety::Undeclared);
    let resumed = resume_as(|| {
        agent
            .resume_stored(store.clone(), &run_id)
            .decide("t1c0", ToolDecision::approve())
    })
    .await;
    let Err(PromptError::Suspended { run }) = resumed else {
        panic!("expected the call to wait in doubt, got {resumed:?}");
    };
    assert!(run.pending().next().is_some_and(PendingCall::is_in_doubt));
    assert_eq!(charge.effects(), vec!["100"], "not charged again");

    decide(&store, &run_id, "t1c0", ToolDecision::rerun())
        .await
        .unwrap();
    assert_eq!(resume(&agent, &store, &run_id).await.unwrap(), "Charged.");
    assert_eq!(
        charge.effects(),
        vec!["100", "100"],
        "rerun as decided since"
    );
}

async fn calls_in_doubt(store: impl RunStore + Clone) {
    a_decision_given_with_the_resume_waits_for_the_call_in_doubt(store.clone()).await;
    a_fork_of_a_started_call_waits_in_doubt(store.clone(), RetrySafety::DeduplicatesByEffectId)
        .await;
    approved_call_cut_off_waits_in_doubt(store.clone()).await;
    undeclared_call_waits_in_doubt(store.clone()).await;
    in_doubt_call_rerun_or_skipped(store.clone()).await;
    declared_call_runs_again(store.clone(), RetrySafety::Idempotent).await;
    declared_call_runs_again(store, RetrySafety::DeduplicatesByEffectId).await;
}

per_store!(calls_in_doubt, sqlite file, each .with_lease(LEASE));
