//! What `on_dispatch` and `on_outcome` answer about an effect (a model call, a tool call,
//! …): [`DispatchAction`], with the [`ToolArgs`] it may run a tool with, and [`OutcomeAction`].

use super::super::events::{DispatchKind, OutcomeEvent};
use super::super::patch::RequestPatch;
use crate::agent::StopReason;
use crate::completion::{CompletionError, CompletionResponse};
use crate::tool::ToolOutput;
use serde_json::Value;

/// Replacement tool arguments: a JSON value, or JSON text.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolArgs(pub(crate) Value);

impl From<Value> for ToolArgs {
    fn from(value: Value) -> Self {
        ToolArgs(value)
    }
}

impl From<&str> for ToolArgs {
    /// Parses JSON text; text that is not JSON is kept as a string, which the tool then
    /// rejects as invalid arguments.
    fn from(text: &str) -> Self {
        ToolArgs(crate::completion::parse_arguments(text))
    }
}

impl From<String> for ToolArgs {
    fn from(text: String) -> Self {
        ToolArgs::from(text.as_str())
    }
}

impl From<&String> for ToolArgs {
    fn from(text: &String) -> Self {
        ToolArgs::from(text.as_str())
    }
}

/// The answer to `on_dispatch`: run the effect, change it, refuse it, pause the run for a
/// person, or end the run.
///
/// ```
/// use reins::agent::{AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext};
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// /// Clamps every `send` to 100 and refuses `delete` outright.
/// struct Guard;
///
/// impl AgentHook for Guard {
///     async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
///         match event.tool_name() {
///             Some("delete") => DispatchAction::deny("deleting is not allowed"),
///             Some("send") => match event.tool_args_as::<serde_json::Value>() {
///                 Some(Ok(args)) if args["amount"].as_u64() > Some(100) => {
///                     DispatchAction::rewrite_tool_args(event.kind, json!({"amount": 100}))
///                 }
///                 _ => DispatchAction::proceed(),
///             },
///             _ => DispatchAction::proceed(),
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([
///     Turn::tool_calls([("send", json!({"amount": 900})), ("delete", json!({}))]),
///     Turn::text("Sent what I could."),
/// ]);
/// let send = reins::tool::tool_fn("send", "Sends money.", |args: serde_json::Value| async move {
///     Ok::<_, std::convert::Infallible>(format!("sent {}", args["amount"]))
/// });
/// let delete = reins::tool::tool_fn("delete", "Deletes.", |_: serde_json::Value| async move {
///     Ok::<_, std::convert::Infallible>("deleted")
/// });
/// let agent = AgentBuilder::new(model).tool(send).tool(delete).add_hook(Guard).build();
/// let run = agent.prompt("Send 900, then delete.").extended_details().await.unwrap();
/// let results: Vec<_> = run.tool_results().map(|r| r.content.as_str()).collect();
/// assert_eq!(results.len(), 2);
/// assert_eq!(results[0], "sent 100");
/// assert!(results[1].contains("deleting is not allowed"), "{}", results[1]);
/// # }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum DispatchAction {
    /// Execute the effect.
    Proceed,
    /// Don't run the tool; the model receives the reason as its result.
    Skip(String),
    /// Refuse the tool call; the model receives the report as its result, and the outcome is
    /// recorded as denied.
    Deny(String),
    /// End the run.
    Stop(StopReason),
    /// Don't run the tool now: the run ends with
    /// [`PromptError::Suspended`](crate::agent::PromptError::Suspended), holding this call as
    /// pending, to be approved, edited or denied when the run is resumed.
    Suspend(String),
    /// Run the tool with these arguments instead; later hooks see them. (Boxed, like the
    /// patch and the response: a JSON value's tag byte would become the action's own, and
    /// every answer would be copied byte-wise through the stack.)
    RewriteToolArgs(Box<Value>),
    /// Change the model request about to be sent (model calls only). (Boxed: a patch is
    /// large, and every hook's answer is moved through the stack.)
    Patch(Box<RequestPatch>),
    /// Serve this model call with a response instead of calling the model (model calls only;
    /// a tool call proceeds). The outcome hooks then see it as the model's response.
    Respond(Box<CompletionResponse>),
    /// Answer this model call with a failure instead of calling the model (model calls only;
    /// a tool call proceeds). The outcome hooks then see it as the model's failure.
    Fail(Box<CompletionError>),
}

impl DispatchAction {
    /// Execute the effect.
    pub fn proceed() -> Self {
        DispatchAction::Proceed
    }
    /// Don't run the tool; the model receives `reason` as the tool result and can adapt.
    pub fn skip(reason: impl Into<String>) -> Self {
        DispatchAction::Skip(reason.into())
    }
    /// Refuse the tool call with `report`, which the model receives as the tool result.
    pub fn deny(report: impl Into<String>) -> Self {
        DispatchAction::Deny(report.into())
    }
    /// End the run.
    /// `reason` is text, or [`StopReason::because`] a typed value the caller reads back
    /// with [`PromptError::stopped_by`](crate::agent::PromptError::stopped_by).
    pub fn stop(reason: impl Into<StopReason>) -> Self {
        DispatchAction::Stop(reason.into())
    }
    /// Pause the run until a person (or another process) decides about this tool call: the
    /// run ends with a [`SuspendedRun`](crate::agent::SuspendedRun) that can be persisted and
    /// resumed hours later with [`Agent::resume`](crate::agent::Agent::resume). For a model
    /// call, it ends the run like [`stop`](Self::stop).
    pub fn suspend(reason: impl Into<String>) -> Self {
        DispatchAction::Suspend(reason.into())
    }
    /// Run the tool with replacement arguments. `kind` is the event's
    /// [`kind`](crate::agent::DispatchEvent::kind); for a dispatch that is not a tool call the
    /// action is [`proceed`](Self::proceed).
    pub fn rewrite_tool_args(kind: DispatchKind, args: impl Into<ToolArgs>) -> Self {
        match kind {
            DispatchKind::Tool => DispatchAction::RewriteToolArgs(Box::new(args.into().0)),
            _ => DispatchAction::Proceed,
        }
    }
    /// Change the model request about to be sent (ignored for other dispatches).
    pub fn patch(patch: RequestPatch) -> Self {
        DispatchAction::Patch(Box::new(patch))
    }
    /// Answer this model call with `response` without calling the model — a cache hit, a
    /// recorded run replayed, a canned answer in a test. The outcome hooks see the response as
    /// the model's. For a tool call the action is [`proceed`](Self::proceed).
    ///
    /// ```
    /// use reins::agent::{AgentHook, DispatchAction, DispatchEvent, HookContext};
    /// use reins::completion::CompletionResponse;
    /// use reins::message::{AssistantContent, OneOrMany};
    ///
    /// /// Answers every model call itself: the model is never called.
    /// struct Canned;
    ///
    /// impl AgentHook for Canned {
    ///     async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
    ///         match event.request() {
    ///             Some(_) => DispatchAction::respond(CompletionResponse::new(OneOrMany::one(
    ///                 AssistantContent::text("served from the cache"),
    ///             ))),
    ///             None => DispatchAction::proceed(),
    ///         }
    ///     }
    /// }
    /// ```
    pub fn respond(response: CompletionResponse) -> Self {
        DispatchAction::Respond(Box::new(response))
    }
    /// Answer this model call with `error` without calling the model — a recorded run
    /// replayed with its failed calls, a test of how a run copes with a failing provider.
    /// The outcome hooks see it as the model's failure
    /// ([`OutcomeEvent::completion_error`](crate::agent::OutcomeEvent::completion_error)), so
    /// a fallback may serve the turn from another model; otherwise the run fails with it.
    /// Like [`respond`](Self::respond), the first hook that answers the call wins. For a tool
    /// call the action is [`proceed`](Self::proceed).
    ///
    /// ```
    /// use reins::agent::{AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext};
    /// use reins::completion::CompletionError;
    /// use reins::hooks::fallback::ModelFallback;
    /// use reins::testing::{ScriptedModel, Turn};
    ///
    /// /// Plays the default model's outage: its calls fail without reaching it.
    /// struct Outage;
    ///
    /// impl AgentHook for Outage {
    ///     async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
    ///         match event.model() {
    ///             Some("default") => DispatchAction::fail(CompletionError::Http {
    ///                 status: 503,
    ///                 body: "overloaded".into(),
    ///             }),
    ///             _ => DispatchAction::proceed(),
    ///         }
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let primary = ScriptedModel::new([Turn::text("never sent")]);
    /// let backup = ScriptedModel::new([Turn::text("the backup answered")]);
    /// let agent = AgentBuilder::new(primary.clone())
    ///     .named_model("backup", backup)
    ///     .add_hook(Outage)
    ///     .add_hook(ModelFallback::new(["default", "backup"]))
    ///     .build();
    /// assert_eq!(agent.prompt("hi").await.unwrap(), "the backup answered");
    /// assert!(primary.requests().is_empty());
    /// # }
    /// ```
    pub fn fail(error: CompletionError) -> Self {
        DispatchAction::Fail(Box::new(error))
    }
}

/// Equal actions do the same thing: a [`Respond`](DispatchAction::Respond) compares the
/// responses' content, usage, finish reason and id, not the provider's raw response.
impl PartialEq for DispatchAction {
    fn eq(&self, other: &Self) -> bool {
        use DispatchAction::*;
        match (self, other) {
            (Proceed, Proceed) => true,
            (Skip(a), Skip(b)) | (Deny(a), Deny(b)) | (Suspend(a), Suspend(b)) => a == b,
            (Stop(a), Stop(b)) => a == b,
            (RewriteToolArgs(a), RewriteToolArgs(b)) => a == b,
            (Patch(a), Patch(b)) => a == b,
            (Respond(a), Respond(b)) => {
                a.content == b.content
                    && a.usage == b.usage
                    && a.finish_reason == b.finish_reason
                    && a.response_id == b.response_id
            }
            (Fail(a), Fail(b)) => a == b,
            _ => false,
        }
    }
}

/// The answer to `on_outcome`: keep what came back, change what the model sees of it, serve
/// or retry a model call, or end the run.
///
/// ```
/// use reins::agent::{AgentBuilder, AgentHook, HookContext, OutcomeAction, OutcomeEvent};
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// /// Keeps tool results short: the model sees at most 20 characters of each.
/// struct Truncate;
///
/// impl AgentHook for Truncate {
///     async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
///         match event.tool_result() {
///             Some(result) if result.output_text().chars().count() > 20 => {
///                 let short: String = result.output_text().chars().take(20).collect();
///                 OutcomeAction::rewrite_tool_result(&event, format!("{short}…"))
///             }
///             _ => OutcomeAction::proceed(),
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([Turn::tool_call("read", json!({})), Turn::text("Read it.")]);
/// let read = reins::tool::tool_fn("read", "Reads a file.", |_: serde_json::Value| async move {
///     Ok::<_, std::convert::Infallible>("a".repeat(1_000))
/// });
/// let agent = AgentBuilder::new(model).tool(read).add_hook(Truncate).build();
/// let run = agent.prompt("Read the file.").extended_details().await.unwrap();
/// let seen: Vec<_> = run.tool_results().map(|r| r.content.clone()).collect();
/// assert_eq!(seen, [format!("{}…", "a".repeat(20))]);
/// # }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum OutcomeAction {
    /// Keep the outcome.
    Proceed,
    /// Replace the text the model sees for this tool result; later hooks see it.
    RewriteToolResult(String),
    /// Replace the output the model sees for this tool result; later hooks see it. (Boxed,
    /// as [`DispatchAction::RewriteToolArgs`] is.)
    RewriteToolOutput(Box<ToolOutput>),
    /// Mask what the tool result says, keeping what it is (see
    /// [`mask_tool_result`](Self::mask_tool_result)); later hooks see both masks.
    MaskToolResult {
        /// Replaces the output the model sees, as
        /// [`RewriteToolOutput`](Self::RewriteToolOutput) does; `None` keeps it.
        output: Option<Box<ToolOutput>>,
        /// Replaces the outcome's own text ([`ToolOutcome::text`](crate::tool::ToolOutcome::text)); `None` keeps it.
        outcome_text: Option<Box<str>>,
    },
    /// Replace the model's response (model calls only); for a failed model call, serve the
    /// turn with this response instead of failing.
    Replace(Box<CompletionResponse>),
    /// Call the model again for this turn, on the model registered under this label (model
    /// calls only, failed or not). See [`OutcomeAction::retry_on`].
    RetryOn(String),
    /// End the run.
    Stop(StopReason),
}

impl OutcomeAction {
    /// Keep the outcome.
    pub fn proceed() -> Self {
        OutcomeAction::Proceed
    }
    /// Replace the text the model sees for the tool result of `event`. For an event that is
    /// not a tool result the action is [`proceed`](Self::proceed).
    pub fn rewrite_tool_result(event: &OutcomeEvent<'_>, text: impl Into<String>) -> Self {
        match event.kind {
            DispatchKind::Tool => OutcomeAction::RewriteToolResult(text.into()),
            _ => OutcomeAction::Proceed,
        }
    }
    /// Replace the output the model sees for the tool result of `event`. For an event that
    /// is not a tool result the action is [`proceed`](Self::proceed).
    pub fn rewrite_tool_output(event: &OutcomeEvent<'_>, output: impl Into<ToolOutput>) -> Self {
        match event.kind {
            DispatchKind::Tool => OutcomeAction::RewriteToolOutput(Box::new(output.into())),
            _ => OutcomeAction::Proceed,
        }
    }
    /// Mask what the tool result of `event` says, keeping what it is: `text` (when given)
    /// replaces the text the model sees, as [`rewrite_tool_result`](Self::rewrite_tool_result)
    /// does, and `outcome_text` (when given) replaces the outcome's own text
    /// ([`ToolOutcome::text`](crate::tool::ToolOutcome::text): a failed call's error message, a skip's reason, a denial's
    /// report), its status and failure kind kept (an outcome without text is kept whole).
    /// Unlike a rewrite, which changes only what the model is shown, the masked outcome is the
    /// one the run keeps: hooks after this one read it
    /// ([`ToolResult::outcome`](crate::agent::ToolResult::outcome)), a stream yields it, a
    /// durable run stores it and a tool error that fails the run carries it. How the
    /// [`Redaction`](crate::hooks::redaction::Redaction) hook masks a secret a failing tool
    /// quotes. For an event that is not a tool result the action is
    /// [`proceed`](Self::proceed).
    ///
    /// ```
    /// use reins::agent::{AgentHook, HookContext, OutcomeAction, OutcomeEvent};
    ///
    /// /// Masks an internal host name wherever a tool result says it.
    /// struct HideHost;
    ///
    /// impl AgentHook for HideHost {
    ///     async fn on_outcome(&self, _: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
    ///         let Some(result) = event.tool_result() else {
    ///             return OutcomeAction::proceed();
    ///         };
    ///         let hide = |text: &str| {
    ///             text.contains("db.internal")
    ///                 .then(|| text.replace("db.internal", "[host]"))
    ///         };
    ///         let outcome_text = result.outcome().text().and_then(hide);
    ///         OutcomeAction::mask_tool_result(&event, hide(result.output_text()), outcome_text)
    ///     }
    /// }
    /// ```
    pub fn mask_tool_result(
        event: &OutcomeEvent<'_>,
        text: Option<String>,
        outcome_text: Option<String>,
    ) -> Self {
        if event.kind != DispatchKind::Tool || (text.is_none() && outcome_text.is_none()) {
            return OutcomeAction::Proceed;
        }
        OutcomeAction::MaskToolResult {
            output: text.map(|text| Box::new(ToolOutput::Text(text))),
            outcome_text: outcome_text.map(String::into_boxed_str),
        }
    }
    /// Replace the model's response with `response` (ignored for tool calls). A response the
    /// model gave keeps its usage (the call was made and paid: the run's usage, later hooks and
    /// the trace count it, whatever `response` says); a failed call's turn served with
    /// `response` counts `response`'s.
    pub fn replace(response: CompletionResponse) -> Self {
        OutcomeAction::Replace(Box::new(response))
    }
    /// Call the model again for this turn on the model registered under `label` (the same
    /// label retries the same model): how a hook falls back after a failed call
    /// ([`OutcomeEvent::completion_error`](crate::agent::OutcomeEvent::completion_error)) or a
    /// response it cannot use. The new call is dispatched and its outcome observed like any
    /// other model call; a turn makes at most
    /// [`MAX_MODEL_CALLS_PER_TURN`](crate::agent::MAX_MODEL_CALLS_PER_TURN) calls. For a tool
    /// call the action is [`proceed`](Self::proceed).
    ///
    /// ```
    /// use reins::agent::{AgentHook, HookContext, OutcomeAction, OutcomeEvent};
    ///
    /// /// Sends a turn the primary model failed to the backup model.
    /// struct ToBackup;
    ///
    /// impl AgentHook for ToBackup {
    ///     async fn on_outcome(&self, _: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
    ///         match (event.completion_error(), event.model()) {
    ///             (Some(_), Some("primary")) => OutcomeAction::retry_on("backup"),
    ///             _ => OutcomeAction::proceed(),
    ///         }
    ///     }
    /// }
    /// ```
    pub fn retry_on(label: impl Into<String>) -> Self {
        OutcomeAction::RetryOn(label.into())
    }
    /// End the run.
    /// `reason` is text, or [`StopReason::because`] a typed value the caller reads back
    /// with [`PromptError::stopped_by`](crate::agent::PromptError::stopped_by).
    pub fn stop(reason: impl Into<StopReason>) -> Self {
        OutcomeAction::Stop(reason.into())
    }
}
