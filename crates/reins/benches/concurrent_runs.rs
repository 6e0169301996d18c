//! Wall time and memory of many concurrent runs.
//!
//! `RUNS` runs, each its own agent on its own [`ScriptedModel`] with two turns that each wait
//! `MODEL_WAIT` on the tokio timer: a tool call (a trivial `tool_fn` tool), then a text answer.
//! All runs are spawned at once on a multi-thread tokio runtime (one worker per core) and the
//! wall time until the last one has finished is measured with `iter_custom`; building the
//! agents is not timed. The cases are:
//!
//! - `baseline/sleeps_only`: `RUNS` tasks that only sleep `MODEL_WAIT` twice: the floor set by
//!   the runtime and its timer (whose resolution is 1 ms).
//! - `reins`: the runs themselves.
//!
//! The wall time beyond the model's waits is `reins − 2 × MODEL_WAIT`; what reins adds to the
//! runtime's own floor is `reins − baseline/sleeps_only`.
//!
//! Before the measurements, one extra batch of runs is made with the counting global allocator
//! of `common` switched on, and the peak heap it reached is printed (`memory:` lines), with
//! the peak resident set size (`VmHWM`, reset through `/proc/self/clear_refs` where allowed).
//! The allocator only counts during that batch, so it does not slow the timed batches beyond
//! one relaxed atomic load per allocation.
//!
//! Run with `cargo bench -p reins --bench concurrent_runs`.

use criterion::{Criterion, SamplingMode, criterion_group};
use reins::agent::{Agent, AgentBuilder};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::convert::Infallible;
use std::time::{Duration, Instant};

/// Concurrent runs per batch.
const RUNS: usize = 10_000;
/// How long each model turn waits.
const MODEL_WAIT: Duration = Duration::from_millis(10);
const ANSWER: &str = "Done.";

mod common;

use common::{CountingAllocator, mib};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[derive(Deserialize, JsonSchema)]
struct IncrementArgs {
    x: i64,
}

/// One run's agent: a tool call turn, then a text turn, each waiting `MODEL_WAIT`.
fn agent() -> Agent {
    let model = ScriptedModel::new([
        Turn::tool_call("increment", json!({ "x": 1 })).delay(MODEL_WAIT),
        Turn::text(ANSWER).delay(MODEL_WAIT),
    ])
    .without_request_log();
    AgentBuilder::new(model)
        .tool(tool_fn(
            "increment",
            "Adds one to x.",
            |args: IncrementArgs| async move { Ok::<_, Infallible>(args.x + 1) },
        ))
        .build()
}

fn agents() -> Vec<Agent> {
    (0..RUNS).map(|_| agent()).collect()
}

/// Spawns one run per agent and waits for all of them.
async fn run_all(agents: Vec<Agent>) {
    let handles: Vec<_> = agents
        .into_iter()
        .map(|agent| tokio::spawn(async move { agent.prompt("Go").max_turns(2).await }))
        .collect();
    for handle in handles {
        let answer = handle.await.expect("the run does not panic");
        assert_eq!(answer.expect("the run succeeds"), ANSWER);
    }
}

/// Spawns `RUNS` tasks that only sleep as the model does, and waits for all of them.
async fn sleep_all() {
    let handles: Vec<_> = (0..RUNS)
        .map(|_| {
            tokio::spawn(async {
                tokio::time::sleep(MODEL_WAIT).await;
                tokio::time::sleep(MODEL_WAIT).await;
            })
        })
        .collect();
    for handle in handles {
        handle.await.expect("the task does not panic");
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// A line of `/proc/self/status`, e.g. `VmHWM`, in kB.
fn proc_status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// One batch with the counting allocator on; prints its heap and resident-set figures.
fn memory_report() {
    let rt = runtime();
    // Warm the runtime up (worker threads, timer wheel) so the batch measures the runs.
    rt.block_on(sleep_all());

    let rss_before = proc_status_kb("VmRSS:");
    // Resets VmHWM to the current RSS (Linux >= 4.0); ignored where not allowed.
    let hwm_reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();

    CountingAllocator::start();
    let agents = agents();
    let setup = CountingAllocator::net_bytes();
    let setup_allocations = CountingAllocator::allocations();
    let start = Instant::now();
    rt.block_on(run_all(agents));
    let wall = start.elapsed();
    let counts = CountingAllocator::stop();
    let (after, peak) = (counts.net_bytes, counts.peak_bytes);

    let hwm = proc_status_kb("VmHWM:");
    println!(
        "memory: {RUNS} concurrent runs, {:?} of model wait per turn",
        MODEL_WAIT
    );
    println!("memory: wall time of this batch (allocator counting): {wall:?}");
    println!(
        "memory: heap held by the {RUNS} agents before the runs: {:.1} MiB ({:.0} B per agent)",
        mib(setup),
        setup as f64 / RUNS as f64
    );
    println!(
        "memory: peak heap, agents included: {:.1} MiB; above the agents: {:.1} MiB ({:.0} B per run)",
        mib(peak),
        mib(peak - setup),
        (peak - setup) as f64 / RUNS as f64
    );
    println!(
        "memory: allocations during the runs: {} ({:.0} per run)",
        counts.allocations - setup_allocations,
        (counts.allocations - setup_allocations) as f64 / RUNS as f64
    );
    println!(
        "memory: heap left after all runs finished: {:.1} MiB",
        mib(after)
    );
    if let (Some(before), Some(hwm)) = (rss_before, hwm) {
        println!(
            "memory: VmRSS before: {:.1} MiB; VmHWM after: {:.1} MiB{}",
            before as f64 / 1024.0,
            hwm as f64 / 1024.0,
            if hwm_reset {
                " (reset before the batch)"
            } else {
                " (process lifetime; reset not allowed)"
            }
        );
    }
}

fn concurrent_runs(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("concurrent_runs");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    group.bench_function("baseline/sleeps_only", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                rt.block_on(sleep_all());
            }
            start.elapsed()
        });
    });
    group.bench_function("reins", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let agents = agents();
                let start = Instant::now();
                rt.block_on(run_all(agents));
                total += start.elapsed();
            }
            total
        });
    });
    group.finish();
}

criterion_group!(benches, concurrent_runs);

fn main() {
    memory_report();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
