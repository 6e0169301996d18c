//! A model that panics fails its run with an error the caller can read; the panic never
//! unwinds into the caller's task, and what the model streamed before it is kept.

use futures::StreamExt;
use reins::agent::*;
use reins::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, CompletionStream,
    StreamChunk,
};

/// Where the model panics.
#[derive(Clone, Copy)]
enum PanicsWhen {
    /// Answering an awaited call.
    Answering,
    /// Opening its stream.
    Opening,
    /// After streaming two fragments of text.
    Streaming,
}

struct PanickingModel(PanicsWhen);

impl CompletionModel for PanickingModel {
    async fn completion(
        &self,
        _request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        panic!("the model broke answering");
    }

    async fn stream(
        &self,
        _request: &CompletionRequest,
    ) -> Result<CompletionStream, CompletionError> {
        if matches!(self.0, PanicsWhen::Opening) {
            panic!("the model broke opening its stream");
        }
        let mut sent = 0;
        Ok(Box::pin(futures::stream::poll_fn(move |_| {
            sent += 1;
            if sent > 2 {
                panic!("the model broke mid-stream");
            }
            std::task::Poll::Ready(Some(Ok(StreamChunk::Text(format!("part{sent} ")))))
        })))
    }
}

/// The run's items, consumed to the end.
async fn stream_of(when: PanicsWhen) -> Vec<Result<StreamItem, PromptError>> {
    let agent = AgentBuilder::new(PanickingModel(when)).build();
    agent.prompt("Go").stream().collect().await
}

fn assert_model_panic(error: &PromptError, message: &str) {
    let PromptError::Completion { source, .. } = error else {
        panic!("expected the model call's failure, got {error:?}");
    };
    let text = source.to_string();
    assert!(text.contains("the model panicked"), "{text}");
    assert!(text.contains(message), "{text}");
}

#[tokio::test]
async fn a_model_panicking_on_an_awaited_call_fails_the_run() {
    let agent = AgentBuilder::new(PanickingModel(PanicsWhen::Answering)).build();
    let Err(error) = agent.prompt("Go").await else {
        panic!("the run cannot succeed");
    };
    assert_model_panic(&error, "the model broke answering");
}

#[tokio::test]
async fn a_model_panicking_as_it_opens_its_stream_fails_the_run() {
    let items = stream_of(PanicsWhen::Opening).await;
    let [Err(error)] = items.as_slice() else {
        panic!("expected the error alone: {items:?}");
    };
    assert_model_panic(error, "the model broke opening its stream");
}

#[tokio::test]
async fn a_model_panicking_mid_stream_fails_the_run_after_what_it_streamed() {
    let items = stream_of(PanicsWhen::Streaming).await;
    let texts: Vec<&str> = items
        .iter()
        .filter_map(|item| match item {
            Ok(StreamItem::Text(text)) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["part1 ", "part2 "]);
    let Some(Err(error)) = items.last() else {
        panic!("the stream ends with the error: {items:?}");
    };
    assert_model_panic(error, "the model broke mid-stream");
}

/// A model written with plain `fn`s returning futures, which panics before it returns one.
struct PanicsBeforeItsFuture;

impl CompletionModel for PanicsBeforeItsFuture {
    fn completion(
        &self,
        _request: &CompletionRequest,
    ) -> impl std::future::Future<Output = Result<CompletionResponse, CompletionError>> + Send {
        panic!("the model broke before answering");
        #[allow(unreachable_code)]
        async {
            Err(CompletionError::Transport("unreachable".into()))
        }
    }

    fn stream(
        &self,
        _request: &CompletionRequest,
    ) -> impl std::future::Future<Output = Result<CompletionStream, CompletionError>> + Send {
        panic!("the model broke before opening its stream");
        #[allow(unreachable_code)]
        async {
            Err(CompletionError::Transport("unreachable".into()))
        }
    }
}

#[tokio::test]
async fn a_model_panicking_before_it_returns_its_future_fails_the_run() {
    let agent = AgentBuilder::new(PanicsBeforeItsFuture).build();
    let Err(error) = agent.prompt("Go").await else {
        panic!("the run cannot succeed");
    };
    assert_model_panic(&error, "the model broke before answering");

    let items: Vec<_> = agent.prompt("Go").stream().collect().await;
    let [Err(error)] = items.as_slice() else {
        panic!("expected the error alone: {items:?}");
    };
    assert_model_panic(error, "the model broke before opening its stream");
}

/// A model whose declarations about itself panic, and whose answers are a scripted model's.
struct BrittleDeclarations(reins::testing::ScriptedModel);

impl CompletionModel for BrittleDeclarations {
    async fn completion(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        self.0.completion(request).await
    }
    fn supports_native_output(&self) -> bool {
        panic!("native output bug")
    }
    fn model_name(&self) -> Option<&str> {
        panic!("model name bug")
    }
    fn provider_name(&self) -> Option<&str> {
        panic!("provider name bug")
    }
}

#[tokio::test]
async fn a_model_whose_declarations_panic_declares_nothing_and_its_runs_go_on() {
    use reins::testing::Turn;
    use tracing::instrument::WithSubscriber;
    // A subscriber that keeps spans is what makes a run read its model's names for
    // telemetry.
    let subscriber = crate::common::subscriber::registry;

    #[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
    struct Answer {
        n: u32,
    }
    // Native output is not claimed, so the typed answer comes through the output tool.
    let model = reins::testing::ScriptedModel::new([Turn::tool_call(
        OUTPUT_TOOL_NAME,
        serde_json::json!({"n": 3}),
    )]);
    let agent = AgentBuilder::new(BrittleDeclarations(model)).build();
    let answer = agent
        .prompt("A number?")
        .output::<Answer>()
        .into_future()
        .with_subscriber(subscriber())
        .await;
    assert_eq!(answer.unwrap(), Answer { n: 3 });

    let model = reins::testing::ScriptedModel::new([Turn::text("fine")]);
    let agent = AgentBuilder::new(BrittleDeclarations(model)).build();
    let answer = agent
        .prompt("Hi")
        .into_future()
        .with_subscriber(subscriber())
        .await;
    assert_eq!(answer.unwrap(), "fine");
}
