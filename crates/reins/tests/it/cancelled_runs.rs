//! A run dropped before its end (a timeout, a `select!`, an aborted task) records on its
//! `invoke_agent` span that it was cancelled, with the tokens of every model call it made so
//! far: also those of a turn still under way, whose calls a fallback sent on to another model
//! or whose answer an outcome hook is still judging.

use reins::agent::*;
use reins::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, Usage,
};
use reins::hooks::fallback::ModelFallback;
use reins::testing::{ScriptedModel, Turn};
use std::collections::HashMap;
use std::fmt::Debug;
use std::future::IntoFuture;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;
use tracing::field::{Field, Visit};
use tracing::instrument::WithSubscriber;
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// The fields recorded on the `invoke_agent` span, each with its last value as `Debug` text.
#[derive(Clone, Default)]
struct RunSpan(Arc<Mutex<HashMap<String, String>>>);

impl RunSpan {
    fn field(&self, name: &str) -> Option<String> {
        self.0.lock().unwrap().get(name).cloned()
    }
}

impl<S> tracing_subscriber::Layer<S> for RunSpan
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, _id: &Id, _ctx: Context<'_, S>) {
        if attrs.metadata().name() == "invoke_agent" {
            attrs.record(&mut Fields(&self.0));
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if ctx
            .span(id)
            .is_some_and(|span| span.name() == "invoke_agent")
        {
            values.record(&mut Fields(&self.0));
        }
    }
}

/// Keeps each field it visits.
struct Fields<'a>(&'a Mutex<HashMap<String, String>>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        let mut fields = self.0.lock().unwrap();
        fields.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

/// A model that says it was called (`stalled`) and never answers.
struct Stalling(Arc<Notify>);

impl CompletionModel for Stalling {
    async fn completion(
        &self,
        _request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        self.0.notify_one();
        std::future::pending().await
    }
}

/// Runs `agent` until `stalled` is told, then drops the run (as a `select!` drops the branch
/// that lost), and returns what its span recorded.
async fn dropped_once_stalled(agent: Agent, stalled: &Notify) -> RunSpan {
    let recorded = RunSpan::default();
    let subscriber = crate::common::subscriber::registry().with(recorded.clone());
    let run = agent
        .prompt("Weather?")
        .into_future()
        .with_subscriber(subscriber);
    tokio::select! {
        ended = run => panic!("the run never ends, yet it did: {ended:?}"),
        () = stalled.notified() => {}
    }
    assert_eq!(
        recorded.field("reins.run.status").as_deref(),
        Some("\"cancelled\"")
    );
    recorded
}

/// An agent whose default model answers first with `first`, then, through a fallback to
/// `backup`, stalls.
fn falling_back_to_a_stalling_model(first: Turn, stalled: &Arc<Notify>) -> Agent {
    AgentBuilder::new(ScriptedModel::new([first]))
        .named_model("backup", Stalling(Arc::clone(stalled)))
        .add_hook(ModelFallback::new(["default", "backup"]))
        .build()
}

#[tokio::test]
async fn a_run_dropped_in_a_fallbacks_call_counts_the_call_it_fell_back_from() {
    let stalled = Arc::new(Notify::new());
    // An empty answer, which the fallback sends on to the next model, cost tokens all the
    // same.
    let empty = Turn::text("").usage(Usage::new(11, 7));
    let agent = falling_back_to_a_stalling_model(empty, &stalled);
    let recorded = dropped_once_stalled(agent, &stalled).await;
    assert_eq!(
        recorded.field("gen_ai.usage.input_tokens").as_deref(),
        Some("11")
    );
    assert_eq!(
        recorded.field("gen_ai.usage.output_tokens").as_deref(),
        Some("7")
    );

    // A failed call reported no tokens: the run has none to count.
    let failed = Turn::error(CompletionError::Timeout("no answer".into()));
    let agent = falling_back_to_a_stalling_model(failed, &stalled);
    let recorded = dropped_once_stalled(agent, &stalled).await;
    assert_eq!(recorded.field("gen_ai.usage.input_tokens"), None);
}

/// Judges every model answer for ever: says so (`judging`) and never answers.
struct NeverDone(Arc<Notify>);

impl AgentHook for NeverDone {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if event.completion().is_some() {
            self.0.notify_one();
            std::future::pending::<()>().await;
        }
        OutcomeAction::proceed()
    }
}

#[tokio::test]
async fn a_run_dropped_while_a_hook_judges_an_answer_counts_the_answers_call() {
    let judging = Arc::new(Notify::new());
    let model = ScriptedModel::new([Turn::text("Sunny.").usage(Usage::new(5, 3))]);
    let agent = AgentBuilder::new(model)
        .add_hook(NeverDone(Arc::clone(&judging)))
        .build();
    let recorded = dropped_once_stalled(agent, &judging).await;
    assert_eq!(
        recorded.field("gen_ai.usage.input_tokens").as_deref(),
        Some("5")
    );
    assert_eq!(
        recorded.field("gen_ai.usage.output_tokens").as_deref(),
        Some("3")
    );
}
