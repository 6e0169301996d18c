//! [`StopReason`]: why a hook stopped a run, as text for people and, optionally, as a typed
//! value for code.

use std::borrow::Cow;
use std::error::Error;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// Why a hook stopped a run: the text every `stop(reason)` constructor takes, carried to
/// [`PromptError::Cancelled`](crate::agent::PromptError::Cancelled), and optionally the typed
/// value behind it, so code that handles the error matches a type instead of parsing text.
///
/// A plain string converts into it (`DispatchAction::stop("over budget")`);
/// [`StopReason::because`] keeps a typed cause, whose `Display` becomes the text. Compare it
/// with a string to check the text; [`cause`](Self::cause) reads the typed value back.
///
/// ```
/// use reins::agent::{AgentBuilder, AgentHook, HookContext, PromptError, RunStartAction, RunStartEvent, StopReason};
/// use reins::testing::{ScriptedModel, Turn};
///
/// /// What the hook stops with: a value the caller can match on.
/// #[derive(Debug, thiserror::Error)]
/// #[error("the prompt has {words} words; at most {limit} are allowed")]
/// struct PromptTooLong { words: usize, limit: usize }
///
/// struct ShortPromptsOnly;
///
/// impl AgentHook for ShortPromptsOnly {
///     async fn on_run_start(&self, _ctx: &HookContext, event: RunStartEvent<'_>) -> RunStartAction {
///         let words = event.prompt.text().split_whitespace().count();
///         if words > 3 {
///             return RunStartAction::stop(StopReason::because(PromptTooLong { words, limit: 3 }));
///         }
///         RunStartAction::continue_run()
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("hi")]))
///     .add_hook(ShortPromptsOnly)
///     .build();
/// let error = agent.prompt("please say hello to me").await.unwrap_err();
/// let Some(stop) = error.stopped_by::<PromptTooLong>() else {
///     panic!("the hook should have stopped the run: {error}");
/// };
/// assert_eq!((stop.words, stop.limit), (5, 3));
/// // The text is the value's `Display`, for logs and people.
/// assert_eq!(*error.stop_reason().unwrap(), "the prompt has 5 words; at most 3 are allowed");
/// # }
/// ```
#[derive(Clone)]
pub struct StopReason(Box<Reason>);

/// Boxed so that every hook action stays as small as the common answer ("go on") needs: a
/// streamed run moves one per delta, and a stop happens once.
#[derive(Clone)]
struct Reason {
    text: String,
    cause: Option<Arc<dyn Error + Send + Sync>>,
}

impl StopReason {
    /// A reason given as text only.
    pub fn new(text: impl Into<String>) -> Self {
        StopReason(Box::new(Reason {
            text: text.into(),
            cause: None,
        }))
    }

    /// A reason carrying `cause`, a typed value the caller can read back with
    /// [`cause`](Self::cause); its `Display` is the reason's text.
    pub fn because<E: Error + Send + Sync + 'static>(cause: E) -> Self {
        StopReason(Box::new(Reason {
            text: cause.to_string(),
            cause: Some(Arc::new(cause)),
        }))
    }

    /// The reason's text.
    pub fn as_str(&self) -> &str {
        &self.0.text
    }

    /// The typed cause, if the hook gave one of type `E`
    /// ([`because`](Self::because)); `None` for a text-only reason or a cause of another type.
    pub fn cause<E: Error + 'static>(&self) -> Option<&E> {
        self.0.cause.as_deref()?.downcast_ref::<E>()
    }

    /// The typed cause, whatever its type, for error reports that walk causes.
    pub fn source(&self) -> Option<&(dyn Error + Send + Sync + 'static)> {
        self.0.cause.as_deref()
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.text)
    }
}

impl fmt::Debug for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.cause {
            None => fmt::Debug::fmt(&self.0.text, f),
            Some(cause) => f
                .debug_struct("StopReason")
                .field("text", &self.0.text)
                .field("cause", cause)
                .finish(),
        }
    }
}

impl Deref for StopReason {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0.text
    }
}

impl AsRef<str> for StopReason {
    fn as_ref(&self) -> &str {
        &self.0.text
    }
}

/// Two reasons are equal when their texts are: a cause is read back by type, not compared.
impl PartialEq for StopReason {
    fn eq(&self, other: &Self) -> bool {
        self.0.text == other.0.text
    }
}

impl Eq for StopReason {}

impl PartialEq<str> for StopReason {
    fn eq(&self, other: &str) -> bool {
        self.0.text == other
    }
}

impl PartialEq<&str> for StopReason {
    fn eq(&self, other: &&str) -> bool {
        self.0.text == **other
    }
}

impl PartialEq<String> for StopReason {
    fn eq(&self, other: &String) -> bool {
        self.0.text == *other
    }
}

impl PartialEq<StopReason> for str {
    fn eq(&self, other: &StopReason) -> bool {
        other == self
    }
}

impl PartialEq<StopReason> for &str {
    fn eq(&self, other: &StopReason) -> bool {
        other == *self
    }
}

impl PartialEq<StopReason> for String {
    fn eq(&self, other: &StopReason) -> bool {
        other == self
    }
}

impl From<&str> for StopReason {
    fn from(text: &str) -> Self {
        StopReason::new(text)
    }
}

impl From<String> for StopReason {
    fn from(text: String) -> Self {
        StopReason::new(text)
    }
}

impl From<&String> for StopReason {
    fn from(text: &String) -> Self {
        StopReason::new(text.clone())
    }
}

impl From<Cow<'_, str>> for StopReason {
    fn from(text: Cow<'_, str>) -> Self {
        StopReason::new(text.into_owned())
    }
}

impl From<StopReason> for String {
    fn from(reason: StopReason) -> Self {
        reason.0.text
    }
}
