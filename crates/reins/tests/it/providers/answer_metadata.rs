//! What a server says about its own answer (the response id, the model that answered, the
//! names and ids of the tools it calls) is recorded on the run's spans whether content is
//! captured or not, and a tool's name is quoted in the error of a call to an unknown tool. A
//! hostile server can make each of them as long as a body may be, and fill them with control
//! sequences: spans must still carry a bounded value (whole, every span of the run would hold
//! megabytes no collector takes), and an error a short, escaped one (it reaches a terminal).

use crate::providers::fixtures::chat::{self, Chat};
use crate::providers::fixtures::{Settings, model_at};
use crate::providers::hostile::{Hostile, Reply};
use reins::agent::AgentBuilder;
use reins::providers::RetryPolicy;
use serde_json::json;
use std::collections::HashMap;
use std::fmt::Debug;
use std::future::IntoFuture;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::instrument::WithSubscriber;
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// Far longer than any honest identifier, well within the default body limit.
const HUGE: usize = 1024 * 1024;

/// The most bytes a recorded identifier may take (its cut marker included).
const BOUND: usize = 1024;

/// Every field recorded on every span, by span name, each with its longest value as `Debug`
/// text.
#[derive(Clone, Default)]
struct Recorded(Arc<Mutex<HashMap<(String, String), String>>>);

impl Recorded {
    fn field(&self, span: &str, name: &str) -> Option<String> {
        let fields = self.0.lock().unwrap();
        fields.get(&(span.to_owned(), name.to_owned())).cloned()
    }
}

impl<S> tracing_subscriber::Layer<S> for Recorded
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, _id: &Id, _ctx: Context<'_, S>) {
        attrs.record(&mut Fields(attrs.metadata().name(), &self.0));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            values.record(&mut Fields(span.name(), &self.0));
        }
    }
}

struct Fields<'a>(&'a str, &'a Mutex<HashMap<(String, String), String>>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        let value = format!("{value:?}");
        let mut fields = self.1.lock().unwrap();
        let kept = fields
            .entry((self.0.to_owned(), field.name().to_owned()))
            .or_default();
        if value.len() > kept.len() {
            *kept = value;
        }
    }
}

fn assert_bounded(recorded: &Recorded, span: &str, field: &str, starts: &str) {
    let value = recorded
        .field(span, field)
        .unwrap_or_else(|| panic!("`{span}` records `{field}`"));
    assert!(
        value.len() <= BOUND,
        "`{field}` of `{span}` is {} bytes long",
        value.len()
    );
    assert!(value.contains(starts), "{value}");
}

/// A Chat Completions answer calling `tool` under `call_id`, said to be `id` from `model`.
fn calling(id: &str, model: &str, tool: &str, call_id: &str) -> serde_json::Value {
    let mut answer = chat::reply(
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": call_id, "type": "function",
            "function": {"name": tool, "arguments": "{\"a\": 1, \"b\": 2}"}
        }]}),
        "tool_calls",
    );
    answer["id"] = json!(id);
    answer["model"] = json!(model);
    answer
}

#[tokio::test]
async fn huge_identifiers_in_an_answer_reach_the_spans_cut_short() {
    let answer = calling(
        &format!("chatcmpl-{}", "i".repeat(HUGE)),
        &format!("gpt-{}", "m".repeat(HUGE)),
        "add",
        &format!("call_{}", "c".repeat(HUGE)),
    );
    let done = chat::reply(json!({"role": "assistant", "content": "3"}), "stop");
    let server = Hostile::start(vec![Reply::json(&answer), Reply::json(&done)]).await;
    let settings = Settings::default().retry(RetryPolicy::none());
    let agent = AgentBuilder::new(model_at::<Chat>(&server.url(), &settings))
        .tool(crate::common::add_tool())
        .build();

    let recorded = Recorded::default();
    let subscriber = crate::common::subscriber::registry().with(recorded.clone());
    agent
        .prompt("Add 1 and 2.")
        .into_future()
        .with_subscriber(subscriber)
        .await
        .expect("the run ends with the second answer");

    assert_bounded(&recorded, "chat", "gen_ai.response.id", "chatcmpl-iii");
    assert_bounded(&recorded, "chat", "gen_ai.response.model", "gpt-mmm");
    assert_bounded(&recorded, "execute_tool", "gen_ai.tool.call.id", "call_ccc");
}

#[tokio::test]
async fn the_error_of_a_call_to_an_unknown_tool_quotes_its_name_short_and_escaped() {
    let name = format!("lookup\u{1b}]0;pwned\u{7}{}", "t".repeat(HUGE));
    let answer = calling("chatcmpl-1", "gpt-1", &name, "call_1");
    let server = Hostile::always(Reply::json(&answer)).await;
    let settings = Settings::default().retry(RetryPolicy::none());
    let agent = AgentBuilder::new(model_at::<Chat>(&server.url(), &settings)).build();

    let error = agent.prompt("Look it up.").await.unwrap_err().to_string();
    assert!(
        error.len() <= BOUND,
        "the error is {} bytes long",
        error.len()
    );
    assert!(!error.contains('\u{1b}'), "{error}");
    assert!(error.contains("lookup\\u001b]0;pwned"), "{error}");
}
