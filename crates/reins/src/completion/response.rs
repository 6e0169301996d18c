use crate::message::{AssistantContent, OneOrMany, ToolCall, assistant_text};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::any::Any;
use std::fmt;
use std::ops::AddAssign;
use std::sync::Arc;

/// One model turn as the provider returned it.
///
/// ```
/// use reins::completion::{CompletionResponse, FinishReason, Usage};
/// use reins::message::{AssistantContent, OneOrMany, ToolCall};
/// use serde_json::json;
///
/// let call = ToolCall { id: "c1".into(), name: "search".into(), arguments: json!({"q": "x"}) };
/// let content = OneOrMany::try_from(vec![
///     AssistantContent::text("Let me look. "),
///     AssistantContent::ToolCall(call),
/// ])
/// .unwrap();
/// let mut response = CompletionResponse::new(content);
/// response.usage = Usage::new(120, 16);
/// response.finish_reason = Some(FinishReason::ToolCalls);
///
/// assert_eq!(response.text(), "Let me look. ");
/// assert_eq!(response.tool_calls().map(|call| call.name.as_str()).collect::<Vec<_>>(), ["search"]);
/// assert_eq!(response.usage.total_tokens, 136);
/// ```
#[derive(Debug, Clone)]
pub struct CompletionResponse {
    /// The assistant's content: text, tool calls and reasoning, in order.
    pub content: OneOrMany<AssistantContent>,
    /// Tokens used by this call (zero where the provider reported none).
    pub usage: Usage,
    /// Why the model stopped, when the provider said.
    pub finish_reason: Option<FinishReason>,
    /// The provider's id for this response, when it has one.
    pub response_id: Option<String>,
    /// The provider's own response, for logging and metering.
    pub raw: RawResponse,
}

impl CompletionResponse {
    /// A response holding the given content and nothing else.
    pub fn new(content: OneOrMany<AssistantContent>) -> Self {
        CompletionResponse {
            content,
            usage: Usage::default(),
            finish_reason: None,
            response_id: None,
            raw: RawResponse::none(),
        }
    }

    /// The concatenated text parts.
    pub fn text(&self) -> String {
        assistant_text(self.content.iter())
    }

    /// The tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|part| match part {
            AssistantContent::ToolCall(call) => Some(call),
            _ => None,
        })
    }

    /// Whether the response holds nothing a run can use: no answer text (beyond whitespace)
    /// and no tool call. Reasoning alone answers nothing.
    pub fn answers_nothing(&self) -> bool {
        self.content.iter().all(|part| match part {
            AssistantContent::Text(text) => text.text.trim().is_empty(),
            AssistantContent::Reasoning(_) => true,
            AssistantContent::ToolCall(_) => false,
        })
    }
}

/// Token counts of one call, or summed over a run.
///
/// The prompt-cache counts are parts of `input_tokens`, as the providers bill them: tokens
/// read from the provider's cache (which most bill lower) and written to it (which Anthropic
/// bills higher). They are zero when the provider reports none, and are never more than
/// `input_tokens`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens read, cached ones included.
    pub input_tokens: u64,
    /// Tokens generated.
    pub output_tokens: u64,
    /// Input plus output, as the provider counted it.
    pub total_tokens: u64,
    /// Of `input_tokens`, those read from the provider's prompt cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_input_tokens: u64,
    /// Of `input_tokens`, those written to the provider's prompt cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_creation_input_tokens: u64,
}

// Runs and journals written before the cache counts existed read the same, and a run that
// used no cache writes the same text as before.
fn is_zero(count: &u64) -> bool {
    *count == 0
}

impl Usage {
    /// Usage with the given input and output counts.
    pub const fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Usage {
            input_tokens,
            output_tokens,
            total_tokens: input_tokens.saturating_add(output_tokens),
            cache_read_input_tokens: 0,
            cache_creation_input_tokens: 0,
        }
    }

    /// This usage, with `read` of its input tokens read from the provider's prompt cache and
    /// `written` written to it (each at most the input tokens).
    pub const fn with_cached_input(mut self, read: u64, written: u64) -> Self {
        // `min`, which is not `const`.
        self.cache_read_input_tokens = if read < self.input_tokens {
            read
        } else {
            self.input_tokens
        };
        self.cache_creation_input_tokens = if written < self.input_tokens {
            written
        } else {
            self.input_tokens
        };
        self
    }

    /// The counts added since `earlier` (saturating at zero).
    pub(crate) fn since(self, earlier: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_sub(earlier.input_tokens),
            output_tokens: self.output_tokens.saturating_sub(earlier.output_tokens),
            total_tokens: self.total_tokens.saturating_sub(earlier.total_tokens),
            cache_read_input_tokens: (self.cache_read_input_tokens)
                .saturating_sub(earlier.cache_read_input_tokens),
            cache_creation_input_tokens: (self.cache_creation_input_tokens)
                .saturating_sub(earlier.cache_creation_input_tokens),
        }
    }
}

/// Adds counts, saturating: a provider (or a hostile server) may report any number, and a
/// run's totals must not overflow.
impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.total_tokens = self.total_tokens.saturating_add(other.total_tokens);
        self.cache_read_input_tokens =
            (self.cache_read_input_tokens).saturating_add(other.cache_read_input_tokens);
        self.cache_creation_input_tokens =
            (self.cache_creation_input_tokens).saturating_add(other.cache_creation_input_tokens);
    }
}

/// Why a model stopped generating.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// It finished its answer.
    Stop,
    /// It ran out of output tokens: the answer is truncated.
    Length,
    /// It stopped to call tools.
    ToolCalls,
    /// A content filter cut the answer.
    ContentFilter,
    /// Any other reason, as the provider named it.
    Other(String),
}

/// The provider's own response object, carried type-erased so hooks work for every model.
///
/// Providers that speak JSON store a [`serde_json::Value`]; read it with [`RawResponse::json`],
/// or any other type with [`RawResponse::downcast_ref`].
#[derive(Clone, Default)]
pub struct RawResponse(Option<Arc<dyn Any + Send + Sync>>);

impl RawResponse {
    /// No raw response (e.g. a scripted model).
    pub fn none() -> Self {
        RawResponse(None)
    }

    /// Wraps a provider's response value.
    pub fn new<T: Any + Send + Sync>(value: T) -> Self {
        RawResponse(Some(Arc::new(value)))
    }

    /// Whether there is no raw response.
    pub fn is_none(&self) -> bool {
        self.0.is_none()
    }

    /// The raw response as `T`, if it is one.
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        self.0.as_deref().and_then(|value| value.downcast_ref())
    }

    /// The raw response as JSON, for providers that store it that way.
    pub fn json(&self) -> Option<&Value> {
        self.downcast_ref()
    }
}

impl fmt::Debug for RawResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.0, self.json()) {
            (None, _) => f.write_str("RawResponse(None)"),
            (Some(_), Some(json)) => write!(f, "RawResponse({json})"),
            (Some(_), None) => f.write_str("RawResponse(..)"),
        }
    }
}
