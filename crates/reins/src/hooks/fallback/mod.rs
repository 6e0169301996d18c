//! Model fallback: a turn whose model call failed (after the provider's own retries), or came
//! back with nothing usable, is served by the next model of a chain of labels.

#[cfg(test)]
mod tests;

use crate::agent::{
    AgentHook, HookContext, ModelSelectEvent, ModelSelectionAction, OutcomeAction, OutcomeEvent,
    StepEventKind,
};
use crate::completion::CompletionError;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Serves a turn from the next model of a chain when a model call fails or answers with
/// nothing usable.
///
/// Register the models under labels ([`AgentBuilder::named_model`]) and give the chain in
/// order: when the call on one label fails, the turn is sent to the label after it
/// ([`OutcomeAction::retry_on`]); when the last one fails, the run fails with
/// [`PromptError::Completion`](crate::agent::PromptError::Completion): its `source` is the
/// last call's error, its `failed_calls` every failed call of the turn with its model's
/// label, and its message names each model and its failure, one line each (each is also
/// logged with `tracing::warn!`, its kind and not its text, as the turn falls back). A label
/// that is not in the chain (a model a hook selected) falls back to the chain's first label.
/// A turn makes at most
/// [`MAX_MODEL_CALLS_PER_TURN`](crate::agent::MAX_MODEL_CALLS_PER_TURN) model calls, so a
/// chain longer than that stops there: the run fails with the same
/// [`PromptError::Completion`](crate::agent::PromptError::Completion), every failed call in
/// `failed_calls`, and `call_limit_reached` set (its message ends with a line saying the
/// turn made its limit of calls). An empty answer the chain went past is one of the failed
/// calls, its error saying the model answered nothing
/// ([`EMPTY_ANSWER`](crate::agent::EMPTY_ANSWER)), whether the chain ends at the limit on it
/// or on an error. Every call is dispatched and
/// observed like any other, so budgets, audit logs and approvals see the fallback calls too;
/// a streaming run withdraws the text of a failed call
/// ([`StreamItem::TurnDiscarded`](crate::agent::StreamItem::TurnDiscarded)). The retry ends
/// the failed call's outcome chain, so hooks registered after the fallback do not see that
/// outcome: an [`AuditLog`](crate::hooks::audit::AuditLog) after it writes the call's line
/// as `"retried"` (before it, as `"failed"` with the provider's error), and a
/// [`Budget`](crate::hooks::budget::Budget) counts the call either way.
///
/// By default every [`CompletionError`] falls back (narrow it with [`when`](Self::when)), and
/// so does a response with no answer text and no tool call
/// ([`keep_empty_responses`](Self::keep_empty_responses) turns that off). The next turn starts
/// on the selected model again: a primary model that recovers serves the rest of the run.
/// When every model of the chain answers empty, the last empty response is the turn's: the
/// run goes on with it (a text run answers `""`), as it would without a fallback.
///
/// **Labels no model is registered under** (a misspelt label) are skipped: the chain goes on
/// to the next registered label, and when none is left, the failed call's own error is the
/// run's ([`PromptError::Completion`](crate::agent::PromptError::Completion) with the
/// provider's error, not an error about the label). Each run's first model call checks the
/// chain against the agent's models and logs the labels missing with `tracing::error!`,
/// once per hook (its clones share it), so a typo shows up before an outage needs it.
///
/// [`AgentBuilder::named_model`]: crate::agent::AgentBuilder::named_model
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::completion::CompletionError;
/// use reins::hooks::fallback::ModelFallback;
/// use reins::testing::{ScriptedModel, Turn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let primary = ScriptedModel::new([Turn::error(CompletionError::Timeout("no answer".into()))]);
/// let backup = ScriptedModel::new([Turn::text("the backup answered")]);
/// let agent = AgentBuilder::new(primary)
///     .named_model("backup", backup)
///     .add_hook(ModelFallback::new(["default", "backup"]))
///     .build();
/// assert_eq!(agent.prompt("hello").await.unwrap(), "the backup answered");
/// # }
/// ```
#[derive(Clone)]
pub struct ModelFallback {
    chain: Arc<[String]>,
    falls_back_on: Option<Arc<ErrorPredicate>>,
    empty_falls_back: bool,
    /// Whether missing labels were logged (shared by clones, so a typo is logged once).
    missing_logged: Arc<AtomicBool>,
}

/// The labels the agent has a model under, in the run's scratchpad: set at the run's first
/// model selection, where they are known, and read by every fallback of the run against its
/// own chain.
#[derive(Default)]
struct Registered(Option<Arc<[String]>>);

type ErrorPredicate = dyn Fn(&CompletionError) -> bool + Send + Sync;

impl ModelFallback {
    /// A chain of model labels, tried in order (the agent's own model is registered under
    /// `"default"`). A label given twice is kept at its first place: each model is tried
    /// once a turn, and the chain cannot lead back to a model it left.
    pub fn new<I, S>(labels: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut chain: Vec<String> = Vec::new();
        for label in labels.into_iter().map(Into::into) {
            if !chain.contains(&label) {
                chain.push(label);
            }
        }
        ModelFallback {
            chain: chain.into(),
            falls_back_on: None,
            empty_falls_back: true,
            missing_logged: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Falls back only on the errors `predicate` accepts (say, timeouts and 5xx, but not a
    /// request the provider rejected as invalid, which the next model would reject too).
    pub fn when(
        mut self,
        predicate: impl Fn(&CompletionError) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.falls_back_on = Some(Arc::new(predicate));
        self
    }

    /// Keeps responses with no content instead of sending their turn to the next model.
    pub fn keep_empty_responses(mut self) -> Self {
        self.empty_falls_back = false;
        self
    }

    /// The first registered label after `label` in the chain (from the chain's first, for a
    /// label not in it). `registered` says which of the chain's labels have a model; unknown
    /// (`None`), every label is taken to have one.
    fn next_after(&self, label: &str, registered: Option<&[String]>) -> Option<&str> {
        let from = self
            .chain
            .iter()
            .position(|l| l == label)
            .map_or(0, |index| index + 1);
        self.chain
            .iter()
            .skip(from)
            .filter(|next| *next != label)
            .find(|next| {
                let has_model = registered.is_none_or(|known| known.contains(next));
                if !has_model {
                    tracing::error!(
                        from = label,
                        skipped = next.as_str(),
                        "fallback: no model is registered under this label of the chain; \
                         skipping it"
                    );
                }
                has_model
            })
            .map(String::as_str)
    }

    /// Notes in the run which labels have a model, and logs the chain's missing ones the
    /// first time this hook sees them.
    fn check_chain(&self, ctx: &HookContext, available: &[String]) {
        ctx.scratchpad().update(|registered: &mut Registered| {
            registered.0.get_or_insert_with(|| available.into());
        });
        if self.missing_logged.load(Ordering::Relaxed) {
            return;
        }
        let missing: Vec<&str> = self
            .chain
            .iter()
            .filter(|label| !available.contains(label))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() && !self.missing_logged.swap(true, Ordering::Relaxed) {
            tracing::error!(
                ?missing,
                registered = ?available,
                "fallback: the chain names labels no model is registered under; they are \
                 skipped"
            );
        }
    }

    fn falls_back(&self, event: &OutcomeEvent<'_>) -> bool {
        match (event.completion_error(), event.completion()) {
            (Some(error), _) => self
                .falls_back_on
                .as_ref()
                .is_none_or(|accepts| accepts(error)),
            (None, Some(response)) => self.empty_falls_back && response.answers_nothing(),
            (None, None) => false,
        }
    }
}

impl fmt::Debug for ModelFallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelFallback")
            .field("chain", &self.chain)
            .field("filtered", &self.falls_back_on.is_some())
            .field("empty_falls_back", &self.empty_falls_back)
            .finish()
    }
}

impl AgentHook for ModelFallback {
    fn observes(&self, kind: StepEventKind) -> bool {
        matches!(
            kind,
            StepEventKind::CompletionOutcome | StepEventKind::ModelSelect
        )
    }

    fn on_model_select(
        &self,
        ctx: &HookContext,
        event: ModelSelectEvent<'_>,
    ) -> ModelSelectionAction {
        self.check_chain(ctx, event.available_models);
        ModelSelectionAction::continue_run()
    }

    async fn on_outcome(&self, ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        let Some(model) = event.model() else {
            return OutcomeAction::proceed();
        };
        if !self.falls_back(&event) {
            return OutcomeAction::proceed();
        }
        let registered = ctx
            .scratchpad()
            .update(|registered: &mut Registered| registered.0.clone());
        match self.next_after(model, registered.as_deref()) {
            Some(next) => {
                // The error's kind, not its text: this is logged inside the call's `chat`
                // span, where the provider's error body (which may echo the prompt) would be
                // recorded whether the subscriber records content or not. The run's caller
                // and the hooks get the whole error.
                match event.completion_error() {
                    Some(error) => tracing::warn!(
                        from = model,
                        to = next,
                        error.type = %error.error_type(),
                        "the model call failed ({}); falling back to another model",
                        error.kind_in_words()
                    ),
                    None => tracing::warn!(
                        from = model,
                        to = next,
                        "the model answered nothing; falling back to another model"
                    ),
                }
                OutcomeAction::retry_on(next)
            }
            None => OutcomeAction::proceed(),
        }
    }
}
