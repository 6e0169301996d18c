//! The ready-made hooks an agent file turns on, built once per process and cloned into every
//! agent built from them (each keeps its per-run state in the run, not in the hook).

use super::env::secret_from_env;
use crate::approve::CliDecider;
use crate::args_check::ArgsCheck;
use crate::config::{ApprovalConfig, LoadedAgent};
use crate::keys::ModelKeys;
use crate::run_decisions::{Logged, WEBHOOK};
use crate::shell_tool::ShellTool;
use reins::agent::AgentBuilder;
use reins::hooks::approval::{ApprovalPolicy, Rule, RuleOutcome, WebhookDecider};
use reins::hooks::audit::AuditLog;
use reins::hooks::budget::Budget;
use reins::hooks::cache::ResponseCache;
use reins::hooks::fallback::ModelFallback;
use reins::hooks::guardrail::{DenyList, Guardrails, MaxLength};
use reins::hooks::invalid_calls::InvalidCalls;
use reins::hooks::loop_breaker::LoopBreaker;
use reins::hooks::redaction::Redaction;
use reins::hooks::tool_choice::ToolChoiceByTurn;
use reins_restate::Steps;
use std::time::Duration;

/// The reason a Restate run's call waits with (there is no terminal to ask on).
pub const RESTATE_SUSPEND_REASON: &str =
    "waiting for a person: `reins runs approve` or `reins runs deny`";

/// Who answers an approval rule's `ask`.
#[derive(Debug, Clone)]
pub enum Approvals {
    /// The CLI's decider: the terminal when there is one, else the run suspends in its store.
    Decider(CliDecider),
    /// A Restate worker's: the file's webhook, each answer a journaled step so that a replay
    /// takes the same path; without a webhook nobody, and the call suspends (an awakeable
    /// until `reins runs approve|deny`).
    Restate,
}

/// How much longer than the webhook's own timeout (inside its journaled step) the policy
/// waits on Restate: the denial a late answer gets is then the journaled one.
const JOURNALED_TIMEOUT_MARGIN: Duration = Duration::from_secs(30);

/// The file's hooks, in the order they are added to an agent.
#[derive(Clone, Default)]
pub struct FileHooks {
    /// The agent's model keys masked in tool results (not a hook of the file: always on).
    model_keys: Option<Redaction>,
    tool_choice: Option<ToolChoiceByTurn>,
    /// Misnamed tool calls repaired, other invalid ones answered with the tools (unless the
    /// file allows no retries: such a call then fails the run).
    invalid_calls: Option<InvalidCalls>,
    guardrails: Option<Guardrails>,
    redaction: Option<Redaction>,
    cache: Option<ResponseCache>,
    budget: Option<Budget>,
    loop_breaker: Option<LoopBreaker>,
    /// A call whose arguments do not fit its tool's schema (any tool's), or whose value would
    /// be an option of a shell tool's program, refused before the approval policy asks
    /// about it.
    args_check: ArgsCheck,
    approval: Option<ApprovalPolicy>,
    /// On Restate, the webhook the approval policy asks through each run's journal, and how
    /// long it may take.
    journaled_webhook: Option<(WebhookDecider, Duration)>,
    fallback: Option<ModelFallback>,
    audit: Option<AuditLog>,
}

impl FileHooks {
    /// The hooks of `agent`; `policy` carries the tools' traits, `labels` the models' labels
    /// (a fallback hook only when there is more than one).
    pub fn new(
        agent: &LoadedAgent,
        policy: ApprovalPolicy,
        labels: Vec<String>,
        approvals: Approvals,
    ) -> Result<FileHooks, String> {
        let hooks = &agent.file.hooks;
        let guardrails = hooks.guardrails.as_ref().map(|config| {
            let mut guardrails = Guardrails::new();
            if !config.deny_input.is_empty() {
                guardrails =
                    guardrails.input("deny_input", DenyList::new(config.deny_input.clone()));
            }
            if let Some(max) = config.max_input_chars {
                guardrails = guardrails.input("max_input_chars", MaxLength::chars(max));
            }
            if !config.deny_answer.is_empty() {
                guardrails =
                    guardrails.answer("deny_answer", DenyList::new(config.deny_answer.clone()));
            }
            guardrails
        });
        let redaction = hooks.redaction.as_ref().map(|config| {
            let mut redaction = Redaction::new().tool_results(config.tool_results.unwrap_or(true));
            for variable in &config.secrets_from_env {
                redaction = redaction.secret_from_env(variable.get_ref());
            }
            redaction
        });
        let audit = match &hooks.audit {
            Some(config) => {
                let mut audit = if config.path.get_ref() == "stderr" {
                    AuditLog::stderr()
                } else {
                    let path = agent.resolve(config.path.get_ref());
                    create_parent(&path)?;
                    AuditLog::append_to(&path).map_err(|error| {
                        format!("cannot open the audit log {}: {error}", path.display())
                    })?
                };
                if config.with_args {
                    audit = audit.with_args();
                }
                Some(audit)
            }
            None => None,
        };
        let journaled_webhook = match (&approvals, &hooks.approval) {
            (Approvals::Restate, Some(config)) => match &config.webhook {
                Some(url) => Some((webhook(url.get_ref(), config)?, approval_timeout(config))),
                None => None,
            },
            _ => None,
        };
        Ok(FileHooks {
            model_keys: None,
            tool_choice: hooks.tool_choice.as_ref().map(|choice| choice.hook()),
            invalid_calls: (super::invalid_tool_call_retries(agent) > 0).then(InvalidCalls::new),
            guardrails,
            redaction,
            cache: cache(agent)?,
            budget: budget(agent),
            loop_breaker: hooks.loop_breaker.as_ref().map(|config| {
                let mut breaker = LoopBreaker::new();
                if let Some(n) = &config.feedback_after {
                    breaker = breaker.feedback_after(*n.get_ref());
                }
                if let Some(m) = &config.stop_after {
                    breaker = breaker.stop_after(*m.get_ref());
                }
                if let Some(text) = &config.feedback {
                    breaker = breaker.feedback_message(text.clone());
                }
                breaker
            }),
            args_check: ArgsCheck::default(),
            approval: hooks
                .approval
                .as_ref()
                .map(|config| approval(policy, config, approvals))
                .transpose()?,
            journaled_webhook,
            fallback: (labels.len() > 1).then(|| ModelFallback::new(labels)),
            audit,
        })
    }

    /// These hooks, refusing a call of one of `shell_tools` whose value would be an option of
    /// its program before the approval policy asks about it.
    pub fn checking(mut self, shell_tools: &[ShellTool]) -> Self {
        self.args_check = ArgsCheck::with_shell_tools(shell_tools);
        self
    }

    /// These hooks, with `keys`' values masked in every tool's result.
    pub fn masking(mut self, keys: &ModelKeys) -> Self {
        self.model_keys = keys.tool_result_redaction();
        self
    }

    /// Adds the hooks to `builder`, in this order: the model keys are masked in tool results
    /// first, so that no other hook sees them; the tool choice shapes the request, and the
    /// invalid-call hook repairs or answers a call to a tool the request did not offer;
    /// guardrails and redaction see the text; the response cache keys the request as it is
    /// sent, and a response it serves is no model call to count; the budget, the loop
    /// breaker and then the tools' schemas (and shell tools' option values) refuse calls before the approval policy asks
    /// a person about them (the breaker sees a call repeated out of its schema too); the
    /// fallback retries failed model calls; the audit log, last, records what the others
    /// decided. `steps` are the run's on a Restate worker, where the approval webhook is
    /// asked through them.
    pub fn add_to(&self, mut builder: AgentBuilder, steps: Option<&Steps>) -> AgentBuilder {
        if let Some(hook) = &self.model_keys {
            builder = builder.add_hook(journaled_too(hook, steps));
        }
        if let Some(hook) = &self.tool_choice {
            builder = builder.add_hook(hook.clone());
        }
        if let Some(hook) = &self.invalid_calls {
            builder = builder.add_hook(hook.clone());
        }
        if let Some(hook) = &self.guardrails {
            builder = builder.add_hook(hook.clone());
        }
        if let Some(hook) = &self.redaction {
            builder = builder.add_hook(journaled_too(hook, steps));
        }
        if let Some(hook) = &self.cache {
            builder = builder.add_hook(hook.clone());
        }
        if let Some(hook) = &self.budget {
            builder = builder.add_hook(hook.clone());
        }
        if let Some(hook) = &self.loop_breaker {
            builder = builder.add_hook(hook.clone());
        }
        builder = builder.add_hook(self.args_check.clone());
        if let Some(hook) = &self.approval {
            builder = match (&self.journaled_webhook, steps) {
                (Some((webhook, timeout)), Some(steps)) => builder.add_hook(
                    hook.clone()
                        .decider(steps.decider(webhook.clone()).timeout(*timeout))
                        .timeout(*timeout + JOURNALED_TIMEOUT_MARGIN),
                ),
                _ => builder.add_hook(hook.clone()),
            };
        }
        if let Some(hook) = &self.fallback {
            builder = builder.add_hook(hook.clone());
        }
        if let Some(hook) = &self.audit {
            builder = builder.add_hook(hook.clone());
        }
        builder
    }
}

/// `redaction`, masking what a run on Restate journals of each tool call too (a step journals
/// the tool's result before the hook runs).
fn journaled_too(redaction: &Redaction, steps: Option<&Steps>) -> Redaction {
    match steps {
        Some(steps) => steps.redaction(redaction.clone()),
        None => redaction.clone(),
    }
}

/// The file's response cache: recording to, or replaying from, a file beside the agent file.
fn cache(agent: &LoadedAgent) -> Result<Option<ResponseCache>, String> {
    let Some(config) = &agent.file.hooks.cache else {
        return Ok(None);
    };
    let config = config.get_ref();
    let (path, replay) = match (&config.record, &config.replay) {
        (Some(path), _) => (agent.resolve(path.get_ref()), false),
        (None, Some(path)) => (agent.resolve(path.get_ref()), true),
        (None, None) => return Ok(None),
    };
    let opened = if replay {
        ResponseCache::replay(&path)
    } else {
        create_parent(&path)?;
        ResponseCache::record_to(&path)
    };
    // The error names the file.
    opened.map(Some).map_err(|error| error.to_string())
}

/// Creates the directory of a file `reins` writes (an audit log, a recording), as the store's
/// is: `.reins/audit.jsonl` beside the agent file must not fail on a store that is not
/// SQLite, which creates no `.reins`.
fn create_parent(path: &std::path::Path) -> Result<(), String> {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => std::fs::create_dir_all(parent)
            .map_err(|error| format!("cannot create {}: {error}", parent.display())),
        _ => Ok(()),
    }
}

/// A budget without limits that prices the file's models, to read a run's cost from its
/// budget record; `None` when the file gives no price.
pub fn price_table(agent: &LoadedAgent) -> Option<Budget> {
    let file = &agent.file;
    let any_price = file.limits.price_per_million.is_some()
        || file
            .labeled_models()
            .iter()
            .any(|(_, model)| model.get_ref().price_per_million.is_some());
    any_price.then(|| priced(agent, Budget::new()))
}

/// `budget` with the file's prices: the `[limits]` one for every model, and each model's own
/// under the label it is registered with.
fn priced(agent: &LoadedAgent, mut budget: Budget) -> Budget {
    let limits = &agent.file.limits;
    if let Some(price) = &limits.price_per_million {
        let [input, output] = *price.get_ref();
        budget = budget.default_price(input, output);
    }
    if let Some(price) = &limits.cache_price_per_million {
        let [read, write] = *price.get_ref();
        budget = budget.default_cache_price(read, write);
    }
    for (label, model) in agent.file.labeled_models() {
        let model = model.get_ref();
        if let Some(price) = &model.price_per_million {
            let [input, output] = *price.get_ref();
            budget = budget.price(label.clone(), input, output);
        }
        if let Some(price) = &model.cache_price_per_million {
            let [read, write] = *price.get_ref();
            budget = budget.cache_price(label, read, write);
        }
    }
    budget
}

fn budget(agent: &LoadedAgent) -> Option<Budget> {
    let limits = &agent.file.limits;
    let mut budget = Budget::new();
    let mut any = false;
    let mut set = |present: bool| any |= present;
    if let Some(max) = limits.max_input_tokens {
        budget = budget.max_input_tokens(max);
        set(true);
    }
    if let Some(max) = limits.max_output_tokens {
        budget = budget.max_output_tokens(max);
        set(true);
    }
    if let Some(max) = limits.max_total_tokens {
        budget = budget.max_total_tokens(max);
        set(true);
    }
    if let Some(max) = limits.max_model_calls {
        budget = budget.max_model_calls(max);
        set(true);
    }
    if let Some(max) = limits.max_tool_calls {
        budget = budget.max_tool_calls(max);
        set(true);
    }
    if let Some(secs) = limits.max_wall_time_secs {
        budget = budget.max_wall_time(Duration::from_secs(secs));
        set(true);
    }
    if let Some(max) = &limits.max_cost {
        budget = budget.max_cost(*max.get_ref());
        set(true);
    }
    budget = priced(agent, budget);
    if limits.over_budget_model.is_some() {
        budget = budget.on_exceeded_switch_to(crate::config::OVER_BUDGET_LABEL);
        if let Some(factor) = &limits.hard_limit_factor {
            budget = budget.hard_limit_factor(*factor.get_ref());
        }
    }
    any.then_some(budget)
}

fn approval(
    mut policy: ApprovalPolicy,
    config: &ApprovalConfig,
    approvals: Approvals,
) -> Result<ApprovalPolicy, String> {
    // Whether an `ask` reaches a decider; else (on Restate with no webhook) it suspends.
    let asks = matches!(approvals, Approvals::Decider(_)) || config.webhook.is_some();
    for rule in &config.rules {
        let rule = rule.get_ref();
        let message = rule.message.clone();
        let mut built = match (rule.action.get_ref().as_str(), asks) {
            ("allow", _) => Rule::allow(rule.tool.clone()),
            ("deny", _) => Rule::deny(
                rule.tool.clone(),
                message
                    .clone()
                    .unwrap_or_else(|| "this tool is not allowed".to_owned()),
            ),
            // The message is why the rule asks: the person asked reads it beside the rule.
            (_, true) => match message.clone() {
                Some(why) => Rule::ask(rule.tool.clone()).because(why),
                None => Rule::ask(rule.tool.clone()),
            },
            (_, false) => Rule::suspend(
                rule.tool.clone(),
                message
                    .clone()
                    .unwrap_or_else(|| RESTATE_SUSPEND_REASON.to_owned()),
            ),
        };
        match rule.when.as_ref().map(|when| when.get_ref().as_str()) {
            Some("read_only") => built = built.when_traits(|traits| traits.read_only),
            Some("writes") => built = built.when_traits(|traits| !traits.read_only),
            _ => {}
        }
        // A deny or suspend rule is named by its message (the model's, or the stored reason);
        // an ask rule keeps its own description (`ask `write_note``) beside its reason.
        if let Some(message) = message.filter(|_| built.outcome() != &RuleOutcome::Ask) {
            built = built.describe(message);
        }
        policy = policy.rule(built);
    }
    let default = match config.default.as_ref().map(|d| d.get_ref().as_str()) {
        Some("allow") => RuleOutcome::Allow,
        Some("deny") => RuleOutcome::Deny("no approval rule allows this tool".to_owned()),
        _ if asks => RuleOutcome::Ask,
        _ => RuleOutcome::Suspend(RESTATE_SUSPEND_REASON.to_owned()),
    };
    policy = policy.default_outcome(default);
    let timeout = approval_timeout(config);
    // On Restate the webhook's decider is added per run, with the run's steps (`add_to`).
    Ok(match (approvals, &config.webhook) {
        // The webhook's decisions are logged in the run's trail as the terminal's are.
        (Approvals::Decider(decider), Some(url)) => policy
            .decider(Logged::new(
                webhook(url.get_ref(), config)?,
                decider.decisions(),
                WEBHOOK,
            ))
            .timeout(timeout),
        (Approvals::Decider(decider), None) => policy.decider(decider).timeout(timeout),
        (Approvals::Restate, _) => policy,
    })
}

/// How long a decider may take: the file's `timeout_secs`, 300 seconds unless set.
fn approval_timeout(config: &ApprovalConfig) -> Duration {
    Duration::from_secs(config.timeout_secs.unwrap_or(300))
}

/// The file's approval webhook, its token and signing secret read from the environment.
fn webhook(url: &str, config: &ApprovalConfig) -> Result<WebhookDecider, String> {
    let mut decider = WebhookDecider::new(url).map_err(|error| error.to_string())?;
    if let Some(variable) = &config.webhook_token_env {
        decider = decider.bearer_token(secret(variable.get_ref(), "token")?);
    }
    if let Some(variable) = &config.webhook_signing_secret_env {
        decider = decider.signing_secret(secret(variable.get_ref(), "signing secret")?);
    }
    Ok(decider)
}

/// The value of the environment variable `variable`, the webhook's `what`.
fn secret(variable: &str, what: &str) -> Result<String, String> {
    secret_from_env(variable).map_err(|unset| format!("{unset} (the approval webhook's {what})"))
}
