use crate::completion::{CompletionRequest, shallow_merge};
use crate::message::{Document, Message, ToolChoice};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// Changes to one turn's model request, returned from `on_completion_call` (or `on_dispatch`
/// for a model call). A patch applies to that turn only.
///
/// # Merging
///
/// When several hooks patch the same turn, their patches merge in registration order:
///
/// - `preamble`, `temperature`, `max_tokens`, `tool_choice` and `history`: the later hook's
///   value wins.
/// - `active_tools`: the allow-lists intersect, so no hook can re-advertise a tool that an
///   earlier hook withheld.
/// - `additional_params`: shallow-merged, the later hook's keys winning.
/// - `context` and `extra_context`: documents accumulate in order.
/// - `documents`: the later hook's list wins, and the documents earlier hooks added with
///   `context` are dropped with the list they were added to; documents added after it (by its
///   own patch or a later hook's) are added to it.
///
/// # Example
///
/// The first turn may only search; once the model has results, later turns may only answer:
///
/// ```
/// use reins::agent::{
///     AgentBuilder, AgentHook, CompletionCallAction, CompletionCallEvent, HookContext,
///     RequestPatch,
/// };
/// use reins::message::ToolChoice;
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// struct SearchThenAnswer;
///
/// impl AgentHook for SearchThenAnswer {
///     async fn on_completion_call(
///         &self,
///         _ctx: &HookContext,
///         event: CompletionCallEvent<'_>,
///     ) -> CompletionCallAction {
///         let patch = if event.turn == 1 {
///             RequestPatch::new().active_tools(["search"]).tool_choice(ToolChoice::Required)
///         } else {
///             RequestPatch::new().tool_choice(ToolChoice::None).temperature(0.0)
///         };
///         CompletionCallAction::patch(patch)
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([
///     Turn::tool_call("search", json!({"q": "reins"})),
///     Turn::text("reins steers agents."),
/// ]);
/// let tool = |name: &'static str| {
///     reins::tool::tool_fn(name, "A tool.", |_: serde_json::Value| async move {
///         Ok::<_, std::convert::Infallible>("found it")
///     })
/// };
/// let agent = AgentBuilder::new(model.clone())
///     .tool(tool("search"))
///     .tool(tool("delete"))
///     .add_hook(SearchThenAnswer)
///     .build();
/// agent.prompt("What is reins?").await.unwrap();
///
/// let [first, second] = &model.requests()[..] else { panic!("two turns") };
/// assert_eq!(first.tool_names().collect::<Vec<_>>(), ["search"]);
/// assert_eq!(first.tool_choice, Some(ToolChoice::Required));
/// assert_eq!(second.tool_choice, Some(ToolChoice::None));
/// // The patch was for its turn only: the agent's settings are unchanged.
/// assert_eq!(second.tool_names().collect::<Vec<_>>(), ["search", "delete"]);
/// assert_eq!(first.temperature, None);
/// # }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestPatch {
    /// Replaces the system instructions.
    pub preamble: Option<String>,
    /// Replaces the sampling temperature.
    pub temperature: Option<f64>,
    /// Replaces the output token limit.
    pub max_tokens: Option<u64>,
    /// Replaces the tool choice.
    pub tool_choice: Option<ToolChoice>,
    /// Advertises only these tools (an allow-list of tool names).
    pub active_tools: Option<Vec<String>>,
    /// Shallow-merged into the agent's additional parameters.
    pub additional_params: Option<Value>,
    /// Documents added for the turn (after `documents`, when that is set too).
    pub context: Vec<Document>,
    /// Replaces the documents sent for the turn (the agent's, and those earlier patches
    /// added), before `context` is added. The agent's own documents are unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documents: Option<Vec<Document>>,
    /// Replaces the history sent for the turn (the run's own history is unchanged).
    pub history: Option<Vec<Message>>,
}

impl RequestPatch {
    /// An empty patch.
    pub fn new() -> Self {
        RequestPatch::default()
    }

    /// Replaces the system instructions for the turn.
    pub fn preamble(mut self, preamble: impl Into<String>) -> Self {
        self.preamble = Some(preamble.into());
        self
    }

    /// Sets the temperature for the turn.
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets the output token limit for the turn.
    pub fn max_tokens(mut self, max_tokens: u64) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the tool choice for the turn.
    pub fn tool_choice(mut self, tool_choice: ToolChoice) -> Self {
        self.tool_choice = Some(tool_choice);
        self
    }

    /// Advertises only the named tools for the turn.
    pub fn active_tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.active_tools = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Merges `params` (a JSON object) into the agent's additional parameters for the turn.
    pub fn additional_params(mut self, params: Value) -> Self {
        self.additional_params = Some(params);
        self
    }

    /// Adds a context document for the turn.
    pub fn context(mut self, document: Document) -> Self {
        self.context.push(document);
        self
    }

    /// Adds several context documents for the turn.
    pub fn extra_context(mut self, documents: impl IntoIterator<Item = Document>) -> Self {
        self.context.extend(documents);
        self
    }

    /// Replaces the documents sent for the turn: the agent's, and any an earlier patch added.
    /// Documents added with [`context`](Self::context) or
    /// [`extra_context`](Self::extra_context) are sent after them. To rewrite the documents
    /// rather than add to them, build the list from the request the hook's event shows (as
    /// [`Redaction`](crate::hooks::redaction::Redaction) does to mask them).
    pub fn documents(mut self, documents: impl IntoIterator<Item = Document>) -> Self {
        self.documents = Some(documents.into_iter().collect());
        self
    }

    /// Replaces the history sent for the turn.
    pub fn history(mut self, history: Vec<Message>) -> Self {
        self.history = Some(history);
        self
    }

    /// Whether the patch changes nothing.
    pub fn is_empty(&self) -> bool {
        *self == RequestPatch::default()
    }

    /// Merges a later hook's patch into this one (see the type's docs for the rules).
    pub fn merge(&mut self, later: RequestPatch) {
        let RequestPatch {
            preamble,
            temperature,
            max_tokens,
            tool_choice,
            active_tools,
            additional_params,
            context,
            documents,
            history,
        } = later;
        if preamble.is_some() {
            self.preamble = preamble;
        }
        if temperature.is_some() {
            self.temperature = temperature;
        }
        if max_tokens.is_some() {
            self.max_tokens = max_tokens;
        }
        if tool_choice.is_some() {
            self.tool_choice = tool_choice;
        }
        if let Some(later) = active_tools {
            self.active_tools = Some(match self.active_tools.take() {
                Some(earlier) => earlier.into_iter().filter(|n| later.contains(n)).collect(),
                None => later,
            });
        }
        if let Some(later) = additional_params {
            self.additional_params = Some(match self.additional_params.take() {
                Some(earlier) => shallow_merge(earlier, later),
                None => later,
            });
        }
        if documents.is_some() {
            // The later list replaces what the earlier patches sent, their additions too.
            self.documents = documents;
            self.context = context;
        } else {
            self.context.extend(context);
        }
        if history.is_some() {
            self.history = history;
        }
    }

    /// Applies the patch to a request.
    pub fn apply(self, request: &mut CompletionRequest) {
        if let Some(preamble) = self.preamble {
            request.preamble = Some(preamble);
        }
        if let Some(temperature) = self.temperature {
            request.temperature = Some(temperature);
        }
        if let Some(max_tokens) = self.max_tokens {
            request.max_tokens = Some(max_tokens);
        }
        if let Some(tool_choice) = self.tool_choice {
            request.tool_choice = Some(tool_choice);
        }
        if let Some(active) = self.active_tools {
            let tools: Vec<_> = request
                .tools
                .iter()
                .filter(|tool| active.contains(&tool.name))
                .cloned()
                .collect();
            request.tools = Arc::from(tools);
        }
        if let Some(params) = self.additional_params {
            request.additional_params = Some(match request.additional_params.take() {
                Some(base) => shallow_merge(base, params),
                None => params,
            });
        }
        if let Some(documents) = self.documents {
            request.documents = documents;
        }
        request.documents.extend(self.context);
        if let Some(history) = self.history {
            request.history = history;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn later_scalars_win_and_allow_lists_intersect() {
        let mut merged = RequestPatch::new()
            .temperature(0.0)
            .active_tools(["a", "b"])
            .additional_params(json!({"x": 1, "y": 1}))
            .context(Document::new("1", "one"));
        merged.merge(
            RequestPatch::new()
                .temperature(0.5)
                .max_tokens(10)
                .active_tools(["b", "c"])
                .additional_params(json!({"y": 2}))
                .context(Document::new("2", "two")),
        );
        assert_eq!(merged.temperature, Some(0.5));
        assert_eq!(merged.max_tokens, Some(10));
        assert_eq!(merged.active_tools, Some(vec!["b".to_string()]));
        assert_eq!(merged.additional_params, Some(json!({"x": 1, "y": 2})));
        assert_eq!(merged.context.len(), 2);
    }

    #[test]
    fn replaced_documents_drop_earlier_additions_and_keep_later_ones() {
        let doc = |id: &str| Document::new(id, id);
        let mut request = CompletionRequest {
            documents: vec![doc("agent")],
            ..CompletionRequest::default()
        };
        let mut merged = RequestPatch::new().context(doc("earlier"));
        merged.merge(
            RequestPatch::new()
                .documents([doc("replaced")])
                .context(doc("own")),
        );
        merged.merge(RequestPatch::new().context(doc("later")));
        // Merged, then applied once: as if each patch were applied in turn.
        merged.clone().apply(&mut request);
        let ids: Vec<_> = request.documents.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["replaced", "own", "later"]);
        // A patch without the new field reads as before, and is written as before.
        let old: RequestPatch = serde_json::from_value(json!({
            "preamble": null, "temperature": null, "max_tokens": null, "tool_choice": null,
            "active_tools": null, "additional_params": null, "context": [], "history": null
        }))
        .unwrap();
        assert_eq!(old, RequestPatch::new());
        let written = serde_json::to_value(RequestPatch::new()).unwrap();
        assert!(written.get("documents").is_none(), "{written}");
    }
}
