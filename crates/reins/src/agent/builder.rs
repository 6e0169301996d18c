use super::hook::{AgentHook, HookStack};
use super::options::DEFAULT_MAX_TURNS;
use super::routing::ModelRegistry;
use super::tools::{AvailableTools, LiveTools};
use crate::completion::{CompletionModel, SharedModel};
use crate::message::{Document, ToolChoice};
use crate::tool::{Tool, ToolSet, ToolSource};
use serde_json::Value;
use std::sync::Arc;

/// The configuration every run of an agent starts from.
pub(crate) struct AgentConfig {
    pub name: Option<String>,
    pub preamble: Option<String>,
    /// The tools as built: the fixed tools and each source's list at build time.
    pub tools: Arc<AvailableTools>,
    /// The tool sources, when there are any: runs take their tools from here, turn by turn.
    pub live: Option<LiveTools>,
    pub hooks: HookStack,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u64>,
    pub additional_params: Option<Value>,
    pub documents: Vec<Document>,
    pub tool_choice: Option<ToolChoice>,
    pub models: ModelRegistry,
    pub max_turns: usize,
    pub max_invalid_tool_call_retries: usize,
}

/// A model with tools, hooks and settings, ready to run prompts. Cheap to clone: clones share
/// one configuration, and any number of runs (each [`prompt`](Self::prompt) is one) go on
/// at once. It is `Send + Sync + 'static`: move a clone into each spawned task.
///
/// A conversation is one run per prompt, each starting from the last one's history
/// ([`PromptRequest::with_history`](super::PromptRequest::with_history)). Another agent
/// serves as a tool through a [`tool_fn`](crate::tool::tool_fn) that runs it, its tokens
/// counted in the caller's run with
/// [`ToolCallContext::add_usage`](crate::tool::ToolCallContext::add_usage).
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::testing::{ScriptedModel, Turn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), reins::agent::PromptError> {
/// let model = ScriptedModel::new([Turn::text("Paris."), Turn::text("Rome.")]);
/// let agent = AgentBuilder::new(model).name("geography").build();
///
/// // Two runs of one agent at once, each on a task of its own and a conversation of its own.
/// let tasks: Vec<_> = ["Capital of France?", "Capital of Italy?"]
///     .into_iter()
///     .map(|question| {
///         let agent = agent.clone();
///         tokio::spawn(async move { agent.prompt(question).await })
///     })
///     .collect();
/// let mut answers = Vec::new();
/// for task in tasks {
///     answers.push(task.await.expect("the run's task ends")?);
/// }
/// answers.sort();
/// assert_eq!(answers, ["Paris.", "Rome."]);
/// assert_eq!(agent.name(), Some("geography"));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Agent {
    pub(crate) config: Arc<AgentConfig>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("name", &self.config.name)
            .field("tools", &self.config.tools.set)
            .field("hooks", &self.config.hooks)
            .field("models", &self.config.models.labels)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// The agent's name, if it has one.
    pub fn name(&self) -> Option<&str> {
        self.config.name.as_deref()
    }

    /// The agent's tools as it was built: its own and, for each
    /// [`tool_source`](AgentBuilder::tool_source), the list the source gave then (runs see
    /// the sources' later lists turn by turn).
    pub fn tools(&self) -> &ToolSet {
        &self.config.tools.set
    }

    /// The labels of the agent's models, the default's first.
    pub fn model_labels(&self) -> &[String] {
        &self.config.models.labels
    }
}

/// Builds an [`Agent`]: its model (and any other models, by label), preamble, tools, hooks
/// and request settings.
///
/// ```
/// use reins::agent::{AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext};
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::tool_fn;
/// use serde_json::json;
///
/// /// Lets every call through, and counts them in the run's scratchpad.
/// struct CountCalls;
///
/// impl AgentHook for CountCalls {
///     async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
///         if event.tool_name().is_some() {
///             ctx.scratchpad().update(|calls: &mut u32| *calls += 1);
///         }
///         DispatchAction::proceed()
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), reins::agent::PromptError> {
/// let model = ScriptedModel::new([
///     Turn::tool_call("shout", json!({"text": "hi"})),
///     Turn::text("It said HI."),
/// ]);
/// let shout = tool_fn("shout", "Upper-cases text.", |args: serde_json::Value| async move {
///     Ok::<_, std::convert::Infallible>(args["text"].as_str().unwrap_or("").to_uppercase())
/// });
/// let agent = AgentBuilder::new(model.clone())
///     .preamble("You are terse.")
///     .tool(shout)
///     .add_hook(CountCalls)
///     .temperature(0.2)
///     .default_max_turns(4)
///     .build();
///
/// assert_eq!(agent.prompt("Shout hi.").await?, "It said HI.");
/// // Every request carried the preamble, the settings and the tool's definition.
/// let sent = model.requests();
/// assert_eq!(sent.len(), 2);
/// assert_eq!(sent[0].preamble.as_deref(), Some("You are terse."));
/// assert_eq!(sent[0].temperature, Some(0.2));
/// assert_eq!(sent[0].tools[0].name, "shout");
/// # Ok(())
/// # }
/// ```
pub struct AgentBuilder {
    name: Option<String>,
    preamble: Option<String>,
    tools: ToolSet,
    sources: Vec<Arc<dyn ToolSource>>,
    hooks: HookStack,
    temperature: Option<f64>,
    max_tokens: Option<u64>,
    additional_params: Option<Value>,
    documents: Vec<Document>,
    tool_choice: Option<ToolChoice>,
    models: ModelRegistry,
    max_turns: usize,
    max_invalid_tool_call_retries: usize,
}

impl AgentBuilder {
    /// A builder whose default model is `model`, registered under the label `"default"`.
    pub fn new<M: CompletionModel>(model: M) -> Self {
        AgentBuilder {
            name: None,
            preamble: None,
            tools: ToolSet::new(),
            sources: Vec::new(),
            hooks: HookStack::new(),
            temperature: None,
            max_tokens: None,
            additional_params: None,
            documents: Vec::new(),
            tool_choice: None,
            models: ModelRegistry::new(Arc::new(model) as SharedModel),
            max_turns: DEFAULT_MAX_TURNS,
            max_invalid_tool_call_retries: 0,
        }
    }

    /// Names the agent; hooks read it from [`HookContext::agent_name`](super::HookContext::agent_name).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the system instructions.
    pub fn preamble(mut self, preamble: impl Into<String>) -> Self {
        self.preamble = Some(preamble.into());
        self
    }

    /// Adds a tool (any [`Tool`], including what [`tool_fn`](crate::tool::tool_fn) returns).
    pub fn tool<T: Tool>(mut self, tool: T) -> Self {
        self.tools.add(tool);
        self
    }

    /// Adds several tools of one type (the tools of an MCP server, say); a tool of the same
    /// name as one already added replaces it, with a warning when the two come from different
    /// places ([`Tool::origin`]: two MCP servers, or a server's tool for the application's
    /// own): give one server's tools a prefix if both are meant.
    pub fn tools<T: Tool>(mut self, tools: impl IntoIterator<Item = T>) -> Self {
        for tool in tools {
            self.tools.add(tool);
        }
        self
    }

    /// Adds tools whose list can change while the agent lives (an MCP server's, say): every
    /// run starts from the source's latest list and takes a new one between model turns when
    /// the source says it changed (see [`ToolSource`]). A source's tool never replaces a tool
    /// the agent already has under its name — one added with [`tool`](AgentBuilder::tool), or
    /// an earlier source's: the first stays and the later is left out with a warning, so a
    /// server the application does not control cannot stand in for one of its tools.
    pub fn tool_source<S: ToolSource>(mut self, source: S) -> Self {
        self.sources.push(Arc::new(source));
        self
    }

    /// Adds a hook to every run of the agent. Agent hooks run before a run's own hooks. A
    /// [`HookStack`](crate::agent::HookStack) adds its hooks, in order.
    pub fn add_hook<H: AgentHook>(mut self, hook: H) -> Self {
        self.hooks.push(hook);
        self
    }

    /// Sets the sampling temperature.
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets the output token limit of each model call.
    pub fn max_tokens(mut self, max_tokens: u64) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Provider-specific parameters, shallow-merged into every request body.
    pub fn additional_params(mut self, params: Value) -> Self {
        self.additional_params = Some(params);
        self
    }

    /// Adds a context document sent with every request.
    pub fn context(mut self, document: Document) -> Self {
        self.documents.push(document);
        self
    }

    /// Sets the tool choice of every request (hooks can patch it per turn).
    pub fn tool_choice(mut self, tool_choice: ToolChoice) -> Self {
        self.tool_choice = Some(tool_choice);
        self
    }

    /// The default `max_turns` of the agent's runs (10 unless set).
    pub fn default_max_turns(mut self, max_turns: usize) -> Self {
        self.max_turns = max_turns;
        self
    }

    /// The default [`max_invalid_tool_call_retries`](super::PromptRequest::max_invalid_tool_call_retries)
    /// of the agent's runs (0 unless set): how many times a run may ask the model again
    /// after an invalid tool call a hook answered with
    /// [`InvalidToolCallAction::retry`](super::InvalidToolCallAction::retry), such as
    /// [`InvalidCalls`](crate::hooks::invalid_calls::InvalidCalls)' feedback. Each retry is
    /// a model call, counted against `max_turns` too.
    pub fn default_max_invalid_tool_call_retries(mut self, n: usize) -> Self {
        self.max_invalid_tool_call_retries = n;
        self
    }

    /// Registers another model under `label`, for `on_model_select` to choose. Registering
    /// `"default"` replaces the default model.
    pub fn named_model<M: CompletionModel>(mut self, label: impl Into<String>, model: M) -> Self {
        self.models.insert(label.into(), Arc::new(model));
        self
    }

    /// Registers `model` under `label` and routes calls to it by default: it becomes the
    /// `default_model` of `on_model_select`. The model given to [`AgentBuilder::new`] stays
    /// registered as `"default"`.
    pub fn model_route<M: CompletionModel>(mut self, label: impl Into<String>, model: M) -> Self {
        self.models.route_by_default(label.into(), Arc::new(model));
        self
    }

    /// Builds the agent.
    pub fn build(self) -> Agent {
        let (tools, live) = if self.sources.is_empty() {
            (AvailableTools::new(self.tools), None)
        } else {
            let live = LiveTools::new(self.tools, self.sources);
            (live.current(), Some(live))
        };
        Agent {
            config: Arc::new(AgentConfig {
                name: self.name,
                preamble: self.preamble,
                tools,
                live,
                hooks: self.hooks,
                temperature: self.temperature,
                max_tokens: self.max_tokens,
                additional_params: self.additional_params,
                documents: self.documents,
                tool_choice: self.tool_choice,
                models: self.models,
                max_turns: self.max_turns,
                max_invalid_tool_call_retries: self.max_invalid_tool_call_retries,
            }),
        }
    }
}
