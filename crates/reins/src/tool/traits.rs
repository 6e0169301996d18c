use serde::{Deserialize, Serialize};

/// What a tool says about itself, as MCP tool annotations do (`readOnlyHint`,
/// `destructiveHint`, `idempotentHint`, `openWorldHint`). A tool declares them with [`Tool::traits`](super::Tool::traits) (an
/// MCP server's tools from their annotations; [`FnTool::traits`](super::FnTool::traits) for a
/// closure); hooks read them
/// from [`DispatchEvent::tool_traits`](crate::agent::DispatchEvent::tool_traits), and an
/// [`ApprovalPolicy`](crate::hooks::approval::ApprovalPolicy)'s rules with
/// [`Rule::when_traits`](crate::hooks::approval::Rule::when_traits). A policy can also be told
/// them per tool name ([`tool_traits`](crate::hooks::approval::ApprovalPolicy::tool_traits)),
/// which overrides the tool's own claim.
///
/// These are claims, not guarantees: a rule that allows read-only tools trusts whoever
/// declared them.
///
/// ```
/// use reins::hooks::approval::{ApprovalPolicy, Rule};
/// use reins::prelude::*;
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::{ToolOutcome, ToolTraits};
/// use serde_json::{Value, json};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let search = tool_fn("search", "Searches the notes.", |_: Value| async {
///     Ok::<_, std::convert::Infallible>("two notes found")
/// })
/// .traits(ToolTraits::read_only());
/// let purge = tool_fn("purge", "Deletes every note.", |_: Value| async {
///     Ok::<_, std::convert::Infallible>("all notes deleted")
/// })
/// .traits(ToolTraits::destructive());
///
/// // Whatever only reads runs; anything else is refused without asking anyone.
/// let policy = ApprovalPolicy::new().rule(Rule::allow("*").when_traits(|t| t.read_only));
/// let model = ScriptedModel::new([
///     Turn::tool_calls([("search", json!({})), ("purge", json!({}))]),
///     Turn::text("I searched, but may not purge."),
/// ]);
/// let outcomes = Outcomes::default();
/// let agent = AgentBuilder::new(model)
///     .tool(search)
///     .tool(purge)
///     .add_hook(policy)
///     .add_hook(outcomes.clone())
///     .build();
/// agent.prompt("Search, then purge.").await.unwrap();
///
/// let outcomes = outcomes.0.lock().unwrap();
/// assert_eq!(outcomes[0], ("search".to_string(), ToolOutcome::Success));
/// assert!(matches!(&outcomes[1], (tool, ToolOutcome::Denied { .. }) if tool == "purge"));
/// # }
///
/// /// Every tool call's outcome, in order.
/// #[derive(Clone, Default)]
/// struct Outcomes(std::sync::Arc<std::sync::Mutex<Vec<(String, ToolOutcome)>>>);
///
/// impl AgentHook for Outcomes {
///     async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
///         if let Some(call) = event.tool_outcome() {
///             let seen = (call.tool_name().to_owned(), call.outcome().clone());
///             self.0.lock().unwrap().push(seen);
///         }
///         OutcomeAction::proceed()
///     }
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ToolTraits {
    /// The tool changes nothing.
    pub read_only: bool,
    /// The tool may delete or overwrite something (meaningful when not read-only).
    pub destructive: bool,
    /// Calling the tool twice with the same arguments has no further effect.
    pub idempotent: bool,
    /// The tool may reach outside systems (the web, another service), not only the
    /// application's own data. `true` unless declared otherwise ([`with_open_world`]), as in
    /// MCP.
    ///
    /// [`with_open_world`]: ToolTraits::with_open_world
    #[serde(default = "open_world_by_default")]
    pub open_world: bool,
}

/// MCP's default for a tool that does not say whether it reaches outside systems.
fn open_world_by_default() -> bool {
    true
}

impl Default for ToolTraits {
    /// MCP's defaults for a tool that declares nothing: not read-only, possibly destructive,
    /// not idempotent — the worst case, so an undeclared tool never passes as harmless.
    fn default() -> Self {
        ToolTraits {
            read_only: false,
            destructive: true,
            idempotent: false,
            open_world: true,
        }
    }
}

impl ToolTraits {
    /// A tool that only reads (and so is idempotent and not destructive).
    pub const fn read_only() -> Self {
        ToolTraits {
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: true,
        }
    }

    /// A tool that may delete or overwrite something.
    pub const fn destructive() -> Self {
        ToolTraits {
            read_only: false,
            destructive: true,
            idempotent: false,
            open_world: true,
        }
    }

    /// A tool that changes something without destroying anything (it only adds, e.g. writes
    /// a new note or sends a message).
    pub const fn additive() -> Self {
        ToolTraits {
            read_only: false,
            destructive: false,
            idempotent: false,
            open_world: true,
        }
    }

    /// These traits with `idempotent` set as given.
    pub const fn with_idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// These traits with `open_world` set as given (`false`: the tool touches only the
    /// application's own data).
    pub const fn with_open_world(mut self, open_world: bool) -> Self {
        self.open_world = open_world;
        self
    }
}
