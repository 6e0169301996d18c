//! What a retried call logs: the failure's kind, never its text. The retry happens inside the
//! run's `chat` span, where a log event is recorded whether content is or not, and a
//! provider's error body may echo the prompt.

use crate::providers::fixtures::chat::Chat;
use crate::providers::fixtures::model_of;
use crate::providers::support::{answering, prompt};
use reins::completion::CompletionModel;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::instrument::WithSubscriber;
use tracing_subscriber::layer::{Context, SubscriberExt};
use wiremock::ResponseTemplate;

/// Every field of every event, as `name=value` text.
#[derive(Clone, Default)]
struct Logged(Arc<Mutex<Vec<String>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Logged {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        event.record(&mut Fields(&self.0));
    }
}

/// Writes each field it visits into the log.
struct Fields<'a>(&'a Mutex<Vec<String>>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        let line = format!("{}={value:?}", field.name());
        self.0.lock().unwrap().push(line);
    }
}

#[tokio::test]
async fn a_retry_logs_the_failures_status_not_the_providers_body() {
    let body = "the prompt 'my card is 4111 1111' is too long";
    let server = answering(ResponseTemplate::new(503).set_body_string(body)).await;
    let logged = Logged::default();
    let subscriber = crate::common::subscriber::registry().with(logged.clone());
    let error = model_of::<Chat>(&server.uri())
        .completion(&prompt("my card is 4111 1111"))
        .with_subscriber(subscriber)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("4111"), "the caller gets it all");
    let lines = logged.0.lock().unwrap().clone();
    assert!(
        lines.iter().any(|line| line == "error.type=503"),
        "{lines:?}"
    );
    assert!(lines.iter().all(|line| !line.contains("4111")), "{lines:?}");
}
