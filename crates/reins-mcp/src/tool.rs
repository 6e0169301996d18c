use crate::McpError;
use crate::advertised::{model_name, object_schema};
use crate::client::ClientInner;
use crate::content::cut_to;
use crate::hidden::LoggedToolName;
use reins::tool::schema_check::CompiledSchema;
use reins::tool::{RetrySafety, Tool, ToolCallContext, ToolTraits};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// How many of a structured result's mismatches with the tool's `outputSchema` the error
/// lists: enough to fix a server, few enough for a model's context.
const MISMATCHES_LISTED: usize = 3;

/// What an MCP server says about a tool's behaviour (its `annotations`). Each hint is `None`
/// when the server did not say; [`traits`](McpToolAnnotations::traits) applies MCP's defaults.
///
/// These are claims by the server, not guarantees.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct McpToolAnnotations {
    /// `readOnlyHint`: the tool changes nothing (MCP's default: `false`).
    pub read_only_hint: Option<bool>,
    /// `destructiveHint`: the tool may delete or overwrite (MCP's default: `true`; meaningful
    /// only when not read-only).
    pub destructive_hint: Option<bool>,
    /// `idempotentHint`: calling it again with the same arguments has no further effect
    /// (MCP's default: `false`; meaningful only when not read-only).
    pub idempotent_hint: Option<bool>,
    /// `openWorldHint`: the tool reaches outside systems (MCP's default: `true`).
    pub open_world_hint: Option<bool>,
}

impl McpToolAnnotations {
    /// The hints as reins [`ToolTraits`], with MCP's defaults for the missing ones: a
    /// read-only tool is idempotent and not destructive; otherwise destructive unless the
    /// server says not, idempotent only if it says so.
    pub fn traits(&self) -> ToolTraits {
        if self.read_only_hint == Some(true) {
            return ToolTraits::read_only().with_open_world(self.open_world());
        }
        ToolTraits {
            read_only: false,
            destructive: self.destructive_hint.unwrap_or(true),
            idempotent: self.idempotent_hint.unwrap_or(false),
            open_world: self.open_world(),
        }
    }

    /// What a durable run may do with a call of this tool that was cut off by a crash: a
    /// tool the server declares read-only or idempotent runs again
    /// ([`RetrySafety::Idempotent`]); any other waits for a decision, in doubt.
    pub fn retry_safety(&self) -> RetrySafety {
        if self.traits().idempotent {
            RetrySafety::Idempotent
        } else {
            RetrySafety::Undeclared
        }
    }

    /// Whether the tool may reach outside systems (`openWorldHint`, `true` by default).
    pub fn open_world(&self) -> bool {
        self.open_world_hint.unwrap_or(true)
    }
}

/// One tool of an MCP server, usable as a reins [`Tool`]: add it to an agent with
/// [`AgentBuilder::tool`](reins::agent::AgentBuilder::tool).
///
/// Its parameters are the server's `inputSchema`. A call sends the model's arguments as they
/// are, with the call's effect id in `_meta` (under
/// [`EFFECT_ID_META_KEY`](crate::EFFECT_ID_META_KEY)); the model sees the result's
/// structured content as JSON when there is one, else its content blocks as text (binary
/// content, and content it cannot read, as a stand-in, see
/// [`McpContent::render`](crate::McpContent::render)), at most
/// [`McpServer::max_result_bytes`](crate::McpServer::max_result_bytes) of it. A result
/// with `isError: true` is a [`ToolFailure::Execution`](reins::tool::ToolFailure::Execution)
/// carrying the tool's message, and so is `structuredContent` that does not match the tool's
/// `outputSchema` ([`McpError::InvalidStructuredContent`]; a result without structured content
/// is shown as its text); a call past the server's call timeout is a
/// [`ToolFailure::Timeout`](reins::tool::ToolFailure::Timeout). A successful or failed call
/// attaches an `mcp` extension (`{"server": .., "tool": ..}`) hooks can read.
#[derive(Clone)]
pub struct McpTool {
    client: Arc<ClientInner>,
    name: String,
    remote_name: String,
    title: Option<String>,
    description: String,
    input_schema: Value,
    output_schema: Option<Value>,
    /// `output_schema` compiled once, when the tool is listed (shared by its clones); `None`
    /// without a schema.
    output_validator: Option<Arc<CompiledSchema>>,
    annotations: McpToolAnnotations,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("server", &self.client.name)
            .field("name", &self.name)
            .field("remote_name", &self.remote_name)
            .field("annotations", &self.annotations)
            .finish_non_exhaustive()
    }
}

impl McpTool {
    /// The tool as the server listed it; `None` when its `outputSchema` does not compile (an
    /// unresolvable `$ref`, an unknown dialect): its results could not be checked, and the
    /// specification asks that such a schema be rejected rather than read as allowing
    /// anything, so the tool is left out, with a warning.
    pub(crate) fn new(client: Arc<ClientInner>, tool: rmcp::model::Tool) -> Option<Self> {
        let hints = tool.annotations.as_ref();
        let annotations = McpToolAnnotations {
            read_only_hint: hints.and_then(|a| a.read_only_hint),
            destructive_hint: hints.and_then(|a| a.destructive_hint),
            idempotent_hint: hints.and_then(|a| a.idempotent_hint),
            open_world_hint: hints.and_then(|a| a.open_world_hint),
        };
        let title = tool
            .title
            .clone()
            .or_else(|| hints.and_then(|a| a.title.clone()));
        let description = tool
            .description
            .as_deref()
            .map(str::to_owned)
            .or_else(|| title.clone())
            .map(|description| cut_to("description", description, client.max_description_bytes))
            .unwrap_or_default();
        let output_schema = tool
            .output_schema
            .as_ref()
            .map(|schema| Value::Object((**schema).clone()));
        let output_validator = match output_schema.as_ref().map(CompiledSchema::compile) {
            None => None,
            Some(Ok(validator)) => Some(Arc::new(validator)),
            Some(Err(error)) => {
                tracing::warn!(
                    target: "reins_mcp",
                    server = %client.name,
                    tool = %client.logged_tool_name(&tool.name),
                    error = %client.logged_error(&error.to_string()),
                    "the tool's outputSchema does not compile; the tool is left out"
                );
                return None;
            }
        };
        let input_schema = object_schema(
            &client.name,
            client.logged_tool_name(&tool.name),
            (*tool.input_schema).clone(),
        );
        Some(McpTool {
            name: model_name("", &tool.name),
            remote_name: tool.name.to_string(),
            client,
            title,
            description,
            input_schema,
            output_schema,
            output_validator,
            annotations,
        })
    }

    /// The name the model calls the tool by: the server's name with any prefix, each
    /// character providers refuse in a name (anything but ASCII letters, digits, `_` and
    /// `-`) replaced by `_`, with `_` put first unless it starts with a letter or `_`
    /// (`1st_step` is called `_1st_step`), cut to 64 characters.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tool's name on the server.
    pub fn remote_name(&self) -> &str {
        &self.remote_name
    }

    /// The name of the server the tool belongs to.
    pub fn server_name(&self) -> &str {
        &self.client.name
    }

    /// `name` (one of the tool's) as warnings show it: without the server's credentials, cut
    /// (`hidden.rs`).
    pub(crate) fn logged_name<'a>(&'a self, name: &'a str) -> LoggedToolName<'a> {
        self.client.logged_tool_name(name)
    }

    /// The tool's human-readable title, if the server gave one.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The server's `inputSchema` for the arguments, as the model is given it: an object
    /// schema (`"type": "object"` added when the server gave no `type`; a schema of another
    /// type, which no MCP call could satisfy, replaced by an object schema without
    /// properties).
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The server's `outputSchema` for the structured result, if it gave one.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    /// What the server says about the tool's behaviour.
    pub fn annotations(&self) -> &McpToolAnnotations {
        &self.annotations
    }

    /// The annotations as reins [`ToolTraits`] (MCP's defaults for missing hints), for an
    /// [`ApprovalPolicy`](reins::hooks::approval::ApprovalPolicy).
    pub fn traits(&self) -> ToolTraits {
        self.annotations.traits()
    }

    /// The same tool, called by the model as `prefix` + its server name (made acceptable
    /// to providers as [`name`](McpTool::name) says).
    pub fn with_prefix(mut self, prefix: &str) -> Self {
        self.name = model_name(prefix, &self.remote_name);
        self
    }
}

impl Tool for McpTool {
    type Args = Value;
    type Output = Value;
    type Error = McpError;

    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        self.input_schema.clone()
    }

    fn timeout(&self) -> Option<Duration> {
        self.client.call_timeout
    }

    fn retry_safety(&self) -> RetrySafety {
        self.annotations.retry_safety()
    }

    fn traits(&self) -> Option<ToolTraits> {
        Some(self.annotations.traits())
    }

    fn origin(&self) -> Option<&str> {
        Some(self.server_name())
    }

    async fn call(&self, args: Value) -> Result<Value, McpError> {
        let context = ToolCallContext::current();
        if let Some(context) = &context {
            context.set_extension(
                "mcp",
                json!({"server": self.client.name, "tool": self.remote_name}),
            );
        }
        let effect_id = context.as_ref().map(ToolCallContext::effect_id);
        let result = self
            .client
            // No limit here: `Tool::timeout` reports it and the tool set enforces it, as a
            // classified `ToolFailure::Timeout`.
            .call_tool(&self.remote_name, args, effect_id.as_deref(), None)
            .await?;
        if result.is_error {
            let message = match &result.structured_content {
                Some(structured) if result.content.is_empty() => structured.to_string(),
                _ => result.text(),
            };
            return Err(McpError::Tool {
                server: self.client.name.clone(),
                tool: self.client.shown_tool_name(&self.remote_name),
                message: cut_to("result", message, self.client.max_result_bytes),
            });
        }
        if let (Some(validator), Some(structured)) =
            (&self.output_validator, &result.structured_content)
        {
            validator
                .check(structured, MISMATCHES_LISTED)
                .map_err(|message| {
                    McpError::InvalidStructuredContent {
                        server: self.client.name.clone(),
                        tool: self.client.shown_tool_name(&self.remote_name),
                        // A mismatch quotes the value, which may be anything the server sent.
                        message: cut_to("result", message, self.client.max_result_bytes),
                    }
                })?;
        }
        Ok(result.to_model_value_within(self.client.max_result_bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::MISMATCHES_LISTED;
    use crate::McpError;
    use reins::tool::schema_check::CompiledSchema;
    use serde_json::json;

    #[test]
    fn a_mismatch_names_the_tool_and_where_its_structured_result_breaks_the_schema() {
        let schema = json!({
            "type": "object",
            "properties": {"temperature": {"type": "number"}, "city": {"type": "string"}},
            "required": ["temperature", "city"]
        });
        let Ok(forecast) = CompiledSchema::compile(&schema) else {
            panic!("{schema} does not compile");
        };
        assert_eq!(
            forecast.check(
                &json!({"temperature": 21.5, "city": "Paris"}),
                MISMATCHES_LISTED
            ),
            Ok(())
        );
        let Err(message) = forecast.check(&json!({"temperature": "warm"}), MISMATCHES_LISTED)
        else {
            panic!("a wrong result fits");
        };
        let error = McpError::InvalidStructuredContent {
            server: "weather".to_owned(),
            tool: "forecast".to_owned(),
            message,
        };
        assert_eq!(
            error.to_string(),
            "MCP server `weather`: the structured result of tool `forecast` does not match its \
             outputSchema: \"city\" is a required property; \"warm\" is not of type \"number\" \
             (at /temperature)"
        );
    }
}
