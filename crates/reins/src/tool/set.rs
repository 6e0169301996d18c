//! [`ToolSet`]: the tools an agent holds, found by name for each call.

use super::{
    DynTool, RetrySafety, Tool, ToolAttachments, ToolCallContext, ToolDefinition, ToolExecution,
    ToolFailure, ToolOutcome, ToolOutput, ToolResultExtensions, ToolTraits,
};
use crate::completion::Usage;
use crate::panics::panic_message;
use futures::FutureExt;
use serde_json::Value;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// The tools an agent can call, by name, in the order they were added.
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::{ToolSet, tool_fn};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Path {
///     /// The file to read.
///     path: String,
/// }
///
/// let read = tool_fn("read", "Reads a file.", |args: Path| async move {
///     Ok::<_, std::io::Error>(format!("contents of {}", args.path))
/// });
/// let mut tools = ToolSet::new();
/// tools.add(read);
/// assert!(tools.contains("read"));
/// // The model is shown each tool's name, description and argument schema.
/// let definition = &tools.definitions()[0];
/// assert_eq!(definition.description, "Reads a file.");
/// assert_eq!(definition.parameters["required"], serde_json::json!(["path"]));
///
/// // An agent holds its tools as a set.
/// let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("ok")]))
///     .tool(tool_fn("now", "The time.", |_: serde_json::Value| async move {
///         Ok::<_, std::convert::Infallible>("12:00")
///     }))
///     .build();
/// assert_eq!(agent.tools().names().collect::<Vec<_>>(), ["now"]);
/// ```
#[derive(Clone, Default)]
pub struct ToolSet {
    /// The tools, in the order of `definitions`.
    tools: Vec<Arc<dyn DynTool>>,
    definitions: Vec<ToolDefinition>,
    /// Each name's index in `tools`, for a set too large to scan (see [`Self::find`]);
    /// foldhash instead of SipHash: the names are the application's, and a lookup never
    /// inserts.
    by_name: HashMap<String, usize, foldhash::fast::RandomState>,
}

/// Up to this many tools, a name is found by scanning the definitions (a length compared per
/// tool, and the bytes of the few of the same length), which costs a call less than hashing
/// the name does.
const SCANNED_TOOLS: usize = 8;

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.definitions.iter().map(|d| &d.name))
            .finish()
    }
}

impl ToolSet {
    /// An empty set.
    pub fn new() -> Self {
        ToolSet::default()
    }

    /// Adds a tool; a tool of the same name is replaced.
    pub fn add<T: Tool>(&mut self, tool: T) {
        let definition = DynTool::definition(&tool);
        self.add_shared(definition, Arc::new(tool));
    }

    /// Adds every tool of `other`, in its order; a tool of the same name is replaced.
    pub fn extend_from(&mut self, other: &ToolSet) {
        for (definition, tool) in other.definitions.iter().zip(&other.tools) {
            self.add_shared(definition.clone(), Arc::clone(tool));
        }
    }

    /// Adds the tools of `other` whose names this set does not have yet, in `other`'s order,
    /// and returns the names of those left out.
    pub(crate) fn extend_missing_from<'o>(&mut self, other: &'o ToolSet) -> Vec<&'o str> {
        let mut left_out = Vec::new();
        for (definition, tool) in other.definitions.iter().zip(&other.tools) {
            if self.contains(&definition.name) {
                left_out.push(definition.name.as_str());
            } else {
                self.add_shared(definition.clone(), Arc::clone(tool));
            }
        }
        left_out
    }

    fn add_shared(&mut self, definition: ToolDefinition, tool: Arc<dyn DynTool>) {
        match self.by_name.get(&definition.name).copied() {
            Some(index) => {
                if let (Some(slot), Some(existing)) =
                    (self.tools.get_mut(index), self.definitions.get_mut(index))
                {
                    warn_if_from_elsewhere(&definition.name, slot.origin(), tool.origin());
                    *slot = tool;
                    *existing = definition;
                }
            }
            None => {
                self.by_name
                    .insert(definition.name.clone(), self.definitions.len());
                self.definitions.push(definition);
                self.tools.push(tool);
            }
        }
    }

    /// The index of the tool named `name`, in `tools` and `definitions` alike.
    fn index_of(&self, name: &str) -> Option<usize> {
        if self.definitions.len() <= SCANNED_TOOLS {
            self.definitions.iter().position(|d| d.name == name)
        } else {
            self.by_name.get(name).copied()
        }
    }

    /// The tool named `name`.
    fn find(&self, name: &str) -> Option<&Arc<dyn DynTool>> {
        self.tools.get(self.index_of(name)?)
    }

    /// The definition of the tool named `name`.
    pub(crate) fn definition(&self, name: &str) -> Option<&ToolDefinition> {
        self.definitions.get(self.index_of(name)?)
    }

    /// Whether a tool of that name exists.
    pub fn contains(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    /// What the tool `name` declares about executing a call again; an unknown tool declares
    /// nothing.
    pub fn retry_safety(&self, name: &str) -> RetrySafety {
        self.find(name)
            .map_or(RetrySafety::Undeclared, |tool| tool.retry_safety())
    }

    /// What the tool `name` says about itself; `None` for an unknown tool or one that declares
    /// nothing.
    pub fn traits(&self, name: &str) -> Option<ToolTraits> {
        self.find(name).and_then(|tool| tool.traits())
    }

    /// Where the tool named `name` comes from ([`Tool::origin`]); `None` for a tool that does
    /// not say, or a name the set does not have.
    pub fn origin(&self, name: &str) -> Option<&str> {
        self.find(name).and_then(|tool| tool.origin())
    }

    /// The tool `name`, looked up once for one call of a run: what it declares about itself
    /// and its execution both come from this lookup.
    pub(crate) fn lookup(&self, name: &str) -> Lookup<'_> {
        let index = self.index_of(name);
        Lookup {
            tool: index
                .and_then(|index| self.tools.get(index))
                .map(|tool| &**tool),
            definition: index.and_then(|index| self.definitions.get(index)),
        }
    }

    /// The tools' definitions, in the order they were added.
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.definitions
    }

    /// The tools' names, in the order they were added.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.definitions.iter().map(|d| d.name.as_str())
    }

    /// The number of tools.
    pub fn len(&self) -> usize {
        self.definitions.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.definitions.is_empty()
    }

    /// Calls the tool `name` with JSON arguments: never fails and never panics. A missing
    /// tool, bad arguments, an error, a timeout or a panic become a classified
    /// [`ToolFailure`] in the outcome, and the failure's text is the output.
    pub async fn call(&self, name: &str, args: &Value, context: ToolCallContext) -> ToolExecution {
        self.lookup(name).call(name, args, context).await.0
    }
}

/// A tool looked up by name for one call ([`ToolSet::lookup`]); it may be missing.
#[derive(Clone, Copy)]
pub(crate) struct Lookup<'a> {
    tool: Option<&'a dyn DynTool>,
    definition: Option<&'a ToolDefinition>,
}

impl<'a> Lookup<'a> {
    /// The JSON schema of the tool's arguments, as the model is shown it; `None` for a
    /// missing tool.
    pub(crate) fn parameters(self) -> Option<&'a Value> {
        self.definition.map(|definition| &definition.parameters)
    }

    /// What the tool declares about itself; `None` for a missing tool.
    pub(crate) fn traits(self) -> Option<ToolTraits> {
        self.tool.and_then(DynTool::traits)
    }

    /// Where the tool comes from; `None` for a missing tool.
    pub(crate) fn origin(self) -> Option<&'a str> {
        self.tool.and_then(DynTool::origin)
    }

    /// Calls the tool (looked up as `name`) with JSON arguments, as [`ToolSet::call`] does;
    /// and the tokens the tool said it spent ([`ToolCallContext::add_usage`]).
    pub(crate) async fn call(
        self,
        name: &str,
        args: &Value,
        context: ToolCallContext,
    ) -> (ToolExecution, Usage) {
        let Some(tool) = self.tool else {
            let failure = ToolFailure::NotFound {
                name: name.to_owned(),
            };
            return (
                ToolExecution::failed(failure, ToolResultExtensions::new()),
                Usage::default(),
            );
        };
        let scoped = context.clone().scope(async move {
            // Read where a panic is caught, as the call's own would be.
            let timeout = std::panic::catch_unwind(AssertUnwindSafe(|| tool.timeout()))?;
            let call = AssertUnwindSafe(tool.call_json(args)).catch_unwind();
            match timeout {
                Some(limit) => tokio::time::timeout(limit, call)
                    .await
                    .unwrap_or(Ok(Err(ToolFailure::Timeout { after: limit }))),
                None => call.await,
            }
        });
        let result = scoped.await;
        let ToolAttachments {
            extensions,
            answer,
            usage,
        } = context.take_attached();
        if let Some(outcome) = answer {
            // Answered in place of the tool: a failure reads as that failure of any call; a
            // skip or a denial as its text.
            let execution = match outcome {
                ToolOutcome::Failed(failure) => ToolExecution::failed(failure, extensions),
                outcome => ToolExecution {
                    output: ToolOutput::Text(outcome.text().unwrap_or_default().to_owned()),
                    outcome,
                    extensions,
                },
            };
            return (execution, usage);
        }
        let execution = match result {
            Ok(Ok(output)) => ToolExecution {
                output,
                outcome: ToolOutcome::Success,
                extensions,
            },
            Ok(Err(failure)) => ToolExecution::failed(failure, extensions),
            Err(panic) => ToolExecution::failed(
                ToolFailure::Panicked {
                    message: panic_message(panic.as_ref()),
                },
                extensions,
            ),
        };
        (execution, usage)
    }
}

/// Warns when a tool replaces one of the same name from another origin (an MCP server's for
/// the application's own, or another server's): two servers that both name a tool `search`
/// would otherwise leave the model calling the later one where the application meant the
/// first, and a server the application does not control could stand in for its tool.
fn warn_if_from_elsewhere(name: &str, replaced: Option<&str>, by: Option<&str>) {
    if replaced != by {
        let origin = |origin: Option<&str>| {
            origin.map_or_else(
                || "the application".to_owned(),
                |origin| format!("`{}`", crate::text::printable(origin)),
            )
        };
        let name = crate::text::printable(name);
        tracing::warn!(
            target: "reins",
            tool = %name,
            replaced = %origin(replaced),
            by = %origin(by),
            "the tool `{name}` of {} replaces the one of {}: name them apart (an MCP server's \
             tools take a prefix) if both are meant",
            origin(by),
            origin(replaced),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::tool_fn;
    use std::convert::Infallible;

    /// A set of `count` tools named `t0`, `t1`, …, each answering its own name.
    fn named_tools(count: usize) -> ToolSet {
        let mut set = ToolSet::new();
        for index in 0..count {
            let name = format!("t{index}");
            let answer = name.clone();
            set.add(tool_fn(name, "Answers its name.", move |_: Value| {
                let answer = answer.clone();
                async move { Ok::<_, Infallible>(answer) }
            }));
        }
        set
    }

    async fn answer(set: &ToolSet, name: &str) -> ToolOutput {
        set.call(
            name,
            &Value::Null,
            ToolCallContext::new("run", "t1c0", "call"),
        )
        .await
        .output
    }

    #[tokio::test]
    async fn a_tool_is_found_by_name_in_a_small_set_and_a_large_one() {
        for count in [1, SCANNED_TOOLS, SCANNED_TOOLS + 1, 40] {
            let set = named_tools(count);
            let last = format!("t{}", count - 1);
            assert!(set.contains("t0") && set.contains(&last), "{count} tools");
            assert!(!set.contains("t") && !set.contains("t00"), "{count} tools");
            assert_eq!(answer(&set, &last).await, ToolOutput::Text(last.clone()));
            let missing = set.call("nope", &Value::Null, ToolCallContext::new("r", "i", "c"));
            assert!(matches!(
                missing.await.outcome,
                ToolOutcome::Failed(ToolFailure::NotFound { .. })
            ));
        }
    }

    #[tokio::test]
    async fn a_call_answered_as_skipped_or_denied_is_recorded_so_whatever_the_tool_returns() {
        let mut set = ToolSet::new();
        set.add(tool_fn(
            "answer",
            "Answers as told.",
            |how: Value| async move {
                let call = ToolCallContext::current().ok_or("outside a call")?;
                call.set_extension("seen", Value::Bool(true));
                match how.as_str() {
                    Some("skip") => call.answer_skipped("not run: skipped"),
                    Some("deny") => call.answer_denied("not run: denied"),
                    _ => {}
                }
                Err::<String, _>("what the tool returned")
            },
        ));
        let (skip, deny, neither) = (
            Value::String("skip".to_owned()),
            Value::String("deny".to_owned()),
            Value::String("neither".to_owned()),
        );
        let call = |how| set.call("answer", how, ToolCallContext::new("run", "t1c0", "call"));
        let skipped = call(&skip).await;
        assert_eq!(
            skipped.outcome,
            ToolOutcome::Skipped {
                reason: "not run: skipped".to_owned()
            }
        );
        assert_eq!(skipped.output, ToolOutput::Text("not run: skipped".into()));
        assert_eq!(skipped.extensions.get("seen"), Some(&Value::Bool(true)));
        let denied = call(&deny).await;
        assert_eq!(
            denied.outcome,
            ToolOutcome::Denied {
                report: "not run: denied".to_owned()
            }
        );
        assert_eq!(denied.output, ToolOutput::Text("not run: denied".into()));
        let failed = call(&neither).await;
        assert!(matches!(
            failed.outcome,
            ToolOutcome::Failed(ToolFailure::Execution { .. })
        ));
    }

    /// An engine that reads a call's arguments itself (reins-restate's journaled tools)
    /// answers a call whose arguments do not fit with that failure: the run records it, and
    /// the model reads it, as a call the run refused the arguments of.
    #[tokio::test]
    async fn a_call_answered_with_a_failure_reads_as_that_failure_of_any_call() {
        let mut set = ToolSet::new();
        set.add(tool_fn(
            "engine",
            "Reads its own arguments.",
            |_: Value| async {
                let call = ToolCallContext::current().ok_or("outside a call")?;
                call.attach(ToolAttachments {
                    answer: Some(ToolOutcome::Failed(ToolFailure::InvalidArguments {
                        message: "at `amount`: expected u64".to_owned(),
                    })),
                    ..ToolAttachments::default()
                });
                Err::<String, _>("what the tool returned")
            },
        ));
        let answered = set
            .call(
                "engine",
                &Value::Null,
                ToolCallContext::new("run", "t1c0", "call"),
            )
            .await;
        let mut plain = ToolSet::new();
        plain.add(tool_fn("typed", "Typed.", |_: u64| async {
            Ok::<_, Infallible>("ran")
        }));
        let refused = plain
            .call(
                "typed",
                &Value::from("lots"),
                ToolCallContext::new("run", "t1c0", "call"),
            )
            .await;
        assert_eq!(
            answered.outcome,
            ToolOutcome::Failed(ToolFailure::InvalidArguments {
                message: "at `amount`: expected u64".to_owned()
            })
        );
        assert_eq!(
            answered.output,
            ToolOutput::Text("invalid arguments: at `amount`: expected u64".into())
        );
        // The same shape as the run's own refusal of arguments.
        assert!(matches!(
            refused.outcome,
            ToolOutcome::Failed(ToolFailure::InvalidArguments { .. })
        ));
        assert!(refused.output.render().starts_with("invalid arguments: "));
    }

    #[tokio::test]
    async fn a_tool_of_the_same_name_replaces_the_first_in_its_place() {
        for count in [3, 20] {
            let mut set = named_tools(count);
            set.add(tool_fn("t1", "Replaced.", |_: Value| async {
                Ok::<_, Infallible>("replaced")
            }));
            assert_eq!(set.len(), count);
            assert_eq!(set.names().nth(1), Some("t1"));
            assert_eq!(set.definitions()[1].description, "Replaced.");
            assert_eq!(
                answer(&set, "t1").await,
                ToolOutput::Text("replaced".into())
            );
            assert_eq!(answer(&set, "t2").await, ToolOutput::Text("t2".into()));
        }
    }
}
