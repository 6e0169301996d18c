//! [`HookStack`]: the one place where several hooks' answers are combined.

use super::events::{
    CompletionCallEvent, DispatchEvent, DispatchKind, DispatchTarget, InvalidToolCallContext,
    ModelSelectEvent, ModelTurnFinished, OutcomeEvent, OutcomeTarget, ReasoningDeltaEvent,
    RunSettledEvent, RunStartEvent, TextDeltaEvent, ToolCallDeltaEvent, ToolCallView, ToolResult,
};
use super::step::{Flow, StepEvent, StepEventKind};
use super::{
    AgentHook, CompletionCallAction, DispatchAction, HookContext, InvalidToolCallAction,
    ModelSelectionAction, ModelTurnAction, ObservationAction, OutcomeAction, RequestPatch,
    RunStartAction,
};
use crate::completion::{CompletionRequest, CompletionResponse};
use crate::message::Message;
use crate::tool::{ToolOutput, panic_message};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// Object-safe form of [`AgentHook`], so hooks of any type are stored together.
trait ErasedHook: Send + Sync {
    fn observes(&self, kind: StepEventKind) -> bool;
    fn on_event<'a>(&'a self, ctx: &'a HookContext, event: StepEvent<'a>) -> BoxFuture<'a, Flow>;
    fn on_run_start<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: RunStartEvent<'a>,
    ) -> BoxFuture<'a, RunStartAction>;
    fn on_completion_call<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: CompletionCallEvent<'a>,
    ) -> BoxFuture<'a, CompletionCallAction>;
    fn on_model_select(
        &self,
        ctx: &HookContext,
        event: ModelSelectEvent<'_>,
    ) -> ModelSelectionAction;
    fn on_model_turn_finished<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: ModelTurnFinished<'a>,
    ) -> BoxFuture<'a, ModelTurnAction>;
    fn on_invalid_tool_call<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: &'a InvalidToolCallContext,
    ) -> BoxFuture<'a, Option<InvalidToolCallAction>>;
    fn on_dispatch<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: DispatchEvent<'a>,
    ) -> BoxFuture<'a, DispatchAction>;
    fn on_outcome<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: OutcomeEvent<'a>,
    ) -> BoxFuture<'a, OutcomeAction>;
    fn on_text_delta<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: TextDeltaEvent<'a>,
    ) -> BoxFuture<'a, ObservationAction>;
    fn on_reasoning_delta<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: ReasoningDeltaEvent<'a>,
    ) -> BoxFuture<'a, ObservationAction>;
    fn on_tool_call_delta<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: ToolCallDeltaEvent<'a>,
    ) -> BoxFuture<'a, ObservationAction>;
    fn on_run_settled<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: RunSettledEvent<'a>,
    ) -> BoxFuture<'a, ()>;
}

impl<H: AgentHook> ErasedHook for H {
    fn observes(&self, kind: StepEventKind) -> bool {
        AgentHook::observes(self, kind)
    }
    fn on_event<'a>(&'a self, ctx: &'a HookContext, event: StepEvent<'a>) -> BoxFuture<'a, Flow> {
        Box::pin(AgentHook::on_event(self, ctx, event))
    }
    fn on_run_start<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: RunStartEvent<'a>,
    ) -> BoxFuture<'a, RunStartAction> {
        Box::pin(AgentHook::on_run_start(self, ctx, event))
    }
    fn on_completion_call<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: CompletionCallEvent<'a>,
    ) -> BoxFuture<'a, CompletionCallAction> {
        Box::pin(AgentHook::on_completion_call(self, ctx, event))
    }
    fn on_model_select(
        &self,
        ctx: &HookContext,
        event: ModelSelectEvent<'_>,
    ) -> ModelSelectionAction {
        AgentHook::on_model_select(self, ctx, event)
    }
    fn on_model_turn_finished<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: ModelTurnFinished<'a>,
    ) -> BoxFuture<'a, ModelTurnAction> {
        Box::pin(AgentHook::on_model_turn_finished(self, ctx, event))
    }
    fn on_invalid_tool_call<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: &'a InvalidToolCallContext,
    ) -> BoxFuture<'a, Option<InvalidToolCallAction>> {
        Box::pin(AgentHook::on_invalid_tool_call(self, ctx, event))
    }
    fn on_dispatch<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: DispatchEvent<'a>,
    ) -> BoxFuture<'a, DispatchAction> {
        Box::pin(AgentHook::on_dispatch(self, ctx, event))
    }
    fn on_outcome<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: OutcomeEvent<'a>,
    ) -> BoxFuture<'a, OutcomeAction> {
        Box::pin(AgentHook::on_outcome(self, ctx, event))
    }
    fn on_text_delta<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: TextDeltaEvent<'a>,
    ) -> BoxFuture<'a, ObservationAction> {
        Box::pin(AgentHook::on_text_delta(self, ctx, event))
    }
    fn on_reasoning_delta<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: ReasoningDeltaEvent<'a>,
    ) -> BoxFuture<'a, ObservationAction> {
        Box::pin(AgentHook::on_reasoning_delta(self, ctx, event))
    }
    fn on_tool_call_delta<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: ToolCallDeltaEvent<'a>,
    ) -> BoxFuture<'a, ObservationAction> {
        Box::pin(AgentHook::on_tool_call_delta(self, ctx, event))
    }
    fn on_run_settled<'a>(
        &'a self,
        ctx: &'a HookContext,
        event: RunSettledEvent<'a>,
    ) -> BoxFuture<'a, ()> {
        Box::pin(AgentHook::on_run_settled(self, ctx, event))
    }
}

/// A hook panicked; the run ends with
/// [`PromptError::HookPanicked`](crate::agent::PromptError::HookPanicked).
#[derive(Debug, Clone)]
pub(crate) struct HookFailure {
    pub kind: StepEventKind,
    pub message: String,
}

/// The combined answer of a stack to a chained or merged event.
#[derive(Debug)]
pub(crate) enum Stacked<T> {
    /// Go on with this (possibly updated) value.
    Go(T),
    /// A hook ended the run.
    Stop(String),
}

/// The combined answer of a stack to a tool dispatch.
#[derive(Debug)]
pub(crate) enum ToolDispatchDecision {
    Proceed(Option<Value>),
    Skip(String),
    Deny(String),
    Stop(String),
    Suspend(String),
}

/// Hooks in registration order, composed as the hooks guide says. Build one to register
/// several hooks as one, or to drive hooks yourself (e.g. for effects of your own through
/// [`DispatchEvent::effect`]).
///
/// # Composition
///
/// - **Chained**: `on_run_start` rewrites, `on_model_select` selections, and `on_dispatch` /
///   `on_outcome` rewrites pass to the next hook, which sees the updated prompt, model,
///   arguments or result. The last change wins; a stop, skip or denial ends the chain.
/// - **Merged**: `on_completion_call` patches from all hooks merge in order (see
///   [`RequestPatch`] for how conflicting fields merge). A stop ends it.
/// - **First decision wins**: for `on_model_turn_finished`, `on_invalid_tool_call`, the delta
///   events and the step view's `CompletionResponse` / `StreamResponseFinish`, the first hook
///   that answers something other than continue (or `None`) decides, and later hooks are not
///   called for that event.
/// - **Everyone observes**: `on_run_settled` runs every hook.
///
/// Each hook's `observes` is read once, when it is pushed; a hook is never called for a kind
/// it does not observe, and an event no hook observes is not even built.
#[derive(Clone, Default)]
pub struct HookStack {
    hooks: Vec<Arc<dyn ErasedHook>>,
    /// For each event kind, the indices of the hooks that observe it.
    observers: Vec<Vec<u32>>,
}

impl std::fmt::Debug for HookStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HookStack({} hooks)", self.hooks.len())
    }
}

macro_rules! guarded {
    ($kind:expr, $future:expr) => {
        match AssertUnwindSafe($future).catch_unwind().await {
            Ok(answer) => answer,
            Err(panic) => {
                return Err(HookFailure {
                    kind: $kind,
                    message: panic_message(panic.as_ref()),
                });
            }
        }
    };
}

impl HookStack {
    /// An empty stack.
    pub fn new() -> Self {
        HookStack {
            hooks: Vec::new(),
            observers: vec![Vec::new(); StepEventKind::ALL.len()],
        }
    }

    /// Adds a hook after the ones already there.
    pub fn push<H: AgentHook>(&mut self, hook: H) {
        self.push_erased(Arc::new(hook));
    }

    /// Adds a hook and returns the stack, for chaining.
    pub fn with<H: AgentHook>(mut self, hook: H) -> Self {
        self.push(hook);
        self
    }

    /// The number of hooks.
    pub fn len(&self) -> usize {
        self.hooks.len()
    }

    /// Whether the stack has no hooks.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// Appends the hooks of `other`, after this stack's own.
    pub fn extend(&mut self, other: &HookStack) {
        for hook in &other.hooks {
            self.push_erased(Arc::clone(hook));
        }
    }

    fn push_erased(&mut self, hook: Arc<dyn ErasedHook>) {
        if self.observers.is_empty() {
            self.observers = vec![Vec::new(); StepEventKind::ALL.len()];
        }
        let index = self.hooks.len() as u32;
        for kind in StepEventKind::ALL {
            if hook.observes(kind) {
                self.observers[kind.index()].push(index);
            }
        }
        self.hooks.push(hook);
    }

    /// Whether any hook observes `kind`.
    pub fn observes(&self, kind: StepEventKind) -> bool {
        self.observers
            .get(kind.index())
            .is_some_and(|list| !list.is_empty())
    }

    fn observers(&self, kind: StepEventKind) -> impl Iterator<Item = &dyn ErasedHook> {
        self.observers
            .get(kind.index())
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(|&index| self.hooks.get(index as usize).map(|hook| &**hook))
    }

    pub(crate) async fn run_start(
        &self,
        ctx: &HookContext,
        mut prompt: Message,
        history: &[Message],
    ) -> Result<Stacked<Message>, HookFailure> {
        const KIND: StepEventKind = StepEventKind::RunStart;
        for hook in self.observers(KIND) {
            let event = RunStartEvent {
                prompt: &prompt,
                history,
            };
            match guarded!(KIND, hook.on_run_start(ctx, event)) {
                RunStartAction::Continue => {}
                RunStartAction::Rewrite(text) => prompt = Message::user(text),
                RunStartAction::Stop(reason) => return Ok(Stacked::Stop(reason)),
            }
        }
        Ok(Stacked::Go(prompt))
    }

    pub(crate) async fn completion_call(
        &self,
        ctx: &HookContext,
        event: CompletionCallEvent<'_>,
    ) -> Result<Stacked<Option<RequestPatch>>, HookFailure> {
        const KIND: StepEventKind = StepEventKind::CompletionCall;
        let mut merged: Option<RequestPatch> = None;
        for hook in self.observers(KIND) {
            match guarded!(KIND, hook.on_completion_call(ctx, event)) {
                CompletionCallAction::Continue => {}
                CompletionCallAction::Patch(patch) => match &mut merged {
                    Some(merged) => merged.merge(patch),
                    None => merged = Some(patch),
                },
                CompletionCallAction::Stop(reason) => return Ok(Stacked::Stop(reason)),
            }
        }
        Ok(Stacked::Go(merged))
    }

    pub(crate) fn model_select(
        &self,
        ctx: &HookContext,
        turn: usize,
        default_model: &str,
        previous_model: Option<&str>,
        available_models: &[String],
        history: &[Message],
    ) -> Result<Stacked<Option<String>>, HookFailure> {
        const KIND: StepEventKind = StepEventKind::ModelSelect;
        let mut selected: Option<String> = None;
        for hook in self.observers(KIND) {
            let event = ModelSelectEvent {
                turn,
                default_model,
                selected_model: selected.as_deref().unwrap_or(default_model),
                previous_model,
                available_models,
                history,
            };
            let answer =
                std::panic::catch_unwind(AssertUnwindSafe(|| hook.on_model_select(ctx, event)))
                    .map_err(|panic| HookFailure {
                        kind: KIND,
                        message: panic_message(panic.as_ref()),
                    })?;
            match answer {
                ModelSelectionAction::Continue => {}
                ModelSelectionAction::Select(label) => selected = Some(label),
                ModelSelectionAction::Stop(reason) => return Ok(Stacked::Stop(reason)),
            }
        }
        Ok(Stacked::Go(selected))
    }

    pub(crate) async fn model_turn_finished(
        &self,
        ctx: &HookContext,
        event: ModelTurnFinished<'_>,
    ) -> Result<ModelTurnAction, HookFailure> {
        const KIND: StepEventKind = StepEventKind::ModelTurnFinished;
        for hook in self.observers(KIND) {
            match guarded!(KIND, hook.on_model_turn_finished(ctx, event)) {
                ModelTurnAction::Continue => {}
                decision => return Ok(decision),
            }
        }
        Ok(ModelTurnAction::Continue)
    }

    pub(crate) async fn invalid_tool_call(
        &self,
        ctx: &HookContext,
        event: &InvalidToolCallContext,
    ) -> Result<Option<InvalidToolCallAction>, HookFailure> {
        const KIND: StepEventKind = StepEventKind::InvalidToolCall;
        for hook in self.observers(KIND) {
            if let Some(decision) = guarded!(KIND, hook.on_invalid_tool_call(ctx, event)) {
                return Ok(Some(decision));
            }
        }
        Ok(None)
    }

    /// Runs the completion dispatch chain; patches apply to `request` as they come, so later
    /// hooks see the patched request.
    pub(crate) async fn dispatch_completion(
        &self,
        ctx: &HookContext,
        turn: usize,
        model: &str,
        request: &mut CompletionRequest,
        saved_history: &mut Option<Vec<Message>>,
    ) -> Result<Stacked<()>, HookFailure> {
        const KIND: StepEventKind = StepEventKind::CompletionDispatch;
        for hook in self.observers(KIND) {
            let event = DispatchEvent {
                kind: DispatchKind::Completion,
                target: DispatchTarget::Completion {
                    turn,
                    model,
                    request,
                },
            };
            match guarded!(KIND, hook.on_dispatch(ctx, event)) {
                DispatchAction::Proceed | DispatchAction::RewriteToolArgs(_) => {}
                DispatchAction::Patch(patch) => patch.apply_keeping_history(request, saved_history),
                DispatchAction::Skip(reason)
                | DispatchAction::Deny(reason)
                | DispatchAction::Suspend(reason)
                | DispatchAction::Stop(reason) => return Ok(Stacked::Stop(reason)),
            }
        }
        Ok(Stacked::Go(()))
    }

    pub(crate) async fn dispatch_tool(
        &self,
        ctx: &HookContext,
        call: ToolCallView<'_>,
    ) -> Result<ToolDispatchDecision, HookFailure> {
        const KIND: StepEventKind = StepEventKind::ToolDispatch;
        let mut rewritten: Option<(Value, String)> = None;
        for hook in self.observers(KIND) {
            let args = rewritten.as_ref().map_or(call.args, |(_, text)| text);
            let event = DispatchEvent {
                kind: DispatchKind::Tool,
                target: DispatchTarget::Tool(ToolCallView { args, ..call }),
            };
            match guarded!(KIND, hook.on_dispatch(ctx, event)) {
                DispatchAction::Proceed | DispatchAction::Patch(_) => {}
                DispatchAction::RewriteToolArgs(value) => {
                    let text = value.to_string();
                    rewritten = Some((value, text));
                }
                DispatchAction::Skip(reason) => return Ok(ToolDispatchDecision::Skip(reason)),
                DispatchAction::Deny(report) => return Ok(ToolDispatchDecision::Deny(report)),
                DispatchAction::Stop(reason) => return Ok(ToolDispatchDecision::Stop(reason)),
                DispatchAction::Suspend(reason) => {
                    return Ok(ToolDispatchDecision::Suspend(reason));
                }
            }
        }
        Ok(ToolDispatchDecision::Proceed(
            rewritten.map(|(value, _)| value),
        ))
    }

    pub(crate) async fn completion_outcome(
        &self,
        ctx: &HookContext,
        response: &mut CompletionResponse,
    ) -> Result<Stacked<bool>, HookFailure> {
        const KIND: StepEventKind = StepEventKind::CompletionOutcome;
        let mut replaced = false;
        for hook in self.observers(KIND) {
            let event = OutcomeEvent {
                kind: DispatchKind::Completion,
                target: OutcomeTarget::Completion(response),
            };
            match guarded!(KIND, hook.on_outcome(ctx, event)) {
                OutcomeAction::Replace(replacement) => {
                    *response = *replacement;
                    replaced = true;
                }
                OutcomeAction::Stop(reason) => return Ok(Stacked::Stop(reason)),
                _ => {}
            }
        }
        Ok(Stacked::Go(replaced))
    }

    pub(crate) async fn tool_outcome(
        &self,
        ctx: &HookContext,
        result: &mut ToolResult,
    ) -> Result<Stacked<()>, HookFailure> {
        const KIND: StepEventKind = StepEventKind::ToolOutcome;
        for hook in self.observers(KIND) {
            let event = OutcomeEvent {
                kind: DispatchKind::Tool,
                target: OutcomeTarget::Tool(result),
            };
            match guarded!(KIND, hook.on_outcome(ctx, event)) {
                OutcomeAction::RewriteToolResult(text) => result.output = ToolOutput::Text(text),
                OutcomeAction::RewriteToolOutput(output) => result.output = output,
                OutcomeAction::Stop(reason) => return Ok(Stacked::Stop(reason)),
                OutcomeAction::Proceed | OutcomeAction::Replace(_) => {}
            }
        }
        Ok(Stacked::Go(()))
    }

    pub(crate) async fn text_delta(
        &self,
        ctx: &HookContext,
        event: TextDeltaEvent<'_>,
    ) -> Result<ObservationAction, HookFailure> {
        const KIND: StepEventKind = StepEventKind::TextDelta;
        for hook in self.observers(KIND) {
            if let ObservationAction::Stop(reason) = guarded!(KIND, hook.on_text_delta(ctx, event))
            {
                return Ok(ObservationAction::Stop(reason));
            }
        }
        Ok(ObservationAction::Continue)
    }

    pub(crate) async fn reasoning_delta(
        &self,
        ctx: &HookContext,
        event: ReasoningDeltaEvent<'_>,
    ) -> Result<ObservationAction, HookFailure> {
        const KIND: StepEventKind = StepEventKind::ReasoningDelta;
        for hook in self.observers(KIND) {
            if let ObservationAction::Stop(reason) =
                guarded!(KIND, hook.on_reasoning_delta(ctx, event))
            {
                return Ok(ObservationAction::Stop(reason));
            }
        }
        Ok(ObservationAction::Continue)
    }

    pub(crate) async fn tool_call_delta(
        &self,
        ctx: &HookContext,
        event: ToolCallDeltaEvent<'_>,
    ) -> Result<ObservationAction, HookFailure> {
        const KIND: StepEventKind = StepEventKind::ToolCallDelta;
        for hook in self.observers(KIND) {
            if let ObservationAction::Stop(reason) =
                guarded!(KIND, hook.on_tool_call_delta(ctx, event))
            {
                return Ok(ObservationAction::Stop(reason));
            }
        }
        Ok(ObservationAction::Continue)
    }

    /// Delivers a step-view-only event (`CompletionResponse`, `StreamResponseFinish`) to
    /// `on_event`; the first `Terminate` decides.
    pub(crate) async fn step_event(
        &self,
        ctx: &HookContext,
        event: StepEvent<'_>,
    ) -> Result<Stacked<()>, HookFailure> {
        let kind = event.kind();
        for hook in self.observers(kind) {
            if let Flow::Terminate(reason) = guarded!(kind, hook.on_event(ctx, event)) {
                return Ok(Stacked::Stop(reason));
            }
        }
        Ok(Stacked::Go(()))
    }

    /// Runs every hook's `on_run_settled`; a panic there is logged and the others still run.
    pub(crate) async fn run_settled(&self, ctx: &HookContext, event: RunSettledEvent<'_>) {
        for hook in self.observers(StepEventKind::RunSettled) {
            if let Err(panic) = AssertUnwindSafe(hook.on_run_settled(ctx, event))
                .catch_unwind()
                .await
            {
                tracing::error!(
                    message = %panic_message(panic.as_ref()),
                    "a hook panicked in on_run_settled"
                );
            }
        }
    }
}

/// Re-raises a member's panic so that an enclosing stack or run classifies it.
fn reraise<T>(result: Result<T, HookFailure>) -> T {
    match result {
        Ok(value) => value,
        Err(failure) => std::panic::resume_unwind(Box::new(failure.message)),
    }
}

impl AgentHook for HookStack {
    fn observes(&self, kind: StepEventKind) -> bool {
        HookStack::observes(self, kind)
    }

    async fn on_event(&self, ctx: &HookContext, event: StepEvent<'_>) -> Flow {
        match reraise(self.step_event(ctx, event).await) {
            Stacked::Go(()) => Flow::Continue,
            Stacked::Stop(reason) => Flow::Terminate(reason),
        }
    }

    async fn on_run_start(&self, ctx: &HookContext, event: RunStartEvent<'_>) -> RunStartAction {
        let original = event.prompt.text();
        match reraise(
            self.run_start(ctx, event.prompt.clone(), event.history)
                .await,
        ) {
            Stacked::Go(prompt) if prompt.text() == original => RunStartAction::Continue,
            Stacked::Go(prompt) => RunStartAction::Rewrite(prompt.text()),
            Stacked::Stop(reason) => RunStartAction::Stop(reason),
        }
    }

    async fn on_completion_call(
        &self,
        ctx: &HookContext,
        event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        match reraise(self.completion_call(ctx, event).await) {
            Stacked::Go(Some(patch)) => CompletionCallAction::Patch(patch),
            Stacked::Go(None) => CompletionCallAction::Continue,
            Stacked::Stop(reason) => CompletionCallAction::Stop(reason),
        }
    }

    fn on_model_select(
        &self,
        ctx: &HookContext,
        event: ModelSelectEvent<'_>,
    ) -> ModelSelectionAction {
        // Members start from the selection the enclosing stack has made so far.
        let selected = reraise(self.model_select(
            ctx,
            event.turn,
            event.selected_model,
            event.previous_model,
            event.available_models,
            event.history,
        ));
        match selected {
            Stacked::Go(Some(label)) => ModelSelectionAction::Select(label),
            Stacked::Go(None) => ModelSelectionAction::Continue,
            Stacked::Stop(reason) => ModelSelectionAction::Stop(reason),
        }
    }

    async fn on_model_turn_finished(
        &self,
        ctx: &HookContext,
        event: ModelTurnFinished<'_>,
    ) -> ModelTurnAction {
        reraise(self.model_turn_finished(ctx, event).await)
    }

    async fn on_invalid_tool_call(
        &self,
        ctx: &HookContext,
        event: &InvalidToolCallContext,
    ) -> Option<InvalidToolCallAction> {
        reraise(self.invalid_tool_call(ctx, event).await)
    }

    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.target {
            DispatchTarget::Tool(call) => match reraise(self.dispatch_tool(ctx, call).await) {
                ToolDispatchDecision::Proceed(Some(args)) => DispatchAction::RewriteToolArgs(args),
                ToolDispatchDecision::Proceed(None) => DispatchAction::Proceed,
                ToolDispatchDecision::Skip(reason) => DispatchAction::Skip(reason),
                ToolDispatchDecision::Deny(report) => DispatchAction::Deny(report),
                ToolDispatchDecision::Stop(reason) => DispatchAction::Stop(reason),
                ToolDispatchDecision::Suspend(reason) => DispatchAction::Suspend(reason),
            },
            DispatchTarget::Completion {
                turn,
                model,
                request,
            } => {
                let mut patched = request.clone();
                let mut saved = None;
                let dispatched = self
                    .dispatch_completion(ctx, turn, model, &mut patched, &mut saved)
                    .await;
                match reraise(dispatched) {
                    Stacked::Stop(reason) => DispatchAction::Stop(reason),
                    Stacked::Go(()) if patched == *request => DispatchAction::Proceed,
                    Stacked::Go(()) => DispatchAction::Patch(patch_between(request, patched)),
                }
            }
            DispatchTarget::Effect { .. } => {
                // Effects have no rewrite: the chain ends at the first skip, denial or stop.
                let kind = event.kind.dispatch_event_kind();
                for hook in self.observers(kind) {
                    let answer = reraise(
                        async {
                            Ok::<_, HookFailure>(guarded!(kind, hook.on_dispatch(ctx, event)))
                        }
                        .await,
                    );
                    match answer {
                        DispatchAction::Proceed
                        | DispatchAction::RewriteToolArgs(_)
                        | DispatchAction::Patch(_) => {}
                        decision => return decision,
                    }
                }
                DispatchAction::Proceed
            }
        }
    }

    async fn on_outcome(&self, ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        match event.target {
            OutcomeTarget::Tool(result) => {
                let mut result = result.clone();
                let original = result.output.clone();
                match reraise(self.tool_outcome(ctx, &mut result).await) {
                    Stacked::Stop(reason) => OutcomeAction::Stop(reason),
                    Stacked::Go(()) if result.output == original => OutcomeAction::Proceed,
                    Stacked::Go(()) => OutcomeAction::RewriteToolOutput(result.output),
                }
            }
            OutcomeTarget::Completion(response) => {
                let mut response = response.clone();
                match reraise(self.completion_outcome(ctx, &mut response).await) {
                    Stacked::Stop(reason) => OutcomeAction::Stop(reason),
                    Stacked::Go(false) => OutcomeAction::Proceed,
                    Stacked::Go(true) => OutcomeAction::Replace(Box::new(response)),
                }
            }
            OutcomeTarget::Effect { .. } => {
                let kind = event.kind.outcome_event_kind();
                for hook in self.observers(kind) {
                    let answer = reraise(
                        async { Ok::<_, HookFailure>(guarded!(kind, hook.on_outcome(ctx, event))) }
                            .await,
                    );
                    if let OutcomeAction::Stop(reason) = answer {
                        return OutcomeAction::Stop(reason);
                    }
                }
                OutcomeAction::Proceed
            }
        }
    }

    async fn on_text_delta(
        &self,
        ctx: &HookContext,
        event: TextDeltaEvent<'_>,
    ) -> ObservationAction {
        reraise(self.text_delta(ctx, event).await)
    }

    async fn on_reasoning_delta(
        &self,
        ctx: &HookContext,
        event: ReasoningDeltaEvent<'_>,
    ) -> ObservationAction {
        reraise(self.reasoning_delta(ctx, event).await)
    }

    async fn on_tool_call_delta(
        &self,
        ctx: &HookContext,
        event: ToolCallDeltaEvent<'_>,
    ) -> ObservationAction {
        reraise(self.tool_call_delta(ctx, event).await)
    }

    async fn on_run_settled(&self, ctx: &HookContext, event: RunSettledEvent<'_>) {
        self.run_settled(ctx, event).await;
    }
}

/// The patch that turns `before` into `after` for the fields a dispatch patch can change.
fn patch_between(before: &CompletionRequest, after: CompletionRequest) -> RequestPatch {
    let mut patch = RequestPatch::new();
    if after.preamble != before.preamble {
        patch.preamble = after.preamble;
    }
    if after.temperature != before.temperature {
        patch.temperature = after.temperature;
    }
    if after.max_tokens != before.max_tokens {
        patch.max_tokens = after.max_tokens;
    }
    if after.tool_choice != before.tool_choice {
        patch.tool_choice = after.tool_choice;
    }
    if after.tools != before.tools {
        patch.active_tools = Some(after.tools.iter().map(|t| t.name.clone()).collect());
    }
    if after.additional_params != before.additional_params {
        patch.additional_params = after.additional_params;
    }
    if after.documents.len() > before.documents.len() {
        patch.context = after.documents[before.documents.len()..].to_vec();
    }
    if after.history != before.history {
        patch.history = Some(after.history);
    }
    patch
}
