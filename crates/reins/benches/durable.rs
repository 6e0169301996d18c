//! The cost of durability: one checkpoint (state + journal entry, one transaction), a whole
//! durable tool loop per step, and the latency of resuming a suspended run.
//!
//! Stores: SQLite (a file in the temp directory, WAL) and, when `REINS_POSTGRES_URL` names a
//! server, PostgreSQL.
//!
//! Run with `cargo bench -p reins --features postgres --bench durable`
//! (`scripts/test.sh` shows how to start a throwaway PostgreSQL).

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use reins::agent::{
    Agent, AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext, PromptError,
    RunState, ToolDecision,
};
use reins::store::{Decision, JournalEntry, MemoryStore, RunStore, SqliteStore};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use serde_json::json;
use std::time::{Duration, Instant};

mod common;

use common::unique;

/// A ten-turn tool loop: nine `increment` calls, then an answer.
fn tool_loop_agent() -> Agent {
    let mut turns: Vec<Turn> = (0..9)
        .map(|_| Turn::tool_call("increment", json!({"x": 1})))
        .collect();
    turns.push(Turn::text("done"));
    let model = ScriptedModel::new(turns).without_request_log();
    let increment = tool_fn(
        "increment",
        "Adds one.",
        |args: serde_json::Value| async move {
            Ok::<_, std::convert::Infallible>(args["x"].as_i64().unwrap_or(0) + 1)
        },
    );
    AgentBuilder::new(model).tool(increment).build()
}

struct Approve;
impl AgentHook for Approve {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if event.tool_name().is_some() {
            DispatchAction::suspend("approval")
        } else {
            DispatchAction::proceed()
        }
    }
}

fn approval_agent() -> Agent {
    let model = ScriptedModel::resumable([
        Turn::tool_call("increment", json!({"x": 1})),
        Turn::text("done"),
    ])
    .without_request_log();
    let increment = tool_fn(
        "increment",
        "Adds one.",
        |args: serde_json::Value| async move {
            Ok::<_, std::convert::Infallible>(args["x"].as_i64().unwrap_or(0) + 1)
        },
    );
    AgentBuilder::new(model)
        .tool(increment)
        .add_hook(Approve)
        .build()
}

/// A state the size of a ten-turn run's, for checkpoint timings.
async fn sample_state() -> RunState {
    let response = tool_loop_agent().prompt("count").extended_details().await;
    match response {
        Ok(response) => response.state,
        Err(error) => panic!("the sample run failed: {error}"),
    }
}

fn bench_store<S: RunStore + Clone>(c: &mut Criterion, name: &str, store: S) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let state = runtime.block_on(sample_state());
    let entry = JournalEntry {
        effect_id: "run/t1c0".into(),
        kind: "tool_call".into(),
        payload: json!({"output": "2", "outcome": {"status": "success"}}),
    };

    c.bench_function(&format!("checkpoint/{name}"), |b| {
        b.to_async(&runtime).iter_custom(|iterations| {
            let store = store.clone();
            let mut state = state.clone();
            let entry = entry.clone();
            async move {
                state.run_id = unique("checkpoint");
                let mut lease = store.create(&state, "bench").await.unwrap();
                let started = Instant::now();
                for _ in 0..iterations {
                    lease = store
                        .checkpoint(&lease, &state, std::slice::from_ref(&entry), false)
                        .await
                        .unwrap();
                }
                started.elapsed()
            }
        })
    });

    c.bench_function(&format!("tool_loop_10_turns/{name}"), |b| {
        b.to_async(&runtime).iter_batched(
            tool_loop_agent,
            |agent| {
                let store = store.clone();
                async move { agent.prompt("count").durable(store).await.unwrap() }
            },
            BatchSize::SmallInput,
        )
    });

    c.bench_function(&format!("resume/{name}"), |b| {
        b.to_async(&runtime).iter_custom(|iterations| {
            let store = store.clone();
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    let agent = approval_agent();
                    let run_id = match agent.prompt("count").durable(store.clone()).await {
                        Err(PromptError::Suspended { run }) => run.run_id().to_owned(),
                        other => panic!("expected a suspension, got {other:?}"),
                    };
                    let listing = store.pending_approvals().await.unwrap();
                    let pending = listing.approvals.iter().find(|p| p.run_id == run_id);
                    let decision =
                        Decision::new(pending.unwrap(), ToolDecision::approve(), "bench");
                    store.decide(&run_id, &decision).await.unwrap();
                    let started = Instant::now();
                    let answer = agent.resume_stored(store.clone(), &run_id).await.unwrap();
                    total += started.elapsed();
                    assert_eq!(answer, "done");
                }
                total
            }
        })
    });
}

fn benches(c: &mut Criterion) {
    bench_store(c, "memory", MemoryStore::new());
    let path = std::env::temp_dir().join(format!("{}.sqlite", unique("reins-bench")));
    bench_store(c, "sqlite", SqliteStore::open(&path).unwrap());
    let _ = std::fs::remove_file(&path);
    match std::env::var("REINS_POSTGRES_URL") {
        Ok(url) => {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            let store = runtime
                .block_on(reins::store::PostgresStore::connect(&url))
                .unwrap();
            bench_store(c, "postgres", store);
        }
        Err(_) => eprintln!("REINS_POSTGRES_URL is not set: skipping the PostgreSQL cases"),
    }
}

criterion_group! {
    name = durable;
    config = Criterion::default().sample_size(20);
    targets = benches
}
criterion_main!(durable);
