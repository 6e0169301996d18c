//! What a chained event passes from hook to hook: one [`Link`] per chain, and what a stack
//! answers a run with.

use super::args_text::ArgsText;
use super::compose::{Chained, Link, Stacked};
use super::events::{
    DispatchEvent, DispatchKind, DispatchTarget, ModelIdentity, ModelSelectEvent, OutcomeEvent,
    OutcomeTarget, RunStartEvent, ToolCallView,
};
use super::table;
use super::tool_result::ToolResult;
use super::turn_request::{RequestBase, TurnRequest};
use super::{DispatchAction, ModelSelectionAction, OutcomeAction, RunStartAction};
use crate::agent::StopReason;
use crate::completion::{CompletionError, CompletionResponse};
use crate::message::Message;
use crate::tool::ToolOutput;
use serde_json::Value;
use std::ops::ControlFlow;

/// The combined answer of a stack to a tool dispatch.
#[derive(Debug)]
pub(crate) enum ToolDispatchDecision {
    /// Run the tool; `Some`: with these rewritten arguments (and their text, always
    /// written). (Boxed: see [`DispatchAction::RewriteToolArgs`].)
    Proceed(Option<Box<(Value, Option<String>)>>),
    Skip(String),
    Deny(String),
    Stop(StopReason),
    Suspend(String),
}

/// What a call is answered with when the hooks rewrote its arguments to a non-object.
const REWRITE_NOT_AN_OBJECT: &str = "not run: a hook rewrote the call's arguments to something \
                                     other than a JSON object, which no tool takes";

/// Goes on to the next hook after a `Proceed` answer. The answer owns nothing and is
/// forgotten: dropping it would call the action type's whole drop glue, out of line, on every
/// answer of every hook.
#[inline(always)]
fn proceed<A, T>(answer: A) -> ControlFlow<T> {
    std::mem::forget(answer);
    ControlFlow::Continue(())
}

impl Chained for table::on_run_start {
    type View<'v> = RunStartEvent<'v>;
    #[inline]
    fn event<'v>(view: &'v RunStartEvent<'_>) -> RunStartEvent<'v> {
        *view
    }
}

impl Chained for table::on_model_select {
    type View<'v> = ModelSelectEvent<'v>;
    #[inline]
    fn event<'v>(view: &'v ModelSelectEvent<'_>) -> ModelSelectEvent<'v> {
        *view
    }
}

/// What a dispatch or outcome event refers to: lent from where the run keeps it, or built for
/// the view (a few words, when nothing lends it). Lent, nothing is copied for the next hook.
#[derive(Clone, Copy)]
pub(crate) enum Target<'v, T> {
    Lent(&'v T),
    Built(T),
}

impl<T> Target<'_, T> {
    #[inline]
    fn get(&self) -> &T {
        match self {
            Target::Lent(target) => target,
            Target::Built(target) => target,
        }
    }
}

/// A dispatch's view: its kind, and what is dispatched, which the event refers to.
impl Chained for table::on_dispatch {
    type View<'v> = (DispatchKind, Target<'v, DispatchTarget<'v>>);
    #[inline]
    fn event<'v>((kind, target): &'v Self::View<'_>) -> DispatchEvent<'v> {
        DispatchEvent {
            kind: *kind,
            target: target.get(),
        }
    }
}

/// An outcome's view: its kind, and what returned, which the event refers to.
impl Chained for table::on_outcome {
    type View<'v> = (DispatchKind, Target<'v, OutcomeTarget<'v>>);
    #[inline]
    fn event<'v>((kind, target): &'v Self::View<'_>) -> OutcomeEvent<'v> {
        OutcomeEvent {
            kind: *kind,
            target: target.get(),
        }
    }
}

/// `on_run_start`: the prompt, rewritten by each hook in turn.
pub(crate) struct PromptChain<'h> {
    pub prompt: Message,
    pub history: &'h [Message],
}

impl Link<table::on_run_start> for PromptChain<'_> {
    type Done = Stacked<Message>;
    #[inline]
    fn view(&self) -> RunStartEvent<'_> {
        RunStartEvent {
            prompt: &self.prompt,
            history: self.history,
        }
    }
    #[inline]
    fn take(&mut self, action: RunStartAction) -> ControlFlow<Self::Done> {
        match action {
            RunStartAction::Continue => {}
            RunStartAction::Rewrite(text) => self.prompt = Message::user(text),
            RunStartAction::Stop(reason) => return ControlFlow::Break(Stacked::Stop(reason)),
        }
        ControlFlow::Continue(())
    }
    #[inline]
    fn finish(self) -> Self::Done {
        Stacked::Go(self.prompt)
    }
}

/// `on_model_select`: the label selected so far (`None`: the default model).
pub(crate) struct SelectionChain<'h> {
    pub event: ModelSelectEvent<'h>,
    pub selected: Option<String>,
}

impl Link<table::on_model_select> for SelectionChain<'_> {
    type Done = Stacked<Option<String>>;
    #[inline]
    fn view(&self) -> ModelSelectEvent<'_> {
        ModelSelectEvent {
            selected_model: self.selected.as_deref().unwrap_or(self.event.default_model),
            ..self.event
        }
    }
    #[inline]
    fn take(&mut self, action: ModelSelectionAction) -> ControlFlow<Self::Done> {
        match action {
            ModelSelectionAction::Continue => {}
            ModelSelectionAction::Select(label) => self.selected = Some(label),
            ModelSelectionAction::Stop(reason) => return ControlFlow::Break(Stacked::Stop(reason)),
        }
        ControlFlow::Continue(())
    }
    #[inline]
    fn finish(self) -> Self::Done {
        Stacked::Go(self.selected)
    }
}

/// A tool call's dispatch: the arguments, rewritten by each hook in turn (as a value for the
/// tool, and as the text later hooks see). `call` is the call as the run dispatches it (a
/// [`DispatchTarget::Tool`]), lent to each hook until one rewrites the arguments.
pub(crate) struct ToolCallChain<'h> {
    pub call: &'h DispatchTarget<'h>,
    pub rewritten: Option<(Value, ArgsText<'static>)>,
}

impl Link<table::on_dispatch> for ToolCallChain<'_> {
    type Done = ToolDispatchDecision;
    #[inline]
    fn view(&self) -> (DispatchKind, Target<'_, DispatchTarget<'_>>) {
        let target = match (&self.rewritten, self.call) {
            (Some((_, args)), DispatchTarget::Tool(call)) => {
                Target::Built(DispatchTarget::Tool(ToolCallView { args, ..*call }))
            }
            _ => Target::Lent(self.call),
        };
        (DispatchKind::Tool, target)
    }
    #[inline]
    fn take(&mut self, action: DispatchAction) -> ControlFlow<Self::Done> {
        let decision = match action {
            DispatchAction::Proceed => return proceed(action),
            DispatchAction::Patch(_) | DispatchAction::Respond(_) | DispatchAction::Fail(_) => {
                return ControlFlow::Continue(());
            }
            DispatchAction::RewriteToolArgs(value) => {
                let text = ArgsText::Written(crate::message::json_text(&value));
                self.rewritten = Some((*value, text));
                return ControlFlow::Continue(());
            }
            DispatchAction::Skip(reason) => ToolDispatchDecision::Skip(reason),
            DispatchAction::Deny(report) => ToolDispatchDecision::Deny(report),
            DispatchAction::Stop(reason) => ToolDispatchDecision::Stop(reason),
            DispatchAction::Suspend(reason) => ToolDispatchDecision::Suspend(reason),
        };
        ControlFlow::Break(decision)
    }
    #[inline]
    fn finish(self) -> Self::Done {
        // The model's own arguments must be an object, or the call is invalid; a hook's
        // rewrite is held to the same: no tool runs with anything else.
        if let Some((value, _)) = &self.rewritten
            && !value.is_object()
        {
            return ToolDispatchDecision::Skip(REWRITE_NOT_AN_OBJECT.to_owned());
        }
        ToolDispatchDecision::Proceed(self.rewritten.map(|(value, text)| {
            let text = text
                .into_written()
                .unwrap_or_else(|| crate::message::json_text(&value));
            Box::new((value, Some(text)))
        }))
    }
}

/// A model call's dispatch: patches apply to the turn's request as they come, so later hooks
/// see the patched request (see [`TurnRequest`]).
pub(crate) struct RequestChain<'h, B> {
    pub turn: usize,
    pub model: &'h str,
    pub identity: ModelIdentity<'h>,
    pub request: &'h mut TurnRequest<B>,
}

/// How a dispatch hook answered a model call itself, so that the model is not called.
#[derive(Debug)]
pub(crate) enum HookAnswer {
    /// Served with this response.
    Response(Box<CompletionResponse>),
    /// Answered with this failure.
    Failure(Box<CompletionError>),
}

impl<B: RequestBase> Link<table::on_dispatch> for RequestChain<'_, B> {
    /// `Some`: a hook answered the call itself; the model is not called.
    type Done = Stacked<Option<HookAnswer>>;
    #[inline]
    fn view(&self) -> (DispatchKind, Target<'_, DispatchTarget<'_>>) {
        let target = DispatchTarget::Completion {
            turn: self.turn,
            model: self.model,
            identity: self.identity,
            request: self.request.get(),
        };
        (DispatchKind::Completion, Target::Built(target))
    }
    #[inline]
    fn take(&mut self, action: DispatchAction) -> ControlFlow<Self::Done> {
        match action {
            DispatchAction::Proceed => return proceed(action),
            DispatchAction::RewriteToolArgs(_) => {}
            DispatchAction::Patch(patch) => self.request.patch(*patch),
            DispatchAction::Respond(response) => {
                return ControlFlow::Break(Stacked::Go(Some(HookAnswer::Response(response))));
            }
            DispatchAction::Fail(error) => {
                return ControlFlow::Break(Stacked::Go(Some(HookAnswer::Failure(error))));
            }
            DispatchAction::Skip(reason)
            | DispatchAction::Deny(reason)
            | DispatchAction::Suspend(reason) => {
                return ControlFlow::Break(Stacked::Stop(reason.into()));
            }
            DispatchAction::Stop(reason) => return ControlFlow::Break(Stacked::Stop(reason)),
        }
        ControlFlow::Continue(())
    }
    #[inline]
    fn finish(self) -> Self::Done {
        Stacked::Go(None)
    }
}

/// An effect's dispatch: nothing passes on (no rewrite); the first skip, denial or stop ends it.
pub(crate) struct EffectDispatch<'h>(pub DispatchEvent<'h>);

impl Link<table::on_dispatch> for EffectDispatch<'_> {
    type Done = DispatchAction;
    #[inline]
    fn view(&self) -> (DispatchKind, Target<'_, DispatchTarget<'_>>) {
        (self.0.kind, Target::Lent(self.0.target))
    }
    #[inline]
    fn take(&mut self, action: DispatchAction) -> ControlFlow<Self::Done> {
        match action {
            DispatchAction::Proceed
            | DispatchAction::RewriteToolArgs(_)
            | DispatchAction::Patch(_)
            | DispatchAction::Respond(_)
            | DispatchAction::Fail(_) => ControlFlow::Continue(()),
            decision => ControlFlow::Break(decision),
        }
    }
    #[inline]
    fn finish(self) -> Self::Done {
        DispatchAction::Proceed
    }
}

/// An effect's outcome: nothing passes on; the chain ends at the first stop.
pub(crate) struct EffectOutcome<'h>(pub OutcomeEvent<'h>);

impl Link<table::on_outcome> for EffectOutcome<'_> {
    type Done = OutcomeAction;
    #[inline]
    fn view(&self) -> (DispatchKind, Target<'_, OutcomeTarget<'_>>) {
        (self.0.kind, Target::Lent(self.0.target))
    }
    #[inline]
    fn take(&mut self, action: OutcomeAction) -> ControlFlow<Self::Done> {
        match action {
            OutcomeAction::Stop(reason) => ControlFlow::Break(OutcomeAction::Stop(reason)),
            _ => ControlFlow::Continue(()),
        }
    }
    #[inline]
    fn finish(self) -> Self::Done {
        OutcomeAction::Proceed
    }
}

/// What a stack decided about a model call's outcome.
#[derive(Debug)]
pub(crate) enum ModelOutcome {
    /// Keep the response (`true`: a hook replaced it).
    Keep(bool),
    /// A failed call stays failed: the run fails with its error.
    Fail,
    /// A failed call's turn is served with this response instead.
    Served(Box<CompletionResponse>),
    /// Call the model registered under this label again for the turn.
    RetryOn(String),
    /// A hook ended the run.
    Stop(StopReason),
}

/// A model call's outcome: a hook may replace the response (later hooks see the
/// replacement), or send the turn to a model again.
pub(crate) struct ResponseChain<'h, S> {
    pub model: &'h str,
    /// Where the response the hooks see is kept.
    pub response: S,
    pub replaced: bool,
}

/// Where a model call's outcome chain keeps the response its hooks see: the run's own
/// (`&mut CompletionResponse`, replaced in place), or one only read ([`ShownResponse`]).
pub(crate) trait ResponseSlot {
    /// The response as the next hook sees it.
    fn response(&self) -> &CompletionResponse;
    /// A hook replaced the response. The replacement keeps the model's usage: the call was
    /// made and paid whatever answers in its place (the run's usage, a budget hook after
    /// this one and the trace count it).
    fn replace(&mut self, replacement: Box<CompletionResponse>);
}

impl ResponseSlot for &mut CompletionResponse {
    #[inline]
    fn response(&self) -> &CompletionResponse {
        self
    }
    #[inline]
    fn replace(&mut self, replacement: Box<CompletionResponse>) {
        let usage = self.usage;
        **self = *replacement;
        self.usage = usage;
    }
}

/// A response only read (what a stack called directly as a hook is shown), and its members'
/// replacement beside it: a stack copies nothing for an outcome its members keep.
pub(crate) struct ShownResponse<'a> {
    pub shown: &'a CompletionResponse,
    pub replacement: Option<Box<CompletionResponse>>,
}

impl ResponseSlot for &mut ShownResponse<'_> {
    #[inline]
    fn response(&self) -> &CompletionResponse {
        self.replacement.as_deref().unwrap_or(self.shown)
    }
    #[inline]
    fn replace(&mut self, mut replacement: Box<CompletionResponse>) {
        replacement.usage = self.shown.usage;
        self.replacement = Some(replacement);
    }
}

impl<S: ResponseSlot> Link<table::on_outcome> for ResponseChain<'_, S> {
    type Done = ModelOutcome;
    #[inline]
    fn view(&self) -> (DispatchKind, Target<'_, OutcomeTarget<'_>>) {
        let target = OutcomeTarget::Completion {
            model: self.model,
            response: self.response.response(),
        };
        (DispatchKind::Completion, Target::Built(target))
    }
    #[inline]
    fn take(&mut self, action: OutcomeAction) -> ControlFlow<Self::Done> {
        match action {
            OutcomeAction::Proceed => return proceed(action),
            OutcomeAction::Replace(replacement) => {
                self.response.replace(replacement);
                self.replaced = true;
            }
            OutcomeAction::RetryOn(label) => {
                return ControlFlow::Break(ModelOutcome::RetryOn(label));
            }
            OutcomeAction::Stop(reason) => return ControlFlow::Break(ModelOutcome::Stop(reason)),
            _ => {}
        }
        ControlFlow::Continue(())
    }
    #[inline]
    fn finish(self) -> Self::Done {
        ModelOutcome::Keep(self.replaced)
    }
}

/// A failed model call's outcome: the first hook that replaces the response (serving the
/// turn with it), retries on a model or stops the run decides; otherwise the call fails.
pub(crate) struct FailureChain<'h> {
    pub model: &'h str,
    pub error: &'h CompletionError,
}

impl Link<table::on_outcome> for FailureChain<'_> {
    type Done = ModelOutcome;
    #[inline]
    fn view(&self) -> (DispatchKind, Target<'_, OutcomeTarget<'_>>) {
        let target = OutcomeTarget::CompletionFailed {
            model: self.model,
            error: self.error,
        };
        (DispatchKind::Completion, Target::Built(target))
    }
    #[inline]
    fn take(&mut self, action: OutcomeAction) -> ControlFlow<Self::Done> {
        ControlFlow::Break(match action {
            OutcomeAction::Replace(response) => ModelOutcome::Served(response),
            OutcomeAction::RetryOn(label) => ModelOutcome::RetryOn(label),
            OutcomeAction::Stop(reason) => ModelOutcome::Stop(reason),
            _ => return ControlFlow::Continue(()),
        })
    }
    #[inline]
    fn finish(self) -> Self::Done {
        ModelOutcome::Fail
    }
}

/// A tool call's outcome: a hook may rewrite the output the model sees, and mask the
/// structured outcome's text (never its status or kind); later hooks see both.
pub(crate) struct ToolResultChain<'h, 'r> {
    pub result: &'h mut ToolResult<'r>,
}

impl Link<table::on_outcome> for ToolResultChain<'_, '_> {
    type Done = Stacked<()>;
    #[inline]
    fn view(&self) -> (DispatchKind, Target<'_, OutcomeTarget<'_>>) {
        (
            DispatchKind::Tool,
            Target::Built(OutcomeTarget::Tool(self.result)),
        )
    }
    #[inline]
    fn take(&mut self, action: OutcomeAction) -> ControlFlow<Self::Done> {
        match action {
            OutcomeAction::Proceed => return proceed(action),
            OutcomeAction::RewriteToolResult(text) => self.result.rewrite(ToolOutput::Text(text)),
            OutcomeAction::RewriteToolOutput(output) => self.result.rewrite(*output),
            OutcomeAction::MaskToolResult {
                output,
                outcome_text,
            } => {
                if let Some(output) = output {
                    self.result.rewrite(*output);
                }
                if let Some(text) = outcome_text {
                    self.result.mask_outcome(text);
                }
            }
            OutcomeAction::Stop(reason) => return ControlFlow::Break(Stacked::Stop(reason)),
            OutcomeAction::Replace(_) | OutcomeAction::RetryOn(_) => {}
        }
        ControlFlow::Continue(())
    }
    #[inline]
    fn finish(self) -> Self::Done {
        Stacked::Go(())
    }
}
