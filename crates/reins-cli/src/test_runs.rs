//! Test-only: runs stored in a [`MemoryStore`] as a run that did nothing yet, and the stores'
//! clock, for the unit tests of what lists and shows runs (`runs`, the inbox's `runs_shown`).

use reins::agent::{RunState, RunStatus};
use reins::store::{MemoryStore, RunStore};

/// Milliseconds since the Unix epoch, the stores' clock.
pub fn now_ms() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

/// Waits until the store's clock has moved on, so the next write is stamped later.
pub async fn next_millisecond() {
    let now = now_ms();
    while now_ms() <= now {
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
}

/// A state of the run `run_id` with `status`, of no named agent, before any turn.
pub fn state(run_id: &str, status: RunStatus) -> RunState {
    let mut state: RunState = serde_json::from_value(serde_json::json!({
        "version": 1, "run_id": run_id, "agent_name": null, "turn": 0,
        "history": [], "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
        "entries": [], "last_model": null, "invalid_tool_call_retries": 0
    }))
    .expect("a minimal state");
    state.status = status;
    state
}

/// Stores `state` as a new run, its lease given back.
pub async fn store(store: &MemoryStore, state: &RunState) {
    let lease = store.create(state, "test").await.expect("created");
    store
        .checkpoint(&lease, state, &[], true)
        .await
        .expect("checkpointed");
}

/// Stores the run `run_id` with `status`, its lease given back.
pub async fn stored(memory: &MemoryStore, run_id: &str, status: RunStatus) {
    store(memory, &state(run_id, status)).await;
}
