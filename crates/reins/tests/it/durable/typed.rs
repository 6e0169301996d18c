//! A typed run's refused answer is part of its stored state: a run given back after its
//! model's answer was refused, and resumed in another process with no model call left, ends
//! saying why the answer was refused, as the run would have without the interruption.

use super::faulty_store::{Fault, FaultyStore};
use super::per_store::per_store;
use super::uuid_like;
use reins::agent::*;
use reins::store::RunStore;
use reins::testing::{ScriptedModel, Turn};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Weather {
    city: String,
    celsius: f64,
}

/// A typed run of an agent whose model answers in text twice (each refused: the answer must
/// come through the output tool), allowed two model calls, in `store` as `run_id`.
async fn typed_run(store: impl RunStore, run_id: &str) -> Result<Weather, PromptError> {
    let model = ScriptedModel::resumable([Turn::text("It is cold."), Turn::text("Very cold.")]);
    let agent = AgentBuilder::new(model).build();
    agent
        .prompt("Weather in Oslo?")
        .run_id(run_id)
        .durable(store)
        .max_turns(2)
        .output::<Weather>()
        .mode(OutputMode::Tool)
        .await
}

/// The message of a structured-output error.
fn refusal(ended: Result<Weather, PromptError>) -> String {
    match ended {
        Err(PromptError::StructuredOutput { message, .. }) => message,
        other => panic!("expected the refused answer, got {other:?}"),
    }
}

async fn a_resumed_run_out_of_calls_after_a_refused_answer_says_what_was_wrong<S>(inner: S)
where
    S: RunStore + Clone,
{
    // The store fails the run's last write (the third checkpoint after its creation): the run
    // is given back as stored after its second answer was refused, out of calls, not failed.
    let store = FaultyStore::over(inner, Fault::FailCheckpoint(3));
    let run_id = format!("typed-{}", uuid_like());
    let uninterrupted = refusal(typed_run(store.clone(), &run_id).await);
    assert!(
        uninterrupted.contains("it is text, not a call of the `final_output` tool"),
        "{uninterrupted}"
    );
    let stored = store.load(&run_id).await.unwrap();
    assert_eq!((stored.status, stored.turn), (RunStatus::Running, 2));

    // Another process resumes it: no call is left, and its last answer was refused.
    let model = ScriptedModel::resumable([Turn::text("unused")]);
    let resumed = AgentBuilder::new(model.clone())
        .build()
        .resume_stored(store.clone(), &run_id)
        .max_turns(2)
        .output::<Weather>()
        .mode(OutputMode::Tool)
        .await;
    assert_eq!(refusal(resumed), uninterrupted);
    assert!(model.requests().is_empty(), "no model call was left");
    let ended = store.load(&run_id).await.unwrap();
    assert_eq!(ended.status, RunStatus::Failed);
    let failure = ended.failure.unwrap_or_default();
    assert!(failure.ends_with(&uninterrupted), "{failure}");
}

per_store!(a_resumed_run_out_of_calls_after_a_refused_answer_says_what_was_wrong, sqlite file);
