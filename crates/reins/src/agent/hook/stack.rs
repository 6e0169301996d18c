//! [`HookStack`]: hooks in registration order, and what a run asks of them.

use super::StepEventKind;
use super::compose::{self, Decision};
use super::erased::{AsyncMethod, Caught, HookFailure, Member};
use super::events::{
    CompletionCallEvent, InvalidToolCallContext, ModelSelectEvent, ModelTurnFinished,
    ReasoningDeltaEvent, RunSettledEvent, TextDeltaEvent, ToolCallDeltaEvent, ToolCallView,
    ToolResult,
};
use super::links::{
    FailureChain, ModelOutcome, PromptChain, RequestChain, ResponseChain, SelectionChain, Stacked,
    ToolCallChain, ToolDispatchDecision, ToolResultChain,
};
use super::step::{Flow, StepEvent};
use super::table;
use super::{
    AgentHook, HookContext, InvalidToolCallAction, ModelTurnAction, ObservationAction, RequestPatch,
};
use crate::completion::{CompletionError, CompletionRequest, CompletionResponse};
use crate::message::Message;
use futures::FutureExt;
use std::future::Future;

/// Hooks in registration order, composed as the hooks guide says. Build one to register
/// several hooks as one, or to drive hooks yourself (e.g. for effects of your own through
/// [`DispatchEvent::effect`](super::DispatchEvent::effect)).
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
    hooks: Vec<Member>,
    /// For each event kind, the indices of the hooks that observe it.
    observers: Vec<Vec<u32>>,
}

impl std::fmt::Debug for HookStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HookStack({} hooks)", self.hooks.len())
    }
}

/// The hooks of a stack that observe one kind of event, in registration order.
#[derive(Clone)]
pub(crate) struct Observers<'s> {
    hooks: &'s Vec<Member>,
    indices: std::slice::Iter<'s, u32>,
}

impl<'s> Iterator for Observers<'s> {
    type Item = &'s Member;
    fn next(&mut self) -> Option<Self::Item> {
        let hooks = self.hooks;
        self.indices.find_map(|&index| hooks.get(index as usize))
    }
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
        self.push_member(Member::new(hook));
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
            self.push_member(hook.clone());
        }
    }

    fn push_member(&mut self, hook: Member) {
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

    /// The hooks that observe `kind`.
    #[inline]
    pub(crate) fn observers(&self, kind: StepEventKind) -> Observers<'_> {
        let indices = self
            .observers
            .get(kind.index())
            .map_or(&[][..], Vec::as_slice);
        Observers {
            hooks: &self.hooks,
            indices: indices.iter(),
        }
    }

    // What a run asks of the stack. Each returns its rule's future itself (no `async fn`
    // around it), so a run's state machine holds one layer per event.

    /// A first-decision event.
    #[inline]
    fn decide<'e, M: AsyncMethod>(
        &'e self,
        ctx: &'e HookContext,
        event: M::Event<'e>,
    ) -> impl Future<Output = Result<M::Action, HookFailure>>
    where
        M::Action: Decision,
    {
        compose::first_decision::<M, Caught>(self.observers(M::kind(&event)), ctx, event)
    }

    #[inline]
    pub(crate) fn run_start<'e>(
        &'e self,
        ctx: &'e HookContext,
        prompt: Message,
        history: &'e [Message],
    ) -> impl Future<Output = Result<Stacked<Message>, HookFailure>> {
        let hooks = self.observers(StepEventKind::RunStart);
        let chain = PromptChain { prompt, history };
        compose::chained::<table::on_run_start, Caught, _>(hooks, ctx, chain)
    }

    #[inline]
    pub(crate) fn completion_call<'e>(
        &'e self,
        ctx: &'e HookContext,
        event: CompletionCallEvent<'e>,
    ) -> impl Future<Output = Result<Stacked<Option<RequestPatch>>, HookFailure>> {
        let hooks = self.observers(StepEventKind::CompletionCall);
        compose::merged::<table::on_completion_call, Caught>(hooks, ctx, event)
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
        let event = ModelSelectEvent {
            turn,
            default_model,
            selected_model: default_model,
            previous_model,
            available_models,
            history,
        };
        let hooks = self.observers(StepEventKind::ModelSelect);
        let chain = SelectionChain {
            event,
            selected: None,
        };
        compose::chained_now::<table::on_model_select, Caught, _>(hooks, ctx, chain)
    }

    #[inline]
    pub(crate) fn model_turn_finished<'e>(
        &'e self,
        ctx: &'e HookContext,
        event: ModelTurnFinished<'e>,
    ) -> impl Future<Output = Result<ModelTurnAction, HookFailure>> {
        self.decide::<table::on_model_turn_finished>(ctx, event)
    }

    #[inline]
    pub(crate) fn invalid_tool_call<'e>(
        &'e self,
        ctx: &'e HookContext,
        event: &'e InvalidToolCallContext,
    ) -> impl Future<Output = Result<Option<InvalidToolCallAction>, HookFailure>> {
        self.decide::<table::on_invalid_tool_call>(ctx, event)
    }

    /// Runs the completion dispatch chain; patches apply to `request` as they come, so later
    /// hooks see the patched request.
    #[inline]
    pub(crate) fn dispatch_completion<'e>(
        &'e self,
        ctx: &'e HookContext,
        turn: usize,
        model: &'e str,
        request: &'e mut CompletionRequest,
        saved_history: &'e mut Option<Vec<Message>>,
    ) -> impl Future<Output = Result<Stacked<Option<Box<CompletionResponse>>>, HookFailure>> {
        let hooks = self.observers(StepEventKind::CompletionDispatch);
        let chain = RequestChain {
            turn,
            model,
            request,
            saved_history,
        };
        compose::chained::<table::on_dispatch, Caught, _>(hooks, ctx, chain)
    }

    #[inline]
    pub(crate) fn dispatch_tool<'e>(
        &'e self,
        ctx: &'e HookContext,
        call: ToolCallView<'e>,
    ) -> impl Future<Output = Result<ToolDispatchDecision, HookFailure>> {
        let hooks = self.observers(StepEventKind::ToolDispatch);
        let chain = ToolCallChain {
            call,
            rewritten: None,
        };
        compose::chained::<table::on_dispatch, Caught, _>(hooks, ctx, chain)
    }

    #[inline]
    pub(crate) fn completion_outcome<'e>(
        &'e self,
        ctx: &'e HookContext,
        model: &'e str,
        response: &'e mut CompletionResponse,
    ) -> impl Future<Output = Result<ModelOutcome, HookFailure>> {
        let hooks = self.observers(StepEventKind::CompletionOutcome);
        let chain = ResponseChain {
            model,
            response,
            replaced: false,
        };
        compose::chained::<table::on_outcome, Caught, _>(hooks, ctx, chain)
    }

    /// A failed model call's outcome: replaced, retried, stopped, or left failed.
    #[inline]
    pub(crate) fn completion_failure<'e>(
        &'e self,
        ctx: &'e HookContext,
        model: &'e str,
        error: &'e CompletionError,
    ) -> impl Future<Output = Result<ModelOutcome, HookFailure>> {
        let hooks = self.observers(StepEventKind::CompletionOutcome);
        compose::chained::<table::on_outcome, Caught, _>(hooks, ctx, FailureChain { model, error })
    }

    #[inline]
    pub(crate) fn tool_outcome<'e>(
        &'e self,
        ctx: &'e HookContext,
        result: &'e mut ToolResult,
    ) -> impl Future<Output = Result<Stacked<()>, HookFailure>> {
        let hooks = self.observers(StepEventKind::ToolOutcome);
        let chain = ToolResultChain { result };
        compose::chained::<table::on_outcome, Caught, _>(hooks, ctx, chain)
    }

    #[inline]
    pub(crate) fn text_delta<'e>(
        &'e self,
        ctx: &'e HookContext,
        event: TextDeltaEvent<'e>,
    ) -> impl Future<Output = Result<ObservationAction, HookFailure>> {
        self.decide::<table::on_text_delta>(ctx, event)
    }

    #[inline]
    pub(crate) fn reasoning_delta<'e>(
        &'e self,
        ctx: &'e HookContext,
        event: ReasoningDeltaEvent<'e>,
    ) -> impl Future<Output = Result<ObservationAction, HookFailure>> {
        self.decide::<table::on_reasoning_delta>(ctx, event)
    }

    #[inline]
    pub(crate) fn tool_call_delta<'e>(
        &'e self,
        ctx: &'e HookContext,
        event: ToolCallDeltaEvent<'e>,
    ) -> impl Future<Output = Result<ObservationAction, HookFailure>> {
        self.decide::<table::on_tool_call_delta>(ctx, event)
    }

    /// Delivers a step-view-only event (`CompletionResponse`, `StreamResponseFinish`) to
    /// `on_event`; the first `Terminate` decides.
    #[inline]
    pub(crate) fn step_event<'e>(
        &'e self,
        ctx: &'e HookContext,
        event: StepEvent<'e>,
    ) -> impl Future<Output = Result<Stacked<()>, HookFailure>> {
        self.decide::<table::on_event>(ctx, event).map(|answer| {
            answer.map(|flow| match flow {
                Flow::Terminate(reason) => Stacked::Stop(reason.into()),
                _ => Stacked::Go(()),
            })
        })
    }

    /// Runs every hook's `on_run_settled`; a panic there is logged and the others still run.
    #[inline]
    pub(crate) fn run_settled<'e>(
        &'e self,
        ctx: &'e HookContext,
        event: RunSettledEvent<'e>,
    ) -> impl Future<Output = ()> {
        let hooks = self.observers(StepEventKind::RunSettled);
        compose::everyone_observes::<table::on_run_settled>(hooks, ctx, event)
    }
}
