//! [`JournaledModel`]: a model whose every call is one journaled step.

use crate::steps::Steps;
use reins::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, CompletionStream,
    FinishReason, Usage, replay_response,
};
use reins::message::{AssistantContent, OneOrMany};
use serde::{Deserialize, Serialize};

/// A model whose calls are journaled steps on Restate (and plain calls when embedded).
///
/// What is journaled is the response's content, usage, finish reason and response id, or the
/// error; a replayed call returns exactly that (the provider's raw response,
/// [`CompletionResponse::raw`], is not kept). Streamed runs receive a journaled turn as one
/// replayed chunk per content part, as for any model without a streaming API; embedded, the
/// model streams as it would unwrapped. Its names for telemetry are the model's.
#[derive(Debug, Clone)]
pub struct JournaledModel<M> {
    inner: M,
    steps: Steps,
}

impl<M> JournaledModel<M> {
    /// Wraps `inner`; prefer [`Steps::model`].
    pub fn new(inner: M, steps: Steps) -> Self {
        JournaledModel { inner, steps }
    }
}

impl Steps {
    /// Wraps a model so that each of its calls is one journaled step.
    pub fn model<M: CompletionModel>(&self, model: M) -> JournaledModel<M> {
        JournaledModel::new(model, self.clone())
    }
}

/// One model call as journaled.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
enum RecordedTurn {
    Response {
        content: OneOrMany<AssistantContent>,
        usage: Usage,
        finish_reason: Option<FinishReason>,
        response_id: Option<String>,
    },
    Error {
        error: RecordedError,
    },
}

/// A [`CompletionError`] as journaled, so a replay fails the same way.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum RecordedError {
    Http { status: u16, body: String },
    Transport { message: String },
    Timeout { message: String },
    Decode { message: String },
    Redirected { status: u16, location: String },
    TooLarge { what: String, limit: usize },
    InvalidRequest { message: String },
    Other { message: String },
}

impl From<CompletionError> for RecordedError {
    fn from(error: CompletionError) -> Self {
        match error {
            CompletionError::Http { status, body } => RecordedError::Http { status, body },
            CompletionError::Transport(message) => RecordedError::Transport { message },
            CompletionError::Timeout(message) => RecordedError::Timeout { message },
            CompletionError::Decode(message) => RecordedError::Decode { message },
            CompletionError::Redirected { status, location } => {
                RecordedError::Redirected { status, location }
            }
            CompletionError::TooLarge { what, limit } => RecordedError::TooLarge { what, limit },
            CompletionError::InvalidRequest(message) => RecordedError::InvalidRequest { message },
            other => RecordedError::Other {
                message: other.to_string(),
            },
        }
    }
}

impl From<RecordedError> for CompletionError {
    fn from(error: RecordedError) -> Self {
        match error {
            RecordedError::Http { status, body } => CompletionError::Http { status, body },
            RecordedError::Transport { message } => CompletionError::Transport(message),
            RecordedError::Timeout { message } => CompletionError::Timeout(message),
            RecordedError::Decode { message } => CompletionError::Decode(message),
            RecordedError::Redirected { status, location } => {
                CompletionError::Redirected { status, location }
            }
            RecordedError::TooLarge { what, limit } => CompletionError::TooLarge { what, limit },
            RecordedError::InvalidRequest { message } => CompletionError::InvalidRequest(message),
            RecordedError::Other { message } => CompletionError::Other(message),
        }
    }
}

fn record(result: Result<CompletionResponse, CompletionError>) -> serde_json::Value {
    let turn = match result {
        Ok(response) => RecordedTurn::Response {
            content: response.content,
            usage: response.usage,
            finish_reason: response.finish_reason,
            response_id: response.response_id,
        },
        Err(error) => RecordedTurn::Error {
            error: error.into(),
        },
    };
    serde_json::to_value(turn).unwrap_or_else(|error| {
        serde_json::json!({"outcome": "error", "error": {"kind": "other", "message": error.to_string()}})
    })
}

fn replay(value: serde_json::Value) -> Result<CompletionResponse, CompletionError> {
    match serde_json::from_value::<RecordedTurn>(value) {
        Ok(RecordedTurn::Response {
            content,
            usage,
            finish_reason,
            response_id,
        }) => {
            let mut response = CompletionResponse::new(content);
            response.usage = usage;
            response.finish_reason = finish_reason;
            response.response_id = response_id;
            Ok(response)
        }
        Ok(RecordedTurn::Error { error }) => Err(error.into()),
        Err(error) => Err(CompletionError::Decode(format!(
            "the journaled model turn cannot be read: {error}"
        ))),
    }
}

impl<M: CompletionModel> CompletionModel for JournaledModel<M> {
    async fn completion(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        if !self.steps.is_journaled() {
            return self.inner.completion(request).await;
        }
        let name = self.steps.next_model_step();
        let recorded = self
            .steps
            .step(name, || async {
                record(self.inner.completion(request).await)
            })
            .await
            .map_err(|error| CompletionError::Other(error.to_string()))?;
        replay(recorded)
    }

    async fn stream(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionStream, CompletionError> {
        // Embedded, the model streams as it would unwrapped; journaled, a call is one step,
        // replayed as a whole.
        if !self.steps.is_journaled() {
            return self.inner.stream(request).await;
        }
        let response = self.completion(request).await?;
        Ok(replay_response(response))
    }

    fn supports_native_output(&self) -> bool {
        self.inner.supports_native_output()
    }

    fn model_name(&self) -> Option<&str> {
        self.inner.model_name()
    }

    fn provider_name(&self) -> Option<&str> {
        self.inner.provider_name()
    }

    fn endpoint(&self) -> Option<&str> {
        self.inner.endpoint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_error_replays_as_the_same_error() {
        let value = record(Err(CompletionError::Http {
            status: 429,
            body: "slow down".into(),
        }));
        match replay(value) {
            Err(CompletionError::Http { status, body }) => {
                assert_eq!((status, body.as_str()), (429, "slow down"));
            }
            other => panic!("expected the HTTP error back, got {other:?}"),
        }
    }

    #[test]
    fn a_recorded_response_replays_its_content_usage_and_finish_reason() {
        let mut response = CompletionResponse::new(OneOrMany::one(AssistantContent::text("hi")));
        response.usage = Usage::new(3, 4);
        response.finish_reason = Some(FinishReason::Stop);
        let replayed = replay(record(Ok(response))).expect("a response");
        assert_eq!(replayed.text(), "hi");
        assert_eq!(replayed.usage, Usage::new(3, 4));
        assert_eq!(replayed.finish_reason, Some(FinishReason::Stop));
    }
}
