//! [`AgentService`]: the Restate workflow `ReinsAgent` that runs a reins agent. A run is one
//! workflow invocation keyed by the run id; its `run` handler drives the agent with the
//! ordinary run loop while the invocation's step port journals every model and tool call.

use crate::steps::{STEPS_STATE, Steps, serve_steps};
use crate::wire::{DecisionRequest, PendingDecision, RunFailure, RunInput, RunOutput, RunProgress};
use reins::agent::{Agent, PendingCall, PromptError, PromptRequest, PromptResponse, ToolDecision};
use restate_sdk::prelude::*;
use std::sync::Arc;
use tokio::sync::mpsc;

/// The state key holding the calls a suspended run waits on.
pub(crate) const PENDING_STATE: &str = "pending";
/// The state key holding why the run ended without an answer.
const FAILURE_STATE: &str = "failure";

/// The Restate service name under which agents are served.
pub const SERVICE_NAME: &str = "ReinsAgent";

type BuildAgent = dyn Fn(&Steps) -> Agent + Send + Sync;

/// A reins agent served as the Restate workflow `ReinsAgent`.
///
/// `build` makes the agent from the [`Steps`] of one invocation, wrapping its model with
/// [`Steps::model`] and its tools with [`Steps::tool`]; the same function builds the agent for
/// embedded runs from [`Steps::embedded`]. Hooks are added as usual and run unchanged.
///
/// Handlers (through the ingress, `http://<ingress>/ReinsAgent/<run id>/<handler>`):
/// - `run` ([`RunInput`] → [`RunOutput`]): the run itself; a run that fails ends the
///   invocation with a terminal error carrying the reason.
/// - `decide` ([`DecisionRequest`]): approve, deny or approve with edited arguments a call the
///   run is suspended on. Refused with HTTP 404 when the run does not wait on that call, and
///   with 400 when the edited arguments are not a JSON object.
/// - `status` (→ [`RunProgress`]): the journaled steps and the pending calls.
///
/// ```no_run
/// use reins::agent::AgentBuilder;
/// use reins::testing::{ScriptedModel, Turn};
/// use reins_restate::{AgentService, Steps};
///
/// fn agent(steps: &Steps) -> reins::agent::Agent {
///     AgentBuilder::new(steps.model(ScriptedModel::resumable([Turn::text("Hello.")]))).build()
/// }
///
/// # async fn serve() -> std::io::Result<()> {
/// // Embedded: `agent(&Steps::embedded()).prompt("Hi").await`. On Restate:
/// reins_restate::serve("127.0.0.1:9080".parse().unwrap(), AgentService::new(agent)).await
/// # }
/// ```
#[derive(Clone)]
pub struct AgentService {
    build: Arc<BuildAgent>,
}

impl std::fmt::Debug for AgentService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentService").finish_non_exhaustive()
    }
}

impl AgentService {
    /// Serves the agent `build` makes for each invocation.
    pub fn new(build: impl Fn(&Steps) -> Agent + Send + Sync + 'static) -> Self {
        AgentService {
            build: Arc::new(build),
        }
    }
}

/// What a suspended call waits on, as listed in the run's status.
fn pending_decision(call: &PendingCall, awakeable: String) -> PendingDecision {
    PendingDecision {
        call: call.internal_call_id.clone(),
        tool: call.call.name.clone(),
        arguments: call.call.arguments.clone(),
        reason: call.suspended.clone().unwrap_or_default(),
        awakeable,
    }
}

/// Why `decision` cannot be applied to the call `call`, if it cannot: edited arguments must be
/// a JSON object (a tool's arguments always are), else the tool would only fail on them after
/// the approver was told the decision was taken.
pub(crate) fn unusable(call: &str, decision: &ToolDecision) -> Option<String> {
    match decision {
        ToolDecision::ApproveWithArgs { args } if !args.is_object() => Some(format!(
            "the arguments of `approve_with_args` for `{call}` must be a JSON object, not {}",
            json_kind(args)
        )),
        _ => None,
    }
}

/// What kind of JSON value `value` is, for an error message (the value itself may be large).
fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

fn failed(error: PromptError) -> HandlerError {
    // A run that ended without an answer is final: Restate must not retry it.
    TerminalError::new(format!("the run failed: {error}")).into()
}

#[restate_sdk::workflow(name = "ReinsAgent")]
impl AgentService {
    /// Drives one run; see the type's docs.
    #[handler]
    async fn run(
        &self,
        ctx: WorkflowContext<'_>,
        input: Json<RunInput>,
    ) -> Result<Json<RunOutput>, HandlerError> {
        let run_id = ctx.key().to_owned();
        let (port_sender, mut port) = mpsc::unbounded_channel();
        let agent = (self.build)(&Steps::journaled(run_id.clone(), port_sender));
        let mut progress = Vec::new();
        let mut request: PromptRequest = agent.prompt(input.into_inner().prompt).run_id(&run_id);
        loop {
            let driven = request.extended_details().into_future();
            let outcome: Result<PromptResponse, PromptError> = tokio::select! {
                outcome = driven => outcome,
                () = serve_steps(&ctx, &mut port, &mut progress) => {
                    return Err(TerminalError::new("the agent dropped its step port").into());
                }
            };
            let suspended = match outcome {
                Ok(response) => {
                    return Ok(Json(RunOutput {
                        run_id,
                        answer: response.output,
                        turns: response.state.turn,
                        usage: response.state.usage,
                    }));
                }
                Err(PromptError::Suspended { run }) => run,
                Err(error) => {
                    ctx.set(FAILURE_STATE, Json(RunFailure::of(&error)));
                    return Err(failed(error));
                }
            };
            // The run waits in Restate for one decision per suspended call: no worker is held.
            let mut pending = Vec::new();
            let mut decisions = Vec::new();
            for call in suspended.pending() {
                let (awakeable, decided) = ctx.awakeable::<Json<ToolDecision>>();
                pending.push(pending_decision(call, awakeable));
                decisions.push(decided);
            }
            ctx.set(PENDING_STATE, Json(pending.clone()));
            let mut resumed = agent.resume(suspended.state);
            for (call, decided) in pending.iter().zip(decisions) {
                let Json(decision) = decided.await?;
                resumed = resumed.decide(&call.call, decision);
            }
            ctx.set(PENDING_STATE, Json(Vec::<PendingDecision>::new()));
            request = resumed;
        }
    }

    /// Resolves the awakeable of a suspended call with a decision.
    #[handler]
    async fn decide(
        &self,
        ctx: SharedWorkflowContext<'_>,
        request: Json<DecisionRequest>,
    ) -> Result<(), HandlerError> {
        let DecisionRequest { call, decision } = request.into_inner();
        let pending: Vec<PendingDecision> = ctx
            .get::<Json<Vec<PendingDecision>>>(PENDING_STATE)
            .await?
            .map(Json::into_inner)
            .unwrap_or_default();
        let Some(waiting) = pending.iter().find(|waiting| waiting.call == call) else {
            return Err(TerminalError::new_with_code(
                404,
                format!(
                    "run `{}` is not waiting for a decision on `{call}`",
                    ctx.key()
                ),
            )
            .into());
        };
        if let Some(reason) = unusable(&call, &decision) {
            return Err(TerminalError::new_with_code(400, reason).into());
        }
        ctx.resolve_awakeable(&waiting.awakeable, Json(decision));
        Ok(())
    }

    /// The run's journaled steps and the calls it waits on.
    #[handler]
    async fn status(
        &self,
        ctx: SharedWorkflowContext<'_>,
    ) -> Result<Json<RunProgress>, HandlerError> {
        let steps = ctx
            .get::<Json<Vec<String>>>(STEPS_STATE)
            .await?
            .map(Json::into_inner)
            .unwrap_or_default();
        let pending = ctx
            .get::<Json<Vec<PendingDecision>>>(PENDING_STATE)
            .await?
            .map(Json::into_inner)
            .unwrap_or_default();
        let failure = ctx
            .get::<Json<RunFailure>>(FAILURE_STATE)
            .await?
            .map(Json::into_inner);
        Ok(Json(RunProgress {
            steps,
            pending,
            failure,
        }))
    }
}
