//! A journaled decider against stand-ins for an invocation's step port: one that runs each
//! step and keeps what it recorded (a first execution), one that answers from those records
//! without running anything (a replay), and one whose engine refuses every step.

use super::*;
use crate::steps::{Journal, StepRequest, recording_port, replaying_port};
use reins::hooks::approval::{DeciderFailure, decider_fn};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// A first execution: every step runs and its result is kept in `journal` by name.
fn recording(journal: Journal) -> Steps {
    recording_port("run-7", journal)
}

/// A replay: no step runs; each result comes from `journal`.
fn replaying(journal: Journal) -> Steps {
    replaying_port("run-7", journal)
}

/// An engine that refuses every step.
fn refusing() -> Steps {
    let (sender, mut receiver) = mpsc::unbounded_channel::<StepRequest>();
    tokio::spawn(async move {
        while let Some(request) = receiver.recv().await {
            let _ = request
                .result
                .send(Err("the invocation was cancelled".to_owned()));
        }
    });
    Steps::journaled("run-7".to_owned(), sender)
}

fn request() -> ApprovalRequest {
    ApprovalRequest {
        run_id: "run-7".to_owned(),
        turn: 1,
        tool_name: "deploy".to_owned(),
        tool_call_id: "call_1".to_owned(),
        internal_call_id: "t1c0".to_owned(),
        args: serde_json::json!({"env": "prod"}),
        rule: None,
        reason: None,
        traits: None,
    }
}

/// A decider answering `answer` and counting how often it was asked.
fn counting(answer: Decision) -> (impl ApprovalDecider, Arc<AtomicUsize>) {
    let asked = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&asked);
    let decider = decider_fn(move |_| {
        count.fetch_add(1, Ordering::SeqCst);
        let answer = answer.clone();
        async move { answer }
    });
    (decider, asked)
}

#[tokio::test]
async fn each_answer_is_journaled_once_and_a_replay_reads_it_without_asking_again() {
    for answer in [
        Decision::approve(),
        Decision::approve_with_args(serde_json::json!({"env": "staging"})),
        Decision::deny("not on a Friday"),
        Decision::suspend("a person decides"),
    ] {
        let journal = Journal::default();
        let (decider, asked) = counting(answer.clone());
        let decider = Arc::new(decider);

        let first = recording(Arc::clone(&journal)).decider(Arc::clone(&decider));
        assert_eq!(first.decide(&request()).await, answer);
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        assert!(
            journal
                .lock()
                .expect("journal")
                .contains_key("run-7/approval/t1c0"),
            "named by the run and the call"
        );

        let replayed = replaying(Arc::clone(&journal)).decider(Arc::clone(&decider));
        assert_eq!(replayed.decide(&request()).await, answer, "as journaled");
        assert_eq!(asked.load(Ordering::SeqCst), 1, "not asked on replay");
    }
}

/// What a webhook whose service failed says.
const NO_DECISION: &str = "the approval service gave no decision (it answered with status 500)";

/// A decider that cannot decide (a webhook whose service failed): it counts how often it is
/// asked, and keeps what it is told of the policy's denial (as a decision trail does).
#[derive(Default)]
struct Undecided {
    asked: AtomicUsize,
    told: Mutex<Vec<(DeciderFailure, Decision)>>,
}

impl ApprovalDecider for Undecided {
    async fn decide(&self, request: &ApprovalRequest) -> Decision {
        Decision::deny(format!(
            "`{}` was not run: {NO_DECISION}",
            request.tool_name
        ))
    }

    async fn try_decide(&self, _: &ApprovalRequest) -> Result<Decision, DeciderFailure> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Err(DeciderFailure::NoDecision(NO_DECISION.to_owned()))
    }

    async fn failed_to_answer(
        &self,
        _: &ApprovalRequest,
        failure: &DeciderFailure,
        denial: &Decision,
    ) {
        let told = (failure.clone(), denial.clone());
        self.told.lock().expect("told").push(told);
    }
}

#[tokio::test]
async fn a_decider_that_gives_no_decision_is_journaled_as_such_and_replayed_the_same() {
    let journal = Journal::default();
    let undecided = Arc::new(Undecided::default());
    let failure = DeciderFailure::NoDecision(NO_DECISION.to_owned());

    let first = recording(Arc::clone(&journal)).decider(Arc::clone(&undecided));
    // No decision of the decider's: the policy denies the call itself, as its own denial.
    assert_eq!(first.try_decide(&request()).await, Err(failure.clone()));
    assert_eq!(undecided.asked.load(Ordering::SeqCst), 1);
    assert!(
        journal
            .lock()
            .expect("journal")
            .contains_key("run-7/approval/t1c0"),
        "journaled"
    );

    let replayed = replaying(Arc::clone(&journal)).decider(Arc::clone(&undecided));
    assert_eq!(replayed.try_decide(&request()).await, Err(failure));
    assert_eq!(
        undecided.asked.load(Ordering::SeqCst),
        1,
        "not asked on replay"
    );

    // Asked through `decide`, the failure is a denial saying why.
    let Decision::Deny(message) = replayed.decide(&request()).await else {
        panic!("no decision denies the call");
    };
    assert_eq!(message, format!("`deploy` was not run: {NO_DECISION}"));
}

#[tokio::test]
async fn the_inner_decider_is_told_of_the_policy_denial_once() {
    let journal = Journal::default();
    let undecided = Arc::new(Undecided::default());
    let failure = DeciderFailure::NoDecision(NO_DECISION.to_owned());
    let denial = Decision::deny(format!("`deploy` was not run: {NO_DECISION}"));

    let first = recording(Arc::clone(&journal)).decider(Arc::clone(&undecided));
    first.failed_to_answer(&request(), &failure, &denial).await;
    let told = undecided.told.lock().expect("told").clone();
    assert_eq!(told, [(failure.clone(), denial.clone())]);
    assert!(
        journal
            .lock()
            .expect("journal")
            .contains_key("run-7/approval/t1c0/failed"),
        "journaled"
    );

    let replayed = replaying(journal).decider(Arc::clone(&undecided));
    replayed
        .failed_to_answer(&request(), &failure, &denial)
        .await;
    assert_eq!(
        undecided.told.lock().expect("told").len(),
        1,
        "not told again on replay"
    );
}

#[tokio::test]
async fn a_panicking_decider_is_journaled_as_its_failure() {
    let journal = Journal::default();
    async fn broken(_: ApprovalRequest) -> Decision {
        panic!("the approval service client broke")
    }
    let first = recording(Arc::clone(&journal)).decider(decider_fn(broken));
    assert_eq!(
        first.try_decide(&request()).await,
        Err(DeciderFailure::Panicked)
    );
    assert_eq!(
        first.decide(&request()).await,
        Decision::deny("`deploy` was not run: the decider panicked")
    );

    // A decider whose own code panics before it returns a future.
    let at_once = decider_fn(|_: ApprovalRequest| -> std::future::Ready<Decision> {
        panic!("the approval service is not configured")
    });
    let other = Journal::default();
    let answer = recording(Arc::clone(&other))
        .decider(at_once)
        .try_decide(&request())
        .await;
    assert_eq!(answer, Err(DeciderFailure::Panicked));
    assert!(!other.lock().expect("journal").is_empty(), "journaled");

    let (never, asked) = counting(Decision::approve());
    let replayed = replaying(journal).decider(never);
    assert_eq!(
        replayed.try_decide(&request()).await,
        Err(DeciderFailure::Panicked)
    );
    assert_eq!(asked.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_decider_that_does_not_answer_in_time_is_journaled_as_timed_out() {
    let journal = Journal::default();
    let silent = decider_fn(|_| std::future::pending::<Decision>());
    let first = recording(Arc::clone(&journal))
        .decider(silent)
        .timeout(Duration::from_millis(50));
    assert_eq!(
        first.try_decide(&request()).await,
        Err(DeciderFailure::TimedOut(Duration::from_millis(50)))
    );
    assert!(!journal.lock().expect("journal").is_empty(), "journaled");
}

#[tokio::test]
async fn a_step_the_engine_refuses_is_a_failure_that_denies_the_call() {
    let (decider, _) = counting(Decision::approve());
    let refused = refusing().decider(decider);
    let Err(DeciderFailure::NoDecision(why)) = refused.try_decide(&request()).await else {
        panic!("an unjournaled approval is no decision");
    };
    assert!(why.contains("could not be journaled"), "{why}");
    let Decision::Deny(message) = refused.decide(&request()).await else {
        panic!("an unjournaled approval denies the call");
    };
    assert!(message.contains("could not be journaled"), "{message}");
}

/// Runs journaled before failures were kept hold a decision: a replay reads it as one.
#[tokio::test]
async fn a_decision_journaled_by_an_earlier_version_is_read_back() {
    let journal = Journal::default();
    journal.lock().expect("journal").insert(
        "run-7/approval/t1c0".to_owned(),
        serde_json::json!({"decision": "deny", "message": "`deploy` was not run: no approval decision within 50ms"}),
    );
    let (never, asked) = counting(Decision::approve());
    let replayed = replaying(journal).decider(never);
    assert_eq!(
        replayed.try_decide(&request()).await,
        Ok(Decision::deny(
            "`deploy` was not run: no approval decision within 50ms"
        ))
    );
    assert_eq!(asked.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn embedded_the_decider_is_simply_asked() {
    let (decider, asked) = counting(Decision::deny("no"));
    let embedded = Steps::embedded().decider(decider);
    assert_eq!(embedded.decide(&request()).await, Decision::deny("no"));
    assert_eq!(embedded.decide(&request()).await, Decision::deny("no"));
    assert_eq!(asked.load(Ordering::SeqCst), 2, "nothing is journaled");
}
