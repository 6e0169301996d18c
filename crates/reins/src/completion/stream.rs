use super::{CompletionError, CompletionResponse, FinishReason, RawResponse, Usage};
use crate::message::{AssistantContent, OneOrMany, Reasoning};
use futures::stream::BoxStream;
use serde_json::Value;

/// A streamed model turn: chunks, ending with [`StreamChunk::Done`].
pub type CompletionStream = BoxStream<'static, Result<StreamChunk, CompletionError>>;

/// One piece of a streamed model turn.
#[derive(Debug, Clone)]
pub enum StreamChunk {
    /// A fragment of answer text.
    Text(String),
    /// A fragment of reasoning.
    Reasoning(String),
    /// A fragment of a tool call's arguments. `name` is set on the first fragment of a call.
    ToolCall {
        /// The provider's id of the call; when the provider gave two calls of the turn one
        /// id, the later call's is made distinct (`{id}_2`, …), as in the assembled response.
        id: String,
        /// The tool's name, on the call's first fragment only.
        name: Option<String>,
        /// The new fragment of the JSON arguments text.
        delta: String,
    },
    /// The end of the turn, with the whole response assembled.
    Done(CompletionResponse),
}

/// Assembles streamed fragments into the [`CompletionResponse`] a blocking call would return.
///
/// Providers feed it every fragment in order and call [`finish`](StreamAssembler::finish) at
/// the end of the stream; consecutive fragments of one kind join into one content part, and
/// tool-call arguments are parsed once complete (text that is not JSON is kept as a JSON
/// string, so the run can report it as malformed).
#[derive(Debug, Default)]
pub struct StreamAssembler {
    parts: Vec<PartBuilder>,
}

#[derive(Debug)]
enum PartBuilder {
    Text(String),
    Reasoning(String),
    ToolCall {
        id: String,
        name: String,
        arguments: String,
    },
}

impl StreamAssembler {
    /// An empty assembler.
    pub fn new() -> Self {
        StreamAssembler::default()
    }

    /// Adds a text fragment.
    pub fn text(&mut self, delta: &str) {
        if let Some(PartBuilder::Text(text)) = self.parts.last_mut() {
            text.push_str(delta);
        } else {
            self.parts.push(PartBuilder::Text(delta.to_owned()));
        }
    }

    /// Adds a reasoning fragment.
    pub fn reasoning(&mut self, delta: &str) {
        if let Some(PartBuilder::Reasoning(text)) = self.parts.last_mut() {
            text.push_str(delta);
        } else {
            self.parts.push(PartBuilder::Reasoning(delta.to_owned()));
        }
    }

    /// Adds a fragment of the tool call `id`; a new id starts a new call.
    pub fn tool_call(&mut self, id: &str, name: Option<&str>, delta: &str) {
        let existing = self.parts.iter_mut().rev().find_map(|part| match part {
            PartBuilder::ToolCall {
                id: part_id,
                name: part_name,
                arguments,
            } if part_id == id => Some((part_name, arguments)),
            _ => None,
        });
        match existing {
            Some((part_name, arguments)) => {
                if let Some(name) = name.filter(|_| part_name.is_empty()) {
                    name.clone_into(part_name);
                }
                arguments.push_str(delta);
            }
            None => self.parts.push(PartBuilder::ToolCall {
                id: id.to_owned(),
                name: name.unwrap_or_default().to_owned(),
                arguments: delta.to_owned(),
            }),
        }
    }

    /// The assembled response. A turn with no content at all becomes one empty text part.
    pub fn finish(
        self,
        usage: Usage,
        finish_reason: Option<FinishReason>,
        response_id: Option<String>,
        raw: RawResponse,
    ) -> CompletionResponse {
        let parts = self.parts.into_iter().map(|part| match part {
            PartBuilder::Text(text) => AssistantContent::text(text),
            PartBuilder::Reasoning(text) => AssistantContent::Reasoning(Reasoning {
                text,
                signature: None,
            }),
            PartBuilder::ToolCall {
                id,
                name,
                arguments,
            } => AssistantContent::tool_call(id, name, parse_arguments(&arguments)),
        });
        let content =
            OneOrMany::many(parts).unwrap_or_else(|| OneOrMany::one(AssistantContent::text("")));
        CompletionResponse {
            content,
            usage,
            finish_reason,
            response_id,
            raw,
        }
    }
}

/// Parses tool-call arguments text. Empty text means no arguments (`{}`); text that is not
/// JSON is kept verbatim as a JSON string so the run can report it as malformed, and so is
/// JSON whose structure would take more than 32 MiB of memory parsed (millions of small
/// objects: no model writes that, a hostile server can), and JSON holding an integer beyond
/// 64 bits (below `i64::MIN` or above `u64::MAX`), which would be read as the nearest
/// `f64`, another number: the model is told to send it as a string.
///
/// ```
/// use reins::completion::parse_arguments;
/// use serde_json::json;
///
/// assert_eq!(parse_arguments(r#"{"id": 18446744073709551615}"#), json!({"id": u64::MAX}));
/// let huge = r#"{"id": 123456789012345678901234}"#;
/// assert_eq!(parse_arguments(huge), json!(huge));
/// ```
pub fn parse_arguments(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Object(Default::default());
    }
    if !crate::json_weight::parses_within(text.as_bytes(), crate::json_weight::MAX_PARSED_OVERHEAD)
    {
        return Value::String(text.to_owned());
    }
    match serde_json::from_str(text) {
        // Only a value holding a huge whole `f64` has its text scanned: the usual arguments
        // cost a walk of their numbers.
        Ok(value)
            if !crate::json_integers::holds_rounded_integer(&value)
                || crate::json_integers::oversized_integer(text).is_none() =>
        {
            value
        }
        _ => Value::String(text.to_owned()),
    }
}

/// Keeps as the model's text ([`Value::String`]) the arguments of each tool call in
/// `response` that were read from `body` (a whole body or an event) with an integer beyond 64 bits
/// rounded to an `f64`, as [`parse_arguments`] keeps
/// arguments text holding one: arguments sent as an object (Anthropic, Gemini, some
/// compatible servers) are read with the body, before reins sees them. The run then refuses
/// the call and tells the model to send the number as a string.
pub(crate) fn keep_oversized_as_text(response: &mut CompletionResponse, body: &str) {
    let literals = crate::json_integers::OversizedLiterals::in_source(body);
    for part in response.content.iter_mut() {
        if let AssistantContent::ToolCall(call) = part {
            literals.keep_text_if_rounded(&mut call.arguments);
        }
    }
}

/// A complete response as a stream: a chunk per part (text, reasoning, each tool call with
/// its whole arguments), then [`StreamChunk::Done`] with the response. The default
/// [`CompletionModel::stream`](super::CompletionModel::stream) of a model without a streaming
/// API; a model that streams only some calls answers the others with it.
///
/// ```
/// use futures::StreamExt;
/// use reins::completion::{CompletionResponse, StreamChunk, replay_response};
/// use reins::message::{AssistantContent, OneOrMany};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let response = CompletionResponse::new(OneOrMany::one(AssistantContent::text("Hi.")));
/// let chunks: Vec<_> = replay_response(response).collect().await;
/// assert!(matches!(&chunks[0], Ok(StreamChunk::Text(text)) if text == "Hi."));
/// assert!(matches!(&chunks[1], Ok(StreamChunk::Done(_))));
/// # }
/// ```
pub fn replay_response(response: CompletionResponse) -> CompletionStream {
    let mut chunks = Vec::with_capacity(response.content.len() + 1);
    for part in response.content.iter() {
        match part {
            AssistantContent::Text(text) if !text.text.is_empty() => {
                chunks.push(Ok(StreamChunk::Text(text.text.clone())));
            }
            AssistantContent::Text(_) => {}
            AssistantContent::Reasoning(reasoning) => {
                chunks.push(Ok(StreamChunk::Reasoning(reasoning.text.clone())));
            }
            AssistantContent::ToolCall(call) => chunks.push(Ok(StreamChunk::ToolCall {
                id: call.id.clone(),
                name: Some(call.name.clone()),
                delta: call.arguments.to_string(),
            })),
        }
    }
    chunks.push(Ok(StreamChunk::Done(response)));
    Box::pin(futures::stream::iter(chunks))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fragments_assemble_into_the_blocking_shape() {
        let mut assembler = StreamAssembler::new();
        assembler.reasoning("thin");
        assembler.reasoning("king");
        assembler.text("Hel");
        assembler.text("lo");
        assembler.tool_call("c1", Some("add"), "{\"a\":");
        assembler.tool_call("c2", Some("sub"), "{}");
        assembler.tool_call("c1", None, "1}");
        let response = assembler.finish(
            Usage::new(3, 4),
            Some(FinishReason::ToolCalls),
            None,
            RawResponse::none(),
        );
        let parts: Vec<_> = response.content.iter().cloned().collect();
        assert_eq!(
            parts,
            vec![
                AssistantContent::reasoning("thinking"),
                AssistantContent::text("Hello"),
                AssistantContent::tool_call("c1", "add", json!({"a": 1})),
                AssistantContent::tool_call("c2", "sub", json!({})),
            ]
        );
    }

    #[test]
    fn arguments_that_are_not_json_are_kept_as_text() {
        assert_eq!(parse_arguments("{oops"), json!("{oops"));
        // Millions of small objects would take gigabytes parsed: kept as text, malformed.
        let heavy = format!("[{}]", vec![r#"{"a":0}"#; 512 * 1024].join(","));
        assert_eq!(parse_arguments(&heavy), Value::String(heavy.clone()));
        let light = format!(r#"{{"text":"{}"}}"#, "x".repeat(1 << 20));
        assert!(parse_arguments(&light).is_object());
        assert_eq!(parse_arguments(""), json!({}));
    }

    #[test]
    fn arguments_with_integers_beyond_64_bits_are_kept_as_text() {
        let huge = r#"{"order_id": 123456789012345678901234}"#;
        assert_eq!(parse_arguments(huge), json!(huge));
        let below = r#"{"n": [-9223372036854775809]}"#;
        assert_eq!(parse_arguments(below), json!(below));
        // Beyond what an `f64` holds: not JSON serde_json reads, kept as text all the same.
        let endless = format!(r#"{{"n": {}}}"#, "9".repeat(400));
        assert_eq!(parse_arguments(&endless), json!(endless));
        // The extremes of `i64` and `u64`, floats, and digits in strings are read as written.
        let exact = r#"{"a": -9223372036854775808, "b": 18446744073709551615, "c": 1e30, "d": "123456789012345678901234"}"#;
        assert_eq!(
            parse_arguments(exact),
            json!({"a": i64::MIN, "b": u64::MAX, "c": 1e30, "d": "123456789012345678901234"})
        );
    }
}
