//! Kills a durable run with SIGKILL at every step and resumes it in a fresh process: the final
//! history equals an uninterrupted run's, and every tool's side effect happened exactly once.
//! Killed between a tool's side effect and its checkpoint, the call is in doubt: a tool that
//! deduplicates by effect id is executed again (its service keeps one effect); a tool that
//! declares nothing is not executed again until a person decides.
//! On SQLite, and on PostgreSQL when `REINS_POSTGRES_URL` is set (scripts/test.sh sets it).

use reins::store::{BoxedStore, PostgresStore, RunStore, SqliteStore};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const WORKER: &str = env!("CARGO_BIN_EXE_crash-worker");

/// Every kill point of the run, in the order the run reaches them.
const KILL_POINTS: [&str; 10] = [
    "turn1_received",
    "t1c0_dispatch",
    "t1c0_effect",
    "turn2_received",
    "t2c0_dispatch",
    "t2c0_effect",
    "t2c1_dispatch",
    "t2c1_effect",
    "turn3_received",
    "none",
];

/// The kill points between a tool's side effect and its result's checkpoint.
const IN_DOUBT_POINTS: [&str; 3] = ["t1c0_effect", "t2c0_effect", "t2c1_effect"];

/// The calls of the run and the city each books.
const CALLS: [(&str, &str); 3] = [("t1c0", "Oslo"), ("t2c0", "Rome"), ("t2c1", "Lima")];

struct Case {
    store: String,
    run_id: String,
    effects: PathBuf,
    executions: PathBuf,
    /// What the tool declares: `dedup` or `undeclared`.
    retry: &'static str,
}

impl Case {
    fn new(store: String, name: &str, retry: &'static str) -> Self {
        Case {
            store,
            run_id: unique(name),
            effects: std::env::temp_dir().join(unique(&format!("effects-{name}"))),
            executions: std::env::temp_dir().join(unique(&format!("executions-{name}"))),
            retry,
        }
    }

    fn remove_files(&self) {
        let _ = std::fs::remove_file(&self.effects);
        let _ = std::fs::remove_file(&self.executions);
    }
}

/// How a worker that ran to its end finished.
#[derive(Debug, PartialEq)]
enum Ending {
    Answer(String),
    /// The run waits for decisions on these calls.
    Suspended(String),
}

fn unique(name: &str) -> String {
    format!(
        "{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

fn worker(case: &Case, mode: &str, kill_at: Option<&str>) -> Command {
    let mut command = Command::new(WORKER);
    command
        .env("STORE", &case.store)
        .env("RUN_ID", &case.run_id)
        .env("MODE", mode)
        .env("EFFECTS", &case.effects)
        .env("EXECUTIONS", &case.executions)
        .env("RETRY", case.retry)
        .env_remove("KILL_AT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(point) = kill_at {
        command.env("KILL_AT", point);
    }
    command
}

/// Starts the run and SIGKILLs the worker when it reaches `point`.
fn start_and_kill(case: &Case, point: &str) {
    let mut child = worker(case, "start", Some(point)).spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    assert_eq!(
        line.trim(),
        format!("KILLPOINT {point}"),
        "the worker never reached {point}"
    );
    // Child::kill sends SIGKILL on Unix: no destructor, no flush, no goodbye.
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Runs a worker to completion, waiting out a dead worker's lease, and returns its answer.
fn run_to_end(case: &Case, mode: &str) -> String {
    match run_to_ending(case, mode) {
        Ending::Answer(answer) => answer,
        ending => panic!("the run did not complete: {ending:?}"),
    }
}

/// Runs a worker until it completes the run or the run waits for decisions, waiting out a
/// dead worker's lease.
fn run_to_ending(case: &Case, mode: &str) -> Ending {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let output = worker(case, mode, None).output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).to_string();
        let stderr = String::from_utf8_lossy(&output.stderr).to_string();
        if output.status.success() {
            for line in stdout.lines() {
                if let Some(answer) = line.strip_prefix("ANSWER ") {
                    return Ending::Answer(answer.to_owned());
                }
                if let Some(calls) = line.strip_prefix("SUSPENDED ") {
                    return Ending::Suspended(calls.to_owned());
                }
            }
            panic!("the worker said neither ANSWER nor SUSPENDED: {stdout}");
        }
        assert!(
            stderr.contains("Busy") && Instant::now() < deadline,
            "worker failed: {stderr}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn effects_of(case: &Case) -> Vec<String> {
    lines_of(&case.effects)
}

fn executions_of(case: &Case) -> Vec<String> {
    lines_of(&case.executions)
}

/// The effect ids of every call of the run, sorted.
fn every_call(case: &Case) -> Vec<String> {
    CALLS
        .iter()
        .map(|(call, _)| format!("{}/{call}", case.run_id))
        .collect()
}

fn lines_of(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

/// Opens the case's store in this process and works with it.
fn with_store<T>(case: &Case, work: impl AsyncFnOnce(BoxedStore) -> T) -> T {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = if let Some(path) = case.store.strip_prefix("sqlite:") {
            BoxedStore::new(SqliteStore::open(path).unwrap())
        } else {
            let url = case.store.trim_start_matches("postgres:");
            BoxedStore::new(PostgresStore::connect(url).await.unwrap())
        };
        work(store).await
    })
}

/// The history of a stored run, without the run id (which differs between cases).
fn stored_history(case: &Case) -> serde_json::Value {
    with_store(case, async |store| {
        let state = store.load(&case.run_id).await.unwrap();
        serde_json::to_value(&state.history).unwrap()
    })
}

/// Runs the reference: the same run, uninterrupted; returns its history.
fn reference_history(store_for: &impl Fn(&str) -> String) -> serde_json::Value {
    let reference = Case::new(store_for("reference"), "reference", "dedup");
    let answer = run_to_end(&reference, "start");
    assert_eq!(answer, "Booked Oslo, Rome and Lima.");
    assert_eq!(effects_of(&reference), every_call(&reference));
    assert_eq!(executions_of(&reference), every_call(&reference));
    let history = stored_history(&reference);
    reference.remove_files();
    history
}

/// A tool that deduplicates by effect id: killed anywhere, the run resumes on its own, and a
/// call cut off between its side effect and its checkpoint is executed again.
fn check_every_kill_point(store_for: impl Fn(&str) -> String) {
    let expected_history = reference_history(&store_for);
    for point in KILL_POINTS {
        let case = Case::new(store_for(point), point, "dedup");
        if point != "none" {
            start_and_kill(&case, point);
            let answer = run_to_end(&case, "resume");
            assert_eq!(answer, "Booked Oslo, Rome and Lima.", "killed at {point}");
        } else {
            run_to_end(&case, "start");
        }
        assert_eq!(stored_history(&case), expected_history, "killed at {point}");
        assert_eq!(
            effects_of(&case),
            every_call(&case),
            "killed at {point}: each side effect exactly once"
        );
        let mut expected_executions = every_call(&case);
        if let Some(call) = point.strip_suffix("_effect") {
            // In doubt, and declared safe to repeat: executed again.
            expected_executions.push(format!("{}/{call}", case.run_id));
            expected_executions.sort();
        }
        assert_eq!(
            executions_of(&case),
            expected_executions,
            "killed at {point}"
        );
        case.remove_files();
    }
}

/// A tool that declares nothing: killed between its side effect and its checkpoint, the call
/// is not executed again; the resumed run waits with it in doubt until a decision supplies
/// its result, then finishes as the uninterrupted run did.
fn check_in_doubt_calls_wait(store_for: impl Fn(&str) -> String) {
    let expected_history = reference_history(&store_for);
    for point in IN_DOUBT_POINTS {
        let case = Case::new(store_for(point), point, "undeclared");
        let call = point.trim_end_matches("_effect");
        start_and_kill(&case, point);
        assert_eq!(
            run_to_ending(&case, "resume"),
            Ending::Suspended(call.to_owned()),
            "killed at {point}"
        );
        let city = CALLS.iter().find(|(id, _)| *id == call).unwrap().1;
        with_store(&case, async |store| {
            let listing = store.pending_approvals().await.unwrap();
            let waiting: Vec<_> = listing
                .approvals
                .iter()
                .filter(|p| p.run_id == case.run_id)
                .collect();
            assert_eq!(waiting.len(), 1, "killed at {point}");
            assert!(waiting[0].in_doubt, "killed at {point}");
            assert_eq!(waiting[0].arguments, serde_json::json!({ "city": city }));
            let decision = reins::store::Decision::new(
                waiting[0],
                reins::agent::ToolDecision::supply_result(format!("booked {city}")),
                "crash-test",
            );
            store.decide(&case.run_id, &decision).await.unwrap();
        });
        let answer = run_to_end(&case, "resume");
        assert_eq!(answer, "Booked Oslo, Rome and Lima.", "killed at {point}");
        assert_eq!(stored_history(&case), expected_history, "killed at {point}");
        assert_eq!(
            executions_of(&case),
            every_call(&case),
            "killed at {point}: no call executed twice"
        );
        case.remove_files();
    }
}

#[test]
fn a_run_killed_at_any_step_resumes_exactly_once_on_sqlite() {
    let dir = std::env::temp_dir().join(unique("reins-crash"));
    std::fs::create_dir_all(&dir).unwrap();
    check_every_kill_point(|name| {
        format!("sqlite:{}", dir.join(format!("{name}.sqlite")).display())
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_call_in_doubt_waits_for_a_decision_on_sqlite() {
    let dir = std::env::temp_dir().join(unique("reins-in-doubt"));
    std::fs::create_dir_all(&dir).unwrap();
    check_in_doubt_calls_wait(|name| {
        format!("sqlite:{}", dir.join(format!("{name}.sqlite")).display())
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_run_killed_at_any_step_resumes_exactly_once_on_postgres() {
    let url = std::env::var("REINS_POSTGRES_URL")
        .expect("REINS_POSTGRES_URL must name a PostgreSQL server; scripts/test.sh starts one");
    check_every_kill_point(|_| format!("postgres:{url}"));
}

#[test]
fn a_call_in_doubt_waits_for_a_decision_on_postgres() {
    let url = std::env::var("REINS_POSTGRES_URL")
        .expect("REINS_POSTGRES_URL must name a PostgreSQL server; scripts/test.sh starts one");
    check_in_doubt_calls_wait(|_| format!("postgres:{url}"));
}
