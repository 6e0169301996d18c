//! [`AgentService`]: the Restate workflow `ReinsAgent` that runs a reins agent. A run is one
//! workflow invocation keyed by the run id; its `run` handler drives the agent with the
//! ordinary run loop while the invocation's step port journals every model and tool call.

use crate::args_schema::ArgsSchemas;
use crate::awaiting::{PENDING_STATE, decisions, not_in_doubt, pending_decision, unusable};
use crate::claims::DecisionClaimsClient;
use crate::steps::{CANCELLED, LEGACY_STEPS_STATE, Steps, serve_steps, steps_from_keys};
use crate::wire::{DecisionRequest, PendingDecision, RunFailure, RunInput, RunOutput, RunProgress};
use reins::agent::{Agent, PromptError, PromptRequest, PromptResponse, ToolDecision};
use restate_sdk::prelude::*;
use std::sync::Arc;
use tokio::sync::mpsc;

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
/// Serve it with [`serve`](crate::serve) or [`serve_on`](crate::serve_on), or bind it to an
/// endpoint of your own with [`bind`](crate::bind) (which adds the object `decide` needs).
///
/// Handlers (through the ingress, `http://<ingress>/ReinsAgent/<run id>/<handler>`):
/// - `run` ([`RunInput`] → [`RunOutput`]): the run itself; a run that fails ends the
///   invocation with a terminal error carrying the reason.
/// - `decide` ([`DecisionRequest`]): approve, deny or approve with edited arguments a call the
///   run is suspended on. Refused with HTTP 404 when the run does not wait on that call,
///   with 400 when the edited arguments are not a JSON object or do not fit the tool's
///   JSON schema (the schema of the tool of that name in the agent `build` makes; a tool it
///   lacks, or a schema that does not compile, checks nothing, the latter logged), and with
///   409 when the call has already been decided (the first decision stands). The call keeps
///   waiting after a refusal.
/// - `status` (→ [`RunProgress`]): the journaled steps and the pending calls. It reads
///   runs recorded before each step had a state key of its own as well (their `steps` list,
///   then any per-step keys).
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

    /// The tools' schemas of the agent the run `run_id` drives, built as for the run and
    /// never run (its step port leads nowhere).
    fn args_schemas(&self, run_id: &str) -> ArgsSchemas {
        let (port, _) = mpsc::unbounded_channel();
        ArgsSchemas::of(&(self.build)(&Steps::journaled(run_id.to_owned(), port)))
    }
}

/// Lets the run's decision claims go once it has ended (with an answer or a terminal error
/// only: a retried invocation must not find a message it has not sent yet in its journal).
fn forget_claims(ctx: &WorkflowContext<'_>) {
    ctx.object_client::<DecisionClaimsClient>(ctx.key())
        .forget()
        .send();
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
        let schemas = ArgsSchemas::of(&agent);
        // Steps recorded by this attempt of the invocation (a replay counts them again).
        let mut recorded = 0;
        let mut request: PromptRequest = agent.prompt(input.into_inner().prompt).run_id(&run_id);
        loop {
            let driven = request.extended_details().into_future();
            let outcome: Result<PromptResponse, PromptError> = tokio::select! {
                outcome = driven => outcome,
                ended = serve_steps(&ctx, &mut port, &mut recorded, &schemas) => {
                    forget_claims(&ctx);
                    let Some(ended) = ended else {
                        return Err(TerminalError::new("the agent dropped its step port").into());
                    };
                    // It waits on nothing any more (a call in doubt may have been listed).
                    ctx.clear(PENDING_STATE);
                    let failure = if ended.code() == CANCELLED {
                        RunFailure::Cancelled
                    } else {
                        RunFailure::Error
                    };
                    ctx.set(FAILURE_STATE, Json(failure));
                    return Err(ended.into());
                }
            };
            let suspended = match outcome {
                Ok(response) => {
                    forget_claims(&ctx);
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
                    forget_claims(&ctx);
                    return Err(failed(error));
                }
            };
            // The run waits in Restate for one decision per suspended call: no worker is held.
            let waiting = suspended.pending().map(pending_decision).collect();
            let decided = match decisions(&ctx, waiting, &schemas).await {
                Ok(decided) => decided,
                Err(error) => {
                    // It waits on nothing any more: a call listed as waiting would take a
                    // decision that goes nowhere.
                    ctx.clear(PENDING_STATE);
                    let failure = if error.code() == CANCELLED {
                        RunFailure::Cancelled
                    } else {
                        RunFailure::Error
                    };
                    ctx.set(FAILURE_STATE, Json(failure));
                    forget_claims(&ctx);
                    return Err(error.into());
                }
            };
            let mut resumed = agent.resume(suspended.state);
            for (call, decision) in decided {
                resumed = resumed.decide(call, decision);
            }
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
        // A run that ended (cancelled, failed) takes no decision, whatever it still lists.
        if ctx.get::<Json<RunFailure>>(FAILURE_STATE).await?.is_some() {
            return Err(TerminalError::new_with_code(
                409,
                format!("run `{}` has ended: it takes no decision", ctx.key()),
            )
            .into());
        }
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
        if let Some(reason) = not_in_doubt(ctx.key(), waiting, &decision) {
            return Err(TerminalError::new_with_code(400, reason).into());
        }
        // Only edited arguments are checked against a schema: only they need the agent built.
        let schemas = match decision {
            ToolDecision::ApproveWithArgs { .. } => self.args_schemas(ctx.key()),
            _ => ArgsSchemas::default(),
        };
        if let Some(reason) = unusable(&call, &waiting.tool, &decision, &schemas) {
            return Err(TerminalError::new_with_code(400, reason).into());
        }
        let first = ctx
            .object_client::<DecisionClaimsClient>(ctx.key())
            .claim(waiting.awakeable.clone())
            .call()
            .await?;
        if !first {
            return Err(TerminalError::new_with_code(
                409,
                format!(
                    "`{call}` of run `{}` has already been decided; the first decision stands",
                    ctx.key()
                ),
            )
            .into());
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
        let keys = ctx.get_keys().await?;
        // Read only when there: runs recorded since the per-step keys have no list.
        let legacy = if keys.iter().any(|key| key == LEGACY_STEPS_STATE) {
            ctx.get::<Json<Vec<String>>>(LEGACY_STEPS_STATE)
                .await?
                .map(Json::into_inner)
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let steps = steps_from_keys(legacy, keys);
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
