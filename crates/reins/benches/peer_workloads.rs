//! The three workloads peers are compared on, timed the way a user's service pays for them.
//!
//! Each workload runs a hand-written loop (`hand_loop`: the least work any agent loop does)
//! and reins side by side in one process. What a caller waits for is timed: the run, and
//! dropping everything the run returns (answer, history). Building and dropping the agent and
//! the model double are not timed; the model double's own work (cloning its scripted turn,
//! streaming its chunks) is, in both cases, because a caller waits for it too. The double's
//! request log is off.
//!
//! - `tool_loop`: a 10-turn conversation on a [`ScriptedModel`]: 9 turns calling
//!   `add(a, b)`, then a text answer. No hooks. Reported per run; per turn is a tenth.
//!   `reins_reused`, `reins_reused_observing` and `reins_reused_step_observer` run it on one
//!   agent that served a run before: without a hook, with the `Observing` hook (every
//!   dispatch and outcome) and with `StepObserver` (every step, through `on_event`). The
//!   difference is what an observing hook costs.
//! - `streamed_delta`: one text turn of 8,000 bytes streamed as 1,000 deltas, each seen by one
//!   observing `on_text_delta` hook (the hand loop calls a function per delta), the stream
//!   consumed to its end. Reported per run; per delta is a thousandth.
//! - `concurrent`: 10,000 concurrent 10-turn runs of the first workload on a 2-worker tokio
//!   runtime, every model call waiting 10 ms on the timer (from a hook on the completion
//!   dispatch; the hand loop sleeps before each model call). One agent serves every run (the
//!   scripted model answers by the history's length). Wall time per batch; the peak resident
//!   set of each case is measured in a fresh child process (`memory:` lines), since a
//!   process's resident set does not shrink back between cases.
//!
//! Run with `cargo bench -p reins --bench peer_workloads`.
//!
//! Over 500 lines because each workload's hand loop and reins run sit side by side, with the
//! `--repeat` cases that count their instructions, so both sides of a comparison read
//! together.

use criterion::{Criterion, SamplingMode, criterion_group};
use futures::StreamExt;
use reins::agent::{
    Agent, AgentBuilder, AgentHook, DispatchAction, DispatchEvent, Flow, HookContext,
    ModelTurnAction, ModelTurnFinished, ObservationAction, StepEvent, StreamItem, TextDeltaEvent,
};
use reins::completion::{CompletionModel, CompletionRequest, StreamChunk};
use reins::message::Message;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{Tool, ToolDefinition, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::future::IntoFuture;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;

use common::{CountingAllocator, Observing};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Model calls per run: `TURNS - 1` calls of `add`, then the answer.
const TURNS: usize = 10;
const ANSWER: &str = "The sum is 3.";
/// Deltas of the streamed turn, and the bytes of each (a 7-letter word and a space).
const DELTAS: usize = 1_000;
const DELTA_BYTES: usize = 8;
/// Concurrent runs per batch, and each model call's latency.
const RUNS: usize = 10_000;
const MODEL_LATENCY: Duration = Duration::from_millis(10);

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

fn add() -> impl Tool<Args = AddArgs, Output = i64, Error = Infallible> {
    tool_fn("add", "Adds a and b.", |args: AddArgs| async move {
        Ok::<_, Infallible>(args.a + args.b)
    })
}

fn tool_loop_turns() -> impl Iterator<Item = Turn> {
    let calls = (1..TURNS).map(|_| Turn::tool_call("add", json!({ "a": 1, "b": 2 })));
    calls.chain([Turn::text(ANSWER)])
}

/// The model double of one run of the tool loop.
fn tool_loop_model() -> ScriptedModel {
    ScriptedModel::new(tool_loop_turns()).without_request_log()
}

/// The model double shared by concurrent runs: turn N answers a history holding N − 1
/// assistant messages.
fn shared_tool_loop_model() -> ScriptedModel {
    ScriptedModel::resumable(tool_loop_turns()).without_request_log()
}

fn definitions() -> Arc<[ToolDefinition]> {
    let tool = add();
    Arc::from(vec![ToolDefinition {
        name: tool.name().into(),
        description: tool.description().into(),
        parameters: tool.parameters(),
    }])
}

/// The hand-written tool loop: call the model, run the calls, push the messages, repeat.
async fn hand_tool_loop<T>(
    model: &ScriptedModel,
    tool: &T,
    tools: &Arc<[ToolDefinition]>,
    wait: bool,
) -> String
where
    T: Tool<Args = AddArgs, Output = i64>,
{
    let mut request = CompletionRequest {
        tools: Arc::clone(tools),
        ..CompletionRequest::default()
    };
    request.history.push(Message::user("Add 1 and 2."));
    for _ in 0..TURNS {
        if wait {
            tokio::time::sleep(MODEL_LATENCY).await;
        }
        let Ok(response) = model.completion(&request).await else {
            panic!("the script has a turn left")
        };
        let calls: Vec<_> = response.tool_calls().cloned().collect();
        let text = response.text();
        request.history.push(Message::Assistant {
            content: response.content,
        });
        if calls.is_empty() {
            return text;
        }
        for call in calls {
            let Ok(args) = AddArgs::deserialize(&call.arguments) else {
                panic!("valid arguments")
            };
            let Ok(output) = tool.call(args).await else {
                unreachable!("the tool cannot fail")
            };
            let output = match serde_json::to_value(output) {
                Ok(Value::String(text)) => text,
                Ok(value) => value.to_string(),
                Err(_) => unreachable!("an integer serializes"),
            };
            request
                .history
                .push(Message::tool_result(call.id, call.name, output));
        }
    }
    panic!("the script ended without an answer")
}

/// Waits `MODEL_LATENCY` before every model call: the latency of the concurrent workload.
struct ModelLatency;

impl AgentHook for ModelLatency {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if event.tool_name().is_none() {
            tokio::time::sleep(MODEL_LATENCY).await;
        }
        DispatchAction::proceed()
    }
}

/// Reads each model turn's usage, and nothing else.
struct TurnObserver;

impl AgentHook for TurnObserver {
    async fn on_model_turn_finished(
        &self,
        _ctx: &HookContext,
        event: ModelTurnFinished<'_>,
    ) -> ModelTurnAction {
        black_box(event.usage);
        ModelTurnAction::continue_run()
    }
}

/// Watches every step of a run through the uniform step view, and steers nothing: a
/// logging or tracing hook written against `on_event`.
struct StepObserver;

impl AgentHook for StepObserver {
    async fn on_event(&self, _ctx: &HookContext, event: StepEvent<'_>) -> Flow {
        black_box(event.kind());
        Flow::Continue
    }
}

/// The observing delta hook of the streamed workload.
struct DeltaObserver;

impl AgentHook for DeltaObserver {
    async fn on_text_delta(
        &self,
        _ctx: &HookContext,
        event: TextDeltaEvent<'_>,
    ) -> ObservationAction {
        black_box(event.delta);
        ObservationAction::continue_run()
    }
}

/// 1,000 words of 7 letters, each followed by a space: 8,000 bytes.
fn streamed_answer() -> String {
    (0..DELTAS)
        .map(|i| format!("word{:03} ", i % 1000))
        .collect()
}

fn streamed_model(answer: &str) -> ScriptedModel {
    ScriptedModel::new([Turn::text(answer)]).without_request_log()
}

/// The hand loop's stand-in for the observing hook.
#[inline(never)]
fn observe_delta(delta: &str) {
    black_box(delta);
}

/// The hand-written streamed turn: every delta observed, the text assembled.
async fn hand_streamed(model: &ScriptedModel) -> (usize, String) {
    let request = CompletionRequest::new(vec![Message::user("Go")]);
    let Ok(mut stream) = model.stream(&request).await else {
        panic!("the script has a turn")
    };
    let (mut deltas, mut text) = (0, String::new());
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(StreamChunk::Text(delta)) => {
                observe_delta(&delta);
                text.push_str(&delta);
                deltas += 1;
            }
            Ok(StreamChunk::Done(response)) => drop(response),
            _ => panic!("the turn holds only text"),
        }
    }
    (deltas, text)
}

/// A streamed reins run consumed to its end: the number of text items and the answer.
async fn reins_streamed(agent: &Agent) -> (usize, String) {
    let mut stream = agent.prompt("Go").stream();
    let (mut deltas, mut output) = (0, String::new());
    while let Some(item) = stream.next().await {
        match item {
            Ok(StreamItem::Text(delta)) => {
                deltas += 1;
                drop(delta);
            }
            Ok(StreamItem::Final(response)) => output = response.output,
            Ok(_) => {}
            Err(error) => panic!("the run fails: {error}"),
        }
    }
    (deltas, output)
}

fn current_thread() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(error) => panic!("no tokio runtime: {error}"),
    }
}

fn two_workers() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(error) => panic!("no tokio runtime: {error}"),
    }
}

/// Times `iters` runs, each on a fresh `setup()`; the setup's value is dropped untimed.
fn timed<S, R>(iters: u64, mut setup: impl FnMut() -> S, mut run: impl FnMut(&S) -> R) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let input = setup();
        let start = Instant::now();
        drop(black_box(run(&input)));
        total += start.elapsed();
        drop(input);
    }
    total
}

fn tool_loop(c: &mut Criterion) {
    let rt = current_thread();
    let tools = definitions();
    let tool = add();
    // Both cases hold the whole conversation.
    assert_eq!(
        rt.block_on(hand_tool_loop(&tool_loop_model(), &tool, &tools, false)),
        ANSWER
    );
    let agent = AgentBuilder::new(tool_loop_model()).tool(add()).build();
    assert_eq!(
        rt.block_on(agent.prompt("Add 1 and 2.").max_turns(TURNS).into_future())
            .ok()
            .as_deref(),
        Some(ANSWER)
    );
    let model = tool_loop_model();
    count_allocations("tool_loop/hand_loop", || {
        rt.block_on(hand_tool_loop(&model, &tool, &tools, false));
    });
    let agent = AgentBuilder::new(tool_loop_model()).tool(add()).build();
    count_allocations("tool_loop/reins", || {
        drop(rt.block_on(agent.prompt("Add 1 and 2.").max_turns(TURNS).into_future()));
    });

    let mut group = c.benchmark_group("tool_loop");
    group.bench_function("hand_loop", |b| {
        b.iter_custom(|iters| {
            timed(iters, tool_loop_model, |model| {
                rt.block_on(hand_tool_loop(model, &tool, &tools, false))
            })
        });
    });
    group.bench_function("reins", |b| {
        b.iter_custom(|iters| {
            timed(
                iters,
                || AgentBuilder::new(tool_loop_model()).tool(add()).build(),
                |agent| rt.block_on(agent.prompt("Add 1 and 2.").max_turns(TURNS).into_future()),
            )
        });
    });
    // One agent serving run after run, as a service keeps one, without and with an observing
    // hook: `Observing` (every dispatch and outcome, through the typed methods) or
    // `StepObserver` (every step, through `on_event`). The difference over ten turns is what
    // the hook costs a turn once its stack has learned its defaults.
    for (name, agent) in [
        ("reins_reused", reused_agent(None::<Observing>)),
        ("reins_reused_observing", reused_agent(Some(Observing))),
        (
            "reins_reused_step_observer",
            reused_agent(Some(StepObserver)),
        ),
    ] {
        count_allocations(&format!("tool_loop/{name}"), || {
            drop(rt.block_on(agent.prompt("Add 1 and 2.").max_turns(TURNS).into_future()));
        });
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                timed(
                    iters,
                    || (),
                    |()| rt.block_on(agent.prompt("Add 1 and 2.").max_turns(TURNS).into_future()),
                )
            });
        });
    }
    group.finish();
}

/// An agent for the tool loop whose model answers any number of runs, with `hook` (if any),
/// after it served one run: the stack has learned which kinds the hook answers by default.
fn reused_agent(hook: Option<impl AgentHook>) -> Agent {
    let mut builder = AgentBuilder::new(shared_tool_loop_model()).tool(add());
    if let Some(hook) = hook {
        builder = builder.add_hook(hook);
    }
    let agent = builder.build();
    let rt = current_thread();
    let answer = rt.block_on(agent.prompt("Add 1 and 2.").max_turns(TURNS).into_future());
    assert_eq!(answer.ok().as_deref(), Some(ANSWER));
    agent
}

fn streamed_delta(c: &mut Criterion) {
    let rt = current_thread();
    let answer = streamed_answer();
    assert_eq!(answer.len(), DELTAS * DELTA_BYTES);
    let agent = |answer: &str| {
        AgentBuilder::new(streamed_model(answer))
            .add_hook(DeltaObserver)
            .build()
    };
    assert_eq!(
        rt.block_on(hand_streamed(&streamed_model(&answer))),
        (DELTAS, answer.clone())
    );
    assert_eq!(
        rt.block_on(reins_streamed(&agent(&answer))),
        (DELTAS, answer.clone())
    );
    let model = streamed_model(&answer);
    count_allocations("streamed_delta/hand_loop", || {
        drop(rt.block_on(hand_streamed(&model)));
    });
    let streamed_agent = agent(&answer);
    count_allocations("streamed_delta/reins", || {
        drop(rt.block_on(reins_streamed(&streamed_agent)));
    });

    let mut group = c.benchmark_group("streamed_delta");
    group.bench_function("hand_loop", |b| {
        b.iter_custom(|iters| {
            timed(
                iters,
                || streamed_model(&answer),
                |model| rt.block_on(hand_streamed(model)),
            )
        });
    });
    group.bench_function("reins", |b| {
        b.iter_custom(|iters| {
            timed(
                iters,
                || agent(&answer),
                |agent| rt.block_on(reins_streamed(agent)),
            )
        });
    });
    group.finish();
}

fn concurrent_agent() -> Agent {
    AgentBuilder::new(shared_tool_loop_model())
        .tool(add())
        .add_hook(ModelLatency)
        .build()
}

/// One batch of `RUNS` concurrent hand loops on `rt`.
fn hand_batch(rt: &tokio::runtime::Runtime, model: &ScriptedModel, tools: &Arc<[ToolDefinition]>) {
    rt.block_on(async {
        let tasks: Vec<_> = (0..RUNS)
            .map(|_| {
                let (model, tools) = (model.clone(), Arc::clone(tools));
                tokio::spawn(async move { hand_tool_loop(&model, &add(), &tools, true).await })
            })
            .collect();
        for task in tasks {
            assert!(matches!(task.await.as_deref(), Ok(ANSWER)));
        }
    });
}

/// One batch of `RUNS` concurrent reins runs of one agent on `rt`.
fn reins_batch(rt: &tokio::runtime::Runtime, agent: &Agent) {
    rt.block_on(async {
        let tasks: Vec<_> = (0..RUNS)
            .map(|_| {
                let agent = agent.clone();
                tokio::spawn(async move { agent.prompt("Add 1 and 2.").max_turns(TURNS).await })
            })
            .collect();
        for task in tasks {
            assert!(matches!(task.await, Ok(Ok(ref answer)) if answer == ANSWER));
        }
    });
}

fn concurrent(c: &mut Criterion) {
    let tools = definitions();
    // One run of each, its waits included, on this thread: what each of the batch's runs
    // allocates.
    let one = current_thread();
    let model = shared_tool_loop_model();
    count_allocations("concurrent/hand_loop", || {
        drop(one.block_on(hand_tool_loop(&model, &add(), &tools, true)));
    });
    // The second run of the agent, as in a batch: the first taught its stack the hook's
    // defaults.
    let agent = concurrent_agent();
    drop(one.block_on(agent.prompt("Add 1 and 2.").max_turns(TURNS).into_future()));
    count_allocations("concurrent/reins", || {
        drop(one.block_on(agent.prompt("Add 1 and 2.").max_turns(TURNS).into_future()));
    });
    let rt = two_workers();
    let mut group = c.benchmark_group("concurrent");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10));
    group.bench_function("hand_loop", |b| {
        b.iter_custom(|iters| {
            timed(iters, shared_tool_loop_model, |model| {
                hand_batch(&rt, model, &tools)
            })
        });
    });
    group.bench_function("reins", |b| {
        b.iter_custom(|iters| timed(iters, concurrent_agent, |agent| reins_batch(&rt, agent)));
    });
    group.finish();
}

/// Prints the heap allocations of one call of `run`.
fn count_allocations(case: &str, run: impl FnOnce()) {
    CountingAllocator::start();
    run();
    let counts = CountingAllocator::stop();
    println!(
        "allocations: {case}: {} per run, peak {} bytes",
        counts.allocations, counts.peak_bytes
    );
}

/// A line of `/proc/self/status`, e.g. `VmHWM`, in kB.
fn proc_status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// In a child process: one concurrent batch of `case`, then its wall time and peak RSS.
fn memory_of(case: &str) {
    let rt = two_workers();
    let tools = definitions();
    let (model, agent) = (shared_tool_loop_model(), concurrent_agent());
    let start = Instant::now();
    match case {
        "hand_loop" => hand_batch(&rt, &model, &tools),
        _ => reins_batch(&rt, &agent),
    }
    let wall = start.elapsed();
    let hwm = proc_status_kb("VmHWM:").map_or(f64::NAN, |kb| kb as f64 / 1024.0);
    println!("memory: concurrent/{case}: wall {wall:.2?}, peak RSS (VmHWM) {hwm:.1} MiB");
}

criterion_group!(benches, tool_loop, streamed_delta, concurrent);

/// What `--repeat` measures: one run, and dropping what it returned (under callgrind, the
/// inclusive cost of `Runtime::block_on` is the run itself).
#[inline(never)]
fn measured(run: &mut dyn FnMut()) {
    run();
}

/// The wall time of each run of a `--repeat` batch, summarized on stderr when it ends. On a
/// shared host a run's time moves in phases (the hand loops alone read 32 or 50 µs a streamed
/// turn, minutes apart), so builds are compared by their fastest runs, side by side.
struct RunTimes(Vec<Duration>);

impl RunTimes {
    fn time<R>(&mut self, run: impl FnOnce() -> R) -> R {
        let started = Instant::now();
        let answer = run();
        self.0.push(started.elapsed());
        answer
    }

    fn report(mut self, case: &str) {
        self.0.sort_unstable();
        let at = |share: usize| self.0.get(self.0.len() * share / 100).copied();
        if let (Some(min), Some(p10), Some(median)) = (at(0), at(10), at(50)) {
            let runs = self.0.len();
            eprintln!(
                "{case}: {runs} runs, per run min {min:.2?}, p10 {p10:.2?}, median {median:.2?}"
            );
        }
    }
}

/// `--repeat CASE N`: N runs of one case and nothing else, for instruction counts under
/// `valgrind --tool=callgrind` (steady on a loaded machine, unlike the timings), and each
/// run's time ([`RunTimes`]).
fn repeat(case: &str, runs: usize) {
    let mut times = RunTimes(Vec::with_capacity(runs));
    let rt = current_thread();
    let (tools, tool, answer) = (definitions(), add(), streamed_answer());
    // The reused cases build their agent once, before the first run.
    let mut reused = None;
    for _ in 0..runs {
        match case {
            "tool_loop/hand_loop" => {
                let model = tool_loop_model();
                times.time(|| {
                    measured(&mut || {
                        drop(rt.block_on(hand_tool_loop(&model, &tool, &tools, false)))
                    })
                });
            }
            "tool_loop/reins" => {
                let agent = AgentBuilder::new(tool_loop_model()).tool(add()).build();
                let run = agent.prompt("Add 1 and 2.").max_turns(TURNS).into_future();
                black_box(times.time(|| rt.block_on(run)).ok());
            }
            "streamed_delta/hand_loop" => {
                let model = streamed_model(&answer);
                times.time(|| measured(&mut || drop(rt.block_on(hand_streamed(&model)))));
            }
            // The streamed turn with no hook: what the hook call costs a delta is the
            // difference.
            "streamed_delta/reins_no_hook" => {
                let agent = AgentBuilder::new(streamed_model(&answer)).build();
                times.time(|| measured(&mut || drop(rt.block_on(reins_streamed(&agent)))));
            }
            "streamed_delta/reins" => {
                let agent = AgentBuilder::new(streamed_model(&answer))
                    .add_hook(DeltaObserver)
                    .build();
                times.time(|| measured(&mut || drop(rt.block_on(reins_streamed(&agent)))));
            }
            // The same, watched through the step view (`on_event`) instead.
            "streamed_delta/reins_step_observer" => {
                let agent = AgentBuilder::new(streamed_model(&answer))
                    .add_hook(StepObserver)
                    .build();
                times.time(|| measured(&mut || drop(rt.block_on(reins_streamed(&agent)))));
            }
            // The tool loop with one hook that observes every default kind: what an observing
            // hook costs a turn.
            "observed_tool_loop/reins" => {
                let agent = AgentBuilder::new(tool_loop_model())
                    .tool(add())
                    .add_hook(Observing)
                    .build();
                let run = agent.prompt("Add 1 and 2.").max_turns(TURNS).into_future();
                black_box(times.time(|| rt.block_on(run)).ok());
            }
            // The tool loop with one hook that implements only `on_model_turn_finished` (reading
            // each turn's usage), on an agent that served a run before: what a typical observing
            // hook costs a turn once its stack knows which kinds it answers with defaults.
            // (`reused_tool_loop/reins` is the same without the hook.)
            // (`observing_reused_tool_loop/reins`: the same with the `Observing` hook, which
            // watches every dispatch and outcome; `step_observer_tool_loop/reins`: with
            // `StepObserver`, which watches every step through `on_event`.)
            "turn_observer_tool_loop/reins"
            | "reused_tool_loop/reins"
            | "observing_reused_tool_loop/reins"
            | "step_observer_tool_loop/reins" => {
                let agent = reused.get_or_insert_with(|| match case {
                    "turn_observer_tool_loop/reins" => reused_agent(Some(TurnObserver)),
                    "observing_reused_tool_loop/reins" => reused_agent(Some(Observing)),
                    "step_observer_tool_loop/reins" => reused_agent(Some(StepObserver)),
                    _ => reused_agent(None::<Observing>),
                });
                let run = || agent.prompt("Add 1 and 2.").max_turns(TURNS).into_future();
                times.time(|| measured(&mut || drop(rt.block_on(run()))));
            }
            // One run of the concurrent workload (its 10 ms waits included) on this thread:
            // what each of the 10,000 runs costs the processor.
            "concurrent/hand_loop" => {
                let model = shared_tool_loop_model();
                times.time(|| {
                    measured(&mut || {
                        drop(rt.block_on(hand_tool_loop(&model, &add(), &tools, true)));
                    })
                });
            }
            "concurrent/reins" => {
                let agent = concurrent_agent();
                times.time(|| {
                    measured(&mut || {
                        let run = agent.prompt("Add 1 and 2.").max_turns(TURNS).into_future();
                        drop(rt.block_on(run));
                    })
                });
            }
            _ => panic!("unknown case {case}"),
        }
    }
    times.report(case);
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if let Some(at) = argv.iter().position(|arg| arg == "--repeat") {
        let runs = argv
            .get(at + 2)
            .and_then(|n| n.parse().ok())
            .unwrap_or(1000);
        repeat(argv.get(at + 1).map_or("", String::as_str), runs);
        return;
    }
    let mut args = std::env::args()
        .skip_while(|arg| arg != "--memory-of")
        .skip(1);
    if let Some(case) = args.next() {
        memory_of(&case);
        return;
    }
    // Profiling or a filtered run measures the timed cases only.
    let measures_memory = !std::env::args().any(|arg| arg == "--profile-time" || arg == "--list");
    if let (true, Ok(exe)) = (measures_memory, std::env::current_exe()) {
        for case in ["hand_loop", "reins"] {
            match std::process::Command::new(&exe)
                .args(["--memory-of", case])
                .output()
            {
                Ok(out) => print!("{}", String::from_utf8_lossy(&out.stdout)),
                Err(error) => println!("memory: concurrent/{case}: could not run: {error}"),
            }
        }
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
