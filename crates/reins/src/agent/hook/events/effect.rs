//! The events of an effect: `on_dispatch` ([`DispatchEvent`]) before it is executed and
//! `on_outcome` ([`OutcomeEvent`]) after; each is its kind and a reference to its target.

use super::super::StepEventKind;
use super::super::args_text::ArgsText;
use super::super::tool_result::ToolResult;
use super::model_identity::ModelIdentity;
use crate::completion::{CompletionError, CompletionRequest, CompletionResponse};
use crate::tool::ToolTraits;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;

/// What kind of effect a dispatch executes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DispatchKind {
    /// A model call.
    Completion,
    /// A tool call.
    Tool,
    /// An embedding request.
    Embedding,
    /// A reranking request.
    Rerank,
    /// A memory read or write.
    Memory,
    /// A retrieval query.
    Retrieval,
    /// An application-defined effect.
    Custom,
}

impl DispatchKind {
    /// The event kind of dispatching this effect.
    pub fn dispatch_event_kind(self) -> StepEventKind {
        match self {
            DispatchKind::Completion => StepEventKind::CompletionDispatch,
            DispatchKind::Tool => StepEventKind::ToolDispatch,
            DispatchKind::Embedding => StepEventKind::EmbeddingDispatch,
            DispatchKind::Rerank => StepEventKind::RerankDispatch,
            DispatchKind::Memory => StepEventKind::MemoryDispatch,
            DispatchKind::Retrieval => StepEventKind::RetrievalDispatch,
            DispatchKind::Custom => StepEventKind::CustomDispatch,
        }
    }

    /// The event kind of this effect's outcome.
    pub fn outcome_event_kind(self) -> StepEventKind {
        match self {
            DispatchKind::Completion => StepEventKind::CompletionOutcome,
            DispatchKind::Tool => StepEventKind::ToolOutcome,
            DispatchKind::Embedding => StepEventKind::EmbeddingOutcome,
            DispatchKind::Rerank => StepEventKind::RerankOutcome,
            DispatchKind::Memory => StepEventKind::MemoryOutcome,
            DispatchKind::Retrieval => StepEventKind::RetrievalOutcome,
            DispatchKind::Custom => StepEventKind::CustomOutcome,
        }
    }
}

/// `on_dispatch`: an effect (model call, tool call, …) is about to be executed.
///
/// One event for every effect: a hook reads the one it cares about through the accessors
/// (`tool_name` and `tool_args` for a tool call, `model` and `request` for a model call),
/// each `None` for the others.
///
/// ```
/// use reins::prelude::*;
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
/// use std::sync::{Arc, Mutex};
///
/// /// Writes down every effect before it runs, and keeps the run away from `rm`.
/// #[derive(Clone, Default)]
/// struct Ledger(Arc<Mutex<Vec<String>>>);
///
/// impl AgentHook for Ledger {
///     async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
///         let line = match (event.model(), event.tool_name(), event.tool_args()) {
///             (Some(model), _, _) => format!("call {model}"),
///             (_, Some(tool), Some(args)) => format!("run {tool} {args}"),
///             _ => format!("{:?}", event.kind),
///         };
///         self.0.lock().unwrap().push(line);
///         if event.tool_name() == Some("rm") {
///             return DispatchAction::deny("removing files is not allowed here");
///         }
///         DispatchAction::proceed()
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let rm = tool_fn("rm", "Removes a file.", |_: serde_json::Value| async {
///     Ok::<_, std::convert::Infallible>("removed")
/// });
/// let model = ScriptedModel::new([
///     Turn::tool_call("rm", json!({"path": "notes.txt"})),
///     Turn::text("I could not remove it."),
/// ]);
/// let ledger = Ledger::default();
/// let agent = AgentBuilder::new(model.clone()).tool(rm).add_hook(ledger.clone()).build();
/// agent.prompt("Remove notes.txt").await.unwrap();
///
/// assert_eq!(
///     *ledger.0.lock().unwrap(),
///     ["call default", r#"run rm {"path":"notes.txt"}"#, "call default"]
/// );
/// // The tool never ran: the model was told why instead.
/// let told = model.requests()[1].history.last().unwrap().text();
/// assert_eq!(told, "removing files is not allowed here");
/// # }
/// ```
///
/// Two words: the kind and a reference to what is dispatched, so an event reaches a hook in
/// registers. (Passed in memory, the event was copied into each hook's future right after
/// the run had written it, and that copy waited for the writes to reach the cache.)
#[derive(Debug, Clone, Copy)]
pub struct DispatchEvent<'a> {
    /// What kind of effect this is; pass it to
    /// [`DispatchAction::rewrite_tool_args`](crate::agent::DispatchAction::rewrite_tool_args).
    pub kind: DispatchKind,
    pub(crate) target: &'a DispatchTarget<'a>,
}

/// An application-defined effect about to be executed: its name and payload, for
/// [`DispatchEvent::effect`].
#[derive(Debug, Clone, Copy)]
pub struct EffectCall<'a>(DispatchTarget<'a>);

impl<'a> EffectCall<'a> {
    /// The effect `name`, called with `payload`.
    pub fn new(name: &'a str, payload: &'a Value) -> Self {
        EffectCall(DispatchTarget::Effect { name, payload })
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum DispatchTarget<'a> {
    Completion {
        turn: usize,
        model: &'a str,
        /// What the model under `model` says it is (see `model_identity.rs`).
        identity: ModelIdentity<'a>,
        request: &'a CompletionRequest,
    },
    Tool(ToolCallView<'a>),
    Effect {
        name: &'a str,
        payload: &'a Value,
    },
}

/// A tool call as hooks see it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ToolCallView<'a> {
    pub name: &'a str,
    pub tool_call_id: &'a str,
    pub internal_call_id: &'a str,
    pub args: &'a ArgsText<'a>,
    /// What the tool declares about itself.
    pub traits: Option<ToolTraits>,
    /// Where the tool comes from (an MCP server's name).
    pub origin: Option<&'a str>,
    /// The JSON schema of the tool's arguments; `None` for a tool the agent does not have.
    pub parameters: Option<&'a Value>,
}

impl<'a> DispatchEvent<'a> {
    /// A dispatch of an application-defined effect (`kind` other than completion or tool),
    /// for effects an application routes through a [`HookStack`](crate::agent::HookStack).
    ///
    /// ```
    /// use reins::agent::{DispatchEvent, DispatchKind, EffectCall};
    /// use serde_json::json;
    ///
    /// let payload = json!({"query": "refund policy"});
    /// let call = EffectCall::new("search_docs", &payload);
    /// let event = DispatchEvent::effect(DispatchKind::Retrieval, &call);
    /// assert_eq!(event.effect_payload(), Some(("search_docs", &payload)));
    /// assert_eq!(event.tool_name(), None);
    /// ```
    pub fn effect(kind: DispatchKind, call: &'a EffectCall<'a>) -> Self {
        DispatchEvent {
            kind,
            target: &call.0,
        }
    }

    /// What the called tool declares about itself ([`Tool::traits`](crate::tool::Tool::traits):
    /// an MCP tool's annotations, or what a [`tool_fn`](crate::tool::tool_fn) was given), for a
    /// tool call; `None` when it declares nothing, or for another effect.
    pub fn tool_traits(&self) -> Option<ToolTraits> {
        match self.target {
            DispatchTarget::Tool(call) => call.traits,
            _ => None,
        }
    }

    /// Where the called tool comes from ([`Tool::origin`](crate::tool::Tool::origin): an MCP
    /// tool's server name), for a tool call; `None` for a tool of the application's own, or
    /// for another effect.
    pub fn tool_origin(&self) -> Option<&'a str> {
        match *self.target {
            DispatchTarget::Tool(call) => call.origin,
            _ => None,
        }
    }

    /// The JSON schema of the called tool's arguments ([`Tool::parameters`](crate::tool::Tool::parameters),
    /// as the model is shown it), for a tool call: what a hook checks the arguments against
    /// before anyone is asked about the call. `None` when the agent has no tool of that name
    /// (the call then fails as [`ToolFailure::NotFound`](crate::tool::ToolFailure::NotFound)),
    /// or for another effect.
    pub fn tool_parameters(&self) -> Option<&'a Value> {
        match *self.target {
            DispatchTarget::Tool(call) => call.parameters,
            _ => None,
        }
    }

    /// The tool's name, for a tool call.
    pub fn tool_name(&self) -> Option<&'a str> {
        match *self.target {
            DispatchTarget::Tool(call) => Some(call.name),
            _ => None,
        }
    }

    /// The call's arguments as JSON text (with earlier hooks' rewrites), for a tool call.
    pub fn tool_args(&self) -> Option<&'a str> {
        match *self.target {
            DispatchTarget::Tool(call) => Some(call.args.text()),
            _ => None,
        }
    }

    /// The call's arguments (with earlier hooks' rewrites) read as `T`, for a tool call:
    /// `None` for other dispatches, `Some(Err(..))` for arguments that are not a `T` (which a
    /// policy should treat as a refusal, never as approval).
    ///
    /// ```
    /// use reins::agent::{AgentHook, DispatchAction, DispatchEvent, HookContext};
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Transfer {
    ///     amount: u64,
    /// }
    ///
    /// struct SmallTransfersOnly;
    ///
    /// impl AgentHook for SmallTransfersOnly {
    ///     async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
    ///         match event.tool_args_as::<Transfer>() {
    ///             Some(Ok(transfer)) if transfer.amount > 100 => DispatchAction::deny("too large"),
    ///             Some(Err(_)) => DispatchAction::deny("unreadable transfer"),
    ///             _ => DispatchAction::proceed(),
    ///         }
    ///     }
    /// }
    /// ```
    pub fn tool_args_as<T: serde::de::DeserializeOwned>(
        &self,
    ) -> Option<Result<T, serde_json::Error>> {
        match *self.target {
            DispatchTarget::Tool(call) => Some(call.args.read_as()),
            _ => None,
        }
    }

    /// The tool call's arguments as a JSON value (see [`ArgsText::read_value`]): the
    /// model's own value borrowed, for the ready-made hooks.
    pub(crate) fn tool_args_value(&self) -> Option<Result<Cow<'a, Value>, serde_json::Error>> {
        match *self.target {
            DispatchTarget::Tool(call) => Some(call.args.read_value()),
            _ => None,
        }
    }

    /// The provider's id of the call, for a tool call.
    pub fn tool_call_id(&self) -> Option<&'a str> {
        match *self.target {
            DispatchTarget::Tool(call) => Some(call.tool_call_id),
            _ => None,
        }
    }

    /// reins' id of the call, unique in the run, for a tool call.
    pub fn internal_call_id(&self) -> Option<&'a str> {
        match *self.target {
            DispatchTarget::Tool(call) => Some(call.internal_call_id),
            _ => None,
        }
    }

    /// The request about to be sent, for a model call.
    pub fn request(&self) -> Option<&'a CompletionRequest> {
        match *self.target {
            DispatchTarget::Completion { request, .. } => Some(request),
            _ => None,
        }
    }

    /// The label of the model about to be called, for a model call (what the model is:
    /// [`model_provider`](Self::model_provider) and [`model_name`](Self::model_name)).
    pub fn model(&self) -> Option<&'a str> {
        match *self.target {
            DispatchTarget::Completion { model, .. } => Some(model),
            _ => None,
        }
    }

    /// The effect's name and payload, for effects other than model and tool calls.
    pub fn effect_payload(&self) -> Option<(&'a str, &'a Value)> {
        match *self.target {
            DispatchTarget::Effect { name, payload } => Some((name, payload)),
            _ => None,
        }
    }
}

/// `on_outcome`: an effect returned.
///
/// A tool call's result is read through [`tool_outcome`](Self::tool_outcome) (any
/// outcome) or [`tool_result`](Self::tool_result) (a success), a model call's through
/// [`completion`](Self::completion). A hook may rewrite what the model is shown; the
/// outcome itself stays as the tool returned it for every later hook.
///
/// ```
/// use reins::prelude::*;
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// /// Shows the model at most 20 characters of a tool's answer.
/// struct Clip;
///
/// impl AgentHook for Clip {
///     async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
///         match event.tool_result() {
///             Some(result) if result.output_text().chars().count() > 20 => {
///                 let clipped: String = result.output_text().chars().take(20).collect();
///                 OutcomeAction::rewrite_tool_result(&event, format!("{clipped}…"))
///             }
///             _ => OutcomeAction::proceed(),
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let read = tool_fn("read", "Reads a file.", |_: serde_json::Value| async {
///     Ok::<_, std::convert::Infallible>("a very long file that goes on and on")
/// });
/// let model = ScriptedModel::new([
///     Turn::tool_call("read", json!({"path": "log.txt"})),
///     Turn::text("It is long."),
/// ]);
/// let agent = AgentBuilder::new(model.clone()).tool(read).add_hook(Clip).build();
/// agent.prompt("Read log.txt").await.unwrap();
///
/// let shown = model.requests()[1].history.last().unwrap().text();
/// assert_eq!(shown, "a very long file tha…");
/// # }
/// ```
///
/// Two words, as [`DispatchEvent`] is: the kind and a reference to the outcome.
#[derive(Debug, Clone, Copy)]
pub struct OutcomeEvent<'a> {
    /// What kind of effect this was.
    pub kind: DispatchKind,
    pub(crate) target: &'a OutcomeTarget<'a>,
}

/// What an application-defined effect returned: its name and output, for
/// [`OutcomeEvent::effect`].
#[derive(Debug, Clone, Copy)]
pub struct EffectOutput<'a>(OutcomeTarget<'a>);

impl<'a> EffectOutput<'a> {
    /// The effect `name` returned `output`.
    pub fn new(name: &'a str, output: &'a Value) -> Self {
        EffectOutput(OutcomeTarget::Effect { name, output })
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum OutcomeTarget<'a> {
    Completion {
        model: &'a str,
        response: &'a CompletionResponse,
    },
    CompletionFailed {
        model: &'a str,
        error: &'a CompletionError,
    },
    Tool(&'a ToolResult<'a>),
    Effect {
        name: &'a str,
        output: &'a Value,
    },
}

impl<'a> OutcomeEvent<'a> {
    /// The outcome of an application-defined effect.
    ///
    /// ```
    /// use reins::agent::{DispatchKind, EffectOutput, OutcomeEvent};
    /// use serde_json::json;
    ///
    /// let hits = json!(["refunds.md"]);
    /// let output = EffectOutput::new("search_docs", &hits);
    /// let event = OutcomeEvent::effect(DispatchKind::Retrieval, &output);
    /// assert_eq!(event.effect_output(), Some(("search_docs", &hits)));
    /// assert!(event.tool_outcome().is_none());
    /// ```
    pub fn effect(kind: DispatchKind, output: &'a EffectOutput<'a>) -> Self {
        OutcomeEvent {
            kind,
            target: &output.0,
        }
    }

    /// The result of a tool call that succeeded; `None` for a model response, or a tool call
    /// that failed, was skipped or was denied (see [`tool_outcome`](Self::tool_outcome)).
    pub fn tool_result(&self) -> Option<&'a ToolResult<'a>> {
        match *self.target {
            OutcomeTarget::Tool(result) if result.outcome().is_success() => Some(result),
            _ => None,
        }
    }

    /// The result of any tool call, whatever its outcome.
    pub fn tool_outcome(&self) -> Option<&'a ToolResult<'a>> {
        match *self.target {
            OutcomeTarget::Tool(result) => Some(result),
            _ => None,
        }
    }

    /// What the called tool declares about itself, for a tool call's outcome (whether it
    /// succeeded, failed, or was skipped or denied), as [`DispatchEvent::tool_traits`] gave it
    /// at dispatch; `None` when it declares nothing, or for another outcome.
    pub fn tool_traits(&self) -> Option<ToolTraits> {
        self.tool_outcome().and_then(ToolResult::tool_traits)
    }

    /// Where the called tool comes from, for a tool call's outcome, as
    /// [`DispatchEvent::tool_origin`] gave it at dispatch; `None` for a tool of the
    /// application's own, or for another outcome.
    pub fn tool_origin(&self) -> Option<&'a str> {
        self.tool_outcome().and_then(ToolResult::tool_origin)
    }

    /// The provider's response, for a model call that returned one.
    pub fn completion(&self) -> Option<&'a CompletionResponse> {
        match *self.target {
            OutcomeTarget::Completion { response, .. } => Some(response),
            _ => None,
        }
    }

    /// Why a model call failed, after the provider's own retries: the run fails with it
    /// unless a hook answers [`OutcomeAction::replace`](crate::agent::OutcomeAction::replace) (serve
    /// the turn with a response) or [`OutcomeAction::retry_on`](crate::agent::OutcomeAction::retry_on)
    /// (call a model again). `None` for a response or a tool call.
    pub fn completion_error(&self) -> Option<&'a CompletionError> {
        match *self.target {
            OutcomeTarget::CompletionFailed { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The label of the model that served (or failed) a model call; `None` for other effects.
    pub fn model(&self) -> Option<&'a str> {
        match *self.target {
            OutcomeTarget::Completion { model, .. }
            | OutcomeTarget::CompletionFailed { model, .. } => Some(model),
            _ => None,
        }
    }

    /// The effect's name and output, for effects other than model and tool calls.
    pub fn effect_output(&self) -> Option<(&'a str, &'a Value)> {
        match *self.target {
            OutcomeTarget::Effect { name, output } => Some((name, output)),
            _ => None,
        }
    }
}
