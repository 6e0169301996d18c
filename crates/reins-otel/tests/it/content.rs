//! Recorded content in the GenAI conventions' message shapes, which trace viewers read as a
//! chat: system instructions, input messages (tool calls and results included) and the
//! answer with its finish reason.

use crate::harness::{NamedModel, Recorded, attr, attr_str, span};
use reins::agent::*;
use reins::completion::CompletionError;
use reins::hooks::redaction::Redaction;
use reins::testing::Turn;
use reins::tool::tool_fn;
use reins_otel::Telemetry;
use serde_json::{Value, json};
use std::convert::Infallible;

fn parsed(span: &opentelemetry_sdk::trace::SpanData, key: &str) -> Value {
    let text = attr_str(span, key);
    serde_json::from_str(&text)
        .unwrap_or_else(|error| panic!("{key} is not JSON ({error}): {text}"))
}

#[tokio::test]
async fn messages_are_recorded_as_role_and_typed_parts_with_the_system_instructions() {
    let recorded = Recorded::start(Telemetry::new().capture_content(|_, text| Some(text)));
    let model = NamedModel::new([
        Turn::tool_call("lookup", json!({"city": "Paris"})),
        Turn::text("It is sunny in Paris."),
    ]);
    let agent = AgentBuilder::new(model)
        .name("weather")
        .preamble("Answer briefly.")
        .tool(tool_fn(
            "lookup",
            "Looks a city up.",
            |args: Value| async move {
                Ok::<_, Infallible>(format!("sunny in {}", args["city"].as_str().unwrap_or("?")))
            },
        ))
        .build();
    agent.prompt("Weather in Paris?").await.unwrap();
    let spans = recorded.spans();
    let chats: Vec<_> = spans.iter().filter(|s| s.name == "chat gpt-test").collect();
    assert_eq!(chats.len(), 2);

    let instructions = json!([{"type": "text", "content": "Answer briefly."}]);
    let asked =
        json!({"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]});
    let call = json!({
        "role": "assistant",
        "parts": [{"type": "tool_call", "id": "call_1_0", "name": "lookup", "arguments": {"city": "Paris"}}]
    });
    let result = json!({
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "call_1_0", "response": "sunny in Paris"}]
    });
    for chat in &chats {
        assert_eq!(parsed(chat, "gen_ai.system_instructions"), instructions);
    }
    assert_eq!(parsed(chats[0], "gen_ai.input.messages"), json!([asked]));
    assert_eq!(
        parsed(chats[0], "gen_ai.output.messages"),
        json!([{
            "role": "assistant",
            "parts": call["parts"],
            "finish_reason": "tool_call"
        }])
    );
    assert_eq!(
        parsed(chats[1], "gen_ai.input.messages"),
        json!([asked, call, result])
    );
    assert_eq!(
        parsed(chats[1], "gen_ai.output.messages"),
        json!([{
            "role": "assistant",
            "parts": [{"type": "text", "content": "It is sunny in Paris."}],
            "finish_reason": "stop"
        }])
    );
    let tool = span(&spans, "execute_tool lookup");
    assert_eq!(attr_str(tool, "gen_ai.tool.call.result"), "sunny in Paris");

    // The run's span holds the run's own input and answer: as messages, and as plain text
    // where trace viewers list a trace's input and output.
    let run = span(&spans, "invoke_agent weather");
    assert_eq!(parsed(run, "gen_ai.input.messages"), json!([asked]));
    assert_eq!(
        parsed(run, "gen_ai.output.messages"),
        json!([{
            "role": "assistant",
            "parts": [{"type": "text", "content": "It is sunny in Paris."}],
            "finish_reason": "stop"
        }])
    );
    assert_eq!(attr_str(run, "input.value"), "Weather in Paris?");
    assert_eq!(attr_str(run, "output.value"), "It is sunny in Paris.");
}

/// Content recorded is what the run's hooks let through: a secret a `Redaction` hook masks
/// in the prompt, the preamble and a tool's result appears in no span, though every kind of
/// content is recorded as it is.
#[tokio::test]
async fn what_a_redaction_hook_masks_is_masked_in_every_span() {
    const SECRET: &str = "Tr0ub4dor-horse-staple";
    let recorded = Recorded::start(Telemetry::new().capture_content(|_, text| Some(text)));
    let model = NamedModel::new([
        Turn::tool_call("vault", json!({"name": "db"})),
        Turn::text("Stored."),
    ]);
    let agent = AgentBuilder::new(model)
        .name("keeper")
        .preamble(format!("The admin password is {SECRET}."))
        .tool(tool_fn("vault", "Reads a secret.", |_: Value| async move {
            Ok::<_, Infallible>(format!("db: {SECRET}"))
        }))
        .add_hook(reins::hooks::redaction::Redaction::new().secret(SECRET))
        .build();
    agent
        .prompt(format!("Store {SECRET} in the vault."))
        .await
        .unwrap();
    let spans = recorded.spans();
    let leaks: Vec<_> = spans
        .iter()
        .flat_map(|s| s.attributes.iter().map(move |kv| (&s.name, kv)))
        .filter(|(_, kv)| kv.value.as_str().contains(SECRET))
        .map(|(name, kv)| format!("{name}: {}", kv.key))
        .collect();
    assert!(leaks.is_empty(), "the secret reached {leaks:?}");
    // Recorded all the same, masked.
    let run = span(&spans, "invoke_agent keeper");
    let input = attr_str(run, "input.value");
    assert!(input.starts_with("Store [REDACTED"), "{input}");
    let chat = spans
        .iter()
        .find(|s| s.name == "chat gpt-test")
        .expect("a chat span");
    let instructions = attr_str(chat, "gen_ai.system_instructions");
    assert!(instructions.contains("[REDACTED"), "{instructions}");
}

/// Denies every tool call.
struct DenyAll;
impl AgentHook for DenyAll {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.tool_name() {
            Some(_) => DispatchAction::deny("not allowed"),
            None => DispatchAction::proceed(),
        }
    }
}

#[tokio::test]
async fn a_tool_result_is_recorded_only_for_a_call_that_succeeded() {
    let failing = tool_fn("lookup", "Fails.", |_: Value| async move {
        Err::<String, _>("backend down")
    });
    let denied = tool_fn("lookup", "Works.", |_: Value| async move {
        Ok::<_, Infallible>("sunny")
    });
    let runs = [
        (
            AgentBuilder::new(lookup_then_answer())
                .tool(failing)
                .build(),
            "failed",
        ),
        (
            AgentBuilder::new(lookup_then_answer())
                .tool(denied)
                .add_hook(DenyAll)
                .build(),
            "denied",
        ),
    ];
    for (agent, outcome) in runs {
        let recorded = Recorded::start(Telemetry::new().capture_content(|_, text| Some(text)));
        agent.prompt("Weather?").await.unwrap();
        let spans = recorded.spans();
        let tool = span(&spans, "execute_tool lookup");
        assert_eq!(attr_str(tool, "reins.tool.outcome"), outcome);
        assert_eq!(attr(tool, "gen_ai.tool.call.result"), None, "{outcome}");
        assert!(attr(tool, "gen_ai.tool.call.arguments").is_some());
    }
}

fn lookup_then_answer() -> NamedModel {
    NamedModel::new([
        Turn::tool_call("lookup", json!({"city": "Paris"})),
        Turn::text("No idea."),
    ])
}

/// A tool whose result is `text` whatever it is asked.
fn returning(text: String) -> impl reins::tool::Tool {
    tool_fn("lookup", "Looks up.", move |_: Value| {
        let text = text.clone();
        async move { Ok::<_, Infallible>(text) }
    })
}

#[tokio::test]
async fn each_part_is_cut_to_the_limit_at_a_char_boundary_and_the_json_stays_valid() {
    let telemetry = Telemetry::new()
        .capture_content(|_, text| Some(text))
        .content_part_limit(15);
    let recorded = Recorded::start(telemetry);
    let model = NamedModel::new([
        Turn::tool_call("lookup", json!({"query": "x".repeat(40)})),
        Turn::text("done"),
    ]);
    // 'é' is two bytes: a cut at 15 bytes would split the eighth.
    let result = "é".repeat(100);
    let agent = AgentBuilder::new(model).tool(returning(result)).build();
    agent.prompt("short").await.unwrap();
    let spans = recorded.spans();

    let cut_result = format!("{}…[truncated, 200 bytes in all]", "é".repeat(7));
    let tool = span(&spans, "execute_tool lookup");
    assert_eq!(attr_str(tool, "gen_ai.tool.call.result"), cut_result);
    let arguments = json!({"query": "x".repeat(40)}).to_string();
    let cut_arguments = format!("{}…[truncated, 52 bytes in all]", &arguments[..15]);
    assert_eq!(
        parsed(tool, "gen_ai.tool.call.arguments"),
        json!(cut_arguments)
    );

    let chats: Vec<_> = spans.iter().filter(|s| s.name == "chat gpt-test").collect();
    assert_eq!(
        parsed(chats[1], "gen_ai.input.messages"),
        json!([
            {"role": "user", "parts": [{"type": "text", "content": "short"}]},
            {"role": "assistant", "parts": [
                {"type": "tool_call", "id": "call_1_0", "name": "lookup", "arguments": cut_arguments}
            ]},
            {"role": "tool", "parts": [
                {"type": "tool_call_response", "id": "call_1_0", "response": cut_result}
            ]}
        ])
    );
}

#[tokio::test]
async fn a_huge_tool_result_is_cut_to_64_kib_by_default() {
    let recorded = Recorded::start(Telemetry::new().capture_content(|_, text| Some(text)));
    let model = NamedModel::new([Turn::tool_call("lookup", json!({})), Turn::text("done")]);
    let agent = AgentBuilder::new(model)
        .tool(returning("y".repeat(1_000_000)))
        .build();
    agent.prompt("go").await.unwrap();
    let spans = recorded.spans();
    let expected = format!("{}…[truncated, 1000000 bytes in all]", "y".repeat(65_536));
    let tool = span(&spans, "execute_tool lookup");
    assert_eq!(attr_str(tool, "gen_ai.tool.call.result"), expected);
    let chats: Vec<_> = spans.iter().filter(|s| s.name == "chat gpt-test").collect();
    let input = parsed(chats[1], "gen_ai.input.messages");
    assert_eq!(input[2]["parts"][0]["response"], json!(expected));
}

#[tokio::test]
async fn a_key_across_the_cut_is_masked_whole_in_every_span() {
    // The default masks find `sk-` keys of at least 20 characters: cut first, the key's
    // first characters before the 64 KiB boundary would be too short to match and be kept.
    let redaction = Redaction::new();
    let telemetry =
        Telemetry::new().capture_content(move |_, text| Some(redaction.redact(&text).into_owned()));
    let recorded = Recorded::start(telemetry);
    let key = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34";
    let key_start = &key[..12];
    let across_the_cut = |filler: &str| format!("{} {key} and more", filler.repeat(65_536 - 17));
    let model = NamedModel::new([Turn::tool_call("lookup", json!({})), Turn::text("done")]);
    let agent = AgentBuilder::new(model)
        .tool(returning(across_the_cut("y")))
        .build();
    agent.prompt(across_the_cut("p")).await.unwrap();
    let spans = recorded.spans();

    let tool = span(&spans, "execute_tool lookup");
    let result = attr_str(tool, "gen_ai.tool.call.result");
    assert!(result.contains("…[truncated,"), "the result is cut");
    assert!(!result.contains(key_start), "a key's start is recorded");
    let chats: Vec<_> = spans.iter().filter(|s| s.name == "chat gpt-test").collect();
    let input = attr_str(chats[1], "gen_ai.input.messages");
    assert!(input.contains("…[truncated,"), "the parts are cut");
    assert!(!input.contains(key_start), "a key's start is recorded");
    let run = span(&spans, "invoke_agent");
    for attribute in ["gen_ai.input.messages", "input.value"] {
        let prompt = attr_str(run, attribute);
        assert!(prompt.contains("…[truncated,"), "{attribute} is cut");
        assert!(
            !prompt.contains(key_start),
            "{attribute} records a key's start"
        );
    }
}

#[tokio::test]
async fn a_failed_calls_error_body_is_not_recorded_when_content_is_off() {
    let recorded = Recorded::start(Telemetry::new());
    // A provider's error body may echo the prompt.
    let echoed = CompletionError::Http {
        status: 400,
        body: r#"{"error": "the prompt 'my card is 4111 1111' is too long"}"#.into(),
    };
    let primary = NamedModel::new([Turn::error(echoed)]);
    let backup = NamedModel::new([Turn::text("Done.")]);
    let agent = AgentBuilder::new(primary)
        .named_model("backup", backup)
        .add_hook(reins::hooks::fallback::ModelFallback::new([
            "default", "backup",
        ]))
        .build();
    assert_eq!(agent.prompt("my card is 4111 1111").await.unwrap(), "Done.");
    let spans = recorded.spans();
    let values = spans.iter().flat_map(|span| {
        let events = span.events.iter().flat_map(|event| &event.attributes);
        span.attributes.iter().chain(events)
    });
    for kv in values {
        let value = kv.value.as_str();
        assert!(!value.contains("4111"), "{} = {value}", kv.key);
    }
    // What a person debugging it needs is there: which model failed, why in kind, and where
    // the turn went.
    let failed = spans
        .iter()
        .find(|span| attr(span, "reins.model.label").is_some_and(|l| l.as_str() == "default"))
        .unwrap();
    let event = failed
        .events
        .iter()
        .find(|event| {
            event.name
                == "the model call failed (the server refused the request: HTTP 400); \
                           falling back to another model"
        })
        .unwrap();
    let field = |key: &str| {
        event
            .attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| kv.value.as_str().into_owned())
    };
    assert_eq!(field("from").as_deref(), Some("default"));
    assert_eq!(field("to").as_deref(), Some("backup"));
    assert_eq!(field("error.type").as_deref(), Some("400"));
}
