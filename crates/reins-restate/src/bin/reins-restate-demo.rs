//! A demo worker serving one reins agent as the Restate workflow `ReinsAgent`; the README's
//! cluster commands and the crate's tests run it.
//!
//! Usage: `reins-restate-demo <listen address> <effects file>` (e.g. `127.0.0.1:9080
//! /tmp/effects.log`). Run several on the same address: they share the port. With
//! `REINS_RESTATE_IDENTITY_KEY=publickeyv1_…` set, a worker takes only the requests of the
//! Restate server holding that key's private half (`reins_restate::serve_verified`).
//!
//! The agent's model is `ScriptedModel::resumable`, its script chosen by the prompt's first
//! word: `crash` (records `one`, then, after a slow model turn, `two`, then answers), `approve`
//! (calls `transfer`, which the approval policy suspends; the answer quotes the last tool
//! result), `pair` (like `approve`, with two transfers in one turn: 100 and 7), `loop` (a
//! ten-turn tool loop: nine `record` calls, then an answer; the benchmark's workload), `long`
//! (one turn of 400 `record` calls, then an answer: 402 steps, the benchmark's long run), `fail`
//! (the model call fails with HTTP 503), `charge` (calls `charge`, a tool that declares
//! nothing about running twice: it records its start, then waits until the effects file's
//! path with the extension `release` exists, `effects.release` beside `effects.log`; the
//! answer quotes the last tool result, which a hook prefixes with the call's outcome:
//! `success: charged 5`, `skipped: <reason>`, `denied: <report>`), `secret` (calls `lookup`,
//! whose result holds an email address, a GitHub token and a card number, which the agent's
//! `Redaction` masks, in the journal too; the answer quotes the last tool result), `huge`
//! (calls `record` with the item `huge`, whose result is 40 MiB, more than Restate takes in
//! one journal entry, and which counts 70 in and 7 out tokens in the run; the answer quotes
//! the last tool result), `delegate` (calls `ask`, a tool
//! standing in for another agent: it counts that agent's tokens in the run
//! (`ToolCallContext::add_usage`, 100 in and 10 out) and attaches who answered (the extension
//! `answered_by`, which a hook appends to its result); then calls `transfer`, which suspends;
//! the answer quotes both tool results; its three model turns count 20/5, 30/5 and 40/5 tokens)
//! and anything else (records `only`, then answers). The
//! tools append one line per execution to the effects file: `<tool> <effect id> <argument>
//! <worker pid>`. A hook stamps the item of every `record` call made with `"stamp": true` (the
//! `crash` script's) with the wall clock, read through `Steps::record` so that a replay sees
//! the same time.

use reins::agent::{
    Agent, AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext, OutcomeAction,
    OutcomeEvent,
};
use reins::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, Usage,
};
use reins::hooks::approval::{ApprovalPolicy, Rule};
use reins::hooks::redaction::Redaction;
use reins::message::{AssistantContent, Message, OneOrMany};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{RetrySafety, ToolCallContext, ToolOutcome, tool_fn};
use reins_restate::{AgentService, Steps};
use serde::Deserialize;
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The variable that, when set, holds the Restate server's request identity key
/// (`publickeyv1_…`): the worker then takes only requests that server signed.
const IDENTITY_KEY_VARIABLE: &str = "REINS_RESTATE_IDENTITY_KEY";

/// How long the `crash` script's second model turn takes: the window in which the tests kill
/// the worker.
const SLOW_TURN: Duration = Duration::from_millis(1500);

/// The `record` calls of the `long` script's one turn.
const LONG_CALLS: usize = 400;

/// The length of the result of a `record` call of the item `huge`: more than Restate's
/// default message size limit (32 MiB).
const HUGE_RESULT: usize = 40 * 1024 * 1024;

/// The tokens a `record` call of the item `huge` counts in the run.
const HUGE_USAGE: Usage = Usage::new(70, 7);

#[derive(Deserialize, schemars::JsonSchema)]
struct RecordArgs {
    item: String,
}

/// The email address in the `lookup` tool's result.
const SECRET_EMAIL: &str = "ada@example.com";

/// The GitHub token in the `lookup` tool's result (made up, in the shape of one).
const SECRET_TOKEN: &str = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789";

/// How often a `charge` call looks for its release file.
const RELEASE_POLL: Duration = Duration::from_millis(20);

/// The tokens the `delegate` script's `ask` tool counts in the run, as another agent's run
/// would.
const ASK_USAGE: Usage = Usage::new(100, 10);

#[derive(Deserialize, schemars::JsonSchema)]
struct TransferArgs {
    amount: u64,
}

/// Picks a script by the prompt's first word; past the `approve` script, answers with the
/// last tool result.
#[derive(Clone)]
struct DemoModel {
    crash: ScriptedModel,
    approve: ScriptedModel,
    pair: ScriptedModel,
    huge: ScriptedModel,
    charge: ScriptedModel,
    secret: ScriptedModel,
    tool_loop: ScriptedModel,
    long: ScriptedModel,
    delegate: ScriptedModel,
    failing: ScriptedModel,
    quick: ScriptedModel,
}

impl DemoModel {
    fn new() -> Self {
        DemoModel {
            crash: ScriptedModel::resumable([
                Turn::tool_call("record", json!({"item": "one", "stamp": true})),
                Turn::tool_call("record", json!({"item": "two", "stamp": true})).delay(SLOW_TURN),
                Turn::text("done"),
            ])
            .without_request_log(),
            approve: ScriptedModel::resumable([Turn::tool_call(
                "transfer",
                json!({"amount": 100}),
            )])
            .without_request_log(),
            pair: ScriptedModel::resumable([Turn::tool_calls([
                ("transfer", json!({"amount": 100})),
                ("transfer", json!({"amount": 7})),
            ])])
            .without_request_log(),
            huge: ScriptedModel::resumable([Turn::tool_call("record", json!({"item": "huge"}))])
                .without_request_log(),
            charge: ScriptedModel::resumable([Turn::tool_call("charge", json!({"amount": 5}))])
                .without_request_log(),
            secret: ScriptedModel::resumable([Turn::tool_call("lookup", json!({}))])
                .without_request_log(),
            tool_loop: ScriptedModel::resumable(
                (1..=9)
                    .map(|n| Turn::tool_call("record", json!({"item": n.to_string()})))
                    .chain([Turn::text("done")]),
            )
            .without_request_log(),
            long: ScriptedModel::resumable([
                Turn::tool_calls(
                    (1..=LONG_CALLS).map(|n| ("record", json!({"item": n.to_string()}))),
                ),
                Turn::text("done"),
            ])
            .without_request_log(),
            delegate: ScriptedModel::resumable([
                Turn::tool_call("ask", json!({"prompt": "Capital of France?"}))
                    .usage(Usage::new(20, 5)),
                Turn::tool_call("transfer", json!({"amount": 100})).usage(Usage::new(30, 5)),
            ])
            .without_request_log(),
            failing: ScriptedModel::resumable([Turn::error(CompletionError::Http {
                status: 503,
                body: "model unavailable".to_owned(),
            })]),
            quick: ScriptedModel::resumable([
                Turn::tool_call("record", json!({"item": "only"})),
                Turn::text("done"),
            ])
            .without_request_log(),
        }
    }
}

impl CompletionModel for DemoModel {
    async fn completion(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        let prompt = request
            .history
            .iter()
            .find(|message| matches!(message, Message::User { .. }))
            .map(Message::text)
            .unwrap_or_default();
        match prompt.split_whitespace().next() {
            Some("crash") => self.crash.completion(request).await,
            Some(script @ ("approve" | "pair" | "huge" | "charge" | "secret")) => {
                let answered = request
                    .history
                    .iter()
                    .rev()
                    .find(|message| matches!(message, Message::Tool(_)));
                match answered {
                    Some(result) => Ok(CompletionResponse::new(OneOrMany::one(
                        AssistantContent::text(format!("result: {}", result.text())),
                    ))),
                    None if script == "pair" => self.pair.completion(request).await,
                    None if script == "huge" => self.huge.completion(request).await,
                    None if script == "charge" => self.charge.completion(request).await,
                    None if script == "secret" => self.secret.completion(request).await,
                    None => self.approve.completion(request).await,
                }
            }
            Some("delegate") => {
                let results: Vec<String> = request
                    .history
                    .iter()
                    .filter(|message| matches!(message, Message::Tool(_)))
                    .map(Message::text)
                    .collect();
                if results.len() < 2 {
                    return self.delegate.completion(request).await;
                }
                let mut response = CompletionResponse::new(OneOrMany::one(AssistantContent::text(
                    format!("results: {}", results.join(" | ")),
                )));
                response.usage = Usage::new(40, 5);
                Ok(response)
            }
            Some("loop") => self.tool_loop.completion(request).await,
            Some("long") => self.long.completion(request).await,
            Some("fail") => self.failing.completion(request).await,
            _ => self.quick.completion(request).await,
        }
    }
}

/// Stamps a `record` call's item with the time, read from the outside world through
/// [`Steps::record`]: journaled on Restate, so a replayed dispatch gets the same stamp.
struct StampRecords {
    steps: Steps,
}

impl AgentHook for StampRecords {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        let (Some("record"), Some(call), Some(args)) = (
            event.tool_name(),
            event.internal_call_id(),
            event.tool_args(),
        ) else {
            return DispatchAction::proceed();
        };
        let Ok(mut args) = serde_json::from_str::<Value>(args) else {
            return DispatchAction::proceed();
        };
        if args["stamp"] != Value::Bool(true) {
            return DispatchAction::proceed();
        }
        let now = self
            .steps
            .record(&format!("clock/{call}"), || async {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|elapsed| elapsed.as_nanos())
                    .unwrap_or(0)
            })
            .await;
        match now {
            Ok(now) => {
                let item = args["item"].as_str().unwrap_or_default().to_owned();
                args["item"] = Value::String(format!("{item}@{now}"));
                DispatchAction::rewrite_tool_args(event.kind, args)
            }
            Err(error) => DispatchAction::stop(error.to_string()),
        }
    }
}

/// Prefixes the result of every `charge` call with the call's outcome (`success`, `failed`,
/// `skipped`, `denied`), so the model's answer shows what the run recorded about the call.
struct ShowChargeOutcomes;

impl AgentHook for ShowChargeOutcomes {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        let Some(result) = event.tool_outcome() else {
            return OutcomeAction::proceed();
        };
        if result.tool_name() != "charge" {
            return OutcomeAction::proceed();
        }
        let kind = match result.outcome() {
            ToolOutcome::Success => "success",
            ToolOutcome::Failed(_) => "failed",
            ToolOutcome::Skipped { .. } => "skipped",
            ToolOutcome::Denied { .. } => "denied",
        };
        let shown = format!("{kind}: {}", result.output_text());
        OutcomeAction::rewrite_tool_result(&event, shown)
    }
}

/// Appends who answered an `ask` call (its extension `answered_by`, else `nobody`) to its
/// result, so the model's answer shows what the run's hooks saw.
struct ShowWhoAnswered;

impl AgentHook for ShowWhoAnswered {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        let Some(result) = event.tool_outcome() else {
            return OutcomeAction::proceed();
        };
        if result.tool_name() != "ask" {
            return OutcomeAction::proceed();
        }
        let by = result
            .extensions()
            .get("answered_by")
            .and_then(Value::as_str)
            .unwrap_or("nobody");
        let shown = format!("{} (answered by {by})", result.output_text());
        OutcomeAction::rewrite_tool_result(&event, shown)
    }
}

/// Appends one line to the effects file (one write, so lines of concurrent workers never mix).
fn record_effect(effects: &PathBuf, tool: &str, argument: &str) -> Result<(), std::io::Error> {
    let effect_id = ToolCallContext::current()
        .map(|call| call.effect_id())
        .unwrap_or_default();
    let line = format!("{tool} {effect_id} {argument} {}\n", std::process::id());
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(effects)?
        .write_all(line.as_bytes())
}

fn agent(steps: &Steps, model: &DemoModel, effects: &Arc<PathBuf>) -> Agent {
    let record_file = Arc::clone(effects);
    let record = tool_fn("record", "Records an item.", move |args: RecordArgs| {
        let file = Arc::clone(&record_file);
        async move {
            record_effect(&file, "record", &args.item)?;
            Ok::<_, std::io::Error>(if args.item == "huge" {
                if let Some(call) = ToolCallContext::current() {
                    call.add_usage(HUGE_USAGE);
                }
                "x".repeat(HUGE_RESULT)
            } else {
                "recorded".to_owned()
            })
        }
    });
    let transfer_file = Arc::clone(effects);
    let transfer = tool_fn("transfer", "Transfers money.", move |args: TransferArgs| {
        let file = Arc::clone(&transfer_file);
        async move {
            record_effect(&file, "transfer", &args.amount.to_string())
                .map(|()| format!("transferred {}", args.amount))
        }
    });
    let charge_file = Arc::clone(effects);
    let charge = tool_fn("charge", "Charges a card.", move |args: TransferArgs| {
        let file = Arc::clone(&charge_file);
        async move {
            record_effect(&file, "charge", &args.amount.to_string())?;
            let release = file.with_extension("release");
            while !release.exists() {
                tokio::time::sleep(RELEASE_POLL).await;
            }
            Ok::<_, std::io::Error>(format!("charged {}", args.amount))
        }
    });
    let lookup = tool_fn("lookup", "Looks up a customer.", |_: Value| async {
        Ok::<_, std::io::Error>(json!({
            "email": SECRET_EMAIL,
            "token": SECRET_TOKEN,
            "card": "4111 1111 1111 1111",
        }))
    })
    .retry_safety(RetrySafety::Idempotent);
    let ask_file = Arc::clone(effects);
    let ask = tool_fn("ask", "Asks another agent.", move |_: Value| {
        let file = Arc::clone(&ask_file);
        async move {
            record_effect(&file, "ask", "geographer")?;
            if let Some(call) = ToolCallContext::current() {
                call.add_usage(ASK_USAGE);
                call.set_extension("answered_by", json!("geographer"));
            }
            Ok::<_, std::io::Error>("Paris")
        }
    });
    AgentBuilder::new(steps.model(model.clone()))
        .tool(steps.tool(ask))
        .tool(steps.tool(lookup))
        .tool(steps.tool(record))
        .tool(steps.tool(transfer))
        .tool(steps.tool(charge))
        .add_hook(
            ApprovalPolicy::new()
                .rule(Rule::suspend("transfer", "transfers need a person"))
                .rule(Rule::allow("*")),
        )
        .add_hook(steps.redaction(Redaction::new()))
        .add_hook(StampRecords {
            steps: steps.clone(),
        })
        .add_hook(ShowChargeOutcomes)
        .add_hook(ShowWhoAnswered)
        .build()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(listen), Some(effects)) = (args.next(), args.next()) else {
        return Err("usage: reins-restate-demo <listen address> <effects file>".into());
    };
    let model = DemoModel::new();
    let effects = Arc::new(PathBuf::from(effects));
    let service = AgentService::new(move |steps| agent(steps, &model, &effects));
    let listener = reins_restate::listener(listen.parse()?)?;
    // The tests wait for this line before they count on the worker.
    println!("listening on {listen}");
    match std::env::var(IDENTITY_KEY_VARIABLE) {
        Ok(key) => reins_restate::serve_verified(listener, service, &[key]).await?,
        Err(_) => reins_restate::serve_on(listener, service).await,
    }
    Ok(())
}
