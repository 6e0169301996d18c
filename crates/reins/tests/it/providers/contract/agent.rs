//! A whole agent run over the wire: the model asks for two tool calls, the agent runs them and
//! sends the results back by call id, the model answers.

use crate::common::add_tool;
use crate::providers::fixtures::{Fixture, model_of};
use crate::providers::support::{KEY, bodies, json_response, sse_response};
use futures::StreamExt;
use reins::agent::{Agent, AgentBuilder, PromptError, StreamItem};
use reins::completion::CompletionError;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const ANSWER: &str = "3 and 7";

/// A server whose first reply calls `add` twice and whose second answers.
async fn tool_loop_server<F: Fixture>(stream: bool) -> MockServer {
    let (first, second) = if stream {
        (
            sse_response(&F::tool_calls_stream()),
            sse_response(&F::text_stream(&["3 and ", "7"])),
        )
    } else {
        (
            json_response(F::tool_calls_reply()),
            json_response(F::text_reply(ANSWER)),
        )
    };
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(first)
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(second)
        .mount(&server)
        .await;
    server
}

fn agent<F: Fixture>(server: &MockServer) -> Agent {
    AgentBuilder::new(model_of::<F>(&server.uri()))
        .preamble("Use the tool.")
        .tool(add_tool())
        .build()
}

/// The second model call carried both results, by call id, in order; the first none.
async fn assert_results_went_back<F: Fixture>(server: &MockServer) {
    let bodies = bodies(server).await;
    assert_eq!(bodies.len(), 2, "one call per turn");
    assert_eq!(F::sent_tool_results(&bodies[0]), vec![]);
    let [first, second] = F::tool_call_ids();
    assert_eq!(
        F::sent_tool_results(&bodies[1]),
        vec![
            (first.to_owned(), "3".to_owned()),
            (second.to_owned(), "7".to_owned())
        ]
    );
}

pub async fn an_agent_runs_a_tool_loop<F: Fixture>() {
    let server = tool_loop_server::<F>(false).await;
    let response = agent::<F>(&server)
        .prompt("add 1+2 and 3+4")
        .extended_details()
        .await
        .unwrap();
    assert_eq!(response.output, ANSWER);
    assert_eq!(response.turns(), 2);
    let mut usage = F::usage();
    usage += F::usage();
    assert_eq!(response.usage(), usage, "usage sums over the run");
    assert_results_went_back::<F>(&server).await;
}

pub async fn an_agent_streams_a_tool_loop<F: Fixture>() {
    let server = tool_loop_server::<F>(true).await;
    let items: Vec<_> = agent::<F>(&server)
        .prompt("add 1+2 and 3+4")
        .stream()
        .collect()
        .await;
    let mut text = String::new();
    let mut results = Vec::new();
    for item in &items {
        match item.as_ref().unwrap() {
            StreamItem::Text(delta) => text.push_str(delta),
            StreamItem::ToolResult {
                tool_call_id,
                result,
                ..
            } => results.push((tool_call_id.clone(), result.clone())),
            _ => {}
        }
    }
    let Some(Ok(StreamItem::Final(response))) = items.last() else {
        panic!("the run ends with its final response: {items:?}");
    };
    assert_eq!(response.output, ANSWER);
    assert!(text.ends_with(ANSWER), "{text}");
    let [first, second] = F::tool_call_ids();
    assert_eq!(
        results,
        vec![
            (first.to_owned(), "3".to_owned()),
            (second.to_owned(), "7".to_owned())
        ]
    );
    let mut usage = F::usage();
    usage += F::usage();
    assert_eq!(response.usage(), usage);
    assert_results_went_back::<F>(&server).await;
}

pub async fn a_provider_error_reaches_the_agent_as_a_completion_error<F: Fixture>() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_json(F::error_body("bad key")))
        .mount(&server)
        .await;
    let blocking = agent::<F>(&server).prompt("hi").await.unwrap_err();
    let mut items: Vec<_> = agent::<F>(&server).prompt("hi").stream().collect().await;
    let Some(Err(streamed)) = items.pop() else {
        panic!("the streamed run ends with its error: {items:?}");
    };
    for error in [blocking, streamed] {
        assert!(
            matches!(
                &error,
                PromptError::Completion {
                    source: CompletionError::Http { status: 401, .. },
                    ..
                }
            ),
            "{error:?}"
        );
        assert!(!format!("{error} {error:?}").contains(KEY));
    }
}
