//! Tools the model can call: the [`Tool`] trait, [`tool_fn`] for closures, the [`ToolSet`] an
//! agent holds, [`ToolSource`] for a list that changes while the agent lives, and the
//! structured result of a call ([`ToolOutcome`], [`ToolFailure`], [`ToolResultExtensions`]),
//! and (feature `schema-check`) arguments checked against a tool's JSON schema
//! (`schema_check`).

mod attachments;
mod context;
mod function;
mod outcome;
mod retry;
#[cfg(feature = "schema-check")]
pub mod schema_check;
mod set;
mod source;
mod traits;

pub use attachments::ToolAttachments;
pub use context::ToolCallContext;
pub use function::{FnTool, tool_fn};
pub use outcome::{ToolFailure, ToolOutcome, ToolOutput, ToolResultExtensions};
pub use retry::RetrySafety;
pub use set::ToolSet;
pub use source::ToolSource;
pub use traits::ToolTraits;

use crate::panics::declared;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use stackfuture::StackFuture;
use std::fmt::Display;
use std::future::Future;
use std::time::Duration;

/// A tool call's arguments read as `A`, as a run reads them before [`Tool::call`]: arguments
/// that do not fit are the [`ToolFailure::InvalidArguments`] the model is told, naming the
/// field that did not (`` invalid arguments: at `items[1].amount`: invalid type: string
/// "ten", expected u64 ``). For an engine that calls a tool itself (reins-restate's journaled
/// tools), so that a call is refused there as a run refuses it: such a tool takes its call's
/// arguments as JSON and answers a call whose arguments do not fit with this failure
/// ([`ToolCallContext::attach`] with it as the
/// [`answer`](ToolAttachments::answer)), so hooks see
/// [`ToolFailure::InvalidArguments`] and the model reads `` invalid arguments: at `amount`:
/// … ``, as for any tool.
///
/// ```
/// use reins::tool::{ToolFailure, read_arguments};
/// use serde_json::json;
///
/// #[derive(serde::Deserialize)]
/// struct Transfer { to: String, amount: u64 }
///
/// let failure = read_arguments::<Transfer>(&json!({"to": "bob", "amount": "lots"})).err().unwrap();
/// assert_eq!(
///     failure.to_string(),
///     r#"invalid arguments: at `amount`: invalid type: string "lots", expected u64"#
/// );
/// assert!(matches!(failure, ToolFailure::InvalidArguments { .. }));
/// ```
pub fn read_arguments<A: DeserializeOwned>(args: &Value) -> Result<A, ToolFailure> {
    crate::json_error_path::read_with_path(args)
        .map_err(|message| ToolFailure::InvalidArguments { message })
}

/// A tool the model can call.
///
/// The parameters schema is derived from [`Tool::Args`] with schemars; the model's arguments
/// are deserialized into it before [`call`](Tool::call) runs, and arguments that do not fit are
/// reported to the model as [`ToolFailure::InvalidArguments`] without calling the tool, naming
/// the field that did not fit (`` invalid arguments: at `items[1].amount`: invalid type: string
/// "ten", expected u64 ``). ([`tool_fn`] makes a tool of a closure, for the common case.)
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::Tool;
/// use serde_json::json;
///
/// /// Looks a word up in a fixed glossary.
/// struct Glossary;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Lookup {
///     /// The word to define.
///     word: String,
/// }
///
/// impl Tool for Glossary {
///     type Args = Lookup;
///     type Output = String;
///     type Error = String;
///
///     fn name(&self) -> &str {
///         "define"
///     }
///     fn description(&self) -> &str {
///         "Defines a word from the team glossary."
///     }
///     async fn call(&self, args: Lookup) -> Result<String, String> {
///         match args.word.as_str() {
///             "hook" => Ok("code that observes and steers a run".into()),
///             other => Err(format!("`{other}` is not in the glossary")),
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([
///     Turn::tool_call("define", json!({"word": "hook"})),
///     Turn::text("A hook observes and steers a run."),
/// ]);
/// let agent = AgentBuilder::new(model.clone()).tool(Glossary).build();
/// agent.prompt("What is a hook?").await.unwrap();
/// // The model saw the tool's output as the call's result.
/// let result = model.requests()[1].history.last().unwrap().text();
/// assert_eq!(result, "code that observes and steers a run");
/// # }
/// ```
pub trait Tool: Send + Sync + 'static {
    /// The arguments the model must send.
    type Args: DeserializeOwned + JsonSchema + Send;
    /// What the tool returns; serialized to JSON for the model.
    type Output: Serialize;
    /// The tool's error; its text is what the model sees.
    type Error: Display;

    /// The name the model calls the tool by. Every hosted provider accepts a name of at
    /// most 64 ASCII letters, digits, `_` and `-` (Gemini is sent one that starts with a
    /// digit or `-` with `_` before it, and its calls are read back under this name); a
    /// provider that refuses a tool's name fails the whole model request, its error saying
    /// why.
    fn name(&self) -> &str;

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// The JSON schema of the arguments. Defaults to the schema of [`Tool::Args`].
    fn parameters(&self) -> Value {
        schema_of::<Self::Args>()
    }

    /// How long one call may take before it fails with [`ToolFailure::Timeout`]; `None` (the
    /// default) means no limit. A panic here fails the call as one in [`call`](Tool::call)
    /// does.
    fn timeout(&self) -> Option<Duration> {
        None
    }

    /// Whether a call may be executed again after a crash left it in doubt (started, no
    /// result recorded). Defaults to [`RetrySafety::Undeclared`]: a durable run then suspends
    /// with the call in doubt instead of repeating it. A panic here is logged and read as
    /// `Undeclared`.
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Undeclared
    }

    /// What the tool says about itself (read-only, destructive, idempotent), for hooks
    /// ([`DispatchEvent::tool_traits`](crate::agent::DispatchEvent::tool_traits)) and approval
    /// rules. `None` (the default): nothing is declared, and a policy assumes the worst. A
    /// panic here is logged and read as `None`.
    fn traits(&self) -> Option<ToolTraits> {
        None
    }

    /// Where the tool comes from, when that matters to hooks: an MCP tool answers with its
    /// server's name. Hooks read it from
    /// [`DispatchEvent::tool_origin`](crate::agent::DispatchEvent::tool_origin) and
    /// [`OutcomeEvent::tool_origin`](crate::agent::OutcomeEvent::tool_origin). `None` (the
    /// default) for a tool of the application's own. A panic here is logged and read as
    /// `None`.
    fn origin(&self) -> Option<&str> {
        None
    }

    /// Runs the tool.
    fn call(
        &self,
        args: Self::Args,
    ) -> impl Future<Output = Result<Self::Output, Self::Error>> + Send;
}

/// The JSON schema of `T`, as advertised to models (without the `$schema` key).
pub fn schema_of<T: JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
    }
    schema
}

/// How a tool is described to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The name the model calls it by.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The JSON schema of its arguments.
    pub parameters: Value,
}

/// The room a tool call's future gets inline; a larger one (a tool that awaits a network
/// call, say) is boxed. A tool that computes its answer, or awaits little, costs no
/// allocation per call.
const TOOL_FUTURE_BYTES: usize = 128;

/// A tool call's future in its object-safe form, held inline when it fits.
type ToolFuture<'a> = StackFuture<'a, Result<ToolOutput, ToolFailure>, TOOL_FUTURE_BYTES>;

/// Object-safe form of [`Tool`]: arguments and output as JSON.
trait DynTool: Send + Sync {
    fn definition(&self) -> ToolDefinition;
    fn timeout(&self) -> Option<Duration>;
    fn retry_safety(&self) -> RetrySafety;
    fn traits(&self) -> Option<ToolTraits>;
    fn origin(&self) -> Option<&str>;
    fn call_json<'a>(&'a self, args: &'a Value) -> ToolFuture<'a>;
}

impl<T: Tool> DynTool for T {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: self.name().to_owned(),
            description: self.description().to_owned(),
            parameters: self.parameters(),
        }
    }

    // What a tool declares is read during a run, where a panic must not unwind into the
    // caller's task. A declaration that panics reads as the most careful answer: nothing
    // declared (a policy then assumes the worst, and a call in doubt is not run again).
    // The timeout is read where the call itself is caught (`ToolSet::call`), so its panic
    // fails the call like one in the tool's body.

    fn timeout(&self) -> Option<Duration> {
        Tool::timeout(self)
    }

    fn retry_safety(&self) -> RetrySafety {
        declared::<T, _>("retry_safety", || Tool::retry_safety(self)).unwrap_or_default()
    }

    fn traits(&self) -> Option<ToolTraits> {
        declared::<T, _>("traits", || Tool::traits(self)).flatten()
    }

    fn origin(&self) -> Option<&str> {
        declared::<T, _>("origin", || Tool::origin(self)).flatten()
    }

    fn call_json<'a>(&'a self, args: &'a Value) -> ToolFuture<'a> {
        StackFuture::from_or_box(async move {
            let args = read_arguments::<T::Args>(args)?;
            let output = self
                .call(args)
                .await
                .map_err(|error| ToolFailure::Execution {
                    message: error.to_string(),
                })?;
            match serde_json::to_value(output) {
                Ok(Value::String(text)) => Ok(ToolOutput::Text(text)),
                Ok(value) => Ok(ToolOutput::Json(value)),
                Err(error) => Err(ToolFailure::Execution {
                    message: format!("the tool's output could not be serialized: {error}"),
                }),
            }
        })
    }
}

/// What executing one call produced.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolExecution {
    /// The model-visible output (for a failure, the failure's text).
    pub output: ToolOutput,
    /// The structured outcome.
    pub outcome: ToolOutcome,
    /// Metadata the tool attached, never sent to the model.
    pub extensions: ToolResultExtensions,
}

impl ToolExecution {
    fn failed(failure: ToolFailure, extensions: ToolResultExtensions) -> Self {
        ToolExecution {
            output: ToolOutput::Text(failure.to_string()),
            outcome: ToolOutcome::Failed(failure),
            extensions,
        }
    }
}
