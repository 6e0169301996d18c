//! Messages exchanged with a model: the chat history, what the assistant says, and which tools
//! it may call.
//!
//! A run's history is a `Vec<Message>`. Every message serializes with a `role` tag, so a
//! history can be persisted and read back unchanged.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One message of a chat history.
///
/// ```
/// use reins::message::{AssistantContent, Message, OneOrMany, ToolCall};
/// use serde_json::json;
///
/// let history = vec![
///     Message::system("Answer in French."),
///     Message::user("Hello"),
///     Message::assistant("Bonjour"),
///     Message::tool_result("call-1", "clock", "12:00"),
/// ];
/// // A history is plain data: it round-trips through JSON.
/// let text = serde_json::to_string(&history).unwrap();
/// let back: Vec<Message> = serde_json::from_str(&text).unwrap();
/// assert_eq!(back, history);
///
/// // An assistant turn that called a tool, as a provider reports it.
/// let call = ToolCall {
///     id: "call-2".into(),
///     name: "search".into(),
///     arguments: json!({"q": "rust"}),
/// };
/// let turn = Message::Assistant { content: OneOrMany::one(AssistantContent::ToolCall(call)) };
/// assert!(matches!(turn, Message::Assistant { .. }));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// Instructions that frame the conversation (most providers also accept a preamble).
    System {
        /// The instruction text.
        content: String,
    },
    /// What the user said.
    User {
        /// The user's text.
        content: String,
    },
    /// What the model answered: text, tool calls and reasoning, in the order it produced them.
    Assistant {
        /// The assistant's content parts.
        content: OneOrMany<AssistantContent>,
    },
    /// The result of one tool call, answering the assistant's call with the same `tool_call_id`.
    Tool(ToolResultMessage),
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message::System {
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message::User {
            content: content.into(),
        }
    }

    /// An assistant message holding only text.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::Assistant {
            content: OneOrMany::one(AssistantContent::text(text)),
        }
    }

    /// A tool-result message answering the call `tool_call_id` of tool `tool_name`.
    pub fn tool_result(
        tool_call_id: impl Into<String>,
        tool_name: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        Message::Tool(ToolResultMessage {
            tool_call_id: tool_call_id.into(),
            tool_name: tool_name.into(),
            content: content.into(),
        })
    }

    /// The plain text of this message: the content of a system, user or tool message, or the
    /// concatenated text parts of an assistant message (tool calls and reasoning left out).
    pub fn text(&self) -> String {
        match self {
            Message::System { content } | Message::User { content } => content.clone(),
            Message::Assistant { content } => assistant_text(content.iter()),
            Message::Tool(result) => result.content.clone(),
        }
    }

    /// The tool calls of an assistant message, in order (empty for other messages).
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        let parts: &[AssistantContent] = match self {
            Message::Assistant { content } => content.as_slice(),
            _ => &[],
        };
        parts.iter().filter_map(|part| match part {
            AssistantContent::ToolCall(call) => Some(call),
            _ => None,
        })
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Self {
        Message::user(text)
    }
}

impl From<String> for Message {
    fn from(text: String) -> Self {
        Message::user(text)
    }
}

/// Concatenates the text parts of assistant content.
pub(crate) fn assistant_text<'a>(parts: impl Iterator<Item = &'a AssistantContent>) -> String {
    let mut text = String::new();
    for part in parts {
        if let AssistantContent::Text(part) = part {
            text.push_str(&part.text);
        }
    }
    text
}

/// A tool's answer to one tool call, as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultMessage {
    /// The provider's id of the call this answers.
    pub tool_call_id: String,
    /// The name of the tool that was called.
    pub tool_name: String,
    /// The model-visible result text.
    pub content: String,
}

/// One part of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AssistantContent {
    /// Answer text.
    Text(Text),
    /// A request to run a tool.
    ToolCall(ToolCall),
    /// The model's reasoning, when the provider exposes it.
    Reasoning(Reasoning),
}

impl AssistantContent {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        AssistantContent::Text(Text { text: text.into() })
    }

    /// A tool-call part.
    pub fn tool_call(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        AssistantContent::ToolCall(ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
        })
    }

    /// A reasoning part.
    pub fn reasoning(text: impl Into<String>) -> Self {
        AssistantContent::Reasoning(Reasoning {
            text: text.into(),
            signature: None,
        })
    }
}

/// Answer text of an assistant message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Text {
    /// The text.
    pub text: String,
}

/// A model's request to run a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for this call; the tool result answers it by this id.
    pub id: String,
    /// The tool the model asked for (it may name no real tool: see invalid tool calls).
    pub name: String,
    /// The arguments. A well-formed call carries a JSON object; arguments the model sent as
    /// text that is not JSON are kept as a JSON string so nothing is lost.
    pub arguments: Value,
}

impl ToolCall {
    /// The arguments as JSON text, as a provider sends them back: arguments the model sent as
    /// text that is not JSON are returned as it wrote them.
    pub fn arguments_text(&self) -> String {
        arguments_text(&self.arguments)
    }
}

/// Tool-call arguments as JSON text; arguments kept as a string (not JSON) as received.
pub(crate) fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(raw) => raw.clone(),
        other => json_text(other),
    }
}

/// `value` as compact JSON text, as `serde_json` writes it (see `json_text.rs`). A scalar
/// gets a buffer of about its size: the text usually stays in the run's history (a tool's
/// answer), and ten thousand runs would keep the difference.
pub(crate) fn json_text(value: &Value) -> String {
    let capacity = match value {
        Value::Null | Value::Bool(_) => 5,
        // The longest an `i64`, `u64` or `f64` is written.
        Value::Number(_) => 24,
        Value::String(text) => text.len() + 2,
        Value::Array(_) | Value::Object(_) => 128,
    };
    let mut text = String::with_capacity(capacity);
    crate::json_text::write_value(&mut text, value);
    text
}

/// The model's reasoning, as far as the provider exposes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reasoning {
    /// The reasoning text (may be a summary).
    pub text: String,
    /// An opaque signature some providers require to be sent back unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// Which tools the model may or must call on a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "name", rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides whether to call a tool.
    Auto,
    /// The model must not call a tool.
    None,
    /// The model must call some tool.
    Required,
    /// The model must call the named tool.
    Specific(String),
}

impl ToolChoice {
    /// Whether a call to `tool_name` is allowed under this choice.
    pub fn allows(&self, tool_name: &str) -> bool {
        match self {
            ToolChoice::Auto | ToolChoice::Required => true,
            ToolChoice::None => false,
            ToolChoice::Specific(name) => name == tool_name,
        }
    }
}

/// A non-empty list: at least one item, usually exactly one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Vec<T>", into = "Vec<T>")]
#[serde(bound(
    serialize = "T: Clone + Serialize",
    deserialize = "T: Deserialize<'de>"
))]
pub struct OneOrMany<T> {
    items: Vec<T>,
}

impl<T> OneOrMany<T> {
    /// A list of one item.
    pub fn one(item: T) -> Self {
        OneOrMany { items: vec![item] }
    }

    /// A list of the given items, or `None` when there are none.
    pub fn many(items: impl IntoIterator<Item = T>) -> Option<Self> {
        let items: Vec<T> = items.into_iter().collect();
        (!items.is_empty()).then_some(OneOrMany { items })
    }

    /// The first item.
    pub fn first(&self) -> &T {
        // The constructors never build an empty list.
        &self.items[0]
    }

    /// The number of items (at least one).
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Always false: the list holds at least one item. Present for API symmetry with `len`.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The items in order.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// The items as a slice.
    pub fn as_slice(&self) -> &[T] {
        &self.items
    }

    /// The items in order, to change in place (never to remove one: the list stays non-empty).
    pub(crate) fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.items.iter_mut()
    }

    /// Appends an item.
    pub fn push(&mut self, item: T) {
        self.items.push(item);
    }

    /// Keeps the items for which `keep` returns true, or returns `None` when none remain.
    pub fn retain(self, keep: impl FnMut(&T) -> bool) -> Option<Self> {
        let mut items = self.items;
        items.retain(keep);
        (!items.is_empty()).then_some(OneOrMany { items })
    }

    /// The items as a vector.
    pub fn into_vec(self) -> Vec<T> {
        self.items
    }
}

impl<'a, T> IntoIterator for &'a OneOrMany<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<T> IntoIterator for OneOrMany<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

/// The error for building a [`OneOrMany`] from an empty vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("expected at least one item, found none")]
pub struct EmptyListError;

impl<T> TryFrom<Vec<T>> for OneOrMany<T> {
    type Error = EmptyListError;
    fn try_from(items: Vec<T>) -> Result<Self, Self::Error> {
        OneOrMany::many(items).ok_or(EmptyListError)
    }
}

impl<T> From<OneOrMany<T>> for Vec<T> {
    fn from(list: OneOrMany<T>) -> Self {
        list.items
    }
}

/// A document added to a request as context, e.g. a retrieved passage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// An identifier the model can cite.
    pub id: String,
    /// The document's text.
    pub text: String,
}

impl Document {
    /// A document with the given id and text.
    pub fn new(id: impl Into<String>, text: impl Into<String>) -> Self {
        Document {
            id: id.into(),
            text: text.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_text_is_serde_json_compact_text_and_a_scalar_keeps_little_memory() {
        for value in [
            json!(null),
            json!(true),
            json!(3),
            json!(-9_223_372_036_854_775_808_i64),
            json!(18_446_744_073_709_551_615_u64),
            json!(-1.7976931348623157e308_f64),
            json!(2.2250738585072014e-308_f64),
            json!("say \"hi\"\n\u{1}ç"),
            json!("x".repeat(300)),
            json!([1, "two", {"three": [3.5, null]}]),
            json!({"k": "v".repeat(500), "n": {"m": []}}),
        ] {
            let text = json_text(&value);
            assert_eq!(Some(&text), serde_json::to_string(&value).ok().as_ref());
            if !(value.is_array() || value.is_object()) {
                assert!(text.capacity() <= 2 * text.len() + 24, "{text}");
            }
        }
    }

    #[test]
    fn history_round_trips_through_json() {
        let history = vec![
            Message::system("be brief"),
            Message::user("hi"),
            Message::Assistant {
                content: OneOrMany::many([
                    AssistantContent::reasoning("think"),
                    AssistantContent::text("calling"),
                    AssistantContent::tool_call("c1", "add", json!({"a": 1})),
                ])
                .unwrap(),
            },
            Message::tool_result("c1", "add", "2"),
        ];
        let text = serde_json::to_string(&history).unwrap();
        let back: Vec<Message> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, history);
    }

    #[test]
    fn an_empty_assistant_message_is_rejected_when_read() {
        let err = serde_json::from_value::<Message>(json!({"role": "assistant", "content": []}));
        assert!(err.unwrap_err().to_string().contains("at least one item"));
    }

    #[test]
    fn tool_choice_allows_only_what_it_names() {
        assert!(ToolChoice::Auto.allows("x"));
        assert!(!ToolChoice::None.allows("x"));
        assert!(ToolChoice::Specific("x".into()).allows("x"));
        assert!(!ToolChoice::Specific("x".into()).allows("y"));
    }
}
