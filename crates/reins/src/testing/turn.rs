//! [`Turn`]: one scripted answer of a [`ScriptedModel`](super::ScriptedModel).

use crate::completion::{CompletionError, CompletionResponse, FinishReason, RawResponse, Usage};
use crate::message::{AssistantContent, OneOrMany, Reasoning, ToolCall};
use serde_json::Value;
use std::time::Duration;

/// One scripted model turn: what the model "answers" to the next request.
///
/// A turn is text, reasoning, tool calls or an error, built up part by part; streamed, its
/// text arrives a word at a time, so a test can drive a consumer through a stream that
/// breaks halfway:
///
/// ```
/// use futures::StreamExt;
/// use reins::agent::{AgentBuilder, PromptError, StreamItem};
/// use reins::completion::CompletionError;
/// use reins::testing::{ScriptedModel, Turn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([Turn::reasoning("The user greets me.")
///     .then_text("Hello there, friend")
///     .then_fail(CompletionError::Transport("connection reset".into()))]);
/// let agent = AgentBuilder::new(model).build();
///
/// let (mut shown, mut failure) = (String::new(), None);
/// let mut stream = agent.prompt("Hi").stream();
/// while let Some(item) = stream.next().await {
///     match item {
///         Ok(StreamItem::Text(delta)) => shown.push_str(&delta),
///         Ok(_) => {}
///         Err(error) => failure = Some(error),
///     }
/// }
/// // What arrived before the break was shown; then the run failed, saying why.
/// assert_eq!(shown, "Hello there, friend");
/// assert!(matches!(failure, Some(PromptError::Completion { .. })), "{failure:?}");
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Turn {
    content: Vec<ScriptedPart>,
    finish_reason: Option<FinishReason>,
    usage: Usage,
    pub(super) delay: Option<Duration>,
    error: Option<CompletionError>,
    /// Fails the call after its content: streamed, the content arrives first.
    pub(super) fails_after: Option<CompletionError>,
}

#[derive(Debug, Clone)]
enum ScriptedPart {
    Text(String),
    Reasoning(String),
    ToolCall {
        id: Option<String>,
        name: String,
        arguments: Value,
    },
}

impl Turn {
    fn with_part(part: ScriptedPart) -> Self {
        Turn {
            content: vec![part],
            finish_reason: None,
            usage: Usage::default(),
            delay: None,
            error: None,
            fails_after: None,
        }
    }

    /// A turn answering `text`.
    pub fn text(text: impl Into<String>) -> Self {
        Turn::with_part(ScriptedPart::Text(text.into()))
    }

    /// A turn calling one tool. The call's id is `call_<turn>_<index>` unless set with
    /// [`Turn::tool_call_with_id`].
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> Self {
        Turn::with_part(ScriptedPart::ToolCall {
            id: None,
            name: name.into(),
            arguments,
        })
    }

    /// A turn calling one tool with the given call id.
    pub fn tool_call_with_id(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
    ) -> Self {
        Turn::with_part(ScriptedPart::ToolCall {
            id: Some(id.into()),
            name: name.into(),
            arguments,
        })
    }

    /// A turn calling several tools, in order.
    pub fn tool_calls<N: Into<String>>(calls: impl IntoIterator<Item = (N, Value)>) -> Self {
        Turn {
            content: calls
                .into_iter()
                .map(|(name, arguments)| ScriptedPart::ToolCall {
                    id: None,
                    name: name.into(),
                    arguments,
                })
                .collect(),
            ..Turn::text("")
        }
    }

    /// A turn holding only reasoning; add more with [`Turn::then_text`] or
    /// [`Turn::then_tool_call`].
    pub fn reasoning(text: impl Into<String>) -> Self {
        Turn::with_part(ScriptedPart::Reasoning(text.into()))
    }

    /// A model call that fails with `error`.
    pub fn error(error: CompletionError) -> Self {
        Turn {
            error: Some(error),
            ..Turn::text("")
        }
    }

    /// Makes the call fail with `error` after its content: a blocking call fails outright,
    /// a stream delivers the content's deltas and then the error (a connection dropped
    /// mid-answer).
    pub fn then_fail(mut self, error: CompletionError) -> Self {
        self.fails_after = Some(error);
        self
    }

    /// Appends answer text to the turn.
    pub fn then_text(mut self, text: impl Into<String>) -> Self {
        self.content.push(ScriptedPart::Text(text.into()));
        self
    }

    /// Appends reasoning to the turn.
    pub fn then_reasoning(mut self, text: impl Into<String>) -> Self {
        self.content.push(ScriptedPart::Reasoning(text.into()));
        self
    }

    /// Appends a tool call to the turn.
    pub fn then_tool_call(mut self, name: impl Into<String>, arguments: Value) -> Self {
        self.content.push(ScriptedPart::ToolCall {
            id: None,
            name: name.into(),
            arguments,
        });
        self
    }

    /// Sets the finish reason (by default `ToolCalls` for a turn with tool calls, else `Stop`).
    pub fn finish_reason(mut self, reason: FinishReason) -> Self {
        self.finish_reason = Some(reason);
        self
    }

    /// Sets the usage the turn reports.
    pub fn usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// Makes the call take `delay` (on the tokio timer) before it answers.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    pub(super) fn into_response(self, turn: usize) -> Result<CompletionResponse, CompletionError> {
        if let Some(error) = self.error.or(self.fails_after) {
            return Err(error);
        }
        let mut calls = 0;
        let parts: Vec<AssistantContent> = self
            .content
            .into_iter()
            .filter(|part| !matches!(part, ScriptedPart::Text(text) if text.is_empty()))
            .map(|part| match part {
                ScriptedPart::Text(text) => AssistantContent::text(text),
                ScriptedPart::Reasoning(text) => AssistantContent::Reasoning(Reasoning {
                    text,
                    signature: None,
                }),
                ScriptedPart::ToolCall {
                    id,
                    name,
                    arguments,
                } => {
                    let id = id.unwrap_or_else(|| format!("call_{turn}_{calls}"));
                    calls += 1;
                    AssistantContent::ToolCall(ToolCall {
                        id,
                        name,
                        arguments,
                    })
                }
            })
            .collect();
        let finish_reason = self.finish_reason.unwrap_or(if calls > 0 {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        });
        let content =
            OneOrMany::many(parts).unwrap_or_else(|| OneOrMany::one(AssistantContent::text("")));
        Ok(CompletionResponse {
            content,
            usage: self.usage,
            finish_reason: Some(finish_reason),
            response_id: Some(format!("scripted-{turn}")),
            raw: RawResponse::none(),
        })
    }
}
