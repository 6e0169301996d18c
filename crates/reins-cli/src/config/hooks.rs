//! The `[hooks]` table: which ready-made hooks an agent runs, and their settings.

use super::ModelConfig;
use serde::Deserialize;
use toml::Spanned;

/// The ready-made hooks.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hooks {
    /// Which tool calls run, wait for a person, or are refused.
    pub approval: Option<ApprovalConfig>,
    /// Input and answer checks.
    pub guardrails: Option<GuardrailsConfig>,
    /// Secrets kept out of what the model sees.
    pub redaction: Option<RedactionConfig>,
    /// A JSON line per model call and tool call.
    pub audit: Option<AuditConfig>,
    /// Models tried in order when a call fails.
    pub fallback: Option<FallbackConfig>,
    /// The tool choice of the first turn and of later turns.
    pub tool_choice: Option<ToolChoiceConfig>,
    /// The same tool called with the same arguments again and again: feedback, then a stop.
    pub loop_breaker: Option<LoopBreakerConfig>,
    /// Model responses recorded to a file, or served from one instead of calling the model.
    pub cache: Option<Spanned<CacheConfig>>,
}

/// The response cache (`reins::hooks::cache::ResponseCache`): give `record` or `replay`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// A JSON Lines file (relative to the agent file) each new response is appended to; the
    /// responses already in it are served without calling the model.
    pub record: Option<Spanned<String>>,
    /// A recording to serve every response from: the model is never called, and a request
    /// the recording does not hold ends the run.
    pub replay: Option<Spanned<String>>,
}

/// The loop breaker (`reins::hooks::loop_breaker::LoopBreaker`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopBreakerConfig {
    /// The identical call in a row answered with feedback instead of running (default 3).
    pub feedback_after: Option<Spanned<u32>>,
    /// The identical call in a row that stops the run (default 5), once the model has read
    /// the feedback in an earlier turn (identical parallel calls of one turn get feedback).
    pub stop_after: Option<Spanned<u32>>,
    /// What the model is told instead of the default feedback.
    pub feedback: Option<String>,
}

/// The approval policy.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalConfig {
    /// Rules, first match wins.
    #[serde(default)]
    pub rules: Vec<Spanned<ApprovalRuleConfig>>,
    /// What happens to a call no rule matches: `allow`, `ask` (default) or `deny`.
    pub default: Option<Spanned<String>>,
    /// Seconds a person (or the webhook) has to answer before the call is denied (default
    /// 300).
    pub timeout_secs: Option<u64>,
    /// An HTTP service that answers `ask` instead of the terminal: each call is posted to it
    /// as JSON and it answers approve, deny or suspend (`reins::hooks::approval::WebhookDecider`).
    pub webhook: Option<Spanned<String>>,
    /// The environment variable holding the bearer token sent to `webhook`.
    pub webhook_token_env: Option<Spanned<String>>,
    /// The environment variable holding the secret each request to `webhook` is signed with
    /// (HMAC-SHA256 in `x-reins-signature`).
    pub webhook_signing_secret_env: Option<Spanned<String>>,
}

/// One approval rule.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalRuleConfig {
    /// A glob over tool names (`*` any text, `?` one character).
    pub tool: String,
    /// `allow`, `ask` or `deny`.
    pub action: Spanned<String>,
    /// The message the model sees on `deny`, or why `ask` asks: shown with the rule at the
    /// terminal, kept with a suspended call (for `runs show` and the inbox), sent to the
    /// webhook as `reason`.
    pub message: Option<String>,
    /// Only for tools that are (`read_only`) or are not (`writes`) read-only.
    pub when: Option<Spanned<String>>,
}

/// Guardrails.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuardrailsConfig {
    /// Prompts containing one of these phrases are refused.
    #[serde(default)]
    pub deny_input: Vec<String>,
    /// Answers containing one of these phrases are retried.
    #[serde(default)]
    pub deny_answer: Vec<String>,
    /// The longest prompt accepted, in characters.
    pub max_input_chars: Option<usize>,
}

/// Redaction: reins' `Redaction` hook, its built-in patterns and these secrets masked in
/// every model request and (unless `tool_results = false`) in every tool call's result.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedactionConfig {
    /// Environment variables whose values are secrets to redact.
    #[serde(default)]
    pub secrets_from_env: Vec<Spanned<String>>,
    /// Also redact tool results (default true): what the model is shown of each call, and
    /// the call's outcome (a failing tool's error, a denial's report) as the hooks after it,
    /// the store (`runs show`) and the `--json` `tool_result` event get it, whatever the
    /// tool's kind.
    pub tool_results: Option<bool>,
}

/// The audit log.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditConfig {
    /// A file to append to (relative to the agent file), or `stderr`.
    pub path: Spanned<String>,
    /// Include tool arguments.
    #[serde(default)]
    pub with_args: bool,
}

/// Fallback models.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FallbackConfig {
    /// Models tried in order after the agent's own.
    pub models: Vec<Spanned<ModelConfig>>,
}

/// Tool choice per turn.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolChoiceConfig {
    /// `auto`, `required`, `none`, or a tool's name, for turn 1.
    pub first_turn: Option<Spanned<String>>,
    /// The same, for every later turn.
    pub later_turns: Option<Spanned<String>>,
    /// Turn 1's choice by what the prompt mentions, first match wins; a prompt no route
    /// matches takes `first_turn`.
    #[serde(default)]
    pub routes: Vec<ToolChoiceRoute>,
}

/// A first-turn tool choice for prompts that mention certain words.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolChoiceRoute {
    /// Words (or phrases) of which the prompt must mention one, as a whole word, ignoring
    /// case.
    pub prompt_mentions: Vec<String>,
    /// `auto`, `required`, `none`, or a tool's name, for turn 1 of such a prompt.
    pub first_turn: Spanned<String>,
}
