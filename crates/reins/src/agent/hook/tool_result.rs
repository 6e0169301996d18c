//! [`ToolResult`]: a finished tool call as outcome hooks see it.

use crate::tool::{ToolExecution, ToolOutcome, ToolOutput, ToolResultExtensions, ToolTraits};
use serde_json::Value;
use std::sync::{Arc, OnceLock};

/// A finished tool call as hooks see it: the model-visible output (with earlier hooks'
/// rewrites) and the raw structured outcome.
#[derive(Clone)]
pub struct ToolResult {
    pub(crate) call: CallParts,
    /// The arguments' JSON text, written the first time a hook asks for it (an outcome hook
    /// that looks at the output alone never pays for it), or handed over from the dispatch.
    args_text: OnceLock<String>,
    pub(crate) output: ToolOutput,
    pub(crate) outcome: ToolOutcome,
    pub(crate) extensions: ToolResultExtensions,
    pub(crate) traits: Option<ToolTraits>,
    pub(crate) origin: Option<Arc<str>>,
}

/// What a [`ToolResult`] holds of the call itself. The driver lends these from the pending
/// call for the outcome hooks and takes them back afterwards, so a result costs no copy of
/// its names, ids or arguments.
#[derive(Clone, Debug, Default)]
pub(crate) struct CallParts {
    pub tool_name: String,
    pub tool_call_id: String,
    pub internal_call_id: String,
    /// The arguments the tool ran with (with every dispatch hook's rewrite).
    pub args: Value,
}

impl std::fmt::Debug for ToolResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolResult")
            .field("tool_name", &self.tool_name())
            .field("tool_call_id", &self.tool_call_id())
            .field("internal_call_id", &self.internal_call_id())
            .field("args", &self.call.args)
            .field("output", &self.output)
            .field("outcome", &self.outcome)
            .field("extensions", &self.extensions)
            .field("traits", &self.traits)
            .field("origin", &self.origin)
            .finish()
    }
}

impl ToolResult {
    /// The result of `call`, as the tool answered; `args_text` is the arguments' text when a
    /// dispatch hook already had it written.
    pub(crate) fn new(
        call: CallParts,
        args_text: Option<String>,
        execution: ToolExecution,
        traits: Option<ToolTraits>,
        origin: Option<Arc<str>>,
    ) -> Self {
        ToolResult {
            call,
            args_text: args_text.map_or_else(OnceLock::new, OnceLock::from),
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
        &self.call.tool_name
    }
    /// The provider's id of the call.
    pub fn tool_call_id(&self) -> &str {
        &self.call.tool_call_id
    }
    /// reins' id of the call.
    pub fn internal_call_id(&self) -> &str {
        &self.call.internal_call_id
    }
    /// The arguments the tool ran with, as JSON text.
    pub fn args(&self) -> &str {
        self.args_text
            .get_or_init(|| crate::message::arguments_text(&self.call.args))
    }
    /// The arguments the tool ran with, read as `T`.
    pub fn args_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        read_args(&self.call.args)
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

/// Arguments read as `T`, as their JSON text would be: arguments kept as a string (text the
/// model sent that is not JSON) are parsed as text; any other value is read directly, with no
/// text written on the way.
pub(crate) fn read_args<T: serde::de::DeserializeOwned>(
    args: &Value,
) -> Result<T, serde_json::Error> {
    match args {
        Value::String(raw) => serde_json::from_str(raw),
        value => T::deserialize(value),
    }
}
