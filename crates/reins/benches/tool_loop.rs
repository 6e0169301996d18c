//! The framework's cost per turn of an awaited run.
//!
//! Every case runs the same 10-turn conversation on a [`ScriptedModel`]: 9 turns that call a
//! trivial `tool_fn` tool (`increment`, `{"x": 1}` → `2`), then one text turn. The cases are:
//!
//! - `baseline`: a hand-written loop doing the same work without reins' run loop: it calls
//!   `CompletionModel::completion` of the scripted model, deserializes the arguments, calls
//!   the tool's function through `Tool::call`, serializes its output and pushes the messages
//!   into a `Vec<Message>`.
//! - `reins/hooks=0`, `reins/hooks=1`, `reins/hooks=8`: an agent with 0, 1 or 8
//!   [`Observing`] hooks, which implement `on_dispatch` / `on_outcome` (answering proceed)
//!   and observe every event kind observed by default (so every other event also reaches
//!   them, through the default `on_event`).
//! - `reins/blind_hooks=8`: 8 [`Blind`] hooks whose `observes` answers `false` for every
//!   kind; they should cost nothing beyond `reins/hooks=0`.
//! - `reins/nested_hooks=1`: one [`Observing`] hook inside a `HookStack` registered as the
//!   agent's one hook (how ready-made hooks are often composed); the stack adds its hook to
//!   the agent's, so it should cost what `reins/hooks=1` costs.
//! - `reins/ready_hooks`: the ready-made hooks a production agent typically runs with (see
//!   [`ready_hooks`]): an approval policy with an argument check, a budget, a loop breaker
//!   and an audit log of every dispatch and outcome with arguments (written to
//!   `io::sink`).
//!
//! The model, the tool and the agent are built in `iter_batched`'s setup, so only the run is
//! timed. Everything runs on a current-thread tokio runtime. The framework's cost per turn is
//! `(reins − baseline) / 10`.
//!
//! Before the measurements, the heap allocations of one run of each case are printed
//! (`allocations:` lines), counted by the allocator of `common`.
//!
//! Run with `cargo bench -p reins --bench tool_loop`.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use reins::agent::{
    Agent, AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext, HookStack,
    OutcomeAction, OutcomeEvent, StepEventKind,
};
use reins::completion::{CompletionModel, CompletionRequest};
use reins::hooks::approval::{ApprovalPolicy, Rule};
use reins::hooks::audit::AuditLog;
use reins::hooks::budget::Budget;
use reins::hooks::loop_breaker::LoopBreaker;
use reins::message::{AssistantContent, Message};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{Tool, ToolDefinition, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Arc;

mod common;

use common::Observing;

use common::CountingAllocator;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Model calls per run: `TOOL_TURNS` tool-calling turns and one text turn.
const TURNS: usize = 10;
const TOOL_TURNS: usize = TURNS - 1;
const ANSWER: &str = "The answer is 2.";

/// The reins cases: (name, observing hooks, blind hooks, observing hooks in a nested stack).
const CASES: [(&str, usize, usize, usize); 5] = [
    ("reins/hooks=0", 0, 0, 0),
    ("reins/hooks=1", 1, 0, 0),
    ("reins/hooks=8", 8, 0, 0),
    ("reins/blind_hooks=8", 0, 8, 0),
    ("reins/nested_hooks=1", 0, 0, 1),
];

/// The ready-made hooks of the `reins/ready_hooks` case, none of which stops this run: an
/// approval policy allowing `increment` below 100 (an argument check), a budget of model
/// calls, tool calls and tokens, a loop breaker whose thresholds the nine identical calls stay
/// under, and an audit log with arguments.
fn ready_hooks(builder: AgentBuilder) -> AgentBuilder {
    builder
        .add_hook(ApprovalPolicy::new().rule(
            Rule::allow("increment").when_args(|args| args["x"].as_i64().is_some_and(|x| x < 100)),
        ))
        .add_hook(
            Budget::new()
                .max_model_calls(100)
                .max_tool_calls(100)
                .max_total_tokens(1_000_000),
        )
        .add_hook(LoopBreaker::new().feedback_after(50).stop_after(100))
        .add_hook(AuditLog::new(std::io::sink()).with_args())
}

#[derive(Deserialize, JsonSchema)]
struct IncrementArgs {
    x: i64,
}

/// The trivial tool every case calls.
fn increment() -> impl Tool<Args = IncrementArgs, Output = i64, Error = Infallible> {
    tool_fn(
        "increment",
        "Adds one to x.",
        |args: IncrementArgs| async move { Ok::<_, Infallible>(args.x + 1) },
    )
}

/// A fresh model holding the 10 turns of one run, without its request log.
fn scripted_model() -> ScriptedModel {
    let calls = (0..TOOL_TURNS).map(|_| Turn::tool_call("increment", json!({ "x": 1 })));
    ScriptedModel::new(calls.chain([Turn::text(ANSWER)])).without_request_log()
}

/// What the baseline advertises to the model: the tool's definition.
fn tool_definitions() -> Arc<[ToolDefinition]> {
    Arc::from(vec![ToolDefinition {
        name: "increment".into(),
        description: "Adds one to x.".into(),
        parameters: increment().parameters(),
    }])
}

/// A fresh agent on a fresh model, with `observing` [`Observing`] hooks, then `blind`
/// [`Blind`] hooks, then (if `nested` is not zero) one stack of `nested` [`Observing`]
/// hooks.
fn agent(observing: usize, blind: usize, nested: usize) -> Agent {
    let mut builder = AgentBuilder::new(scripted_model()).tool(increment());
    for _ in 0..observing {
        builder = builder.add_hook(Observing);
    }
    for _ in 0..blind {
        builder = builder.add_hook(Blind);
    }
    if nested > 0 {
        let stack = (0..nested).fold(HookStack::new(), |stack, _| stack.with(Observing));
        builder = builder.add_hook(stack);
    }
    builder.build()
}

/// A fresh agent on a fresh model, with the [`ready_hooks`].
fn ready_agent() -> Agent {
    ready_hooks(AgentBuilder::new(scripted_model()).tool(increment())).build()
}

/// The same hook, but it observes no event kind at all.
struct Blind;

impl AgentHook for Blind {
    fn observes(&self, _kind: StepEventKind) -> bool {
        false
    }

    async fn on_dispatch(&self, _ctx: &HookContext, _event: DispatchEvent<'_>) -> DispatchAction {
        DispatchAction::proceed()
    }

    async fn on_outcome(&self, _ctx: &HookContext, _event: OutcomeEvent<'_>) -> OutcomeAction {
        OutcomeAction::proceed()
    }
}

/// What the hand-written loop needs: the model, the tool and the tools to advertise.
struct Baseline<T> {
    model: ScriptedModel,
    tool: T,
    tools: Arc<[ToolDefinition]>,
}

/// The hand-written loop: the least work any agent loop does for this conversation.
async fn baseline_run<T>(setup: &Baseline<T>, prompt: &str) -> String
where
    T: Tool<Args = IncrementArgs, Output = i64>,
{
    let mut request = CompletionRequest {
        tools: Arc::clone(&setup.tools),
        ..CompletionRequest::default()
    };
    request.history.push(Message::user(prompt));
    for _ in 0..TURNS {
        let response = setup
            .model
            .completion(&request)
            .await
            .expect("the script has a turn left");
        let calls: Vec<_> = response.tool_calls().cloned().collect();
        let text = response.text();
        request.history.push(Message::Assistant {
            content: response.content,
        });
        if calls.is_empty() {
            return text;
        }
        for call in calls {
            let args = IncrementArgs::deserialize(&call.arguments).expect("valid arguments");
            let Ok(output) = setup.tool.call(args).await else {
                unreachable!("the tool cannot fail")
            };
            let output = match serde_json::to_value(output).expect("serializable output") {
                Value::String(text) => text,
                value => value.to_string(),
            };
            request
                .history
                .push(Message::tool_result(call.id, call.name, output));
        }
    }
    panic!("the script ended without an answer")
}

/// Checks once, outside the measurements, that every case does the whole conversation.
fn check_cases(rt: &tokio::runtime::Runtime) {
    rt.block_on(async {
        let setup = Baseline {
            model: scripted_model(),
            tool: increment(),
            tools: tool_definitions(),
        };
        assert_eq!(baseline_run(&setup, "Go").await, ANSWER);
        assert_eq!(setup.model.remaining(), 0);

        for agent in [agent(1, 1, 1), ready_agent()] {
            let response = agent
            .prompt("Go")
            .max_turns(TURNS)
            .extended_details()
            .await
            .expect("the run succeeds");
        assert_eq!(response.output, ANSWER);
        assert_eq!(response.turns(), TURNS);
        let results = response
            .history()
            .iter()
            .filter(|m| matches!(m, Message::Tool(t) if t.content == "2"))
            .count();
        assert_eq!(results, TOOL_TURNS);
        let calls = response
            .history()
            .iter()
            .flat_map(Message::tool_calls)
            .count();
        assert_eq!(calls, TOOL_TURNS);
        assert!(matches!(
            response.history().last(),
            Some(Message::Assistant { content }) if matches!(content.first(), AssistantContent::Text(_))
        ));
        }
    });
}

/// Prints the heap allocations of one run of each case (setup excluded), counted by the
/// allocator of `common`.
fn allocation_report(rt: &tokio::runtime::Runtime, tools: &Arc<[ToolDefinition]>) {
    rt.block_on(async {
        let setup = Baseline {
            model: scripted_model(),
            tool: increment(),
            tools: Arc::clone(tools),
        };
        CountingAllocator::start();
        let answer = baseline_run(&setup, "Go").await;
        drop(answer);
        let counts = CountingAllocator::stop();
        println!(
            "allocations: tool_loop/baseline: {} per run, peak {} bytes",
            counts.allocations, counts.peak_bytes
        );
        let ready = ("reins/ready_hooks", ready_agent());
        let cases =
            CASES.map(|(name, observing, blind, nested)| (name, agent(observing, blind, nested)));
        for (name, agent) in cases.into_iter().chain([ready]) {
            CountingAllocator::start();
            let answer = agent.prompt("Go").max_turns(TURNS).await;
            drop(answer);
            let counts = CountingAllocator::stop();
            println!(
                "allocations: tool_loop/{name}: {} per run, peak {} bytes",
                counts.allocations, counts.peak_bytes
            );
        }
    });
}

fn tool_loop(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    check_cases(&rt);
    let tools = tool_definitions();
    allocation_report(&rt, &tools);

    let mut group = c.benchmark_group("tool_loop");
    group.bench_function("baseline", |b| {
        b.to_async(&rt).iter_batched(
            || Baseline {
                model: scripted_model(),
                tool: increment(),
                tools: Arc::clone(&tools),
            },
            |setup| async move {
                let answer = baseline_run(&setup, "Go").await;
                (answer, setup)
            },
            BatchSize::SmallInput,
        );
    });

    for (name, observing, blind, nested) in CASES {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter_batched(
                || agent(observing, blind, nested),
                |agent| async move {
                    let answer = agent.prompt("Go").max_turns(TURNS).await;
                    (answer.expect("the run succeeds"), agent)
                },
                BatchSize::SmallInput,
            );
        });
    }
    group.bench_function("reins/ready_hooks", |b| {
        b.to_async(&rt).iter_batched(
            ready_agent,
            |agent| async move {
                let answer = agent.prompt("Go").max_turns(TURNS).await;
                (answer.expect("the run succeeds"), agent)
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

criterion_group!(benches, tool_loop);
criterion_main!(benches);
