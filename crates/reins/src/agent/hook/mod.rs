//! The hook API: [`AgentHook`], its events and actions, [`HookContext`], [`RequestPatch`], the
//! uniform [`StepEvent`] view and the [`HookStack`] that composes hooks.
//!
//! Every hook method has a default that lets the run continue, so a hook implements only the
//! events it cares about. The typed methods' defaults forward to [`AgentHook::on_event`], so a
//! telemetry hook can write `on_event` once and see every event in the uniform view, while a
//! policy hook writes the typed method it needs.

mod actions;
mod context;
mod events;
mod patch;
mod stack;
mod step;

pub use actions::{
    CompletionCallAction, DispatchAction, InvalidToolCallAction, ModelSelectionAction,
    ModelTurnAction, ObservationAction, OutcomeAction, RunStartAction, ToolArgs,
};
pub use context::{Entry, EntryError, HookContext, Scratchpad};
pub use events::{
    CompletionCallEvent, DispatchEvent, DispatchKind, InvalidToolCallContext,
    InvalidToolCallReason, ModelSelectEvent, ModelTurnFinished, OutcomeEvent, ReasoningDeltaEvent,
    RunSettledEvent, RunStartEvent, TextDeltaEvent, ToolCallDeltaEvent, ToolResult,
};
pub(crate) use events::{DispatchTarget, OutcomeTarget, ToolCallView};
pub use patch::RequestPatch;
pub use stack::HookStack;
pub(crate) use stack::{HookFailure, Stacked, ToolDispatchDecision};
pub use step::{Flow, StepEvent, StepEventKind};

use std::future::Future;

/// Observes and steers a run. Implement the methods of the events you care about, as plain
/// `async fn`s; every other event continues.
///
/// Hooks run in registration order (the agent's, then the run's) and their answers combine as
/// [`HookStack`] documents. A hook must be `Send + Sync`: with `tool_concurrency > 1` its
/// methods run concurrently for the calls of one turn.
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
        let _ = (ctx, event);
        async { Flow::Continue }
    }

    /// Once, before the first model call: continue, rewrite the prompt, or stop.
    fn on_run_start(
        &self,
        ctx: &HookContext,
        event: RunStartEvent<'_>,
    ) -> impl Future<Output = RunStartAction> + Send {
        async move {
            let step = StepEvent::RunStart {
                prompt: event.prompt,
                history: event.history,
            };
            match self.on_event(ctx, step).await {
                Flow::Terminate(reason) => RunStartAction::Stop(reason),
                _ => RunStartAction::Continue,
            }
        }
    }

    /// Before each model request: continue, patch this turn's request, or stop.
    fn on_completion_call(
        &self,
        ctx: &HookContext,
        event: CompletionCallEvent<'_>,
    ) -> impl Future<Output = CompletionCallAction> + Send {
        async move {
            let step = StepEvent::CompletionCall {
                prompt: event.prompt,
                history: event.history,
                turn: event.turn,
            };
            match self.on_event(ctx, step).await {
                Flow::Terminate(reason) => CompletionCallAction::Stop(reason),
                Flow::PatchRequest(patch) => CompletionCallAction::Patch(patch),
                _ => CompletionCallAction::Continue,
            }
        }
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
        ModelSelectionAction::Continue
    }

    /// After each model turn is received, before tools run or the run finishes: continue,
    /// repeat, retry with feedback, or stop.
    fn on_model_turn_finished(
        &self,
        ctx: &HookContext,
        event: ModelTurnFinished<'_>,
    ) -> impl Future<Output = ModelTurnAction> + Send {
        async move {
            let step = StepEvent::ModelTurnFinished {
                turn: event.turn,
                content: event.content,
                usage: event.usage,
            };
            match self.on_event(ctx, step).await {
                Flow::Terminate(reason) => ModelTurnAction::Stop(reason),
                _ => ModelTurnAction::Continue,
            }
        }
    }

    /// The model called an unknown or disallowed tool, or sent arguments that are not a JSON
    /// object: `None` defers to the next hook, or an action decides.
    fn on_invalid_tool_call(
        &self,
        ctx: &HookContext,
        event: &InvalidToolCallContext,
    ) -> impl Future<Output = Option<InvalidToolCallAction>> + Send {
        async move {
            match self.on_event(ctx, StepEvent::InvalidToolCall(event)).await {
                Flow::Fail => Some(InvalidToolCallAction::Fail),
                Flow::Retry(feedback) => Some(InvalidToolCallAction::Retry(feedback)),
                Flow::Repair(name) => Some(InvalidToolCallAction::Repair(name)),
                Flow::Skip(reason) => Some(InvalidToolCallAction::Skip(reason)),
                Flow::Terminate(reason) => Some(InvalidToolCallAction::Stop(reason)),
                _ => None,
            }
        }
    }

    /// Before a model call or tool call is executed: proceed, skip or deny a tool call,
    /// rewrite its arguments, patch a model request, or stop.
    fn on_dispatch(
        &self,
        ctx: &HookContext,
        event: DispatchEvent<'_>,
    ) -> impl Future<Output = DispatchAction> + Send {
        async move {
            let step = match event.target {
                DispatchTarget::Completion {
                    turn,
                    model,
                    request,
                } => StepEvent::CompletionDispatch {
                    turn,
                    model,
                    request,
                },
                DispatchTarget::Tool(call) => StepEvent::ToolCall {
                    tool_name: call.name,
                    tool_call_id: Some(call.tool_call_id),
                    internal_call_id: call.internal_call_id,
                    args: call.args,
                },
                DispatchTarget::Effect { name, payload } => StepEvent::EffectDispatch {
                    kind: event.kind,
                    name,
                    payload,
                },
            };
            match self.on_event(ctx, step).await {
                Flow::Terminate(reason) => DispatchAction::Stop(reason),
                Flow::Skip(reason) => DispatchAction::Skip(reason),
                Flow::RewriteArgs(args) => DispatchAction::rewrite_tool_args(event.kind, args),
                Flow::PatchRequest(patch) if event.kind == DispatchKind::Completion => {
                    DispatchAction::Patch(patch)
                }
                _ => DispatchAction::Proceed,
            }
        }
    }

    /// After a model call or tool call returns: proceed, rewrite the tool result the model
    /// sees, replace a model response, or stop.
    fn on_outcome(
        &self,
        ctx: &HookContext,
        event: OutcomeEvent<'_>,
    ) -> impl Future<Output = OutcomeAction> + Send {
        async move {
            let rendered = match event.target {
                OutcomeTarget::Tool(result) => result.output.render(),
                _ => String::new(),
            };
            let step = match event.target {
                // A model call's outcome is seen in the step view as `CompletionResponse` /
                // `StreamResponseFinish`, which the run delivers to `on_event` itself.
                OutcomeTarget::Completion(_) => return OutcomeAction::Proceed,
                OutcomeTarget::Tool(result) => StepEvent::ToolResult {
                    tool_name: &result.tool_name,
                    tool_call_id: Some(&result.tool_call_id),
                    internal_call_id: &result.internal_call_id,
                    args: &result.args,
                    result: &rendered,
                    outcome: &result.outcome,
                    extensions: &result.extensions,
                },
                OutcomeTarget::Effect { name, output } => StepEvent::EffectOutcome {
                    kind: event.kind,
                    name,
                    output,
                },
            };
            match self.on_event(ctx, step).await {
                Flow::Terminate(reason) => OutcomeAction::Stop(reason),
                Flow::RewriteResult(text) => OutcomeAction::rewrite_tool_result(&event, text),
                _ => OutcomeAction::Proceed,
            }
        }
    }

    /// Streaming only: each text fragment.
    fn on_text_delta(
        &self,
        ctx: &HookContext,
        event: TextDeltaEvent<'_>,
    ) -> impl Future<Output = ObservationAction> + Send {
        async move {
            let step = StepEvent::TextDelta {
                delta: event.delta,
                aggregated: event.aggregated,
            };
            observation(self.on_event(ctx, step).await)
        }
    }

    /// Streaming only: each reasoning fragment.
    fn on_reasoning_delta(
        &self,
        ctx: &HookContext,
        event: ReasoningDeltaEvent<'_>,
    ) -> impl Future<Output = ObservationAction> + Send {
        async move {
            let step = StepEvent::ReasoningDelta {
                delta: event.delta,
                aggregated: event.aggregated,
            };
            observation(self.on_event(ctx, step).await)
        }
    }

    /// Streaming only: each tool-call argument fragment.
    fn on_tool_call_delta(
        &self,
        ctx: &HookContext,
        event: ToolCallDeltaEvent<'_>,
    ) -> impl Future<Output = ObservationAction> + Send {
        async move {
            let step = StepEvent::ToolCallDelta {
                tool_call_id: event.tool_call_id,
                internal_call_id: event.internal_call_id,
                tool_name: event.tool_name,
                delta: event.delta,
            };
            observation(self.on_event(ctx, step).await)
        }
    }

    /// Once, when the run ends with a response or an error. Observe only.
    fn on_run_settled(
        &self,
        ctx: &HookContext,
        event: RunSettledEvent<'_>,
    ) -> impl Future<Output = ()> + Send {
        async move {
            self.on_event(ctx, StepEvent::RunSettled(event)).await;
        }
    }
}

fn observation(flow: Flow) -> ObservationAction {
    match flow {
        Flow::Terminate(reason) => ObservationAction::Stop(reason),
        _ => ObservationAction::Continue,
    }
}
