use super::builder::Agent;
use super::driver::{self, RunOptions};
use super::error::PromptError;
use super::hook::{AgentHook, Entry, HookStack};
use super::output::{OutputMode, TypedPromptRequest};
use super::stream::{PromptStream, StreamSink};
use crate::completion::Usage;
use crate::message::{Message, ToolResultMessage};
use crate::run::{RunState, ToolDecision};
use crate::store::RunStore;
use futures::FutureExt;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use std::future::IntoFuture;

/// What happens to an unknown or disallowed tool call that no hook decided about.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum UnhandledInvalidToolCall {
    /// Fail the run with [`PromptError::UnknownToolCall`] (the default).
    #[default]
    Fail,
    /// Drop the call from the turn, as if the model had not made it.
    Ignore,
}

/// What a tool's failure (error, timeout, panic, bad arguments) does to the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ToolErrorPolicy {
    /// Tell the model what went wrong, as the tool's result, and go on (the default).
    #[default]
    ReportToModel,
    /// End the run with [`PromptError::Tool`].
    Fail,
}

/// One run of an agent, being configured. Await it for the answer, call
/// [`stream`](Self::stream) to stream it, or [`extended_details`](Self::extended_details)
/// for usage, history and run id too.
#[must_use = "a prompt request does nothing until awaited or streamed"]
pub struct PromptRequest {
    pub(crate) agent: Agent,
    pub(crate) start: RunStart,
    pub(crate) hooks: HookStack,
    pub(crate) options: RunOptions,
}

/// Where a run starts from.
#[derive(Debug)]
pub(crate) enum RunStart {
    /// A new run: a prompt after an optional earlier conversation.
    New {
        prompt: Message,
        history: Vec<Message>,
    },
    /// A saved run, continued.
    Resume(Box<RunState>),
    /// A run stored in the request's store, continued by id.
    Stored(String),
}

impl std::fmt::Debug for PromptRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptRequest")
            .field("start", &self.start)
            .field("hooks", &self.hooks)
            .field("options", &self.options)
            .finish()
    }
}

impl PromptRequest {
    pub(crate) fn new(agent: Agent, start: RunStart) -> Self {
        let max_turns = agent.config.max_turns;
        PromptRequest {
            agent,
            start,
            hooks: HookStack::new(),
            options: RunOptions {
                max_turns,
                ..RunOptions::default()
            },
        }
    }

    /// At most `n` model calls in the run, retries included.
    pub fn max_turns(mut self, n: usize) -> Self {
        self.options.max_turns = n;
        self
    }

    /// Adds a hook to this run only; it runs after the agent's hooks.
    pub fn add_hook<H: AgentHook>(mut self, hook: H) -> Self {
        self.hooks.push(hook);
        self
    }

    /// Runs up to `n` of a turn's tool calls at once (1, the default, runs them in order).
    /// Results keep the calls' order whatever the concurrency.
    pub fn tool_concurrency(mut self, n: usize) -> Self {
        self.options.tool_concurrency = n.max(1);
        self
    }

    /// Allows `n` invalid tool-call retries ([`InvalidToolCallAction::retry`](super::InvalidToolCallAction::retry))
    /// in the run (0 by default).
    pub fn max_invalid_tool_call_retries(mut self, n: usize) -> Self {
        self.options.max_invalid_tool_call_retries = n;
        self
    }

    /// What an unknown or disallowed tool call no hook decided about does.
    pub fn unhandled_invalid_tool_call(mut self, policy: UnhandledInvalidToolCall) -> Self {
        self.options.unhandled_invalid_tool_call = policy;
        self
    }

    /// What a tool failure does to the run.
    pub fn tool_errors(mut self, policy: ToolErrorPolicy) -> Self {
        self.options.tool_errors = policy;
        self
    }

    /// Starts from an earlier conversation; the prompt follows it. (Ignored when resuming a
    /// saved run, which has its own history.)
    pub fn with_history(mut self, earlier: Vec<Message>) -> Self {
        if let RunStart::New { history, .. } = &mut self.start {
            *history = earlier;
        }
        self
    }

    /// Decides about a suspended tool call of a resumed run, by its internal call id
    /// ([`PendingCall::internal_call_id`](super::PendingCall::internal_call_id)). Calls left
    /// without a decision stay suspended.
    pub fn decide(mut self, internal_call_id: impl Into<String>, decision: ToolDecision) -> Self {
        self.options
            .decisions
            .push((internal_call_id.into(), decision));
        self
    }

    /// Uses `run_id` instead of a fresh one (e.g. to correlate with an external id).
    pub fn run_id(mut self, run_id: impl Into<String>) -> Self {
        self.options.run_id = Some(run_id.into());
        self
    }

    /// Makes the run durable: its state and effect journal are checkpointed into `store` after
    /// every model turn and tool call, so it can pause for a decision, survive a crash, and be
    /// resumed in another process (see [`crate::store`] for the exact guarantee).
    pub fn durable<S: RunStore>(mut self, store: S) -> Self {
        self.options.store = Some(crate::store::share(store));
        self
    }

    /// Names the worker that claims the run in the store (a fresh id by default). The name is
    /// a label (shown in [`StoreError::Busy`](crate::store::StoreError::Busy)), not an
    /// identity: each claim holds the lease with its own token, so two workers with the same
    /// name never hold one run together.
    pub fn worker(mut self, worker: impl Into<String>) -> Self {
        self.options.worker = Some(worker.into());
        self
    }

    /// Returns usage, history and the run's id along with the answer.
    pub fn extended_details(self) -> DetailedPromptRequest {
        DetailedPromptRequest(self)
    }

    /// Asks for a typed answer: the schema comes from `T`, and the answer is parsed into it.
    /// The mode defaults to [`OutputMode::Auto`].
    pub fn output<T: DeserializeOwned + JsonSchema + Send + 'static>(
        self,
    ) -> TypedPromptRequest<T> {
        TypedPromptRequest::new(self, OutputMode::Auto)
    }

    /// Streams the run: text, reasoning and tool-call deltas, tool results, and the final
    /// response. The run fires the same hook events as an awaited one, plus the delta events.
    pub fn stream(self) -> PromptStream {
        let sink = StreamSink::default();
        let driver = driver::run(self, Some(sink.clone())).boxed();
        PromptStream::new(sink, driver)
    }

    pub(crate) async fn send(self) -> Result<PromptResponse, PromptError> {
        driver::run(self, None).await
    }
}

impl IntoFuture for PromptRequest {
    type Output = Result<String, PromptError>;
    type IntoFuture = BoxFuture<'static, Result<String, PromptError>>;

    fn into_future(self) -> Self::IntoFuture {
        async move { self.send().await.map(|response| response.output) }.boxed()
    }
}

/// A [`PromptRequest`] that returns a [`PromptResponse`] when awaited.
#[must_use = "a prompt request does nothing until awaited"]
#[derive(Debug)]
pub struct DetailedPromptRequest(PromptRequest);

impl IntoFuture for DetailedPromptRequest {
    type Output = Result<PromptResponse, PromptError>;
    type IntoFuture = BoxFuture<'static, Result<PromptResponse, PromptError>>;

    fn into_future(self) -> Self::IntoFuture {
        self.0.send().boxed()
    }
}

/// A finished run: the answer, and the run's final state.
#[derive(Debug, Clone)]
pub struct PromptResponse {
    /// The final answer text.
    pub output: String,
    /// The run's final state: history, usage, turns, entries and id.
    pub state: RunState,
}

impl PromptResponse {
    /// The run's id.
    pub fn run_id(&self) -> &str {
        &self.state.run_id
    }

    /// The whole conversation, prompt and final answer included.
    pub fn history(&self) -> &[Message] {
        &self.state.history
    }

    /// Every tool result the model was given during the run, in order: what each call
    /// answered (after hooks' rewrites), skipped and denied calls included.
    ///
    /// ```
    /// use reins::agent::AgentBuilder;
    /// use reins::testing::{ScriptedModel, Turn};
    /// use reins::tool::tool_fn;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Number { n: i64 }
    ///
    /// let model = ScriptedModel::new([
    ///     Turn::tool_call("double", serde_json::json!({"n": 21})),
    ///     Turn::text("42"),
    /// ]);
    /// let double = tool_fn("double", "Doubles a number.", |x: Number| async move {
    ///     Ok::<_, std::convert::Infallible>(x.n * 2)
    /// });
    /// let agent = AgentBuilder::new(model).tool(double).build();
    /// let run = agent.prompt("Double 21.").extended_details().await.unwrap();
    /// let results: Vec<_> = run.tool_results().map(|r| (r.tool_name.as_str(), r.content.as_str())).collect();
    /// assert_eq!(results, [("double", "42")]);
    /// # }
    /// ```
    pub fn tool_results(&self) -> impl Iterator<Item = &ToolResultMessage> {
        self.state
            .history
            .iter()
            .filter_map(|message| match message {
                Message::Tool(result) => Some(result),
                _ => None,
            })
    }

    /// Tokens used by the run.
    pub fn usage(&self) -> Usage {
        self.state.usage
    }

    /// The number of model calls the run made.
    pub fn turns(&self) -> usize {
        self.state.turn
    }

    /// Entries hooks recorded during the run.
    pub fn entries(&self) -> &[Entry] {
        &self.state.entries
    }
}
