//! A tool whose name Gemini would refuse (a digit first) still works on Gemini: it is sent
//! under a name Gemini takes, and its calls come back to the tool.

use super::{body_of, model};
use crate::providers::fixtures::gemini::reply;
use crate::providers::support::json_response;
use reins::agent::AgentBuilder;
use reins::providers::gemini::GEMINI_2_5_FLASH;
use reins::tool::tool_fn;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

#[derive(Deserialize, JsonSchema)]
struct Scene {
    shape: String,
}

#[tokio::test]
async fn a_tool_named_with_a_digit_first_runs_and_is_named_alike_throughout() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json_response(reply(
            json!([{"functionCall": {"name": "_3d_render", "args": {"shape": "cube"}}}]),
            "STOP",
        )))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(json_response(reply(json!([{"text": "Rendered."}]), "STOP")))
        .with_priority(2)
        .mount(&server)
        .await;
    let render = tool_fn("3d_render", "Renders a shape.", |scene: Scene| async move {
        Ok::<_, std::io::Error>(format!("a {} rendered", scene.shape))
    });
    let agent = AgentBuilder::new(model(&server, GEMINI_2_5_FLASH))
        .tool(render)
        .build();

    let answer = agent.prompt("Render a cube.").max_turns(3).await.unwrap();
    assert_eq!(answer, "Rendered.");

    let second = body_of(&server, 1).await;
    assert_eq!(
        second["tools"][0]["functionDeclarations"][0]["name"],
        "_3d_render"
    );
    let contents = second["contents"].as_array().unwrap();
    assert_eq!(
        contents[1]["parts"][0]["functionCall"]["name"], "_3d_render",
        "{second}"
    );
    let result = &contents[2]["parts"][0]["functionResponse"];
    assert_eq!(result["name"], "_3d_render", "{second}");
    assert_eq!(result["response"]["result"], "a cube rendered", "{second}");
}

#[tokio::test]
async fn a_tool_chosen_by_such_a_name_is_chosen_under_the_name_gemini_was_sent() {
    use reins::completion::CompletionRequest;
    use reins::message::ToolChoice;
    use reins::tool::ToolDefinition;
    let server = MockServer::start().await;
    let request = CompletionRequest {
        tools: std::sync::Arc::from(vec![ToolDefinition {
            name: "3d_render".into(),
            description: "Renders.".into(),
            parameters: json!({"type": "object"}),
        }]),
        tool_choice: Some(ToolChoice::Specific("3d_render".into())),
        ..super::prompt("x")
    };
    let body = model(&server, GEMINI_2_5_FLASH)
        .request_body(&request, false)
        .unwrap();
    assert_eq!(
        body["toolConfig"]["functionCallingConfig"]["allowedFunctionNames"],
        json!(["_3d_render"])
    );
}
