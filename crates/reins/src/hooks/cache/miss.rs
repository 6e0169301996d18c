//! Why a replay stopped a run: the recording holds no response for a request
//! ([`CacheMiss`]), or holds one only under a key of before models were told apart by name
//! ([`OutdatedRecording`]).

use crate::agent::PromptError;
use std::fmt;

/// A replaying [`ResponseCache`](super::ResponseCache) stopped a run: the recording holds no
/// response for a request the run made (the agent, its model, its tools or the prompt
/// changed since the recording).
///
/// It is the typed cause of the run's [`StopReason`](crate::agent::StopReason); the reason's
/// text is its `Display`:
///
/// ```text
/// response cache miss: no recorded response for turn <turn> on model `<model>`
/// ```
///
/// Read it back with [`CacheMiss::from_error`]. A recording that holds the request's response
/// under a key of before responses were keyed by the model's name stops with an
/// [`OutdatedRecording`] instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheMiss {
    /// The label of the model the request was for.
    pub model: String,
    /// The turn that missed.
    pub turn: usize,
}

const MISS_PREFIX: &str = "response cache miss: no recorded response for turn ";
const MISS_MIDDLE: &str = " on model `";

impl CacheMiss {
    /// The miss carried by `error`, if a replaying cache stopped the run.
    pub fn from_error(error: &PromptError) -> Option<Self> {
        crate::hooks::stopped_by(error)
    }
}

impl fmt::Display for CacheMiss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{MISS_PREFIX}{}{MISS_MIDDLE}{}`", self.turn, self.model)
    }
}

impl std::error::Error for CacheMiss {}

/// A replaying [`ResponseCache`](super::ResponseCache) stopped a run: the recording holds a
/// response for the request, but recorded before reins keyed responses by the model's
/// provider and name (a line without `key_version`) while the model called says them, or
/// before it keyed them by the model's endpoint (`key_version` 2) while the model says one —
/// so which model gave that response is unknown, and it is not served. Record the run again.
///
/// It is the typed cause of the run's [`StopReason`](crate::agent::StopReason); the reason's
/// text is its `Display`:
///
/// ```text
/// response cache miss: the response for turn <turn> on model `<model>` (<provider>/<name>
/// at <endpoint>) was recorded before responses were keyed by model; record it again
/// ```
///
/// (on one line; `-` for a name the model does not say, ` at <endpoint>` only when it says
/// one). Read it back with
/// [`OutdatedRecording::from_error`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutdatedRecording {
    /// The label of the model the request was for.
    pub model: String,
    /// The model's provider ([`CompletionModel::provider_name`](crate::completion::CompletionModel::provider_name)).
    pub provider: Option<String>,
    /// The model's name ([`CompletionModel::model_name`](crate::completion::CompletionModel::model_name)).
    pub model_name: Option<String>,
    /// Where the model is served ([`CompletionModel::endpoint`](crate::completion::CompletionModel::endpoint):
    /// a base URL without credentials).
    pub endpoint: Option<String>,
    /// The turn that missed.
    pub turn: usize,
}

impl OutdatedRecording {
    /// The outdated recording carried by `error`, if a replaying cache stopped the run on it.
    pub fn from_error(error: &PromptError) -> Option<Self> {
        crate::hooks::stopped_by(error)
    }
}

impl fmt::Display for OutdatedRecording {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let provider = self.provider.as_deref().unwrap_or("-");
        let name = self.model_name.as_deref().unwrap_or("-");
        let at = self
            .endpoint
            .as_deref()
            .map(|endpoint| format!(" at {endpoint}"))
            .unwrap_or_default();
        write!(
            f,
            "response cache miss: the response for turn {} on model `{}` \
             ({provider}/{name}{at}) was recorded before responses were keyed by model; record \
             it again",
            self.turn, self.model
        )
    }
}

impl std::error::Error for OutdatedRecording {}
