//! [`ToolResult`]: a finished tool call as outcome hooks see it.

use crate::tool::{ToolExecution, ToolOutcome, ToolOutput, ToolResultExtensions, ToolTraits};
use std::sync::Arc;

/// A finished tool call as hooks see it: the model-visible output (with earlier hooks'
/// rewrites) and the raw structured outcome.
#[derive(Clone)]
pub struct ToolResult {
    /// The tool's name, the provider's call id and reins' call id in one string: one
    /// allocation for the three, on a path every observed tool call takes.
    ids: String,
    /// Where the tool's name and the provider's call id end in `ids`.
    name_end: usize,
    call_id_end: usize,
    pub(crate) args: String,
    pub(crate) output: ToolOutput,
    pub(crate) outcome: ToolOutcome,
    pub(crate) extensions: ToolResultExtensions,
    pub(crate) traits: Option<ToolTraits>,
    pub(crate) origin: Option<Arc<str>>,
}

impl std::fmt::Debug for ToolResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolResult")
            .field("tool_name", &self.tool_name())
            .field("tool_call_id", &self.tool_call_id())
            .field("internal_call_id", &self.internal_call_id())
            .field("args", &self.args)
            .field("output", &self.output)
            .field("outcome", &self.outcome)
            .field("extensions", &self.extensions)
            .field("traits", &self.traits)
            .field("origin", &self.origin)
            .finish()
    }
}

impl ToolResult {
    /// The result of the call `internal_call_id` (the provider's `tool_call_id`) to
    /// `tool_name`, run with `args` (JSON text), as the tool answered.
    pub(crate) fn new(
        call: (&str, &str, &str),
        args: String,
        execution: ToolExecution,
        traits: Option<ToolTraits>,
        origin: Option<Arc<str>>,
    ) -> Self {
        let (tool_name, tool_call_id, internal_call_id) = call;
        let mut ids =
            String::with_capacity(tool_name.len() + tool_call_id.len() + internal_call_id.len());
        ids.push_str(tool_name);
        ids.push_str(tool_call_id);
        ids.push_str(internal_call_id);
        ToolResult {
            name_end: tool_name.len(),
            call_id_end: tool_name.len() + tool_call_id.len(),
            ids,
            args,
            output: execution.output,
            outcome: execution.outcome,
            extensions: execution.extensions,
            traits,
            origin,
        }
    }

    /// Where the called tool comes from ([`Tool::origin`](crate::tool::Tool::origin): an MCP
    /// tool's server name); `None` for a tool of the application's own.
    pub fn tool_origin(&self) -> Option<&str> {
        self.origin.as_deref()
    }

    /// What the called tool declares about itself ([`Tool::traits`](crate::tool::Tool::traits):
    /// an MCP tool's annotations, or what a [`tool_fn`](crate::tool::tool_fn) was given);
    /// `None` when it declares nothing or the model called a tool the agent does not have.
    pub fn tool_traits(&self) -> Option<ToolTraits> {
        self.traits
    }
    /// The tool that was called.
    pub fn tool_name(&self) -> &str {
        self.ids.get(..self.name_end).unwrap_or_default()
    }
    /// The provider's id of the call.
    pub fn tool_call_id(&self) -> &str {
        self.ids
            .get(self.name_end..self.call_id_end)
            .unwrap_or_default()
    }
    /// reins' id of the call.
    pub fn internal_call_id(&self) -> &str {
        self.ids.get(self.call_id_end..).unwrap_or_default()
    }
    /// The arguments the tool ran with, as JSON text.
    pub fn args(&self) -> &str {
        &self.args
    }
    /// The arguments the tool ran with, read as `T`.
    pub fn args_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(&self.args)
    }
    /// The model-visible output; `output().render()` is the text the model will see.
    pub fn output(&self) -> &ToolOutput {
        &self.output
    }
    /// The raw structured outcome, unaffected by rewrites.
    pub fn outcome(&self) -> &ToolOutcome {
        &self.outcome
    }
    /// Metadata the tool attached, never sent to the model.
    pub fn extensions(&self) -> &ToolResultExtensions {
        &self.extensions
    }
}
