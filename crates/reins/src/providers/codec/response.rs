//! What the protocols read alike from an answer: token counts, tool calls, and the response
//! a turn's parts make.

use crate::completion::{
    CompletionError, CompletionResponse, FinishReason, RawResponse, Usage, parse_arguments,
};
use crate::json_integers::OversizedLiterals;
use crate::message::{AssistantContent, OneOrMany};
use crate::providers::transport::excerpt_json;
use serde_json::{Value, json};
use std::borrow::Cow;
use std::fmt::Display;

/// Where an API's answer keeps what reins reads besides the content: the response id, and
/// the token counts (each API names them its own way, and some split a count in parts, such
/// as cache reads or thoughts, that reins adds up).
#[derive(Debug, Clone, Copy)]
pub(crate) struct AnswerKeys {
    /// The key of the response id.
    pub(crate) id: &'static str,
    /// The key of the usage object.
    pub(crate) usage: &'static str,
    /// The counts of the usage object that add up to the input tokens.
    pub(crate) input_tokens: &'static [&'static str],
    /// The counts that add up to the output tokens.
    pub(crate) output_tokens: &'static [&'static str],
    /// The total the API reports, if it reports one; else (or when it is missing) the total
    /// is input plus output.
    pub(crate) total_tokens: Option<&'static str>,
    /// Where the usage object counts the input tokens read from the prompt cache (a JSON
    /// pointer into it), if the API reports them.
    pub(crate) cache_read: Option<&'static str>,
    /// Where it counts the input tokens written to the prompt cache, if it does.
    pub(crate) cache_creation: Option<&'static str>,
}

impl AnswerKeys {
    /// The token counts of a usage object; a count that is missing is zero. Sums saturate:
    /// a server reporting absurd counts must not make reins overflow (a panic in debug
    /// builds, a wrapped, small count in release ones).
    pub(crate) fn read_usage(&self, usage: &Value) -> Usage {
        let sum = |keys: &[&str]| -> u64 {
            keys.iter()
                .map(|key| count(usage, key))
                .fold(0, u64::saturating_add)
        };
        let (input, output) = (sum(self.input_tokens), sum(self.output_tokens));
        let total = self
            .total_tokens
            .and_then(|key| usage.get(key))
            .and_then(Value::as_u64);
        let cached = |pointer: Option<&str>| {
            pointer
                .and_then(|pointer| usage.pointer(pointer))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        Usage {
            input_tokens: input,
            output_tokens: output,
            total_tokens: total.unwrap_or(input.saturating_add(output)),
            ..Usage::default()
        }
        .with_cached_input(cached(self.cache_read), cached(self.cache_creation))
    }

    /// The token counts of an answer; zero when it has no usage object.
    pub(crate) fn usage_of(&self, answer: &Value) -> Usage {
        answer
            .get(self.usage)
            .map(|usage| self.read_usage(usage))
            .unwrap_or_default()
    }

    /// The response id of an answer, when it has one.
    pub(crate) fn id_of(&self, answer: &Value) -> Option<String> {
        answer
            .get(self.id)
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    /// The response of an answer read whole: `parts`, the content read from it, and
    /// `finish_reason`, with its usage and id read here and itself kept as the raw response.
    pub(crate) fn response(
        &self,
        answer: Value,
        parts: Vec<AssistantContent>,
        finish_reason: Option<FinishReason>,
    ) -> CompletionResponse {
        let (usage, id) = (self.usage_of(&answer), self.id_of(&answer));
        response(parts, usage, finish_reason, id, answer)
    }
}

/// A count of a usage object; zero when missing.
fn count(usage: &Value, key: &str) -> u64 {
    usage.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// A tool call's arguments where the API sends them as JSON text (OpenAI's protocols; some
/// compatible servers send an object instead): text is parsed as
/// [`parse_arguments`] does, an object is kept, and anything else is no arguments (`{}`).
pub(crate) fn arguments_from_text(arguments: Option<&Value>) -> Value {
    match arguments {
        Some(Value::String(text)) => parse_arguments(text),
        Some(Value::Object(map)) => Value::Object(map.clone()),
        _ => json!({}),
    }
}

/// A streamed tool call's arguments as JSON text, where [`arguments_from_text`] reads them
/// whole: text as it is, an object (some compatible servers send one) as its JSON text, so
/// the call runs with them whether its answer was streamed or not; anything else is no text.
/// `source` is the event the object was read from: an integer in it beyond 64 bits, which
/// reading rounded to an `f64`, is written as the event spelled it, so the text is the
/// model's and the run refuses it as [`parse_arguments`] does.
pub(crate) fn arguments_text<'a>(
    arguments: Option<&'a Value>,
    source: &OversizedLiterals<'_>,
) -> Cow<'a, str> {
    match arguments {
        Some(Value::String(text)) => Cow::Borrowed(text),
        Some(object @ Value::Object(_)) => Cow::Owned(
            source
                .exact_text(object)
                .unwrap_or_else(|| object.to_string()),
        ),
        _ => Cow::Borrowed(""),
    }
}

/// A tool call's arguments where the API sends them as a JSON object (Anthropic, Gemini):
/// missing or null is no arguments (`{}`); anything else is kept as sent, so a malformed call
/// is reported as such rather than run with no arguments.
pub(crate) fn arguments_from_object(arguments: Option<&Value>) -> Value {
    match arguments {
        None | Some(Value::Null) => json!({}),
        Some(arguments) => arguments.clone(),
    }
}

/// A tool call's id: the one the API gave, else `call_{index}`. Gemini's codec recognises
/// these synthesized ids and does not send them back.
pub(crate) fn call_id(given: Option<&str>, index: impl Display) -> String {
    given.map_or_else(|| format!("call_{index}"), str::to_owned)
}

/// The `name` of a tool call `call`; a call without one cannot be run, so its absence is an
/// error naming `what` the call is in the API's terms and quoting `quoted`.
pub(crate) fn call_name<'a>(
    call: &'a Value,
    what: &str,
    quoted: &Value,
) -> Result<&'a str, CompletionError> {
    call.get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| nameless_call(what, quoted))
}

/// The error of a tool call without a name (`what` it is in the API's terms), quoting
/// `quoted`: blocking ([`call_name`]) or streamed, one wording.
pub(crate) fn nameless_call(what: &str, quoted: &Value) -> CompletionError {
    CompletionError::Decode(format!("a {what} has no name: {}", excerpt_json(quoted)))
}

/// A turn's parts as its content: its calls' ids made distinct, and a turn with no content at
/// all one empty text part, as [`StreamAssembler::finish`](crate::completion::StreamAssembler::finish)
/// makes it.
fn content(mut parts: Vec<AssistantContent>) -> OneOrMany<AssistantContent> {
    super::call_ids::distinct_call_ids(&mut parts);
    OneOrMany::many(parts).unwrap_or_else(|| OneOrMany::one(AssistantContent::text("")))
}

/// The response of a turn from its parts (see [`content`]) and what the answer said of it,
/// with `raw` kept as the raw response: the counterpart of
/// [`StreamAssembler::finish`](crate::completion::StreamAssembler::finish) for parts that
/// need no assembling.
pub(crate) fn response(
    parts: Vec<AssistantContent>,
    usage: Usage,
    finish_reason: Option<FinishReason>,
    response_id: Option<String>,
    raw: Value,
) -> CompletionResponse {
    CompletionResponse {
        content: content(parts),
        usage,
        finish_reason,
        response_id,
        raw: RawResponse::new(raw),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPLIT: AnswerKeys = AnswerKeys {
        id: "key",
        usage: "usage",
        input_tokens: &["in", "cached"],
        output_tokens: &["out"],
        total_tokens: Some("all"),
        cache_read: Some("/cached"),
        cache_creation: Some("/details/written"),
    };

    #[test]
    fn usage_adds_up_its_parts_and_prefers_the_reported_total() {
        let usage = SPLIT.usage_of(&json!({"usage": {"in": 1, "cached": 2, "out": 3}}));
        assert_eq!(usage, Usage::new(3, 3).with_cached_input(2, 0));
        let reported = SPLIT.read_usage(&json!({"in": 1, "out": 1, "all": 9}));
        assert_eq!(reported.total_tokens, 9);
        assert_eq!(SPLIT.usage_of(&json!({})), Usage::default());
    }

    #[test]
    fn cache_counts_are_read_where_the_api_keeps_them_and_never_pass_the_input() {
        let usage = SPLIT.read_usage(&json!({"in": 10, "cached": 4, "details": {"written": 6}}));
        assert_eq!(
            (
                usage.cache_read_input_tokens,
                usage.cache_creation_input_tokens
            ),
            (4, 6)
        );
        // A server claiming more cached tokens than it read.
        let inflated = SPLIT.read_usage(&json!({"in": 1, "cached": 2, "details": {"written": 90}}));
        assert_eq!(
            (
                inflated.cache_read_input_tokens,
                inflated.cache_creation_input_tokens
            ),
            (2, 3)
        );
        let absent = SPLIT.read_usage(&json!({"in": 5, "details": {"written": "6"}}));
        assert_eq!(absent, Usage::new(5, 0));
    }

    #[test]
    fn absurd_token_counts_saturate_instead_of_overflowing() {
        let max = u64::MAX;
        let usage = SPLIT.read_usage(&json!({"in": max, "cached": max, "out": max}));
        assert_eq!(usage.input_tokens, max);
        assert_eq!(usage.output_tokens, max);
        assert_eq!(
            usage.total_tokens, max,
            "no reported total: input plus output, capped"
        );
    }

    #[test]
    fn a_whole_answer_keeps_its_id_usage_and_raw_form() {
        let answer = json!({"key": "r1", "usage": {"in": 1, "out": 2}});
        let response = SPLIT.response(answer.clone(), Vec::new(), Some(FinishReason::Stop));
        assert_eq!(response.response_id.as_deref(), Some("r1"));
        assert_eq!(response.usage.total_tokens, 3);
        assert_eq!(response.content.len(), 1, "one empty text part");
        assert_eq!(response.text(), "");
        assert_eq!(response.raw.json(), Some(&answer));
    }

    #[test]
    fn arguments_are_read_by_how_the_api_sends_them() {
        let text = json!("{\"a\":1}");
        assert_eq!(arguments_from_text(Some(&text)), json!({"a": 1}));
        assert_eq!(arguments_from_text(Some(&json!(3))), json!({}));
        assert_eq!(arguments_from_object(Some(&text)), text);
        assert_eq!(arguments_from_object(Some(&Value::Null)), json!({}));
        assert_eq!(call_id(None, 2), "call_2");
        assert_eq!(call_id(Some("c"), 2), "c");
    }
}
