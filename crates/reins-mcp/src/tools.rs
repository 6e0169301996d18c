//! [`McpTools`]: the tools one listing of a server gave, narrowed and named, as a group.

use crate::McpError;
use crate::client::McpClient;
use crate::tool::McpTool;
use reins::hooks::approval::ApprovalPolicy;
use reins::tool::ToolSet;
use std::sync::Arc;

/// The tools of one MCP server, as [`McpClient::tools`](crate::McpClient::tools) listed them:
/// narrow them, prefix their names, feed their annotations to an approval policy, then add
/// them to an agent (they iterate as [`McpTool`]s).
///
/// Each name the model calls a tool by is held by one tool: when a server lists two tools
/// under one name (or two of its names become one once made acceptable to providers, see
/// [`McpTool::name`]), the first listed is kept and the others are left out with a warning.
/// Added as a source ([`into_source`](McpTools::into_source) with
/// [`AgentBuilder::tool_source`](reins::agent::AgentBuilder::tool_source)), a tool named like
/// one the agent already has (its own, or an earlier source's) is left out with a warning.
/// Added as fixed tools ([`AgentBuilder::tools`](reins::agent::AgentBuilder::tools)), it
/// replaces the one added before it. Either way, [`prefix`](McpTools::prefix) the tools of a
/// server you do not control so that its names never meet another tool's.
///
/// ```no_run
/// use reins::agent::AgentBuilder;
/// use reins::hooks::approval::{ApprovalPolicy, Rule};
/// use reins::testing::{ScriptedModel, Turn};
/// use reins_mcp::McpServer;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let client = McpServer::stdio("mcp-server-time", Vec::<String>::new())
///     .name("time")
///     .connect()
///     .await?;
/// let tools = client
///     .tools()
///     .await?
///     .filter(|name| name != "convert_time")
///     .prefix("time_");
/// let policy = tools
///     .register_traits(ApprovalPolicy::new())
///     .rule(Rule::allow("*").when_traits(|traits| traits.read_only));
/// let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("hi")]))
///     .tools(tools)
///     .add_hook(policy)
///     .build();
/// # Ok(()) }
/// ```
#[derive(Clone, Default)]
pub struct McpTools {
    tools: Vec<McpTool>,
    /// What [`refresh`](McpTools::refresh) applies again to a new listing.
    client: Option<McpClient>,
    keep: Vec<NameFilter>,
    prefix: String,
    /// The client's count of tool-list changes when these were listed.
    generation: u64,
}

type NameFilter = Arc<dyn Fn(&str) -> bool + Send + Sync>;

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTools")
            .field("tools", &self.tools)
            .field("prefix", &self.prefix)
            .field("filters", &self.keep.len())
            .finish()
    }
}

impl McpTools {
    pub(crate) fn new(client: McpClient, tools: Vec<McpTool>, generation: u64) -> Self {
        McpTools {
            tools: first_of_each_name(tools),
            client: Some(client),
            keep: Vec::new(),
            prefix: String::new(),
            generation,
        }
    }

    /// Whether the server's tool list changed since these were listed (it announced
    /// `notifications/tools/list_changed`, or it was started again).
    pub fn is_stale(&self) -> bool {
        self.client
            .as_ref()
            .is_some_and(|client| client.tools_changed_since(self.generation))
    }

    /// The tools as a reins [`ToolSet`].
    pub fn to_tool_set(&self) -> ToolSet {
        let mut set = ToolSet::new();
        for tool in &self.tools {
            set.add(tool.clone());
        }
        set
    }

    /// Keeps the tools whose name on the server passes `keep`.
    pub fn filter(mut self, keep: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        self.tools.retain(|tool| keep(tool.remote_name()));
        self.keep.push(Arc::new(keep));
        self
    }

    /// Keeps only the tools of these names on the server.
    pub fn only<I, S>(self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let names: Vec<String> = names.into_iter().map(|n| n.as_ref().to_owned()).collect();
        self.filter(move |name| names.iter().any(|n| n == name))
    }

    /// Drops the tools of these names on the server.
    pub fn except<I, S>(self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let names: Vec<String> = names.into_iter().map(|n| n.as_ref().to_owned()).collect();
        self.filter(move |name| names.iter().all(|n| n != name))
    }

    /// Names every tool `prefix` + its name on the server, so that tools of several servers
    /// do not clash (`time_` gives `time_get_current_time`).
    pub fn prefix(self, prefix: &str) -> Self {
        McpTools {
            tools: first_of_each_name(
                self.tools
                    .into_iter()
                    .map(|tool| tool.with_prefix(prefix))
                    .collect(),
            ),
            prefix: prefix.to_owned(),
            ..self
        }
    }

    /// Lists the server's tools again, narrowed and named as these were: call it when
    /// [`is_stale`](McpTools::is_stale) says the server announced a new list
    /// (`notifications/tools/list_changed`). An agent given the tools through
    /// [`into_source`](McpTools::into_source) does this on its own between turns. An empty
    /// set not listed from a server stays empty.
    pub async fn refresh(&self) -> Result<McpTools, McpError> {
        let Some(client) = &self.client else {
            return Ok(self.clone());
        };
        let mut listed = client.tools().await?;
        for keep in &self.keep {
            listed.tools.retain(|tool| keep(tool.remote_name()));
        }
        listed.keep = self.keep.clone();
        Ok(listed.prefix(&self.prefix))
    }

    /// Tells `policy` the [`ToolTraits`](reins::tool::ToolTraits) of every tool (by the name the model calls it by),
    /// from its annotations with MCP's defaults. Not needed for a policy on the same agent as
    /// the tools (each tool declares its traits itself); useful where the policy judges calls
    /// of tools it never sees, or to pin the traits of this listing.
    pub fn register_traits(&self, policy: ApprovalPolicy) -> ApprovalPolicy {
        self.tools.iter().fold(policy, |policy, tool| {
            policy.tool_traits(tool.name(), tool.traits())
        })
    }

    /// The tool the model calls `name`.
    pub fn get(&self, name: &str) -> Option<&McpTool> {
        self.tools.iter().find(|tool| tool.name() == name)
    }

    /// The names the model calls the tools by.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(McpTool::name)
    }

    /// The tools.
    pub fn iter(&self) -> std::slice::Iter<'_, McpTool> {
        self.tools.iter()
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// `tools` with one tool of each name the model calls them by, the first listed: the server
/// gave two of one name, or two names became one once made acceptable to providers. The
/// others are left out (an agent's tool set would keep only the last, while
/// [`McpTools::get`] found the first), each logged as a warning.
fn first_of_each_name(tools: Vec<McpTool>) -> Vec<McpTool> {
    let mut seen = std::collections::HashSet::new();
    tools
        .into_iter()
        .filter(|tool| {
            let first = seen.insert(tool.name().to_owned());
            if !first {
                tracing::warn!(
                    target: "reins_mcp",
                    server = %tool.server_name(),
                    tool = %tool.logged_name(tool.remote_name()),
                    name = %tool.logged_name(tool.name()),
                    "the server lists another tool called this; only the first is kept"
                );
            }
            first
        })
        .collect()
}

impl IntoIterator for McpTools {
    type Item = McpTool;
    type IntoIter = std::vec::IntoIter<McpTool>;

    fn into_iter(self) -> Self::IntoIter {
        self.tools.into_iter()
    }
}

impl<'a> IntoIterator for &'a McpTools {
    type Item = &'a McpTool;
    type IntoIter = std::slice::Iter<'a, McpTool>;

    fn into_iter(self) -> Self::IntoIter {
        self.tools.iter()
    }
}
