//! Finished runs are left alone: resuming one runs nothing and writes nothing. A failed run's
//! record says why it failed.

use super::per_store::per_store;
use super::{Seen, agent, version_of};
use reins::agent::*;
use reins::store::{RunStore, StoreError};
use reins::testing::{ScriptedModel, Turn};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// Resuming a run that completed, failed or was cancelled runs nothing, writes nothing
/// (the version stays), and ends with `AlreadyFinished`. The failed runs' records keep the
/// message of the error they ended with.
async fn finished_runs_are_left_alone(store: impl RunStore + Clone) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let lookup = || {
        ScriptedModel::new([
            Turn::tool_call("lookup", json!({"text": "balance"})),
            Turn::text("The balance is 3."),
        ])
    };

    // Completed.
    let answer = agent(lookup(), log.clone(), Seen::default())
        .prompt("balance?")
        .run_id("completed")
        .durable(store.clone())
        .await
        .unwrap();
    assert_eq!(answer, "The balance is 3.");
    // Failed: the model wants more turns than allowed.
    let error = agent(lookup(), log.clone(), Seen::default())
        .prompt("balance?")
        .run_id("failed")
        .max_turns(1)
        .durable(store.clone())
        .await
        .unwrap_err();
    assert!(matches!(error, PromptError::MaxTurns { .. }), "{error:?}");
    let out_of_turns = error.to_string();
    // Cancelled by a hook.
    let error = agent(lookup(), log.clone(), Seen::default())
        .prompt("balance?")
        .run_id("cancelled")
        .add_hook(StopAtStart)
        .durable(store.clone())
        .await
        .unwrap_err();
    assert!(matches!(error, PromptError::Cancelled { .. }), "{error:?}");
    let stopped = error.to_string();
    let ran = log.lock().unwrap().len();

    for (run_id, status, answer, failure) in [
        (
            "completed",
            RunStatus::Completed,
            Some("The balance is 3."),
            None,
        ),
        (
            "failed",
            RunStatus::Failed,
            None,
            Some(out_of_turns.as_str()),
        ),
        ("cancelled", RunStatus::Failed, None, Some(stopped.as_str())),
    ] {
        let before = store.load(run_id).await.unwrap();
        assert_eq!(before.status, status, "{run_id}");
        assert_eq!(
            before.failure.as_deref(),
            failure,
            "{run_id}: why it failed"
        );
        let version = version_of(&store, run_id).await;
        let journal = store.journal(run_id).await.unwrap();

        let error = agent(lookup(), log.clone(), Seen::default())
            .resume_stored(store.clone(), run_id)
            .await
            .unwrap_err();
        match &error {
            PromptError::AlreadyFinished {
                run_id: id,
                status: finished,
                answer: given,
                history,
            } => {
                assert_eq!(id, run_id);
                assert_eq!(*finished, status, "{run_id}");
                assert_eq!(given.as_deref(), answer, "{run_id}");
                assert_eq!(*history, before.history, "{run_id}");
            }
            other => panic!("{run_id}: expected AlreadyFinished, got {other:?}"),
        }
        assert_eq!(error.run_id(), Some(run_id));
        // A durable `resume` of the same run is refused the same way.
        let error = agent(lookup(), log.clone(), Seen::default())
            .resume(before.clone())
            .durable(store.clone())
            .await
            .unwrap_err();
        assert!(
            matches!(error, PromptError::AlreadyFinished { .. }),
            "{error:?}"
        );

        assert_eq!(
            version_of(&store, run_id).await,
            version,
            "{run_id}: nothing written"
        );
        assert_eq!(store.load(run_id).await.unwrap(), before, "{run_id}");
        assert_eq!(store.journal(run_id).await.unwrap(), journal, "{run_id}");
        let error = store.claim(run_id, "w").await.unwrap_err();
        assert_eq!(
            error,
            StoreError::Finished {
                run_id: run_id.into(),
                status
            }
        );
        assert_eq!(
            version_of(&store, run_id).await,
            version,
            "{run_id}: nothing written"
        );
    }
    assert_eq!(log.lock().unwrap().len(), ran, "no tool ran again");
}

per_store!(finished_runs_are_left_alone);

/// Cancels every run before it starts.
struct StopAtStart;
impl AgentHook for StopAtStart {
    async fn on_run_start(&self, _ctx: &HookContext, _event: RunStartEvent<'_>) -> RunStartAction {
        RunStartAction::stop("not today")
    }
}
