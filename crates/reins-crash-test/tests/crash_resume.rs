//! Kills a durable run with SIGKILL at every step and resumes it in a fresh process: the final
//! history equals an uninterrupted run's, and every tool's side effect happened exactly once.
//! On SQLite, and on PostgreSQL when `REINS_POSTGRES_URL` is set (scripts/test.sh sets it).

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

struct Case {
    store: String,
    run_id: String,
    effects: PathBuf,
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
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let output = worker(case, mode, None).output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).to_string();
        let stderr = String::from_utf8_lossy(&output.stderr).to_string();
        if output.status.success() {
            return stdout
                .lines()
                .find_map(|l| l.strip_prefix("ANSWER "))
                .unwrap_or_default()
                .to_string();
        }
        assert!(
            stderr.contains("Busy") && Instant::now() < deadline,
            "worker failed: {stderr}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn effects_of(case: &Case) -> Vec<String> {
    let text = std::fs::read_to_string(&case.effects).unwrap_or_default();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

/// The history of a stored run, without the run id (which differs between cases).
fn stored_history(case: &Case) -> serde_json::Value {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        use reins::store::RunStore;
        let state = if let Some(path) = case.store.strip_prefix("sqlite:") {
            reins::store::SqliteStore::open(path)
                .unwrap()
                .load(&case.run_id)
                .await
        } else {
            let url = case.store.trim_start_matches("postgres:");
            reins::store::PostgresStore::connect(url)
                .await
                .unwrap()
                .load(&case.run_id)
                .await
        }
        .unwrap();
        serde_json::to_value(&state.history).unwrap()
    })
}

fn check_every_kill_point(store_for: impl Fn(&str) -> String) {
    // The reference: the same run, uninterrupted.
    let reference = Case {
        store: store_for("reference"),
        run_id: unique("reference"),
        effects: std::env::temp_dir().join(unique("effects-reference")),
    };
    let answer = run_to_end(&reference, "start");
    assert_eq!(answer, "Booked Oslo, Rome and Lima.");
    let expected_history = stored_history(&reference);
    assert_eq!(effects_of(&reference).len(), 3);

    for point in KILL_POINTS {
        let case = Case {
            store: store_for(point),
            run_id: unique(point),
            effects: std::env::temp_dir().join(unique(&format!("effects-{point}"))),
        };
        if point != "none" {
            start_and_kill(&case, point);
            let answer = run_to_end(&case, "resume");
            assert_eq!(answer, "Booked Oslo, Rome and Lima.", "killed at {point}");
        } else {
            run_to_end(&case, "start");
        }
        assert_eq!(stored_history(&case), expected_history, "killed at {point}");
        let effects = effects_of(&case);
        let expected: Vec<String> = ["t1c0", "t2c0", "t2c1"]
            .iter()
            .map(|call| format!("{}/{call}", case.run_id))
            .collect();
        assert_eq!(
            effects, expected,
            "killed at {point}: each side effect exactly once"
        );
        let _ = std::fs::remove_file(&case.effects);
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
fn a_run_killed_at_any_step_resumes_exactly_once_on_postgres() {
    let url = std::env::var("REINS_POSTGRES_URL")
        .expect("REINS_POSTGRES_URL must name a PostgreSQL server; scripts/test.sh starts one");
    check_every_kill_point(|_| format!("postgres:{url}"));
}
