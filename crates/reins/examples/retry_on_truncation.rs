//! Retrying truncated answers with `on_model_turn_finished`.
//!
//! When a model runs out of output tokens its turn ends with `FinishReason::Length` and the
//! answer is cut off. The `RetryTruncated` hook notices that, and answers
//! `ModelTurnAction::retry_with_feedback(..)`: the cut-off answer stays in the history and the
//! feedback is added as a user message, so the model can try again, more briefly. The retry
//! count lives in the run's scratchpad (`ctx.scratchpad()`), and after two retries the hook
//! gives up with `ModelTurnAction::stop(..)`.
//!
//! Two runs are shown: one that succeeds on the second retry, and one that is still truncated
//! after two retries and ends with `PromptError::Cancelled`. Runs offline on `ScriptedModel`:
//!
//! ```text
//! cargo run -p reins --example retry_on_truncation
//! ```

use reins::agent::{
    AgentBuilder, AgentHook, HookContext, ModelTurnAction, ModelTurnFinished, PromptError,
};
use reins::completion::FinishReason;
use reins::message::Message;
use reins::testing::{ScriptedModel, Turn};

/// How many times a truncated answer is retried before the run gives up.
const MAX_RETRIES: usize = 2;

/// Asks for a shorter answer when the model ran out of output tokens, at most twice.
struct RetryTruncated;

/// The retry counter, kept in the scratchpad so it is per run, not per hook.
#[derive(Clone, Default)]
struct Retries(usize);

impl AgentHook for RetryTruncated {
    async fn on_model_turn_finished(
        &self,
        ctx: &HookContext,
        event: ModelTurnFinished<'_>,
    ) -> ModelTurnAction {
        println!(
            "[hook] turn {} finished: {:?}",
            event.turn, event.finish_reason
        );
        if event.finish_reason != Some(&FinishReason::Length) {
            return ModelTurnAction::continue_run();
        }
        let attempt = ctx.scratchpad().update(|retries: &mut Retries| {
            retries.0 += 1;
            retries.0
        });
        if attempt > MAX_RETRIES {
            println!("[hook]   still truncated after {MAX_RETRIES} retries: stopping");
            return ModelTurnAction::stop("response kept getting truncated");
        }
        println!("[hook]   truncated: retry {attempt} of {MAX_RETRIES}, with feedback");
        ModelTurnAction::retry_with_feedback("That was cut off. Answer again, more briefly.")
    }
}

fn truncated(text: &str) -> Turn {
    Turn::text(text).finish_reason(FinishReason::Length)
}

fn print_history(history: &[Message]) {
    for message in history {
        let role = match message {
            Message::System { .. } => "system",
            Message::User { .. } => "user",
            Message::Assistant { .. } => "assistant",
            Message::Tool(_) => "tool",
        };
        println!("    {role:>9}: {}", message.text());
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let prompt = "Explain how a bicycle stays upright.";

    println!("== Run 1: truncated twice, then a complete answer ==");
    let model = ScriptedModel::new([
        truncated("A bicycle stays upright mostly because of steering: when it leans, the"),
        truncated("Steering keeps it up: a lean makes the front wheel turn"),
        Turn::text("Steering: a lean turns the front wheel under the rider, catching the fall."),
    ]);
    let agent = AgentBuilder::new(model).add_hook(RetryTruncated).build();
    // Every retry is a model call and counts against `max_turns`: leave room for them.
    let response = agent
        .prompt(prompt)
        .max_turns(1 + MAX_RETRIES)
        .extended_details()
        .await?;
    println!(
        "  answer after {} model calls: {}",
        response.turns(),
        response.output
    );
    println!("  history:");
    print_history(response.history());

    println!("\n== Run 2: truncated every time; the hook stops after {MAX_RETRIES} retries ==");
    let model = ScriptedModel::new([
        truncated("A bicycle stays upright because"),
        truncated("Because"),
        truncated("It"),
    ]);
    let agent = AgentBuilder::new(model.clone())
        .add_hook(RetryTruncated)
        .build();
    match agent.prompt(prompt).max_turns(5).await {
        Ok(answer) => println!("  unexpected answer: {answer}"),
        Err(PromptError::Cancelled {
            reason, history, ..
        }) => {
            println!("  run cancelled by the hook: {reason}");
            println!("  model calls made: {}", model.requests().len());
            println!("  history when it stopped:");
            print_history(&history);
        }
        Err(other) => return Err(other.into()),
    }
    Ok(())
}
