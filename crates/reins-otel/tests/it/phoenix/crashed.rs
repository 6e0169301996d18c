//! What a person sees in Phoenix of a run whose process was killed mid-run (SIGKILL, while a
//! tool ran) and that was taken over from its store and finished in another process, content
//! recorded. Phoenix lists a trace by its root span, and the killed half's `invoke_agent` span
//! never ended, so it was never exported: the half that finished the run must be listed all
//! the same, with the run's prompt and answer. What the killed half exported before it died
//! (its model call) stays in the trace it started.
//!
//! Each half runs in a process of its own (this test binary, run again for this test):
//! export set up installs a global subscriber.

use super::server::{Phoenix, attr, named};
use crate::collector_answers::{CHILD, child, child_command};
use reins::agent::{Agent, AgentBuilder, RunStatus};
use reins::store::{RunStore, SqliteStore};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{RetrySafety, tool_fn};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

const TEST: &str = "phoenix::crashed::a_run_killed_mid_run_and_finished_by_another_process_is_listed_in_phoenix_with_its_prompt_and_answer";
const PROMPT: &str = "What is the weather in Porto?";
const ANSWER: &str = "Rainy in Porto: take an umbrella.";
const RUN_ID: &str = "porto-1";
/// The worker name of the half that is killed, which the takeover names.
const KILLED_WORKER: &str = "killed-worker";
/// The run store's path, in the children.
const STORE_VAR: &str = "REINS_OTEL_TEST_CRASHED_STORE";
/// What the killed half prints once its tool runs (its model call ended before).
const LOOKING_UP: &str = "looking up the weather";

/// The agent of both halves. In the killed one (`hangs`), the weather lookup never returns.
/// A lookup is safe to run again, so the taken-over half runs the call cut off once more.
fn agent(hangs: bool) -> Agent {
    let weather = tool_fn(
        "weather",
        "Today's weather.",
        move |args: Value| async move {
            if hangs {
                println!("{LOOKING_UP}");
                let _ = std::io::stdout().flush();
                std::future::pending::<()>().await;
            }
            Ok::<_, Infallible>(format!("rainy in {}", args["city"]))
        },
    )
    .retry_safety(RetrySafety::Idempotent);
    AgentBuilder::new(ScriptedModel::resumable([
        Turn::tool_call("weather", json!({"city": "Porto"})),
        Turn::text(ANSWER),
    ]))
    .name("forecaster")
    .tool(weather)
    .build()
}

/// In a child: starts the run, which hangs in its tool until the test kills the process.
async fn killed_half(store: &str) {
    let _otel = reins_otel::Config::new().init().expect("export is set up");
    let store = SqliteStore::open(store).expect("the store opens");
    let ended = agent(true)
        .prompt(PROMPT)
        .run_id(RUN_ID)
        .worker(KILLED_WORKER)
        .durable(store)
        .await;
    panic!("the run was to hang in its tool until killed, and ended: {ended:?}");
}

/// In a child: resumes the run the killed half left, and prints its answer.
async fn finishing_half(store: &str) {
    let otel = reins_otel::Config::new().init().expect("export is set up");
    let store = SqliteStore::open(store).expect("the store opens");
    let answer = agent(false).resume_stored(store, RUN_ID).await;
    otel.shutdown().expect("the spans are exported");
    println!("answer: {}", answer.expect("the run finishes"));
}

#[tokio::test]
async fn a_run_killed_mid_run_and_finished_by_another_process_is_listed_in_phoenix_with_its_prompt_and_answer()
 {
    if let Ok(role) = std::env::var(CHILD) {
        let store = std::env::var(STORE_VAR).expect("the store's path");
        match role.as_str() {
            "killed" => killed_half(&store).await,
            _ => finishing_half(&store).await,
        }
        return;
    }
    let client = reqwest::Client::new();
    let mut phoenix = Phoenix::start();
    phoenix.wait_ready(&client).await;
    let db = phoenix
        .dir
        .join("runs.sqlite")
        .to_string_lossy()
        .into_owned();
    let env = [
        (STORE_VAR, db.as_str()),
        (reins_otel::CAPTURE_CONTENT_VAR, "true"),
        // The killed half's model call is exported soon after it ends, as it would be by a
        // process that lives on a while before it dies.
        ("OTEL_BSP_SCHEDULE_DELAY", "100"),
    ];

    // The first half, killed while its tool runs, once its model call reached Phoenix.
    let killed_log = phoenix.dir.join("killed.log");
    let mut killed = child_command(TEST, "killed", &phoenix.base, &env)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&killed_log).expect("a log file"))
        .spawn()
        .expect("the test binary starts");
    let stdout = killed.stdout.take().expect("its stdout");
    let reached = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        // After the test harness's `test <name> ... `, on the same line.
        .any(|line| line.ends_with(LOOKING_UP));
    let log = || std::fs::read_to_string(&killed_log).unwrap_or_default();
    assert!(reached, "the killed half never ran its tool:\n{}", log());
    let exported = phoenix.spans_when(&client, "default", 1).await;
    // Child::kill sends SIGKILL: the run's span and its tool's never end.
    killed.kill().expect("the child is killed");
    killed.wait().expect("the child is reaped");
    assert_eq!(exported.len(), 1, "{exported:#?}\n{}", log());
    let cut_off_chat = &exported[0];
    assert_eq!(attr(cut_off_chat, "gen_ai.operation.name"), "chat");

    // The killed worker's lease is live: the run is taken over from it, as a supervisor that
    // knows the worker died does, and left for the next worker.
    let store = SqliteStore::open(&db).expect("the store opens");
    let taken = store
        .claim_from(RUN_ID, "supervisor", KILLED_WORKER)
        .await
        .expect("the killed worker's run is taken over");
    assert_eq!(taken.state.status, RunStatus::Running);
    store
        .checkpoint(&taken.lease, &taken.state, &[], true)
        .await
        .expect("the run is given back");

    let finished = child(TEST, "finishing", &phoenix.base, &env);
    let stdout = String::from_utf8_lossy(&finished.stdout);
    assert!(
        stdout.contains(&format!("answer: {ANSWER}")),
        "{stdout}\n{}",
        String::from_utf8_lossy(&finished.stderr)
    );

    // The finishing half: its run, the tool call run again, and the last model call.
    let spans = phoenix.spans_when(&client, "default", 4).await;
    let runs = named(&spans, "invoke_agent forecaster");
    assert_eq!(runs.len(), 1, "{spans:#?}\n{}", phoenix.log());
    let run = runs[0];
    let trace_id = run["context"]["trace_id"].as_str().expect("a trace id");
    // Listed in the trace list, by the run's prompt and its answer.
    let listed = phoenix.listed_root(&client, trace_id).await;
    assert_eq!(
        listed["name"], "invoke_agent forecaster",
        "{listed}\n{run:#}"
    );
    assert_eq!(listed["input"]["value"], PROMPT, "{listed}");
    assert_eq!(listed["output"]["value"], ANSWER, "{listed}");
    assert_eq!(listed["statusCode"], "UNSET", "{listed}");
    assert_eq!(attr(run, "reins.resumed"), true, "{run:#}");
    assert_eq!(attr(run, "reins.resumed_from"), "running", "{run:#}");
    // The killed half's model call stays in the trace it was exported in.
    assert_ne!(cut_off_chat["context"]["trace_id"], trace_id);
}
