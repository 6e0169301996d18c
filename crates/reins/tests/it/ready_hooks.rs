//! The ready-made hooks of `reins::hooks` composed in an order that loses something, and
//! what they tell the user about it.

use reins::agent::AgentBuilder;
use reins::completion::CompletionError;
use reins::hooks::cache::{CacheMiss, ResponseCache};
use reins::hooks::fallback::ModelFallback;
use reins::testing::{ScriptedModel, Turn};
use std::fmt::Debug;
use std::future::IntoFuture;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::instrument::WithSubscriber;
use tracing_subscriber::layer::{Context, SubscriberExt};

/// Every warning's message.
#[derive(Clone, Default)]
struct Warnings(Arc<Mutex<Vec<String>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Warnings {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        if *event.metadata().level() == tracing::Level::WARN {
            event.record(&mut Message(&self.0));
        }
    }
}

struct Message<'a>(&'a Mutex<Vec<String>>);

impl Visit for Message<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        if field.name() == "message" {
            self.0.lock().unwrap().push(format!("{value:?}"));
        }
    }
}

fn fallback_then(cache: ResponseCache, primary: Turn, backup: Turn) -> reins::agent::Agent {
    AgentBuilder::new(ScriptedModel::new([primary]))
        .named_model("backup", ScriptedModel::new([backup]))
        .add_hook(ModelFallback::new(["default", "backup"]))
        .add_hook(cache)
        .build()
}

#[tokio::test]
async fn a_recording_cache_after_a_fallback_warns_that_its_replay_will_miss() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let warnings = Warnings::default();
    let subscriber = crate::common::subscriber::registry().with(warnings.clone());
    let failed = Turn::error(CompletionError::Timeout("no answer".into()));
    let recording = fallback_then(
        ResponseCache::record_to(&path).unwrap(),
        failed,
        Turn::text("from backup"),
    );
    let answer = recording
        .prompt("hi")
        .into_future()
        .with_subscriber(subscriber)
        .await;
    assert_eq!(answer.unwrap(), "from backup");
    let warned = warnings.0.lock().unwrap().clone();
    assert!(
        warned.iter().any(
            |w| w.contains("replay will stop on it") && w.contains("register the cache before")
        ),
        "{warned:?}"
    );

    // What the warning is about: the recording lacks the failed call.
    let replay = fallback_then(
        ResponseCache::replay(&path).unwrap(),
        Turn::text("not called"),
        Turn::text("not called"),
    );
    let error = replay.prompt("hi").await.unwrap_err();
    assert_eq!(CacheMiss::from_error(&error).unwrap().model, "default");
}
