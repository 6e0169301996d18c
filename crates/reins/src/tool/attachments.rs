//! [`ToolAttachments`]: what a tool attached to its call besides its result.

use super::{ToolOutcome, ToolResultExtensions};
use crate::completion::Usage;
use serde::{Deserialize, Serialize};

/// What a tool attached to its call through its [`ToolCallContext`](super::ToolCallContext)
/// besides its result: metadata for hooks
/// ([`set_extension`](super::ToolCallContext::set_extension)), the outcome it answered the
/// call with in place of its own ([`answer_skipped`](super::ToolCallContext::answer_skipped),
/// [`answer_denied`](super::ToolCallContext::answer_denied)) and the tokens it counted in the
/// run ([`add_usage`](super::ToolCallContext::add_usage)).
///
/// For an engine that journals a call's result and replays it without running the tool
/// (reins-restate): it takes them with [`ToolCallContext::capture`](super::ToolCallContext::capture),
/// journals them with the result, and hands them to the call with
/// [`ToolCallContext::attach`](super::ToolCallContext::attach) on the first execution and
/// every replay alike, so the run sees them once either way. As JSON, what is empty is left
/// out, and what is missing reads as empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ToolAttachments {
    /// Metadata for hooks; the model never sees it.
    #[serde(skip_serializing_if = "ToolResultExtensions::is_empty")]
    pub extensions: ToolResultExtensions,
    /// The outcome the call was answered with in place of the tool's own, if it was: a skip
    /// or a denial (the model reads its text), or a failure (the model reads it as it reads
    /// that failure of any call: an engine that reads a call's arguments itself answers with
    /// [`ToolFailure::InvalidArguments`](super::ToolFailure::InvalidArguments)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<ToolOutcome>,
    /// Tokens the tool spent on model calls of its own.
    #[serde(skip_serializing_if = "is_zero")]
    pub usage: Usage,
}

impl ToolAttachments {
    /// Whether nothing was attached.
    pub fn is_empty(&self) -> bool {
        self.extensions.is_empty() && self.answer.is_none() && is_zero(&self.usage)
    }
}

fn is_zero(usage: &Usage) -> bool {
    *usage == Usage::default()
}

#[cfg(test)]
mod tests {
    use super::ToolAttachments;
    use crate::completion::Usage;
    use crate::tool::ToolOutcome;
    use serde_json::json;

    #[test]
    fn attachments_round_trip_through_json_and_nothing_reads_as_empty() {
        let mut attached = ToolAttachments::default();
        assert_eq!(serde_json::to_value(&attached).unwrap(), json!({}));
        assert!(
            serde_json::from_value::<ToolAttachments>(json!({}))
                .unwrap()
                .is_empty()
        );
        attached.usage = Usage::new(100, 10);
        attached.extensions.insert("by", json!("geographer"));
        attached.answer = Some(ToolOutcome::Skipped {
            reason: "not run".to_owned(),
        });
        let json = serde_json::to_value(&attached).unwrap();
        assert_eq!(
            serde_json::from_value::<ToolAttachments>(json).unwrap(),
            attached
        );
        assert!(!attached.is_empty());
    }
}
