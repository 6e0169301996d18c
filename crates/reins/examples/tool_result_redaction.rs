//! Redacting and truncating tool results with `on_outcome`.
//!
//! A `lookup_customer` tool returns a record full of email addresses and a long notes field.
//! The `RedactResults` hook rewrites what the model sees with
//! `OutcomeAction::rewrite_tool_result`: every email address becomes `[email redacted]` and
//! the text is cut to a fixed length.
//!
//! A second hook, registered after it, shows how hooks chain: it sees the *redacted* text
//! (the model-visible result) but the tool's *raw* structured outcome, which is still
//! `ToolOutcome::Success` — a rewrite changes only what the model reads, never what policy
//! hooks learn about the call. Finally the example prints the tool message the model actually
//! received. Runs offline on `ScriptedModel`:
//!
//! ```text
//! cargo run -p reins --example tool_result_redaction
//! ```

use reins::agent::{AgentBuilder, AgentHook, HookContext, OutcomeAction, OutcomeEvent};
use reins::message::Message;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Longest tool result (in characters) the model may see.
const MAX_RESULT_CHARS: usize = 160;

#[derive(Deserialize, JsonSchema)]
struct LookupArgs {
    /// The customer's id.
    customer_id: String,
}

/// Redacts email addresses and truncates long tool results.
struct RedactResults;

impl AgentHook for RedactResults {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        // `tool_result` is `None` for model responses and for failed or skipped tool calls.
        let Some(result) = event.tool_result() else {
            return OutcomeAction::proceed();
        };
        // The text the model would see, written once for every hook that reads it.
        let original = result.output_text();
        let redacted = truncate(&redact_emails(original), MAX_RESULT_CHARS);
        if redacted == original {
            return OutcomeAction::proceed();
        }
        println!(
            "[redact] {}: {} chars -> {} chars",
            result.tool_name(),
            original.chars().count(),
            redacted.chars().count()
        );
        OutcomeAction::rewrite_tool_result(&event, redacted)
    }
}

/// Runs after `RedactResults`: sees the rewritten text, and the raw outcome.
struct InspectResults;

impl AgentHook for InspectResults {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(result) = event.tool_outcome() {
            println!("[inspect] model-visible text: {}", result.output_text());
            println!("[inspect] raw ToolOutcome:    {:?}", result.outcome());
        }
        OutcomeAction::proceed()
    }
}

/// Replaces every `local@domain.tld` in `text` with `[email redacted]`.
fn redact_emails(text: &str) -> String {
    let is_local = |c: char| c.is_ascii_alphanumeric() || "._%+-".contains(c);
    let is_domain = |c: char| c.is_ascii_alphanumeric() || ".-".contains(c);
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '@' {
            // Walk back over the local part already copied, and forward over the domain.
            let local_len = chars[..i]
                .iter()
                .rev()
                .take_while(|&&c| is_local(c))
                .count();
            let domain_len = chars[i + 1..].iter().take_while(|&&c| is_domain(c)).count();
            let domain: String = chars[i + 1..i + 1 + domain_len].iter().collect();
            let domain = domain.trim_end_matches('.');
            if local_len > 0 && domain.contains('.') {
                // The local part is ASCII, so its length in bytes is its length in chars.
                out.truncate(out.len() - local_len);
                out.push_str("[email redacted]");
                // Skip the domain, but keep a trailing sentence dot.
                i += 1 + domain.chars().count();
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Cuts `text` to at most `max` characters, marking the cut.
fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}… [truncated]", &text[..cut]),
        None => text.to_owned(),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let lookup_customer = tool_fn(
        "lookup_customer",
        "Looks up a customer record by id.",
        |args: LookupArgs| async move {
            Ok::<_, std::convert::Infallible>(json!({
                "id": args.customer_id,
                "name": "Ada Lovelace",
                "email": "ada.lovelace@example.com",
                "billing_contact": "accounts+billing@analytical-engines.co.uk",
                "plan": "enterprise",
                "notes": "Prefers email. Escalations go to cto@analytical-engines.co.uk. \
                          Renewal is due in March; last three invoices were paid on time and \
                          the account has no open support tickets.",
            }))
        },
    );

    let model = ScriptedModel::new([
        Turn::tool_call("lookup_customer", json!({"customer_id": "C-1815"})),
        Turn::text("Ada Lovelace is on the enterprise plan and prefers to be contacted by email."),
    ]);

    let agent = AgentBuilder::new(model.clone())
        .tool(lookup_customer)
        .add_hook(RedactResults)
        .add_hook(InspectResults)
        .build();

    let answer = agent.prompt("Summarize customer C-1815.").await?;

    println!("\nThe tool message the model received on its next turn:");
    let requests = model.requests();
    let tool_messages = requests
        .last()
        .into_iter()
        .flat_map(|request| request.history.iter())
        .filter_map(|message| match message {
            Message::Tool(result) => Some(result),
            _ => None,
        });
    for result in tool_messages {
        println!("  {} -> {}", result.tool_name, result.content);
    }
    println!("\nassistant: {answer}");
    Ok(())
}
