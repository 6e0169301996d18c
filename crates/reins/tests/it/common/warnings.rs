//! The warnings reins logs while a test's code runs, by their message.

use std::fmt::Debug;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::instrument::WithSubscriber;
use tracing_subscriber::layer::{Context, SubscriberExt};

/// A recorder of every warning's message.
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

/// What `f` returns, and the warnings logged while it ran.
pub fn warnings_of<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    let warnings = Warnings::default();
    let subscriber = crate::common::subscriber::registry().with(warnings.clone());
    let value = tracing::subscriber::with_default(subscriber, f);
    let logged = warnings.0.lock().unwrap().clone();
    (value, logged)
}

/// What `future` gives, and the warnings logged while it ran.
pub async fn warnings_during<T>(future: impl Future<Output = T>) -> (T, Vec<String>) {
    let warnings = Warnings::default();
    let subscriber = crate::common::subscriber::registry().with(warnings.clone());
    let value = future.with_subscriber(subscriber).await;
    let logged = warnings.0.lock().unwrap().clone();
    (value, logged)
}
