use super::builder::Agent;
use super::error::PromptError;
use super::hook::{AgentHook, HookStack};
use super::options::{RunOptions, RunStart, ToolErrorPolicy, UnhandledInvalidToolCall};
use super::response::PromptResponse;
use super::run_future::{RunFuture, RunParts, keep_history};
use super::stream::{PromptStream, StreamSink};
use crate::message::Message;
use crate::run::{RunState, ToolDecision};
use crate::store::RunStore;
use futures::FutureExt;
use std::future::IntoFuture;

/// One run of an agent, being configured. Await it for the answer, call
/// [`stream`](Self::stream) to stream it, or [`extended_details`](Self::extended_details)
/// for usage, history and run id too.
///
/// ```
/// use reins::agent::{AgentBuilder, PromptError};
/// use reins::message::Message;
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([
///     Turn::tool_call("search", json!({"q": "rust"})),
///     Turn::tool_call("search", json!({"q": "tokio"})),
/// ]);
/// let search = reins::tool::tool_fn("search", "Searches.", |_: serde_json::Value| async move {
///     Ok::<_, std::convert::Infallible>("nothing found")
/// });
/// let agent = AgentBuilder::new(model).tool(search).build();
///
/// // This run continues an earlier conversation, has its own id, and may call the model
/// // twice: the model keeps calling tools, so it ends with `MaxTurns`.
/// let error = agent
///     .prompt("Search until you find it.")
///     .with_history(vec![Message::user("Hi"), Message::assistant("Hello!")])
///     .run_id("search-1")
///     .max_turns(2)
///     .await
///     .unwrap_err();
/// assert!(matches!(error, PromptError::MaxTurns { .. }), "{error:?}");
/// assert_eq!(error.run_id(), Some("search-1"));
/// // The history so far comes with the error: the earlier two messages, the prompt, the
/// // first call and its result, and the second call (not run: no model call was left).
/// assert_eq!(error.history().map(<[_]>::len), Some(6));
/// # }
/// ```
#[must_use = "a prompt request does nothing until awaited or streamed"]
pub struct PromptRequest {
    pub(crate) agent: Agent,
    pub(crate) start: RunStart,
    pub(crate) hooks: HookStack,
    pub(crate) options: RunOptions,
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
        let max_invalid_tool_call_retries = agent.config.max_invalid_tool_call_retries;
        PromptRequest {
            agent,
            start,
            // Empty until a hook is added: most runs add none, and pay no allocation for it.
            hooks: HookStack::default(),
            options: RunOptions {
                max_turns,
                max_invalid_tool_call_retries,
                ..RunOptions::default()
            },
        }
    }

    /// At most `n` model calls in the run, retries included (by default the agent's
    /// [`AgentBuilder::default_max_turns`](super::AgentBuilder::default_max_turns), 10 unless
    /// set); past it the run ends with [`PromptError::MaxTurns`](super::PromptError::MaxTurns).
    pub fn max_turns(mut self, n: usize) -> Self {
        self.options.max_turns = n;
        self
    }

    /// Adds a hook to this run only; it runs after the agent's hooks. A
    /// [`HookStack`](crate::agent::HookStack) adds its hooks, in order.
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
    /// in the run (by default the agent's
    /// [`AgentBuilder::default_max_invalid_tool_call_retries`](super::AgentBuilder::default_max_invalid_tool_call_retries),
    /// 0 unless set); each retry is a model call, counted against `max_turns` too.
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
    ///
    /// A conversation's next prompt is a new run on the last run's
    /// [`history`](super::PromptResponse::history), which is serializable, so another process
    /// can take it up: from the JSON it was saved as, or from a durable run's store
    /// (`store.load(run_id).await?.history`). A finished run is not resumed with a new
    /// prompt: [`Agent::resume_stored`](super::Agent::resume_stored) on it ends with
    /// [`PromptError::AlreadyFinished`](super::PromptError::AlreadyFinished).
    ///
    /// ```
    /// use reins::agent::AgentBuilder;
    /// use reins::message::Message;
    /// use reins::testing::{ScriptedModel, Turn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedModel::new([Turn::text("Hello, Ann."), Turn::text("You are Ann.")]);
    /// let agent = AgentBuilder::new(model.clone()).build();
    /// let first = agent.prompt("I am Ann.").extended_details().await?;
    ///
    /// // Saved, and read back (in another process, say).
    /// let saved = serde_json::to_string(first.history())?;
    /// let history: Vec<Message> = serde_json::from_str(&saved)?;
    /// let second = agent.prompt("Who am I?").with_history(history).await?;
    /// assert_eq!(second, "You are Ann.");
    /// // The model was sent the whole conversation: both prompts and the first answer.
    /// assert_eq!(model.requests()[1].history.len(), 3);
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_history(mut self, earlier: Vec<Message>) -> Self {
        if let RunStart::New { history, .. } = &mut self.start {
            *history = earlier;
        }
        self
    }

    /// Decides about a suspended tool call of a resumed run, by its internal call id
    /// ([`PendingCall::internal_call_id`](super::PendingCall::internal_call_id)). Calls left
    /// without a decision stay suspended, and a decision about an id that does not wait is
    /// ignored: the run then ends [`Suspended`](super::PromptError::Suspended) again, its
    /// error naming the calls that wait. A stored run's call found cut off by a crash
    /// (started, no result) is not run by a decision given here: it waits in doubt
    /// ([`PendingCall::is_in_doubt`](super::PendingCall::is_in_doubt)) for one given once that
    /// is known, unless its tool declares running again safe.
    pub fn decide(mut self, internal_call_id: impl Into<String>, decision: ToolDecision) -> Self {
        self.options
            .start_mut()
            .decisions
            .push((internal_call_id.into(), decision));
        self
    }

    /// Uses `run_id` instead of a fresh one (e.g. to correlate with an external id).
    pub fn run_id(mut self, run_id: impl Into<String>) -> Self {
        self.options.start_mut().run_id = Some(run_id.into());
        self
    }

    /// Names the conversation the run belongs to (a chat session, a thread of runs each
    /// continuing the last one's history): traces record it as the run's
    /// `gen_ai.conversation.id`, which is the run's id otherwise, so a trace viewer groups a
    /// conversation's runs together (Phoenix shows them as one session). Kept in the run's
    /// state ([`RunState::conversation_id`](crate::run::RunState::conversation_id)): a resumed
    /// run keeps its own, and this is ignored for it.
    ///
    /// ```
    /// use reins::prelude::*;
    /// use reins::testing::{ScriptedModel, Turn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let model = ScriptedModel::new([Turn::text("Hello, Ann."), Turn::text("You are Ann.")]);
    /// let agent = AgentBuilder::new(model).build();
    /// let first = agent.prompt("I am Ann.").conversation_id("chat-7").extended_details().await.unwrap();
    /// let second = agent
    ///     .prompt("Who am I?")
    ///     .with_history(first.history().to_vec())
    ///     .conversation_id("chat-7")
    ///     .extended_details()
    ///     .await
    ///     .unwrap();
    /// // Two runs, one conversation.
    /// assert_ne!(first.run_id(), second.run_id());
    /// assert_eq!(second.state.conversation_id.as_deref(), Some("chat-7"));
    /// # }
    /// ```
    pub fn conversation_id(mut self, conversation_id: impl Into<String>) -> Self {
        self.options.start_mut().conversation_id = Some(conversation_id.into());
        self
    }

    /// Makes the run durable: its state and effect journal are checkpointed into `store` after
    /// every model turn and tool call, so it can pause for a decision, survive a crash, and be
    /// resumed in another process (see [`crate::store`] for the exact guarantee). The run holds
    /// a lease on its record while it goes on, renewed beside it (also while its caller does
    /// not poll it) and given back when it ends — or when its future is dropped, so a run
    /// cancelled by a timeout is free for any worker at once. (Not when its runtime shuts
    /// down with the run under way: the lease then expires, as after a crash; see
    /// [`crate::store`], "Runs cut off".)
    pub fn durable<S: RunStore>(mut self, store: S) -> Self {
        self.options.start_mut().store = Some(crate::store::share(store));
        self
    }

    /// Names the worker that claims the run in the store (a fresh id by default). The name is
    /// a label (shown in [`StoreError::Busy`](crate::store::StoreError::Busy)), not an
    /// identity: each claim holds the lease with its own token, so two workers with the same
    /// name never hold one run together.
    pub fn worker(mut self, worker: impl Into<String>) -> Self {
        self.options.start_mut().worker = Some(worker.into());
        self
    }

    /// Returns usage, history and the run's id along with the answer.
    pub fn extended_details(self) -> DetailedPromptRequest {
        DetailedPromptRequest(self)
    }

    /// Streams the run: text, reasoning and tool-call deltas, tool results, and the final
    /// response. The run fires the same hook events as an awaited one, plus the delta events.
    pub fn stream(self) -> PromptStream {
        let sink = StreamSink::default();
        let driver = self.into_parts().drive(Some(sink.clone())).boxed();
        PromptStream::new(sink, driver)
    }

    /// The request's parts, which the driver (it does not know the request type) runs.
    pub(super) fn into_parts(self) -> RunParts {
        let PromptRequest {
            agent,
            start,
            hooks,
            options,
        } = self;
        RunParts {
            agent,
            start,
            hooks,
            options,
        }
    }
}

impl IntoFuture for PromptRequest {
    type Output = Result<String, PromptError>;
    type IntoFuture = RunFuture<String>;

    fn into_future(self) -> Self::IntoFuture {
        RunFuture::new(self.into_parts(), |mut response| {
            keep_history(std::mem::take(&mut response.state.history));
            Ok(response.output)
        })
    }
}

/// A [`PromptRequest`] that returns a [`PromptResponse`] when awaited
/// ([`PromptRequest::extended_details`]).
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::completion::Usage;
/// use reins::testing::{ScriptedModel, Turn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([Turn::text("Hello!").usage(Usage::new(12, 3))]);
/// let agent = AgentBuilder::new(model).build();
/// let run = agent.prompt("Hi").extended_details().await.unwrap();
/// assert_eq!(run.output, "Hello!");
/// assert_eq!(run.usage().input_tokens, 12);
/// assert_eq!(run.turns(), 1);
/// assert_eq!(run.history().len(), 2); // the prompt and the answer
/// # }
/// ```
#[must_use = "a prompt request does nothing until awaited"]
#[derive(Debug)]
pub struct DetailedPromptRequest(PromptRequest);

impl IntoFuture for DetailedPromptRequest {
    type Output = Result<PromptResponse, PromptError>;
    type IntoFuture = RunFuture<PromptResponse>;

    fn into_future(self) -> Self::IntoFuture {
        RunFuture::new(self.0.into_parts(), Ok)
    }
}

impl Agent {
    /// Starts a run with `prompt` as the user's message. Configure the run on the returned
    /// request, then await it (or call [`PromptRequest::stream`]).
    pub fn prompt(&self, prompt: impl Into<Message>) -> PromptRequest {
        PromptRequest::new(
            self.clone(),
            RunStart::New {
                prompt: prompt.into(),
                history: Vec::new(),
            },
        )
    }

    /// Continues a saved run — a [`SuspendedRun`](super::SuspendedRun) or any [`RunState`] — in this process or
    /// another. Give a decision per suspended call with [`PromptRequest::decide`]; the run
    /// keeps its id, and its hooks see the entries saved before the pause.
    pub fn resume(&self, run: impl Into<RunState>) -> PromptRequest {
        PromptRequest::new(self.clone(), RunStart::Resume(Box::new(run.into())))
    }

    /// Continues the run `run_id` stored in `store`: the run is claimed (of two workers
    /// resuming it, whatever their names, one proceeds and the other gets
    /// [`StoreError::Busy`](crate::store::StoreError::Busy)), decisions recorded with
    /// [`RunStore::decide`](crate::store::RunStore::decide) are applied, finished effects are
    /// replayed from the journal, and the run goes on, checkpointing into the same store.
    ///
    /// A run that had already finished is not claimed and nothing is written: the request
    /// ends with [`PromptError::AlreadyFinished`](super::PromptError::AlreadyFinished), which
    /// carries a completed run's answer.
    pub fn resume_stored<S: RunStore>(&self, store: S, run_id: impl Into<String>) -> PromptRequest {
        PromptRequest::new(self.clone(), RunStart::Stored(run_id.into())).durable(store)
    }
}
