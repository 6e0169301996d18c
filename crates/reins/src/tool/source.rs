use super::ToolSet;
use futures::future::BoxFuture;

/// Tools whose list can change while an agent lives — an MCP server that announces
/// `notifications/tools/list_changed`, a plugin directory, a feature flag.
///
/// Give one to [`AgentBuilder::tool_source`](crate::agent::AgentBuilder::tool_source). The
/// agent starts with [`current`](ToolSource::current); before every model turn of every run
/// it asks [`changed`](ToolSource::changed), and when that is true it awaits
/// [`refresh`](ToolSource::refresh) and advertises the new list from that turn on. A turn
/// always sees one consistent list: the tools the model was shown are the tools its calls
/// run against. A refresh that fails keeps the previous list (the failure is logged through
/// `tracing`) and is tried again before the next turn.
///
/// ```
/// use futures::future::BoxFuture;
/// use reins::agent::AgentBuilder;
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::{ToolSet, ToolSource, tool_fn};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use serde_json::json;
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use std::sync::Arc;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Nothing {}
///
/// /// Offers `unlock` until it has been called, then `open` as well.
/// #[derive(Clone)]
/// struct Door { unlocked: Arc<AtomicBool> }
///
/// impl Door {
///     fn list(&self) -> ToolSet {
///         let mut tools = ToolSet::new();
///         let unlocked = Arc::clone(&self.unlocked);
///         tools.add(tool_fn("unlock", "Unlocks the door.", move |_: Nothing| {
///             unlocked.store(true, Ordering::SeqCst);
///             async { Ok::<_, String>("unlocked".to_owned()) }
///         }));
///         if self.unlocked.load(Ordering::SeqCst) {
///             tools.add(tool_fn("open", "Opens the door.", |_: Nothing| async {
///                 Ok::<_, String>("open".to_owned())
///             }));
///         }
///         tools
///     }
/// }
///
/// impl ToolSource for Door {
///     fn current(&self) -> ToolSet { self.list() }
///     fn changed(&self) -> bool { self.unlocked.load(Ordering::SeqCst) }
///     fn refresh(&self) -> BoxFuture<'_, Result<ToolSet, String>> {
///         Box::pin(async move { Ok(self.list()) })
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([
///     Turn::tool_call("unlock", json!({})),
///     Turn::tool_call("open", json!({})),
///     Turn::text("The door is open."),
/// ]);
/// let door = Door { unlocked: Arc::default() };
/// let agent = AgentBuilder::new(model).tool_source(door).build();
/// assert_eq!(agent.prompt("Open the door.").await.unwrap(), "The door is open.");
/// # }
/// ```
pub trait ToolSource: Send + Sync + 'static {
    /// The tools as last listed: what an agent built with this source starts with.
    fn current(&self) -> ToolSet;

    /// Whether the list may have changed since it was last listed. Asked before every model
    /// turn, so it must be cheap (a flag, a counter). A panic here is logged and taken as
    /// "unchanged".
    fn changed(&self) -> bool;

    /// Lists the tools again. The new list replaces this source's previous one in every
    /// agent that holds the source; an error, or a panic (logged), keeps the previous list.
    fn refresh(&self) -> BoxFuture<'_, Result<ToolSet, String>>;
}
