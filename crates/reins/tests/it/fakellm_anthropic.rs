//! A multi-turn tool loop with hooks against fakellm speaking Anthropic's Messages API:
//! blocking and streaming.

use crate::common::fakellm::FakeLlm;
use futures::StreamExt;
use reins::agent::*;
use reins::providers::anthropic::Anthropic;
use reins::tool::tool_fn;
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::{Arc, Mutex};

const RULES: &str = r#"
version: 1
rules:
  - name: ask_weather
    when:
      turn: 1
      messages_contain: "weather"
    respond:
      tool_calls:
        - name: get_weather
          arguments: {city: "Oslo"}
  - name: answer
    when:
      turn: 2
      tool_result_contains: "snow"
    respond:
      content: "It is snowing in Oslo."
"#;

#[derive(Deserialize, JsonSchema)]
struct City {
    city: String,
}

#[derive(Clone, Default)]
struct Audit(Arc<Mutex<Vec<String>>>);

impl AgentHook for Audit {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if let (Some(name), Some(args)) = (event.tool_name(), event.tool_args()) {
            self.0.lock().unwrap().push(format!("{name} {args}"));
        }
        DispatchAction::proceed()
    }
}

fn agent(server: &FakeLlm, conversation: &str, audit: Audit) -> Agent {
    let model = Anthropic::builder()
        .api_key("not-used")
        .base_url(server.base_url())
        .header("X-Fakellm-Conversation-Id", conversation)
        .build()
        .unwrap()
        .completion("claude-sonnet-4-5");
    let weather = tool_fn(
        "get_weather",
        "Weather of a city.",
        |args: City| async move {
            Ok::<_, std::convert::Infallible>(format!("{}: snow, -3 C", args.city))
        },
    );
    AgentBuilder::new(model)
        .tool(weather)
        .add_hook(audit)
        .build()
}

#[tokio::test]
async fn a_tool_loop_runs_against_fakellm_over_the_messages_api() {
    let server = FakeLlm::start(RULES);

    let audit = Audit::default();
    let answer = agent(&server, "anthropic-blocking", audit.clone())
        .prompt("What's the weather in Oslo?")
        .await
        .unwrap();
    assert_eq!(answer, "It is snowing in Oslo.");
    assert_eq!(
        *audit.0.lock().unwrap(),
        vec!["get_weather {\"city\":\"Oslo\"}"]
    );

    let audit = Audit::default();
    let mut stream = agent(&server, "anthropic-streaming", audit.clone())
        .prompt("What's the weather in Oslo?")
        .stream();
    let (mut text, mut results, mut output) = (String::new(), Vec::new(), None);
    while let Some(item) = stream.next().await {
        match item.unwrap() {
            StreamItem::Text(delta) => text.push_str(&delta),
            StreamItem::ToolResult { result, .. } => results.push(result),
            StreamItem::Final(response) => output = Some(response.output),
            _ => {}
        }
    }
    assert_eq!(text, "It is snowing in Oslo.");
    assert_eq!(results, vec!["Oslo: snow, -3 C"]);
    assert_eq!(output.as_deref(), Some("It is snowing in Oslo."));
    assert_eq!(
        *audit.0.lock().unwrap(),
        vec!["get_weather {\"city\":\"Oslo\"}"]
    );
}
