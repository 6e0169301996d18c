//! Durable steps on Restate: a ten-turn tool loop (ten model calls and nine tool calls, each a
//! journaled step) from start to answer, and the latency of resuming a suspended run (from
//! the decision through the ingress to the answer: one tool call and a final turn), on the
//! same workloads as `crates/reins/benches/durable.rs` measures for the stores.
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
    group.finish();
    drop(cluster);
}

criterion_group!(benches, restate);
criterion_main!(benches);
