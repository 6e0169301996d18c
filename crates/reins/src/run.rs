use crate::completion::Usage;
use crate::message::{Message, ToolCall};
use crate::tool::{ToolOutcome, ToolResultExtensions};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version of the [`RunState`] format written by this release: the stored record format
/// ([`FORMAT_VERSION`](crate::store::FORMAT_VERSION) is this value), of which the state is the
/// document. Raising it means adding a migration to `store/format.rs`.
pub const RUN_STATE_VERSION: u32 = 1;

/// Everything a run knows, as one serializable value: its id, history, turn counter, budgets
/// used, token usage and the entries hooks recorded. It never holds secrets (API keys live in
/// the providers, not in the run).
///
/// A run paused for a person is kept as JSON anywhere, and resumed later, in any process,
/// by an agent with the same tools:
///
/// ```
/// use reins::agent::{
///     AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext, PromptError, RunState,
///     ToolDecision,
/// };
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// /// Every payment waits for a person.
/// struct AskFirst;
///
/// impl AgentHook for AskFirst {
///     async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
///         match event.tool_name() {
///             Some("pay") => DispatchAction::suspend("payments need approval"),
///             _ => DispatchAction::proceed(),
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([
///     Turn::tool_call("pay", json!({"to": "ann", "amount": 20})),
///     Turn::text("Paid Ann 20."),
/// ]);
/// let pay = reins::tool::tool_fn("pay", "Pays someone.", |args: serde_json::Value| async move {
///     Ok::<_, std::convert::Infallible>(format!("paid {}", args["amount"]))
/// });
/// let agent = AgentBuilder::new(model).tool(pay).add_hook(AskFirst).build();
///
/// let Err(PromptError::Suspended { run }) = agent.prompt("Pay Ann 20.").await else {
///     panic!("the payment waits for approval")
/// };
/// let call = run.pending().next().expect("one call waits").internal_call_id.clone();
/// let saved = serde_json::to_string(&run.state).unwrap();
///
/// // Later, perhaps in another process: read the state back and resume it.
/// let state: RunState = serde_json::from_str(&saved).unwrap();
/// let answer = agent.resume(state).decide(call, ToolDecision::approve()).await.unwrap();
/// assert_eq!(answer, "Paid Ann 20.");
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// The format version ([`RUN_STATE_VERSION`]).
    pub version: u32,
    /// The run's id.
    pub run_id: String,
    /// The agent's name, if it has one.
    pub agent_name: Option<String>,
    /// The number of model calls made so far.
    pub turn: usize,
    /// The conversation so far.
    pub history: Vec<Message>,
    /// Tokens used so far, by every model call the run made: also one whose answer an outcome
    /// hook sent to another model, or stopped the run on.
    pub usage: Usage,
    /// Entries recorded by hooks, oldest first.
    pub entries: Vec<Entry>,
    /// The label of the model that served the last call.
    pub last_model: Option<String>,
    /// Invalid tool-call retries used so far.
    pub invalid_tool_call_retries: usize,
    /// The tool calls of the last model turn while they are being answered: each carries its
    /// result once it has one, so a resumed run never runs a finished call again.
    #[serde(default)]
    pub pending_calls: Vec<PendingCall>,
    /// Where the run is.
    #[serde(default)]
    pub status: RunStatus,
    /// The trace context (W3C `traceparent`) of the run's first `invoke_agent` span, when a
    /// subscriber exported it: a resumed run's span continues that trace. A run resumed while
    /// its state is still [`RunStatus::Running`] (its last half was cut off mid-run, so the
    /// span of this context may never have ended, nor been exported) starts a trace of its own
    /// instead, linked to this one, and its span's context replaces it here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_context: Option<String>,
    /// Why a failed run ([`RunStatus::Failed`]) failed: the message of the
    /// [`PromptError`](crate::agent::PromptError) it ended with (a provider's error with its
    /// credentials scrubbed, as every error is), kept by its last checkpoint. `None` for every
    /// other run, and for failed runs stored before this field (skipped when absent, so stored
    /// states stay readable both ways).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The tool a typed run answers through
    /// ([`OUTPUT_TOOL_NAME`](crate::agent::OUTPUT_TOOL_NAME)), when it does: a resume of the
    /// run must ask for its typed answer again
    /// ([`PromptRequest::output`](crate::agent::PromptRequest::output)), or the model's
    /// answer would call a tool the run no longer has. Resuming it without is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tool: Option<String>,
    /// The conversation the run belongs to, when its caller named one
    /// ([`PromptRequest::conversation_id`](crate::agent::PromptRequest::conversation_id)):
    /// the run's traces record it as `gen_ai.conversation.id` (else the run's id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    /// What was wrong with a typed run's answer in its last model turn, when it was refused
    /// (the model was told, and asked again): should the run's model calls run out there, in
    /// this process or after a resume in another one, it ends with
    /// [`PromptError::StructuredOutput`](crate::agent::PromptError::StructuredOutput) saying
    /// so. `None` once a turn is not a refused answer, for untyped runs, and for states stored
    /// before this field (skipped when absent, so stored states stay readable both ways).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_answer: Option<String>,
}

/// Where a run is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Started and not finished.
    #[default]
    Running,
    /// Waiting for a decision on one or more tool calls.
    Suspended,
    /// Finished with an answer.
    Completed,
    /// Ended with an error.
    Failed,
}

/// One tool call of the turn being answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    /// reins' id of the call, unique in the run (`t<turn>c<index>`).
    pub internal_call_id: String,
    /// The call as the model made it (with a repaired name, if a hook repaired it).
    pub call: ToolCall,
    /// The call's result, once it has one.
    #[serde(default)]
    pub result: Option<CallRecord>,
    /// Why a hook suspended the call, while it waits for a decision.
    #[serde(default)]
    pub suspended: Option<String>,
    /// The arguments the call executes with (after every hook's rewrite and any decision),
    /// journaled before the tool runs. A call with `started` and no `result` in a stored run
    /// was cut off by a crash: its side effect may or may not have happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<Value>,
    /// The call started before a crash and has no result, and its tool does not declare that
    /// running it again is safe ([`RetrySafety`](crate::tool::RetrySafety)): it waits for a
    /// decision ([`ToolDecision::Rerun`], [`ToolDecision::Skip`] or
    /// [`ToolDecision::SupplyResult`]) instead of being executed again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_doubt: bool,
    /// How many times the call started executing in a durable run. A decision is bound to the
    /// call as it stands, starts included ([`call_binding`](crate::store::call_binding)), so the
    /// decision a start used (an approval, say) never runs the call again after a crash cut
    /// that start off: only a decision made since does.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub starts: u32,
}

fn is_zero(count: &u32) -> bool {
    *count == 0
}

impl PendingCall {
    /// Whether the call waits for a decision (a hook suspended it, or it is in doubt).
    pub fn awaits_decision(&self) -> bool {
        self.result.is_none() && self.suspended.is_some()
    }

    /// Whether the call started before a crash and waits for a decision about it.
    pub fn is_in_doubt(&self) -> bool {
        self.in_doubt && self.awaits_decision()
    }

    /// The arguments the call would execute with if approved: those it started with when it
    /// is in doubt, else the model's (as a hook may have repaired them).
    pub fn arguments(&self) -> &Value {
        self.started.as_ref().unwrap_or(&self.call.arguments)
    }

    /// The stable id of this call's effect: the same on every execution of this call, for
    /// tools to use as an idempotency key.
    pub fn effect_id(&self, run_id: &str) -> String {
        format!("{run_id}/{}", self.internal_call_id)
    }
}

/// The finished result of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// What the model sees.
    pub output: String,
    /// The structured outcome.
    pub outcome: ToolOutcome,
    /// Metadata the tool attached (never sent to the model; persisted with the run).
    #[serde(default)]
    pub extensions: ToolResultExtensions,
}

/// A decision about a suspended tool call, given when the run is resumed.
///
/// Given to a resumed run in-process ([`PromptRequest::decide`]), every decision fits every
/// waiting call: for a call in doubt ([`PendingCall::in_doubt`]), `Approve` is the same as
/// `Rerun`. A store's [`RunStore::decide`] is stricter: `Skip` and `SupplyResult` say what
/// became of a call that may have run, and for a call waiting for approval it refuses them
/// ([`StoreError::NotInDoubt`]): approve, edit or deny it.
///
/// [`PromptRequest::decide`]: crate::agent::PromptRequest::decide
/// [`RunStore::decide`]: crate::store::RunStore::decide
/// [`StoreError::NotInDoubt`]: crate::store::StoreError::NotInDoubt
///
/// ```
/// use reins::agent::{
///     AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext, PromptError,
///     ToolDecision,
/// };
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// /// Every transfer waits for a person.
/// struct AskFirst;
///
/// impl AgentHook for AskFirst {
///     async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
///         match event.tool_name() {
///             Some("transfer") => DispatchAction::suspend("transfers need approval"),
///             _ => DispatchAction::proceed(),
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([
///     Turn::tool_calls([
///         ("transfer", json!({"to": "ann", "amount": 500})),
///         ("transfer", json!({"to": "bob", "amount": 70})),
///     ]),
///     Turn::text("One sent, one refused."),
/// ]);
/// let transfer = reins::tool::tool_fn("transfer", "Sends money.", |args: serde_json::Value| async move {
///     Ok::<_, std::convert::Infallible>(format!("sent {} to {}", args["amount"], args["to"]))
/// });
/// let agent = AgentBuilder::new(model).tool(transfer).add_hook(AskFirst).build();
/// let Err(PromptError::Suspended { run }) = agent.prompt("Pay Ann 500 and Bob 70.").await else {
///     panic!("both transfers wait")
/// };
/// let ids: Vec<String> = run.pending().map(|call| call.internal_call_id.clone()).collect();
///
/// // Ann gets less than asked; Bob's transfer is refused, and the model is told why.
/// let done = agent
///     .resume(*run)
///     .decide(&ids[0], ToolDecision::approve_with_args(json!({"to": "ann", "amount": 100})))
///     .decide(&ids[1], ToolDecision::deny("Bob is not a known payee"))
///     .extended_details()
///     .await
///     .unwrap();
/// let results: Vec<_> = done.tool_results().map(|r| r.content.as_str()).collect();
/// assert_eq!(results[0], r#"sent 100 to "ann""#);
/// assert!(results[1].contains("Bob is not a known payee"), "{}", results[1]);
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ToolDecision {
    /// Run the call as the model made it.
    Approve,
    /// Run the call with these arguments instead.
    ApproveWithArgs {
        /// The replacement arguments (a JSON object).
        args: Value,
    },
    /// Don't run the call; the model sees `message` as its result.
    Deny {
        /// What the model is told.
        message: String,
    },
    /// Execute the call (again, for a call in doubt) with the arguments it started with.
    Rerun,
    /// Don't execute the call (again); the model sees `message` as its result, recorded as
    /// skipped.
    Skip {
        /// What the model is told.
        message: String,
    },
    /// Don't execute the call (again): it is known to have run, and `output` is what it
    /// returned (e.g. read from the service it called). Recorded as a success.
    SupplyResult {
        /// The call's result, as the model sees it.
        output: String,
    },
}

impl ToolDecision {
    /// Run the call as the model made it.
    pub fn approve() -> Self {
        ToolDecision::Approve
    }

    /// Run the call with edited arguments, a JSON object (anything else is not run: the call
    /// is answered as skipped, saying why).
    pub fn approve_with_args(args: Value) -> Self {
        ToolDecision::ApproveWithArgs { args }
    }

    /// Refuse the call; the model sees `message`.
    pub fn deny(message: impl Into<String>) -> Self {
        ToolDecision::Deny {
            message: message.into(),
        }
    }

    /// Execute a call in doubt again.
    pub fn rerun() -> Self {
        ToolDecision::Rerun
    }

    /// Skip the call; the model sees `message`.
    pub fn skip(message: impl Into<String>) -> Self {
        ToolDecision::Skip {
            message: message.into(),
        }
    }

    /// Record `output` as the call's result without executing it.
    pub fn supply_result(output: impl Into<String>) -> Self {
        ToolDecision::SupplyResult {
            output: output.into(),
        }
    }
}

/// A run that stopped to wait for decisions on tool calls: its whole state, ready to be
/// resumed here or in another process with [`Agent::resume`](crate::agent::Agent::resume).
///
/// Its `Debug` names the run, its turn and the waiting calls (id and tool), not the history:
/// `?` on a suspended run in a `main` that returns `Result<(), Box<dyn Error>>` prints it,
/// and the whole state would be pages of messages and tool arguments, which may hold what
/// should not reach a log. `run.state`'s `Debug` shows everything.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct SuspendedRun {
    /// The run's state, pending calls included.
    pub state: RunState,
}

impl SuspendedRun {
    /// The run's id.
    pub fn run_id(&self) -> &str {
        &self.state.run_id
    }

    /// The calls that wait for a decision.
    pub fn pending(&self) -> impl Iterator<Item = &PendingCall> {
        self.state
            .pending_calls
            .iter()
            .filter(|call| call.awaits_decision())
    }
}

impl std::fmt::Debug for SuspendedRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        /// The waiting calls, each as its id and tool.
        struct Waiting<'a>(&'a SuspendedRun);
        impl std::fmt::Debug for Waiting<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_map()
                    .entries(
                        self.0
                            .pending()
                            .map(|call| (&call.internal_call_id, &call.call.name)),
                    )
                    .finish()
            }
        }
        f.debug_struct("SuspendedRun")
            .field("run_id", &self.state.run_id)
            .field("turn", &self.state.turn)
            .field("waiting", &Waiting(self))
            .field("history_len", &self.state.history.len())
            .finish_non_exhaustive()
    }
}

impl RunState {
    pub(crate) fn new(run_id: String, agent_name: Option<String>, history: Vec<Message>) -> Self {
        RunState {
            version: RUN_STATE_VERSION,
            run_id,
            agent_name,
            turn: 0,
            history,
            usage: Usage::default(),
            entries: Vec::new(),
            last_model: None,
            invalid_tool_call_retries: 0,
            pending_calls: Vec::new(),
            status: RunStatus::Running,
            trace_context: None,
            failure: None,
            output_tool: None,
            conversation_id: None,
            refused_answer: None,
        }
    }
}

impl From<SuspendedRun> for RunState {
    fn from(run: SuspendedRun) -> Self {
        run.state
    }
}

/// One record of the run's serializable state, written by a hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The kind it was recorded under.
    pub kind: String,
    /// The recorded value.
    pub value: Value,
}

impl Entry {
    /// `value` recorded under `kind`, or why it cannot be written as JSON.
    pub(crate) fn of<T: serde::Serialize + ?Sized>(
        kind: impl Into<String>,
        value: &T,
    ) -> Result<Self, EntryError> {
        let kind = kind.into();
        match serde_json::to_value(value) {
            Ok(value) => Ok(Entry { kind, value }),
            Err(source) => Err(EntryError {
                kind,
                message: source.to_string(),
            }),
        }
    }

    pub(crate) fn read<T: serde::de::DeserializeOwned>(&self) -> Result<T, EntryError> {
        T::deserialize(&self.value).map_err(|source| EntryError {
            kind: self.kind.clone(),
            message: source.to_string(),
        })
    }
}

/// An entry could not be written as JSON, or read back as the requested type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("entry `{kind}`: {message}")]
pub struct EntryError {
    /// The entry kind.
    pub kind: String,
    /// What went wrong.
    pub message: String,
}
