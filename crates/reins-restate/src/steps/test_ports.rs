//! Stand-ins for an invocation's step port, for tests: one that runs every step (a first
//! execution), one that also keeps what each step recorded, and one that answers from those
//! records without running anything (a replay).

use super::{StepRequest, Steps};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};

/// What a first execution recorded, by step name.
pub(crate) type Journal = Arc<Mutex<HashMap<String, Value>>>;

/// A stand-in for an invocation's step port, for tests: it runs every step of the run `run_id`
/// and hands each recorded result to `recorded` with the step's name (a first execution,
/// with no journal of its own).
pub(crate) fn executing_port(
    run_id: &str,
    mut recorded: impl FnMut(&str, &Value) + Send + 'static,
) -> Steps {
    let (sender, mut receiver) = mpsc::unbounded_channel::<StepRequest>();
    tokio::spawn(async move {
        while let Some(request) = receiver.recv().await {
            let (done, done_rx) = oneshot::channel();
            let _ = request.execute.send(done);
            let value = done_rx
                .await
                .map_err(|_| "abandoned".to_owned())
                .and_then(|value| value);
            if let Ok(value) = &value {
                recorded(&request.name, value);
            }
            let _ = request.result.send(value);
        }
    });
    Steps::journaled(run_id.to_owned(), sender)
}

/// A first execution of the run `run_id`: every step runs and its result is kept in
/// `journal` by name.
pub(crate) fn recording_port(run_id: &str, journal: Journal) -> Steps {
    executing_port(run_id, move |name, value| {
        journal
            .lock()
            .expect("journal")
            .insert(name.to_owned(), value.clone());
    })
}

/// A replay of the run `run_id`: no step runs (`execute` is dropped); each result comes from
/// `journal`.
pub(crate) fn replaying_port(run_id: &str, journal: Journal) -> Steps {
    let (sender, mut receiver) = mpsc::unbounded_channel::<StepRequest>();
    tokio::spawn(async move {
        while let Some(request) = receiver.recv().await {
            drop(request.execute);
            let recorded = journal.lock().expect("journal").get(&request.name).cloned();
            let _ = request
                .result
                .send(recorded.ok_or_else(|| format!("nothing journaled as {}", request.name)));
        }
    });
    Steps::journaled(run_id.to_owned(), sender)
}
