//! Many concurrent durable runs in one process: what a worker serving many runs at once gets
//! from each run store.
//!
//! A batch is `RUNS` durable ten-turn runs (default 1,000), each its own agent on its own
//! [`ScriptedModel`]: nine `increment` tool calls, then a text answer. The model answers at
//! once; the tool waits `TOOL_WAIT` (10 ms) on the tokio timer before answering, standing in
//! for a tool that does I/O. Every run is `.durable(store)` under its own run id, so it writes
//! one checkpoint when it is created, one after every model turn and two per tool call (the
//! call's start, checkpointed before the tool runs, and its result): 29 state writes per run,
//! with 28 journal entries (the one-shot report below counts both from the store).
//!
//! All runs of a batch are spawned at once on a multi-thread tokio runtime with 2 workers (the
//! machine the figures come from has 2 cores), and the wall time from the first spawn until
//! every run has been joined and its answer checked is measured with `iter_custom`: that is
//! what a caller starting the runs waits for. Building the agents and their run ids is not
//! timed (as in `concurrent_runs`); the finished runs are deleted from the store (`expire`)
//! after each batch, untimed, so every batch starts from an equally small store.
//!
//! Throughput is reported in durable steps per second: a step is a model turn or a tool call
//! (the unit Restate's journal counts, see `docs/PERFORMANCE.md`), 19 per run (10 turns, 9
//! tool calls). The cases, in the group `durable_concurrent`:
//!
//! - `baseline/sleeps_only`: `RUNS` tasks that only sleep `TOOL_WAIT` nine times: the floor
//!   set by the tool's waits, the runtime and its timer (whose resolution is 1 ms).
//! - `not_durable`: the same runs without a store: what the runs cost before durability.
//! - `memory`, `sqlite`, `postgres`: the durable runs on [`MemoryStore`], on [`SqliteStore`]
//!   (a file in the temp directory, WAL) and, with the `postgres` feature and
//!   `REINS_POSTGRES_URL` naming a server, on `PostgresStore` (its default pool of 16
//!   connections).
//!
//! Before the measurements, one extra batch per store is timed once and reported on stderr
//! (`one-shot:` lines) with the checkpoints and journal entries the store holds for one run,
//! and the process's peak resident set size during that batch (`VmHWM`, reset through
//! `/proc/self/clear_refs` where allowed; PostgreSQL's own memory is not in it).
//!
//! Run with
//! `scripts/with-postgres.sh cargo bench -p reins --features postgres --bench durable_concurrent`
//! (or without `--features postgres` and the script for the in-process stores only).
//! `REINS_BENCH_RUNS` overrides `RUNS`.

use criterion::{Criterion, SamplingMode, Throughput};
use reins::agent::{Agent, AgentBuilder};
use reins::store::{MemoryStore, RunStore, SqliteStore};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use serde_json::json;
use std::time::{Duration, Instant};

mod common;

use common::unique;

/// Concurrent runs per batch, unless `REINS_BENCH_RUNS` says otherwise.
const RUNS: usize = 1_000;
/// How long each tool call waits before it answers.
const TOOL_WAIT: Duration = Duration::from_millis(10);
/// Tool calls per run; the run has one more model turn than this.
const TOOL_CALLS: usize = 9;
/// Durable steps per run: model turns plus tool calls.
const STEPS: usize = 2 * TOOL_CALLS + 1;
/// Runtime worker threads.
const WORKERS: usize = 2;
const ANSWER: &str = "done";

fn runs() -> usize {
    std::env::var("REINS_BENCH_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .filter(|&runs| runs > 0)
        .unwrap_or(RUNS)
}

/// One run's agent: nine `increment` calls, each waiting `TOOL_WAIT`, then an answer.
fn agent() -> Agent {
    let mut turns: Vec<Turn> = (0..TOOL_CALLS)
        .map(|_| Turn::tool_call("increment", json!({"x": 1})))
        .collect();
    turns.push(Turn::text(ANSWER));
    let model = ScriptedModel::new(turns).without_request_log();
    let increment = tool_fn(
        "increment",
        "Adds one, after a wait.",
        |args: serde_json::Value| async move {
            tokio::time::sleep(TOOL_WAIT).await;
            Ok::<_, std::convert::Infallible>(args["x"].as_i64().unwrap_or(0) + 1)
        },
    );
    AgentBuilder::new(model).tool(increment).build()
}

/// A batch's agents, each with its own run id: built before the timing starts.
fn batch(runs: usize) -> Vec<(Agent, String)> {
    let prefix = unique("concurrent");
    (0..runs)
        .map(|i| (agent(), format!("{prefix}-{i}")))
        .collect()
}

/// Spawns every run of `batch` durably on `store` and waits for all of them.
async fn run_all<S: RunStore + Clone>(batch: Vec<(Agent, String)>, store: Option<S>) {
    let handles: Vec<_> = batch
        .into_iter()
        .map(|(agent, run_id)| {
            let store = store.clone();
            tokio::spawn(async move {
                let prompt = agent.prompt("count").run_id(run_id);
                match store {
                    Some(store) => prompt.durable(store).await,
                    None => prompt.await,
                }
            })
        })
        .collect();
    for handle in handles {
        let answer = handle.await.expect("the run does not panic");
        assert_eq!(answer.expect("the run succeeds"), ANSWER);
    }
}

/// Spawns `runs` tasks that only wait as the tool calls do, and waits for all of them.
async fn sleep_all(runs: usize) {
    let handles: Vec<_> = (0..runs)
        .map(|_| {
            tokio::spawn(async {
                for _ in 0..TOOL_CALLS {
                    tokio::time::sleep(TOOL_WAIT).await;
                }
            })
        })
        .collect();
    for handle in handles {
        handle.await.expect("the task does not panic");
    }
}

/// Deletes the finished runs, so the next batch starts from an equally small store.
async fn clear<S: RunStore>(store: &S) {
    store
        .expire(Duration::ZERO)
        .await
        .expect("the finished runs are deleted");
}

/// A line of `/proc/self/status`, e.g. `VmHWM`, in kB.
fn proc_status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// One timed batch on `store`, reported on stderr with what the store holds for one run and
/// the peak resident set size.
fn one_shot<S: RunStore + Clone>(rt: &tokio::runtime::Runtime, name: &str, store: &S) {
    let runs = runs();
    let batch = batch(runs);
    let first = batch[0].1.clone();
    let rss_before = proc_status_kb("VmRSS:");
    // Resets VmHWM to the current RSS (Linux >= 4.0); ignored where not allowed.
    let hwm_reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let started = Instant::now();
    rt.block_on(run_all(batch, Some(store.clone())));
    let wall = started.elapsed();
    let hwm = proc_status_kb("VmHWM:");
    let (writes, journal) = rt.block_on(async {
        let writes = store.checkpoints(&first).await.map(|c| c.len());
        let journal = store.journal(&first).await.map(|j| j.len());
        (writes, journal)
    });
    let (writes, journal) = (
        writes.expect("the run's checkpoints"),
        journal.expect("the run's journal"),
    );
    eprintln!(
        "one-shot: {name}: {runs} runs in {wall:.2?}: {:.0} steps/s, {:.0} state writes/s \
         ({writes} state writes and {journal} journal entries per run)",
        (runs * STEPS) as f64 / wall.as_secs_f64(),
        (runs * writes) as f64 / wall.as_secs_f64(),
    );
    if let (Some(before), Some(hwm)) = (rss_before, hwm) {
        eprintln!(
            "one-shot: {name}: VmRSS before {:.1} MiB; VmHWM after {:.1} MiB{}",
            before as f64 / 1024.0,
            hwm as f64 / 1024.0,
            if hwm_reset {
                " (reset before the batch)"
            } else {
                " (process lifetime: reset not allowed)"
            }
        );
    }
    rt.block_on(clear(store));
}

/// The stores measured.
struct Stores {
    memory: MemoryStore,
    sqlite: SqliteStore,
    sqlite_path: std::path::PathBuf,
    #[cfg(feature = "postgres")]
    postgres: Option<reins::store::PostgresStore>,
}

impl Stores {
    fn open(rt: &tokio::runtime::Runtime) -> Self {
        #[cfg(not(feature = "postgres"))]
        let _ = rt;
        let sqlite_path =
            std::env::temp_dir().join(format!("{}.sqlite", unique("reins-bench-concurrent")));
        Self {
            memory: MemoryStore::new(),
            sqlite: SqliteStore::open(&sqlite_path).expect("the SQLite store opens"),
            sqlite_path,
            #[cfg(feature = "postgres")]
            postgres: match std::env::var("REINS_POSTGRES_URL") {
                Ok(url) => Some(
                    rt.block_on(reins::store::PostgresStore::connect(&url))
                        .expect("the PostgreSQL store connects"),
                ),
                Err(_) => {
                    eprintln!("REINS_POSTGRES_URL is not set: skipping the PostgreSQL case");
                    None
                }
            },
        }
    }
}

impl Drop for Stores {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.sqlite_path.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}

fn bench_store<S: RunStore + Clone>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    rt: &tokio::runtime::Runtime,
    name: &str,
    store: &S,
) {
    let runs = runs();
    group.bench_function(name, |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let batch = batch(runs);
                let started = Instant::now();
                rt.block_on(run_all(batch, Some(store.clone())));
                total += started.elapsed();
                rt.block_on(clear(store));
            }
            total
        })
    });
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKERS)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let stores = Stores::open(&rt);
    let runs = runs();

    // `cargo bench` passes `--bench`; `cargo test --benches` does not, and only checks that
    // every case runs once.
    if std::env::args().any(|arg| arg == "--bench") {
        // Warm the runtime up (worker threads, timer wheel) before the first one-shot batch.
        rt.block_on(sleep_all(runs));
        one_shot(&rt, "memory", &stores.memory);
        one_shot(&rt, "sqlite", &stores.sqlite);
        #[cfg(feature = "postgres")]
        if let Some(postgres) = &stores.postgres {
            one_shot(&rt, "postgres", postgres);
        }
    }

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("durable_concurrent");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .throughput(Throughput::Elements((runs * STEPS) as u64));
    group.bench_function("baseline/sleeps_only", |b| {
        b.iter_custom(|iterations| {
            let started = Instant::now();
            for _ in 0..iterations {
                rt.block_on(sleep_all(runs));
            }
            started.elapsed()
        })
    });
    group.bench_function("not_durable", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let batch = batch(runs);
                let started = Instant::now();
                rt.block_on(run_all::<MemoryStore>(batch, None));
                total += started.elapsed();
            }
            total
        })
    });
    bench_store(&mut group, &rt, "memory", &stores.memory);
    bench_store(&mut group, &rt, "sqlite", &stores.sqlite);
    #[cfg(feature = "postgres")]
    if let Some(postgres) = &stores.postgres {
        bench_store(&mut group, &rt, "postgres", postgres);
    }
    group.finish();
    criterion.final_summary();
}
