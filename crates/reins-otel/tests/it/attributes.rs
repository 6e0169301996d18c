//! What the conventions ask of a `chat` span beyond its model: whether the request streams,
//! the output type it asks for, and an HTTP failure's `error.type`; and what no span carries.

use crate::harness::{NamedModel, Recorded, attr, attr_str, span};
use futures::StreamExt;
use opentelemetry::Value as OtelValue;
use reins::agent::AgentBuilder;
use reins::completion::CompletionError;
use reins::testing::Turn;
use reins::tool::tool_fn;
use reins_otel::Telemetry;
use serde_json::{Value, json};
use std::convert::Infallible;

#[tokio::test]
async fn a_streamed_request_says_so_and_an_awaited_one_says_nothing() {
    let recorded = Recorded::start(Telemetry::new());
    let agent = AgentBuilder::new(NamedModel::new([Turn::text("hello")])).build();
    let items: Vec<_> = agent.prompt("hi").stream().collect().await;
    assert!(!items.is_empty());
    let spans = recorded.spans();
    let chat = span(&spans, "chat gpt-test");
    assert_eq!(
        attr(chat, "gen_ai.request.stream"),
        Some(OtelValue::Bool(true))
    );

    let recorded = Recorded::start(Telemetry::new());
    let agent = AgentBuilder::new(NamedModel::new([Turn::text("hello")])).build();
    agent.prompt("hi").await.unwrap();
    let spans = recorded.spans();
    let chat = span(&spans, "chat gpt-test");
    assert_eq!(
        attr(chat, "gen_ai.request.stream"),
        None,
        "recorded if and only if the request streams"
    );
    assert_eq!(
        attr(chat, "gen_ai.output.type"),
        None,
        "no type was asked for"
    );
}

#[tokio::test]
async fn a_tools_long_description_is_cut_on_its_span_like_a_servers_name() {
    // A tool source's server chooses the description, and it is recorded on every call's
    // span whether content is captured or not.
    let recorded = Recorded::start(Telemetry::new());
    let description = format!("Looks up.\u{1b}[2J{}", "d".repeat(100_000));
    let tool = tool_fn("lookup", description.clone(), |_: Value| async move {
        Ok::<_, Infallible>("found")
    });
    let model = NamedModel::new([Turn::tool_call("lookup", json!({})), Turn::text("done")]);
    let agent = AgentBuilder::new(model).tool(tool).build();
    agent.prompt("go").await.unwrap();
    let spans = recorded.spans();
    let recorded = attr_str(
        span(&spans, "execute_tool lookup"),
        "gen_ai.tool.description",
    );
    let marker = format!("…[truncated, {} bytes in all]", description.len());
    assert!(recorded.ends_with(&marker), "{}", &recorded[..80]);
    assert!(recorded.len() < 2048, "{} bytes recorded", recorded.len());
    assert!(
        recorded.starts_with("Looks up.\\u001b[2Jddd"),
        "its control sequences are escaped: {}",
        &recorded[..40]
    );
}

#[tokio::test]
async fn native_structured_output_asks_for_json() {
    let recorded = Recorded::start(Telemetry::new());
    let mut model = NamedModel::new([Turn::text(r#"{"name": "Paris"}"#)]);
    model.inner = model.inner.with_native_output();
    let agent = AgentBuilder::new(model).build();
    let city = agent.prompt("A city?").output::<serde_json::Value>().await;
    assert_eq!(city.unwrap()["name"], "Paris");
    let spans = recorded.spans();
    let chat = span(&spans, "chat gpt-test");
    assert_eq!(attr_str(chat, "gen_ai.output.type"), "json");
}

#[tokio::test]
async fn an_http_failure_is_typed_by_its_status_code() {
    for status in [429, 503] {
        let recorded = Recorded::start(Telemetry::new());
        let failure = CompletionError::Http {
            status,
            body: "try later".into(),
        };
        let model = NamedModel::new([Turn::error(failure)]);
        let agent = AgentBuilder::new(model).build();
        agent.prompt("hi").await.unwrap_err();
        let spans = recorded.spans();
        let status = status.to_string();
        assert_eq!(
            attr_str(span(&spans, "chat gpt-test"), "error.type"),
            status
        );
        assert_eq!(attr_str(span(&spans, "invoke_agent"), "error.type"), status);
    }
}

/// A run that names its conversation records it as `gen_ai.conversation.id`, so a viewer
/// groups a chat's runs (each its own run id) together; one that names none records its run
/// id; a durable run keeps its conversation when resumed.
#[tokio::test]
async fn runs_of_one_conversation_share_its_id_and_a_resumed_run_keeps_it() {
    use reins::agent::{AgentHook, DispatchAction, DispatchEvent, HookContext, PromptError};
    use reins::store::MemoryStore;

    let recorded = Recorded::start(Telemetry::new());
    let turns = [Turn::text("one"), Turn::text("two"), Turn::text("three")];
    let agent = AgentBuilder::new(NamedModel::new(turns)).build();
    for run_id in ["first", "second"] {
        agent
            .prompt("hi")
            .run_id(run_id)
            .conversation_id("chat-7")
            .await
            .unwrap();
    }
    agent.prompt("hi").run_id("alone").await.unwrap();
    let spans = recorded.spans();
    let runs: Vec<_> = spans
        .iter()
        .filter(|s| s.name == "invoke_agent")
        .map(|s| attr_str(s, "gen_ai.conversation.id"))
        .collect();
    assert_eq!(runs, ["chat-7", "chat-7", "alone"]);

    /// Suspends every tool call.
    struct Hold;
    impl AgentHook for Hold {
        async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
            match event.tool_name() {
                Some(_) => DispatchAction::suspend("wait"),
                None => DispatchAction::proceed(),
            }
        }
    }
    let store = MemoryStore::new();
    let model = NamedModel::new([
        Turn::tool_call("clock", serde_json::json!({})),
        Turn::text("Noon."),
    ]);
    let clock = reins::tool::tool_fn("clock", "The time.", |_: serde_json::Value| async move {
        Ok::<_, std::convert::Infallible>("12:00")
    });
    let agent = AgentBuilder::new(model).tool(clock).add_hook(Hold).build();
    let suspended = agent
        .prompt("time?")
        .run_id("held")
        .conversation_id("chat-8")
        .durable(store.clone())
        .await;
    assert!(matches!(suspended, Err(PromptError::Suspended { .. })));
    let recorded = Recorded::start(Telemetry::new());
    agent
        .resume_stored(store, "held")
        .decide("t1c0", reins::agent::ToolDecision::approve())
        .await
        .unwrap();
    let spans = recorded.spans();
    let resumed = span(&spans, "invoke_agent");
    assert_eq!(attr_str(resumed, "gen_ai.conversation.id"), "chat-8");
}

#[tokio::test]
async fn no_span_carries_tracings_bookkeeping() {
    let recorded = Recorded::start(Telemetry::new());
    let model = NamedModel::new([
        Turn::tool_call("lookup", json!({"city": "Paris"})),
        Turn::text("Sunny."),
    ]);
    let lookup = tool_fn("lookup", "Looks up.", |_: Value| async move {
        Ok::<_, Infallible>("sunny")
    });
    let agent = AgentBuilder::new(model).tool(lookup).build();
    agent.prompt("Weather?").await.unwrap();
    let spans = recorded.spans();
    assert_eq!(spans.len(), 4);
    // The target names reins's trace module, and the busy and idle times say how long the
    // span was polled: neither describes the operation, and every span carried all three.
    let noise = [
        "target",
        "busy_ns",
        "idle_ns",
        "level",
        "thread.id",
        "code.file.path",
    ];
    for span in &spans {
        let keys: Vec<&str> = span.attributes.iter().map(|kv| kv.key.as_str()).collect();
        for key in noise {
            assert!(!keys.contains(&key), "{} has {key}: {keys:?}", span.name);
        }
    }
}
