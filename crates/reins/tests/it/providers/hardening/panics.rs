//! A model that panics while streaming ends the streamed run with an error, as a blocking run
//! already does; the caller's task goes on.

use futures::StreamExt;
use reins::agent::{AgentBuilder, PromptError, StreamItem};
use reins::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, CompletionStream,
    StreamChunk,
};
use reins::message::{AssistantContent, OneOrMany};

/// A model whose `stream()` panics.
struct PanicsOnStream;

impl CompletionModel for PanicsOnStream {
    async fn completion(
        &self,
        _request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        Ok(CompletionResponse::new(OneOrMany::one(
            AssistantContent::text("blocking works"),
        )))
    }

    async fn stream(
        &self,
        _request: &CompletionRequest,
    ) -> Result<CompletionStream, CompletionError> {
        panic!("the model's stream() panicked")
    }
}

/// A model whose stream yields one fragment, then panics producing the next.
struct PanicsMidStream;

impl CompletionModel for PanicsMidStream {
    async fn completion(
        &self,
        _request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        Ok(CompletionResponse::new(OneOrMany::one(
            AssistantContent::text("blocking works"),
        )))
    }

    async fn stream(
        &self,
        _request: &CompletionRequest,
    ) -> Result<CompletionStream, CompletionError> {
        let chunks = futures::stream::iter(0..2).map(|index| {
            if index == 1 {
                panic!("the model's stream panicked mid-item");
            }
            Ok(StreamChunk::Text("Hel".to_owned()))
        });
        Ok(Box::pin(chunks) as CompletionStream)
    }
}

/// Streams a run of `model` in its own task: the items, or the panic that escaped the run.
async fn stream_run(model: impl CompletionModel) -> Vec<Result<StreamItem, PromptError>> {
    let agent = AgentBuilder::new(model).build();
    tokio::spawn(async move { agent.prompt("hi").stream().collect::<Vec<_>>().await })
        .await
        .expect("a panicking model does not take the caller's task down")
}

fn assert_ends_with_an_error(items: &[Result<StreamItem, PromptError>]) {
    assert!(
        matches!(items.last(), Some(Err(_))),
        "the run ends with an error: {items:?}"
    );
    assert!(
        !items
            .iter()
            .any(|item| matches!(item, Ok(StreamItem::Final(_)))),
        "no final answer: {items:?}"
    );
}

#[tokio::test]
async fn a_model_whose_stream_panics_ends_the_streamed_run_with_an_error() {
    assert_ends_with_an_error(&stream_run(PanicsOnStream).await);
}

#[tokio::test]
async fn a_stream_panicking_mid_item_ends_the_streamed_run_with_an_error() {
    assert_ends_with_an_error(&stream_run(PanicsMidStream).await);
}
