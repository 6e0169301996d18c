//! Approval from another process, with a durable run in a SQLite file.
//!
//! Process A starts a run; the agent wants to send an email, a hook suspends the call for a
//! person's approval, and A exits. Process B lists the pending approvals in the file and
//! approves (or denies) one. Process A' resumes the run and finishes it — the lookup the
//! agent made before the pause is not done again, and hooks see the entries saved before it.
//!
//! ```text
//! cargo run -p reins --example durable_approval -- start
//! cargo run -p reins --example durable_approval -- pending
//! cargo run -p reins --example durable_approval -- approve <run-id> <call-id> <binding>
//! cargo run -p reins --example durable_approval -- resume <run-id>
//! ```
//!
//! The file is `reins-approvals.sqlite` in the current directory (`REINS_DB` overrides it).
//! Runs offline: the model is a `ScriptedModel::resumable` script.

use reins::agent::{
    Agent, AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext, PromptError,
    ToolDecision,
};
use reins::store::{Decision, RunStore, SqliteStore};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{ToolCallContext, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct Lookup {
    customer: String,
}

#[derive(Deserialize, JsonSchema)]
struct Email {
    to: String,
    body: String,
}

/// Sending email is a side effect: a person approves it, maybe hours later.
struct EmailNeedsApproval;

impl AgentHook for EmailNeedsApproval {
    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.tool_name() {
            Some("send_email") => {
                // Saved with the run: the resumed process's hooks see it.
                let _ = ctx.append_entry("approval_requested", &event.tool_args());
                DispatchAction::suspend("emails to customers need a person's approval")
            }
            Some(name) => {
                let earlier: Vec<Option<String>> =
                    ctx.entries("approval_requested").unwrap_or_default();
                eprintln!(
                    "[audit] {name} (approvals requested so far: {})",
                    earlier.len()
                );
                DispatchAction::proceed()
            }
            None => DispatchAction::proceed(),
        }
    }
}

fn agent() -> Agent {
    let model = ScriptedModel::resumable([
        Turn::tool_call("lookup_customer", json!({"customer": "ACME"})),
        Turn::tool_call(
            "send_email",
            json!({"to": "ops@acme.example", "body": "Your invoice 42 is overdue."}),
        ),
        Turn::text("I emailed ACME about the overdue invoice."),
    ]);
    let lookup = tool_fn(
        "lookup_customer",
        "Finds a customer's open invoices.",
        |args: Lookup| async move {
            eprintln!("[tool] looking up {}", args.customer);
            Ok::<_, std::convert::Infallible>(json!({"customer": args.customer, "overdue": [42]}))
        },
    );
    let send = tool_fn("send_email", "Sends an email.", |args: Email| async move {
        // The effect id is the same on every execution of this call: pass it to the mail
        // service as an idempotency key and a crash can never send the email twice.
        let effect = ToolCallContext::current()
            .map(|c| c.effect_id())
            .unwrap_or_default();
        eprintln!(
            "[tool] sending to {} (idempotency key {effect}): {}",
            args.to, args.body
        );
        Ok::<_, std::convert::Infallible>("sent")
    });
    AgentBuilder::new(model)
        .preamble("You help with accounts receivable.")
        .tool(lookup)
        .tool(send)
        .add_hook(EmailNeedsApproval)
        .build()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::var("REINS_DB").unwrap_or_else(|_| "reins-approvals.sqlite".to_owned());
    let store = SqliteStore::open(&path)?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["start"] => {
            match agent()
                .prompt("Remind ACME about their overdue invoice.")
                .durable(store)
                .await
            {
                Ok(answer) => println!("{answer}"),
                Err(PromptError::Suspended { run }) => {
                    println!("run {} is waiting for approval:", run.run_id());
                    for call in run.pending() {
                        println!(
                            "  {} {} {}",
                            call.internal_call_id, call.call.name, call.call.arguments
                        );
                    }
                    println!(
                        "approve with: durable_approval approve {} <call-id> <binding> (see `pending`)",
                        run.run_id()
                    );
                }
                Err(error) => return Err(error.into()),
            }
        }
        ["pending"] => {
            let pending = store.pending_approvals().await?;
            if pending.approvals.is_empty() && pending.unreadable.is_empty() {
                println!("nothing waits for approval in {path}");
            }
            // A run that cannot be read may wait for a decision too: never hide it.
            for run in &pending.unreadable {
                eprintln!("run {} cannot be read: {}", run.run_id, run.error);
            }
            for approval in pending.approvals {
                println!(
                    "{} {} {} {} ({}) {}",
                    approval.run_id,
                    approval.internal_call_id,
                    approval.tool_name,
                    approval.arguments,
                    approval.reason,
                    approval.binding
                );
            }
        }
        // The binding printed by `pending` ties the decision to the arguments shown: if they
        // changed since, the store refuses it.
        ["approve", run_id, call_id, binding] => {
            let decision = decided(call_id, binding, ToolDecision::approve(), None);
            store.decide(run_id, &decision).await?;
            println!(
                "approved {call_id} of run {run_id}; resume it with: durable_approval resume {run_id}"
            );
        }
        ["deny", run_id, call_id, binding, reason @ ..] => {
            let message = if reason.is_empty() {
                "A person declined this.".to_owned()
            } else {
                reason.join(" ")
            };
            let decision = decided(
                call_id,
                binding,
                ToolDecision::deny(message.clone()),
                Some(message),
            );
            store.decide(run_id, &decision).await?;
            println!("denied {call_id} of run {run_id}");
        }
        ["resume", run_id] => match agent().resume_stored(store, *run_id).await {
            Ok(answer) => println!("{answer}"),
            Err(PromptError::Suspended { run }) => {
                println!("run {} still waits for a decision", run.run_id());
            }
            // Resumed before (perhaps by another process): nothing ran or changed now.
            Err(PromptError::AlreadyFinished { run_id, answer, .. }) => match answer {
                Some(answer) => println!("run {run_id} had already finished: {answer}"),
                None => println!("run {run_id} had already failed"),
            },
            Err(error) => return Err(error.into()),
        },
        _ => {
            eprintln!(
                "usage: durable_approval start | pending | approve <run> <call> <binding> | deny <run> <call> <binding> [message] | resume <run> (`pending` prints each waiting call's run, call and binding)"
            );
            std::process::exit(2);
        }
    }
    Ok(())
}

/// A decision by the user running this program, bound to `binding`.
fn decided(
    call_id: &str,
    binding: &str,
    decision: ToolDecision,
    reason: Option<String>,
) -> Decision {
    Decision {
        internal_call_id: call_id.to_owned(),
        decision,
        binding: binding.to_owned(),
        decided_by: std::env::var("USER").unwrap_or_else(|_| "someone".to_owned()),
        reason,
        replaces: None,
    }
}
