//! Durable steps on Restate: a ten-turn tool loop (ten model calls and nine tool calls, each a
//! journaled step) from start to answer, and the latency of resuming a suspended run (from
//! the decision through the ingress to the answer: one tool call and a final turn), on the
//! same workloads as `crates/reins/benches/durable.rs` measures for the stores; and a long
//! run (400 tool calls in one turn, 402 steps), after which it prints what one such run left
//! in Restate's journal and state (through the admin API's SQL).
//!
//! Starts its own `restate-server` (scripts/install/restate.sh) and one demo worker on
//! loopback. Run with `cargo bench -p reins-restate --bench restate`.

// The tests' harness: the same server and worker start-up, written once.
#[allow(dead_code)]
#[path = "../tests/it/harness.rs"]
mod harness;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use harness::{Cluster, wait_for};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Journaled steps of one `loop` run: ten model calls and nine tool calls.
const LOOP_STEPS: u64 = 19;

/// Journaled steps of one `long` run: 400 tool calls in one turn and two model calls.
const LONG_STEPS: u64 = 402;

/// Prints what one finished `long` run left in Restate: its journal (entries, bytes) and its
/// state (bytes), read through the admin API's SQL introspection.
async fn report_sizes(cluster: &Cluster, runs: &reins_restate::RestateRuns) {
    let id = "long-sizes";
    runs.start(id, "long").await.expect("the run starts");
    runs.output(id).await.expect("the run finishes");
    let journal = cluster
        .query(&format!(
        "SELECT j.entry_type, count(*) AS entries, sum(j.raw_length) AS bytes FROM sys_journal j \
         JOIN sys_invocation i ON j.id = i.id WHERE i.target_service_key = '{id}' AND \
         i.target_handler_name = 'run' GROUP BY j.entry_type"
    ))
    .await;
    let state = cluster
        .query(&format!(
        "SELECT count(*) AS keys, sum(value_length) AS bytes FROM state WHERE service_key = '{id}' \
         AND service_name = 'ReinsAgent'"
    ))
    .await;
    eprintln!(
        "long run ({LONG_STEPS} steps): journal {}, state {}",
        serde_json::Value::Array(journal),
        serde_json::Value::Array(state)
    );
}

fn restate(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let cluster = runtime.block_on(async {
        let mut cluster = Cluster::start("bench").await;
        cluster.spawn_worker();
        cluster.register().await;
        cluster
    });
    let runs = cluster.runs();
    let next = AtomicUsize::new(0);
    let run_id = |kind: &str| format!("{kind}-{}", next.fetch_add(1, Ordering::Relaxed));

    let mut group = c.benchmark_group("restate");
    // A run takes tens of milliseconds: ten samples keep the bench around a minute.
    group.sample_size(10);
    group.throughput(Throughput::Elements(LOOP_STEPS));
    group.bench_function("tool_loop_10_turns", |b| {
        b.to_async(&runtime).iter(|| async {
            let id = run_id("loop");
            runs.start(&id, "loop").await.expect("the run starts");
            runs.output(&id).await.expect("the run finishes")
        });
    });
    group.throughput(Throughput::Elements(1));
    group.bench_function("resume", |b| {
        b.to_async(&runtime).iter_custom(|iterations| {
            let (runs, run_id) = (&runs, &run_id);
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    let id = run_id("resume");
                    runs.start(&id, "approve").await.expect("the run starts");
                    let call = wait_for("the run to suspend", || async {
                        runs.status(&id).await.ok()?.pending.into_iter().next()
                    })
                    .await
                    .call;
                    let started = Instant::now();
                    runs.approve(&id, &call).await.expect("the approval");
                    runs.output(&id).await.expect("the run finishes");
                    total += started.elapsed();
                }
                total
            }
        });
    });
    // A long run: what each step costs once the run has many (the state the `status` handler
    // reads is written after every step).
    group.throughput(Throughput::Elements(LONG_STEPS));
    group.bench_function("long_run_402_steps", |b| {
        b.to_async(&runtime).iter(|| async {
            let id = run_id("long");
            runs.start(&id, "long").await.expect("the run starts");
            runs.output(&id).await.expect("the run finishes")
        });
    });
    group.finish();
    runtime.block_on(report_sizes(&cluster, &runs));
    drop(cluster);
}

criterion_group!(benches, restate);
criterion_main!(benches);
