//! The hook API: [`AgentHook`], its events and actions, [`HookContext`], [`RequestPatch`], the
//! uniform [`StepEvent`] view and the [`HookStack`] that composes hooks.
//!
//! Every hook method has a default that lets the run continue, so a hook implements only the
//! events it cares about. The typed methods' defaults forward to [`AgentHook::on_event`], so a
//! telemetry hook can write `on_event` once and see every event in the uniform view, while a
//! policy hook writes the typed method it needs.

mod actions;
mod args_text;
mod as_hook;
mod compose;
mod context;
mod defaults;
mod erased;
mod events;
mod links;
mod mode;
mod patch;
mod rows;
mod run_calls;
mod scratchpad;
mod stack;
mod step;
mod table;
#[cfg(test)]
mod tests;
mod tool_result;
mod turn_request;

pub use crate::agent::event_kind::{InvalidToolCallReason, StepEventKind};
pub use crate::run::{Entry, EntryError};
pub use actions::{
    CompletionCallAction, DispatchAction, InvalidToolCallAction, ModelSelectionAction,
    ModelTurnAction, ObservationAction, OutcomeAction, RunStartAction, ToolArgs,
};
pub(crate) use args_text::ArgsText;
pub(crate) use compose::Stacked;
pub use context::HookContext;
#[cfg(test)]
pub(crate) use erased::{HOOK_FUTURE_BYTES, called_on_first_poll};
pub use events::{
    CompletionCallEvent, DispatchEvent, DispatchKind, EffectCall, EffectOutput,
    InvalidToolCallContext, ModelSelectEvent, ModelTurnFinished, OutcomeEvent, ReasoningDeltaEvent,
    RunSettledEvent, RunStartEvent, TextDeltaEvent, ToolCallDeltaEvent,
};
pub(crate) use events::{DispatchTarget, ModelIdentity, OutcomeTarget, ToolCallView};
pub(crate) use links::{HookAnswer, ModelOutcome, ToolDispatchDecision};
pub(crate) use mode::HookFailure;
pub use patch::RequestPatch;
pub use scratchpad::Scratchpad;
pub use stack::HookStack;
pub use step::{Flow, StepEvent};
pub(crate) use tool_result::CallParts;
pub use tool_result::ToolResult;
pub(crate) use turn_request::TurnRequest;

use std::future::Future;
use table::via_on_event;

/// Observes and steers a run. Implement the methods of the events you care about, as plain
/// `async fn`s; every other event continues.
///
/// Hooks run in registration order (the agent's, then the run's) and their answers combine as
/// [`HookStack`] documents. A hook must be `Send + Sync`: with `tool_concurrency > 1` its
/// methods run concurrently for the calls of one turn.
///
/// A hook that panics ends the run with
/// [`PromptError::HookPanicked`](crate::agent::PromptError::HookPanicked), naming the event;
/// the panic never unwinds into the caller's task. That holds for a method written as a plain
/// `fn` returning a future too, including the code it runs before it returns the future
/// (a delta method's panic there fails the streamed turn instead). A panic in
/// `on_run_settled` is logged, and the run's answer stands.
///
/// ```
/// use reins::agent::{AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext};
/// use reins::agent::{OutcomeAction, OutcomeEvent};
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::tool_fn;
/// use serde_json::json;
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// /// Refuses `delete` and counts the tool calls that ran.
/// struct NoDeletes {
///     ran: Arc<AtomicUsize>,
/// }
///
/// impl AgentHook for NoDeletes {
///     async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
///         match event.tool_name() {
///             Some("delete") => DispatchAction::deny("deleting is not allowed here"),
///             _ => DispatchAction::proceed(),
///         }
///     }
///     async fn on_outcome(&self, _: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
///         if event.tool_result().is_some() {
///             self.ran.fetch_add(1, Ordering::Relaxed);
///         }
///         OutcomeAction::proceed()
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([
///     Turn::tool_call("delete", json!({"path": "/"})),
///     Turn::text("I may not delete it."),
/// ]);
/// let delete = tool_fn("delete", "Deletes a path.", |_: serde_json::Value| async move {
///     Ok::<_, std::io::Error>("deleted")
/// });
/// let ran = Arc::new(AtomicUsize::new(0));
/// let agent = AgentBuilder::new(model.clone())
///     .tool(delete)
///     .add_hook(NoDeletes { ran: ran.clone() })
///     .build();
/// agent.prompt("Delete everything").await.unwrap();
/// // The model was told why, and the tool never ran.
/// let told = model.requests()[1].history.last().unwrap().text();
/// assert_eq!(told, "deleting is not allowed here");
/// assert_eq!(ran.load(Ordering::Relaxed), 0);
/// # }
/// ```
pub trait AgentHook: Send + Sync + 'static {
    /// Whether this hook wants events of `kind`. Read once, when the hook is registered; a hook
    /// is never called for a kind it does not observe. By default everything is observed
    /// except the dispatches and outcomes of embeddings, reranking, memory, retrieval and
    /// custom effects.
    fn observes(&self, kind: StepEventKind) -> bool {
        kind.observed_by_default()
    }

    /// Every event in the uniform view. The typed methods' defaults call this, and the
    /// `CompletionResponse` and `StreamResponseFinish` events are delivered only here.
    fn on_event(
        &self,
        ctx: &HookContext,
        event: StepEvent<'_>,
    ) -> impl Future<Output = Flow> + Send {
        let _ = ctx;
        // Says it answered, so a stack learns this hook answers the kind with defaults alone.
        let kind = event.kind();
        async move {
            defaults::answered(defaults::type_id::<Self>(), kind, defaults::Row::OnEvent);
            Flow::Continue
        }
    }

    /// Once, before the first model call: continue, rewrite the prompt, or stop.
    fn on_run_start(
        &self,
        ctx: &HookContext,
        event: RunStartEvent<'_>,
    ) -> impl Future<Output = RunStartAction> + Send {
        via_on_event::<table::on_run_start, _>(self, ctx, event)
    }

    /// Before each model request: continue, patch this turn's request, or stop.
    fn on_completion_call(
        &self,
        ctx: &HookContext,
        event: CompletionCallEvent<'_>,
    ) -> impl Future<Output = CompletionCallAction> + Send {
        via_on_event::<table::on_completion_call, _>(self, ctx, event)
    }

    /// After the completion-call hooks, before each model request (synchronous: decide from
    /// the event, the context and the scratchpad, without I/O): keep, select another
    /// registered model, or stop.
    fn on_model_select(
        &self,
        ctx: &HookContext,
        event: ModelSelectEvent<'_>,
    ) -> ModelSelectionAction {
        let _ = (ctx, event);
        let hook = defaults::type_id::<Self>();
        defaults::answered(hook, StepEventKind::ModelSelect, defaults::Row::Typed);
        ModelSelectionAction::Continue
    }

    /// After each model turn is received, before tools run or the run finishes: continue,
    /// repeat, retry with feedback, or stop.
    fn on_model_turn_finished(
        &self,
        ctx: &HookContext,
        event: ModelTurnFinished<'_>,
    ) -> impl Future<Output = ModelTurnAction> + Send {
        via_on_event::<table::on_model_turn_finished, _>(self, ctx, event)
    }

    /// The model called an unknown or disallowed tool, or sent arguments that are not a JSON
    /// object: `None` defers to the next hook, or an action decides.
    fn on_invalid_tool_call(
        &self,
        ctx: &HookContext,
        event: &InvalidToolCallContext,
    ) -> impl Future<Output = Option<InvalidToolCallAction>> + Send {
        via_on_event::<table::on_invalid_tool_call, _>(self, ctx, event)
    }

    /// Before a model call or tool call is executed: proceed, skip or deny a tool call,
    /// rewrite its arguments, patch a model request, or stop.
    fn on_dispatch(
        &self,
        ctx: &HookContext,
        event: DispatchEvent<'_>,
    ) -> impl Future<Output = DispatchAction> + Send {
        via_on_event::<table::on_dispatch, _>(self, ctx, event)
    }

    /// After a model call or tool call returns: proceed, rewrite the tool result the model
    /// sees, replace a model response, or stop.
    fn on_outcome(
        &self,
        ctx: &HookContext,
        event: OutcomeEvent<'_>,
    ) -> impl Future<Output = OutcomeAction> + Send {
        via_on_event::<table::on_outcome, _>(self, ctx, event)
    }

    /// Streaming only: each text fragment, as a run started with
    /// [`PromptRequest::stream`](crate::agent::PromptRequest::stream) receives it. An awaited
    /// run asks the model for its whole answer at once and never calls this (nor the other
    /// delta methods): to show an answer as it is written, stream the run and drain the
    /// stream, even when a hook does the showing
    /// ([`PromptStream::finish`](crate::agent::PromptStream::finish) drains it and returns
    /// the response). [`ObservationAction::stop`] ends the run
    /// there, the stream's last item being the error.
    ///
    /// ```
    /// use futures::StreamExt;
    /// use reins::agent::{
    ///     AgentBuilder, AgentHook, HookContext, ObservationAction, PromptError, TextDeltaEvent,
    /// };
    /// use reins::testing::{ScriptedModel, Turn};
    /// use std::sync::{Arc, Mutex};
    ///
    /// /// Shows the answer as it is written; stops it past `max_chars`.
    /// struct Live {
    ///     shown: Arc<Mutex<String>>,
    ///     max_chars: usize,
    /// }
    ///
    /// impl AgentHook for Live {
    ///     async fn on_text_delta(
    ///         &self,
    ///         _ctx: &HookContext,
    ///         event: TextDeltaEvent<'_>,
    ///     ) -> ObservationAction {
    ///         self.shown.lock().unwrap().push_str(event.delta); // print!("{}", event.delta)
    ///         if event.aggregated.chars().count() > self.max_chars {
    ///             return ObservationAction::stop("the answer ran too long");
    ///         }
    ///         ObservationAction::continue_run()
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let story = "Once upon a time there was a story that went on and on.";
    /// let shown = Arc::new(Mutex::new(String::new()));
    /// let agent = AgentBuilder::new(ScriptedModel::new([Turn::text(story), Turn::text(story)]))
    ///     .add_hook(Live { shown: shown.clone(), max_chars: 20 })
    ///     .build();
    ///
    /// // Awaited: the whole answer, and no delta for the hook.
    /// assert_eq!(agent.prompt("A story?").await.unwrap(), story);
    /// assert_eq!(*shown.lock().unwrap(), "");
    ///
    /// // Streamed: the hook sees the answer word by word and stops it.
    /// let mut stream = agent.prompt("A story?").stream();
    /// let mut last = None;
    /// while let Some(item) = stream.next().await {
    ///     last = Some(item);
    /// }
    /// let Some(Err(error @ PromptError::Cancelled { .. })) = last else { panic!("{last:?}") };
    /// assert!(error.to_string().contains("the answer ran too long"), "{error}");
    /// assert_eq!(*shown.lock().unwrap(), "Once upon a time there ");
    /// # }
    /// ```
    fn on_text_delta(
        &self,
        ctx: &HookContext,
        event: TextDeltaEvent<'_>,
    ) -> impl Future<Output = ObservationAction> + Send {
        via_on_event::<table::on_text_delta, _>(self, ctx, event)
    }

    /// Streaming only: each reasoning fragment.
    fn on_reasoning_delta(
        &self,
        ctx: &HookContext,
        event: ReasoningDeltaEvent<'_>,
    ) -> impl Future<Output = ObservationAction> + Send {
        via_on_event::<table::on_reasoning_delta, _>(self, ctx, event)
    }

    /// Streaming only: each tool-call argument fragment.
    fn on_tool_call_delta(
        &self,
        ctx: &HookContext,
        event: ToolCallDeltaEvent<'_>,
    ) -> impl Future<Output = ObservationAction> + Send {
        via_on_event::<table::on_tool_call_delta, _>(self, ctx, event)
    }

    /// Once, when the run ends with a response or an error. Observe only. Not called for a
    /// run whose future is dropped before it ends (a timeout, a `select!`, an aborted task):
    /// nothing of the run is polled any more.
    fn on_run_settled(
        &self,
        ctx: &HookContext,
        event: RunSettledEvent<'_>,
    ) -> impl Future<Output = ()> + Send {
        via_on_event::<table::on_run_settled, _>(self, ctx, event)
    }
}
