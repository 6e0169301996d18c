//! A worker process for the crash test: runs (or resumes) one durable agent run, and at the
//! kill point named by `KILL_AT` prints `KILLPOINT <name>` and waits to be killed.
//!
//! Environment:
//! - `STORE`: `sqlite:<path>` or `postgres:<connection string>`
//! - `RUN_ID`: the run to start or resume
//! - `MODE`: `start` or `resume`
//! - `EFFECTS`: a file where tools record their side effects, one effect id per line
//! - `EXECUTIONS`: a file where the tool records every execution, one effect id per line
//! - `RETRY`: `dedup` (the tool declares it deduplicates by effect id, so a call in doubt runs
//!   again) or `undeclared` (it declares nothing, so a call in doubt waits for a decision)
//! - `KILL_AT` (optional): where to stop and wait for SIGKILL
//!
//! Prints `ANSWER <answer>` when the run completes, `SUSPENDED <call ids>` when it waits for
//! decisions.

use reins::agent::*;
use reins::completion::{CompletionError, CompletionModel, CompletionRequest, CompletionResponse};
use reins::message::{AssistantContent, Message, OneOrMany};
use reins::store::{PostgresStore, RunStore, SqliteStore, StoreError};
use reins::tool::{RetrySafety, ToolCallContext, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::io::Write;
use std::time::Duration;

/// The lease of a worker: short, so a killed worker's run can be taken over quickly.
const LEASE: Duration = Duration::from_millis(400);

/// Pauses here forever when `KILL_AT` names this point.
fn kill_point(name: &str) {
    if std::env::var("KILL_AT").as_deref() == Ok(name) {
        println!("KILLPOINT {name}");
        let _ = std::io::stdout().flush();
        loop {
            std::thread::sleep(Duration::from_secs(60));
        }
    }
}

/// A model whose answer depends only on how many model turns the history already holds, so a
/// fresh process continues the same script.
struct ReplayModel;

impl CompletionModel for ReplayModel {
    async fn completion(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        let turn = request
            .history
            .iter()
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .count()
            + 1;
        let call =
            |id: &str, city: &str| AssistantContent::tool_call(id, "book", json!({ "city": city }));
        let content = match turn {
            1 => OneOrMany::one(call("call_1_0", "Oslo")),
            2 => OneOrMany::many([call("call_2_0", "Rome"), call("call_2_1", "Lima")])
                .ok_or_else(|| CompletionError::Other("empty".into()))?,
            _ => OneOrMany::one(AssistantContent::text("Booked Oslo, Rome and Lima.")),
        };
        Ok(CompletionResponse::new(content))
    }
}

/// Kill points between the steps of the run.
struct KillPoints;

impl AgentHook for KillPoints {
    async fn on_model_turn_finished(
        &self,
        ctx: &HookContext,
        _event: ModelTurnFinished<'_>,
    ) -> ModelTurnAction {
        // The turn is received but not yet checkpointed.
        kill_point(&format!("turn{}_received", ctx.turn()));
        ModelTurnAction::continue_run()
    }

    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if let Some(id) = event.internal_call_id() {
            // Everything before this call is checkpointed.
            kill_point(&format!("{id}_dispatch"));
        }
        DispatchAction::proceed()
    }
}

#[derive(Deserialize, JsonSchema)]
struct Booking {
    city: String,
}

async fn open_store(spec: &str) -> Result<Box<dyn StoreHandle>, StoreError> {
    if let Some(path) = spec.strip_prefix("sqlite:") {
        Ok(Box::new(SqliteStore::open(path)?.with_lease(LEASE)))
    } else if let Some(url) = spec.strip_prefix("postgres:") {
        Ok(Box::new(
            PostgresStore::connect(url).await?.with_lease(LEASE),
        ))
    } else {
        Err(StoreError::Backend(format!("unknown STORE `{spec}`")))
    }
}

/// Lets `main` attach either store type to a request.
trait StoreHandle {
    fn attach(&self, request: PromptRequest) -> PromptRequest;
    fn resume(&self, agent: &Agent, run_id: &str) -> PromptRequest;
}

impl<S: RunStore + Clone> StoreHandle for S {
    fn attach(&self, request: PromptRequest) -> PromptRequest {
        request.durable(self.clone())
    }
    fn resume(&self, agent: &Agent, run_id: &str) -> PromptRequest {
        agent.resume_stored(self.clone(), run_id)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let var = |name: &str| std::env::var(name).map_err(|_| format!("{name} is not set"));
    let store = open_store(&var("STORE")?).await?;
    let run_id = var("RUN_ID")?;
    let effects = var("EFFECTS")?;
    let executions = var("EXECUTIONS")?;
    let retry = match var("RETRY")?.as_str() {
        "dedup" => RetrySafety::DeduplicatesByEffectId,
        "undeclared" => RetrySafety::Undeclared,
        other => return Err(format!("unknown RETRY `{other}`").into()),
    };

    let book = tool_fn("book", "Books a trip.", move |args: Booking| {
        let (effects, executions) = (effects.clone(), executions.clone());
        async move {
            let context = ToolCallContext::current().ok_or("no call context")?;
            let effect_id = context.effect_id();
            append_line(&executions, &effect_id)?;
            // The side effect, made idempotent by the effect id.
            let done = std::fs::read_to_string(&effects).unwrap_or_default();
            if !done.lines().any(|line| line == effect_id) {
                append_line(&effects, &effect_id)?;
            }
            // The side effect happened; its result is not journaled yet.
            kill_point(&format!("{}_effect", context.internal_call_id()));
            Ok::<_, String>(format!("booked {}", args.city))
        }
    })
    .retry_safety(retry);
    let agent = AgentBuilder::new(ReplayModel)
        .tool(book)
        .add_hook(KillPoints)
        .build();

    let request = match var("MODE")?.as_str() {
        "start" => store.attach(
            agent
                .prompt("Book Oslo, Rome and Lima.")
                .run_id(run_id.clone()),
        ),
        _ => store.resume(&agent, &run_id),
    };
    match request.await {
        Ok(answer) => println!("ANSWER {answer}"),
        Err(PromptError::Suspended { run }) => {
            let waiting: Vec<&str> = run
                .pending()
                .map(|call| call.internal_call_id.as_str())
                .collect();
            println!("SUSPENDED {}", waiting.join(","));
        }
        Err(error) => return Err(error.into()),
    }
    Ok(())
}

/// Appends `line` to the file at `path` and syncs it, so a SIGKILL right after keeps it.
fn append_line(path: &str, line: &str) -> Result<(), String> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| e.to_string())?;
    writeln!(file, "{line}").map_err(|e| e.to_string())?;
    file.sync_all().map_err(|e| e.to_string())
}
