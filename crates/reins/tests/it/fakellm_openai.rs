//! A multi-turn tool loop with hooks against fakellm, an independent server speaking the
//! OpenAI Chat Completions protocol: blocking and streaming.

use crate::common::fakellm::FakeLlm;
use futures::StreamExt;
use reins::agent::*;
use reins::providers::openai::OpenAI;
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
          arguments: {city: "Paris"}
  - name: answer
    when:
      turn: 2
      tool_result_contains: "sunny"
    respond:
      content: "It is sunny in Paris today."
"#;

#[derive(Deserialize, JsonSchema)]
struct City {
    city: String,
}

#[derive(Clone, Default)]
struct Audit(Arc<Mutex<Vec<String>>>);

impl AgentHook for Audit {
    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if let (Some(name), Some(args)) = (event.tool_name(), event.tool_args()) {
            self.0
                .lock()
                .unwrap()
                .push(format!("turn {} {name} {args}", ctx.turn()));
        }
        DispatchAction::proceed()
    }
}

fn agent(server: &FakeLlm, conversation: &str, audit: Audit) -> Agent {
    let model = OpenAI::builder()
        .api_key("not-used")
        .base_url(format!("{}/v1", server.base_url()))
        .header("X-Fakellm-Conversation-Id", conversation)
        .build()
        .unwrap()
        .completion("gpt-5.5");
    let weather = tool_fn(
        "get_weather",
        "Weather of a city.",
        |args: City| async move {
            Ok::<_, std::convert::Infallible>(format!("{}: sunny, 21 C", args.city))
        },
    );
    AgentBuilder::new(model)
        .tool(weather)
        .add_hook(audit)
        .build()
}

#[tokio::test]
async fn a_tool_loop_runs_against_fakellm_blocking_and_streaming() {
    let server = FakeLlm::start(RULES);

    let audit = Audit::default();
    let response = agent(&server, "blocking", audit.clone())
        .prompt("What's the weather in Paris?")
        .extended_details()
        .await
        .unwrap();
    assert_eq!(response.output, "It is sunny in Paris today.");
    assert_eq!(response.turns(), 2);
    assert_eq!(
        *audit.0.lock().unwrap(),
        vec!["turn 1 get_weather {\"city\":\"Paris\"}"]
    );

    let audit = Audit::default();
    let mut stream = agent(&server, "streaming", audit.clone())
        .prompt("What's the weather in Paris?")
        .stream();
    let (mut text, mut tool_results, mut output) = (String::new(), Vec::new(), None);
    while let Some(item) = stream.next().await {
        match item.unwrap() {
            StreamItem::Text(delta) => text.push_str(&delta),
            StreamItem::ToolResult { result, .. } => tool_results.push(result),
            StreamItem::Final(response) => output = Some(response.output),
            _ => {}
        }
    }
    assert_eq!(text, "It is sunny in Paris today.");
    assert_eq!(tool_results, vec!["Paris: sunny, 21 C"]);
    assert_eq!(output.as_deref(), Some("It is sunny in Paris today."));
    assert_eq!(
        *audit.0.lock().unwrap(),
        vec!["turn 1 get_weather {\"city\":\"Paris\"}"]
    );
}
