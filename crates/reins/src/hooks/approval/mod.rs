//! An approval policy for tool calls: ordered rules decide whether each call runs, is refused,
//! waits for a person (or any async [`ApprovalDecider`]) or suspends the run durably.
//!
//! A [`Rule`] matches a call by the tool's name (a glob: `*` is any text, `?` one character),
//! optionally by its parsed JSON arguments and by what the tool says about itself
//! ([`ToolTraits`]). The first matching rule wins; when none matches, the policy's default
//! applies: [`RuleOutcome::Ask`] when a decider is set, else [`RuleOutcome::Deny`].
//!
//! The policy fails closed: arguments that cannot be read (or an argument or traits check that
//! panics) never match an allow rule but do match a rule that denies, asks or suspends; a
//! decider that panics, says it cannot decide ([`ApprovalDecider::try_decide`]: an approval
//! service that fails), or does not answer within the timeout (5 minutes by default), denies
//! the call with a message saying why; `Ask` with no decider denies. A decider that failed
//! so is told of the policy's denial
//! ([`ApprovalDecider::failed_to_answer`]), so one that records its decisions (the CLI's, in
//! the run's decision trail) records that one too, as the policy's.
//!
//! **It judges the arguments it is shown.** Dispatch hooks are chained: the policy decides on
//! the arguments as the hooks registered before it left them, and a hook registered after it
//! that rewrites them ([`DispatchAction::rewrite_tool_args`], a
//! [`Guardrails`](crate::hooks::guardrail::Guardrails) tool-argument rewrite, your own) has
//! its rewrite run without the policy seeing it. Register the policy after every hook that
//! rewrites arguments. A run's own hooks ([`PromptRequest::add_hook`]) come after all the
//! agent's, so a policy on the agent does not see a run hook's rewrite: give such a run its
//! policy as a run hook too, after the rewriting one. A decider's approval with replacement
//! arguments ([`Decision::ApproveWithArgs`]) is passed on to the hooks after the policy like
//! any rewrite.
//!
//! [`DispatchAction::rewrite_tool_args`]: crate::agent::DispatchAction::rewrite_tool_args
//! [`PromptRequest::add_hook`]: crate::agent::PromptRequest::add_hook
//!
//! Model calls are not gated: the policy observes tool dispatches only. A denial ends the
//! dispatch chain, so hooks registered after the policy never see a refused call's dispatch
//! (they still see its outcome, recorded as denied). The policy also notes how it decided each
//! call in the run's scratchpad; read it with [`approval_record`] (the
//! [`audit`](crate::hooks::audit) log writes it on the call's outcome line).

mod decider;
mod record;
mod rule;
pub mod terminal;
#[cfg(test)]
mod tests;
mod webhook;

use decider::describe;
pub use decider::{
    ApprovalDecider, ApprovalRequest, ChannelDecider, DeciderFailure, DeciderFn, Decision,
    PendingApproval, TerminalDecider, decider_fn,
};
use record::Records;
pub use record::{ApprovalRecord, Verdict, approval_record};
pub use rule::{Rule, RuleOutcome};
pub use webhook::{
    IDEMPOTENCY_KEY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, WebhookDecider, WebhookError,
};

use crate::agent::{AgentHook, DispatchAction, DispatchEvent, HookContext, StepEventKind};
use crate::panics::{call_caught, panic_message};
use crate::tool::ToolTraits;
use futures::future::BoxFuture;
use serde_json::Value;
use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// The default time a decider has to answer before the call is denied.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// Gates tool calls by ordered [`Rule`]s; see the [module docs](self).
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::hooks::approval::{ApprovalPolicy, Decision, Rule, decider_fn};
/// use reins::tool::ToolTraits;
/// use reins::message::Message;
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::tool_fn;
/// use serde_json::{Value, json};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), reins::agent::PromptError> {
/// let read = tool_fn("read_file", "Reads a file.", |_: Value| async {
///     Ok::<_, std::convert::Infallible>("contents")
/// });
/// let delete = tool_fn("delete_file", "Deletes a file.", |_: Value| async {
///     Ok::<_, std::convert::Infallible>("deleted")
/// });
/// let model = ScriptedModel::new([
///     Turn::tool_calls([
///         ("read_file", json!({"path": "notes.txt"})),
///         ("delete_file", json!({"path": "/etc/passwd"})),
///         ("delete_file", json!({"path": "tmp/cache"})),
///     ]),
///     Turn::text("Done."),
/// ]);
/// let policy = ApprovalPolicy::new()
///     .tool_traits("read_file", ToolTraits::read_only())
///     .tool_traits("delete_file", ToolTraits::destructive())
///     .rule(Rule::allow("*").when_traits(|traits| traits.read_only))
///     .rule(
///         Rule::deny("delete_*", "system files are off limits")
///             .when_args(|args| args["path"].as_str().is_some_and(|p| p.starts_with("/etc"))),
///     )
///     .rule(Rule::ask("*").when_traits(|traits| traits.destructive))
///     // A person would answer here; this decider approves everything under `tmp/`.
///     .decider(decider_fn(|request| async move {
///         match request.args["path"].as_str() {
///             Some(path) if path.starts_with("tmp/") => Decision::approve(),
///             _ => Decision::deny("not approved"),
///         }
///     }));
///
/// let agent = AgentBuilder::new(model.clone())
///     .tool(read)
///     .tool(delete)
///     .add_hook(policy)
///     .build();
/// agent.prompt("Tidy up.").await?;
///
/// let results: Vec<String> = model.requests()[1]
///     .history
///     .iter()
///     .filter(|message| matches!(message, Message::Tool(_)))
///     .map(Message::text)
///     .collect();
/// assert_eq!(results, ["contents", "system files are off limits", "deleted"]);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct ApprovalPolicy {
    rules: Vec<Rule>,
    traits: HashMap<String, ToolTraits>,
    unknown_traits: ToolTraits,
    default: Option<RuleOutcome>,
    decider: Option<Arc<dyn ErasedDecider>>,
    timeout: Duration,
}

impl std::fmt::Debug for ApprovalPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalPolicy")
            .field("rules", &self.rules)
            .field("traits", &self.traits)
            .field("unknown_traits", &self.unknown_traits)
            .field("default", &self.default_outcome_now())
            .field("decider", &self.decider.is_some())
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Default for ApprovalPolicy {
    fn default() -> Self {
        Self::new()
    }
}

impl ApprovalPolicy {
    /// A policy with no rules, no decider and no known tool traits: every tool call is denied
    /// until rules allow some.
    pub fn new() -> Self {
        ApprovalPolicy {
            rules: Vec::new(),
            traits: HashMap::new(),
            unknown_traits: ToolTraits::default(),
            default: None,
            decider: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// Adds a rule after the ones already there; the first rule that matches a call decides.
    pub fn rule(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    /// Tells the policy what the tool `tool_name` is, overriding what the tool declares about
    /// itself ([`Tool::traits`](crate::tool::Tool::traits), which the policy uses otherwise).
    /// Rules' [`when_traits`](Rule::when_traits) checks see it.
    pub fn tool_traits(mut self, tool_name: impl Into<String>, traits: ToolTraits) -> Self {
        self.traits.insert(tool_name.into(), traits);
        self
    }

    /// The traits assumed for a tool the policy was told nothing about. By default
    /// [`ToolTraits::default`]: not read-only, possibly destructive, not idempotent — so an
    /// unknown tool never passes as harmless.
    pub fn unknown_traits(mut self, traits: ToolTraits) -> Self {
        self.unknown_traits = traits;
        self
    }

    /// What happens to a call no rule matches. Unset, it is [`RuleOutcome::Ask`] when a
    /// decider is set, else a [`RuleOutcome::Deny`] naming the tool.
    pub fn default_outcome(mut self, outcome: RuleOutcome) -> Self {
        self.default = Some(outcome);
        self
    }

    /// Who answers [`RuleOutcome::Ask`]: a person at a [`TerminalDecider`], a UI behind a
    /// [`ChannelDecider`], an HTTP service through a [`WebhookDecider`], or any
    /// [`ApprovalDecider`].
    pub fn decider(mut self, decider: impl ApprovalDecider) -> Self {
        self.decider = Some(Arc::new(decider));
        self
    }

    /// How long the decider may take before the call is denied ([`DEFAULT_TIMEOUT`] unless
    /// set). The run waits that long at most for each asked call.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    fn default_outcome_now(&self) -> Option<RuleOutcome> {
        match (&self.default, &self.decider) {
            (Some(outcome), _) => Some(outcome.clone()),
            (None, Some(_)) => Some(RuleOutcome::Ask),
            (None, None) => None,
        }
    }

    /// The first matching rule's outcome and the rule, or the default outcome. `args`
    /// reads the call's arguments (`None` when they are not JSON), for the rules that check
    /// them.
    fn evaluate<'v>(
        &self,
        tool_name: &str,
        args: &dyn Fn() -> Option<&'v Value>,
        traits: ToolTraits,
    ) -> (RuleOutcome, Option<&Rule>) {
        match self
            .rules
            .iter()
            .find(|rule| rule.matches(tool_name, args, &traits))
        {
            Some(rule) => (rule.outcome().clone(), Some(rule)),
            None => {
                let outcome = self.default_outcome_now().unwrap_or_else(|| {
                    RuleOutcome::Deny(format!(
                        "`{tool_name}` is not allowed by the approval policy; it was not run"
                    ))
                });
                (outcome, None)
            }
        }
    }

    /// Asks the decider, failing closed on a missing decider, a panic or a timeout.
    async fn ask(&self, ctx: &HookContext, request: ApprovalRequest) -> (Decision, bool) {
        let name = request.tool_name.clone();
        let Some(decider) = &self.decider else {
            return (
                Decision::deny(format!(
                    "`{name}` needs approval but no approver is configured; it was not run"
                )),
                false,
            );
        };
        let asked = call_caught(|| decider.try_decide(&request));
        let (failure, denial) = match tokio::time::timeout(self.timeout, asked).await {
            Ok(Ok(Ok(decision))) => return (decision, true),
            Ok(Ok(Err(failure))) => {
                tracing::warn!(
                    run_id = ctx.run_id(),
                    tool = %name,
                    reason = %failure,
                    "the approval decider gave no decision; the call is denied"
                );
                let denial = Decision::deny(format!("`{name}` was not run: {failure}"));
                (failure, denial)
            }
            Ok(Err(panic)) => {
                tracing::warn!(
                    run_id = ctx.run_id(),
                    tool = %name,
                    message = %panic_message(panic.as_ref()),
                    "the approval decider panicked; the call is denied"
                );
                (
                    DeciderFailure::Panicked,
                    Decision::deny(format!(
                        "`{name}` was not run: the approval failed (the approver panicked)"
                    )),
                )
            }
            Err(_) => {
                tracing::warn!(run_id = ctx.run_id(), tool = %name, "no approval decision in time");
                (
                    DeciderFailure::TimedOut(self.timeout),
                    Decision::deny(format!(
                        "`{name}` was not run: nobody approved it within {}",
                        describe(self.timeout)
                    )),
                )
            }
        };
        // The decider records the policy's denial where it records its own decisions.
        let told = call_caught(|| decider.failed_to_answer(&request, &failure, &denial));
        match tokio::time::timeout(self.timeout, told).await {
            Ok(Ok(())) => {}
            Ok(Err(panic)) => tracing::warn!(
                run_id = ctx.run_id(),
                tool = %name,
                message = %panic_message(panic.as_ref()),
                "the approval decider panicked when told of the policy's denial"
            ),
            Err(_) => tracing::warn!(
                run_id = ctx.run_id(),
                tool = %name,
                "the approval decider was told of the policy's denial and did not return in time"
            ),
        }
        (denial, true)
    }
}

impl AgentHook for ApprovalPolicy {
    fn observes(&self, kind: StepEventKind) -> bool {
        kind == StepEventKind::ToolDispatch
    }

    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        let Some(name) = event.tool_name() else {
            return DispatchAction::proceed();
        };
        // The arguments are read once, from the model's own value (no JSON text written and
        // parsed again), and only if a rule checks them or a person is asked.
        let read = OnceCell::new();
        // What the policy was told about the tool wins over what the tool claims.
        let known = self.traits.get(name).copied().or(event.tool_traits());
        let traits = known.unwrap_or(self.unknown_traits);
        let (outcome, matched) = self.evaluate(name, &|| args_of(&event, &read).as_deref(), traits);
        let rule = matched.map(Rule::description);
        let call_id = event.internal_call_id().unwrap_or_default();
        let (action, asked) = match outcome {
            RuleOutcome::Allow => (DispatchAction::proceed(), false),
            RuleOutcome::Deny(message) => (DispatchAction::deny(message), false),
            RuleOutcome::Suspend(reason) => (DispatchAction::suspend(reason), false),
            RuleOutcome::Ask => {
                let request = ApprovalRequest {
                    run_id: ctx.run_id().to_owned(),
                    turn: ctx.turn(),
                    tool_name: name.to_owned(),
                    tool_call_id: event.tool_call_id().unwrap_or_default().to_owned(),
                    internal_call_id: call_id.to_owned(),
                    // Unreadable arguments reach the person as the text the model sent.
                    args: match args_of(&event, &read) {
                        Some(args) => args.clone().into_owned(),
                        None => Value::String(event.tool_args().unwrap_or_default().to_owned()),
                    },
                    rule: rule.clone(),
                    reason: matched.and_then(Rule::reason).map(str::to_owned),
                    traits: known,
                };
                // Boxed: asking holds the decider's answer and a timer, which would otherwise
                // make every call's future too large to be held without an allocation.
                let (decision, asked) = Box::pin(self.ask(ctx, request)).await;
                let action = match decision {
                    Decision::Approve => DispatchAction::proceed(),
                    // Arguments are a JSON object: the run refuses the model's own calls
                    // whose are not, and a decider's replacement gets no way around that.
                    Decision::ApproveWithArgs(args) if !args.is_object() => {
                        DispatchAction::deny(format!(
                            "the call was not run: the approval's replacement arguments are \
                             not a JSON object ({})",
                            crate::text::json_kind(&args)
                        ))
                    }
                    Decision::ApproveWithArgs(args) => {
                        DispatchAction::rewrite_tool_args(event.kind, args)
                    }
                    Decision::Deny(message) => DispatchAction::deny(message),
                    Decision::Suspend(reason) => DispatchAction::suspend(reason),
                };
                (action, asked)
            }
        };
        let verdict = match &action {
            DispatchAction::RewriteToolArgs(_) => Verdict::AllowWithArgs,
            DispatchAction::Deny(_) => Verdict::Deny,
            DispatchAction::Suspend(_) => Verdict::Suspend,
            _ => Verdict::Allow,
        };
        let record = ApprovalRecord {
            rule,
            asked,
            verdict,
        };
        ctx.scratchpad()
            .update(|records: &mut Records| records.put(call_id, record));
        action
    }
}

/// A tool call's arguments as JSON, read into `read` the first time they are asked for;
/// `None` when they are not JSON.
fn args_of<'r, 'e>(
    event: &DispatchEvent<'e>,
    read: &'r OnceCell<Option<Cow<'e, Value>>>,
) -> &'r Option<Cow<'e, Value>> {
    read.get_or_init(|| event.tool_args_value().and_then(Result::ok))
}

/// Object-safe form of [`ApprovalDecider`], so the policy stores any decider.
trait ErasedDecider: Send + Sync {
    fn try_decide<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> BoxFuture<'a, Result<Decision, DeciderFailure>>;

    fn failed_to_answer<'a>(
        &'a self,
        request: &'a ApprovalRequest,
        failure: &'a DeciderFailure,
        denial: &'a Decision,
    ) -> BoxFuture<'a, ()>;
}

impl<D: ApprovalDecider> ErasedDecider for D {
    fn try_decide<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> BoxFuture<'a, Result<Decision, DeciderFailure>> {
        Box::pin(ApprovalDecider::try_decide(self, request))
    }

    fn failed_to_answer<'a>(
        &'a self,
        request: &'a ApprovalRequest,
        failure: &'a DeciderFailure,
        denial: &'a Decision,
    ) -> BoxFuture<'a, ()> {
        Box::pin(ApprovalDecider::failed_to_answer(
            self, request, failure, denial,
        ))
    }
}
