//! How a run starts: a new run's state, or a paused or stored run claimed from its store,
//! the run's span and hook context, and its `on_run_start` hooks (`Driver::start`).

use super::durable;
use super::{Driver, Durable, Halt, trace};
use crate::agent::builder::AgentConfig;
use crate::agent::error::PromptError;
use crate::agent::hook::{HookContext, Stacked, StepEventKind};
use crate::agent::options::{RunOptions, RunStart, StartOptions};
use crate::agent::output_spec::OutputMode;
use crate::message::Message;
use crate::run::{RunState, RunStatus, ToolDecision};

/// What a run starts from: its state (new, or claimed from the store), its prompt (`None` on
/// resume), and the run's store lease with the decisions recorded for it.
pub(super) struct Begun {
    pub state: RunState,
    pub prompt: Option<Message>,
    pub decisions: Vec<(String, ToolDecision)>,
    pub durable: Option<Durable>,
    pub worker: String,
}

/// Starts a new run's state, or claims a paused or stored one, its status as it was left (the
/// run's span reads it: see [`traced`]). `answer` says whether the run
/// asks for a typed answer, and through which tool: a typed run resumed untyped is refused
/// (its claim given back unchanged).
pub(super) async fn begin(
    config: &AgentConfig,
    start: RunStart,
    options: Option<Box<StartOptions>>,
    answer: TypedAnswer<'_>,
) -> Result<Begun, PromptError> {
    let StartOptions {
        run_id,
        conversation_id,
        mut decisions,
        store,
        worker,
    } = options.map(|options| *options).unwrap_or_default();
    // A worker name only matters for a store's lease: no random id for runs without one.
    let worker = match (worker, &store) {
        (Some(worker), _) => worker,
        (None, Some(_)) => format!("worker-{}", uuid::Uuid::new_v4()),
        (None, None) => String::new(),
    };
    let (state, prompt, durable) = match start {
        RunStart::New { prompt, history } => {
            let run_id = run_id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
            let mut state = RunState::new(run_id, config.name.clone(), history);
            state.conversation_id = conversation_id;
            if let TypedAnswer::Typed { output_tool } = answer {
                state.output_tool = output_tool.map(str::to_owned);
            }
            // Created in the store by the run's first checkpoint.
            let durable = store.map(Durable::unclaimed);
            (state, Some(prompt), durable)
        }
        RunStart::Resume(state) => {
            let mut state = *state;
            let mut durable = None;
            if let Some(store) = store {
                // Boxed, as below: only a resumed run claims, and the claim's future would take
                // room in every run's future.
                let claimed = Box::pin(durable::claim(&store, &state.run_id, &worker)).await?;
                decisions.extend(claimed.decisions);
                durable = Some(Durable::new(store, claimed.lease, claimed.sent));
                state = claimed.state;
            }
            refuse_untyped_resume(&mut state, answer, durable.as_ref()).await?;
            (state, None, durable)
        }
        RunStart::Stored(run_id) => {
            let Some(store) = store else {
                return Err(PromptError::InvalidConfiguration(
                    "resuming a stored run needs a store".to_owned(),
                ));
            };
            // A finished run is refused by the claim, which writes nothing.
            let claimed = Box::pin(durable::claim(&store, &run_id, &worker)).await?;
            decisions.extend(claimed.decisions);
            let mut state = claimed.state;
            let durable = Durable::new(store, claimed.lease, claimed.sent);
            refuse_untyped_resume(&mut state, answer, Some(&durable)).await?;
            (state, None, Some(durable))
        }
    };
    Ok(Begun {
        state,
        prompt,
        decisions,
        durable,
        worker,
    })
}

/// Refuses to resume a typed run (its state names the tool its answer comes through) without
/// its typed answer: the model would answer through a tool the run no longer has, and the run
/// would fail for good. Its claim, if any, is given back unchanged. A run resumed typed
/// records its output tool.
async fn refuse_untyped_resume(
    state: &mut RunState,
    answer: TypedAnswer<'_>,
    durable: Option<&Durable>,
) -> Result<(), PromptError> {
    match (answer, &state.output_tool) {
        // Typed again, in whichever mode resolves now (a model may have gained native output).
        (TypedAnswer::Typed { output_tool }, _) => {
            state.output_tool = output_tool.map(str::to_owned);
        }
        (TypedAnswer::Untyped, Some(tool)) => {
            let refusal = PromptError::InvalidConfiguration(format!(
                "run `{}` answers through its output tool `{tool}`: resume it with its typed \
                 answer (`.output::<T>()`)",
                state.run_id
            ));
            if let Some(durable) = durable {
                durable.release_unchanged(state).await;
            }
            return Err(refusal);
        }
        (TypedAnswer::Untyped, None) => {}
    }
    Ok(())
}

/// Whether a run asks for a typed answer, and the tool it comes through when it does.
#[derive(Clone, Copy)]
pub(super) enum TypedAnswer<'a> {
    /// A text answer.
    Untyped,
    /// A typed answer, through `output_tool` (`None`: the model's native output).
    Typed { output_tool: Option<&'a str> },
}

/// Whether the run asks for a typed answer, and through which tool (its mode resolved
/// already).
pub(super) fn typed_answer(options: &RunOptions) -> TypedAnswer<'static> {
    match options.output {
        None => TypedAnswer::Untyped,
        Some(_) => TypedAnswer::Typed {
            output_tool: answers_through_output_tool(options)
                .then_some(crate::agent::output_spec::OUTPUT_TOOL_NAME),
        },
    }
}

/// The run's span (which records the run's id in `state`) and its hooks' context; the run is
/// `running` from here. The span is made first: a resumed run's reads the status it was left
/// in (still `running`: its last half was cut off).
pub(super) fn traced(
    config: &AgentConfig,
    mut state: RunState,
    streamed: bool,
    options: &RunOptions,
) -> (RunState, tracing::Span, HookContext) {
    let span = trace::run_span(config, &mut state);
    state.status = RunStatus::Running;
    let ctx = HookContext::for_run(
        state.run_id.clone(),
        config.name.clone(),
        streamed,
        state.turn,
        state.entries.clone(),
    )
    .with_run_shape(options.max_turns, answers_through_output_tool(options));
    (state, span, ctx)
}

/// Whether the run's typed answer comes through the output tool (its mode resolved already).
fn answers_through_output_tool(options: &RunOptions) -> bool {
    options
        .output
        .as_deref()
        .is_some_and(|spec| spec.mode != OutputMode::Native)
}

impl Driver<'_> {
    /// Fires `on_run_start` for the prompt at the end of the history, and records the prompt
    /// the hooks leave; nothing is lost if a hook ends the run.
    pub(super) async fn start(&mut self) -> Result<(), Halt> {
        if !self.observes(StepEventKind::RunStart) {
            return Ok(());
        }
        let Some(prompt) = self.state.history.pop() else {
            return Ok(());
        };
        let original = prompt.clone();
        // While the hooks have the prompt, the history does not end with it: a run dropped
        // meanwhile must not record another message as its input (see `dropped`).
        let unrecorded = std::mem::take(self.input_unrecorded.get_mut());
        let answer = self
            .hooks
            .run_start(self.ctx, prompt, &self.state.history)
            .await;
        *self.input_unrecorded.get_mut() = unrecorded;
        let prompt = match answer {
            Ok(Stacked::Go(prompt)) => prompt,
            Ok(Stacked::Stop(reason)) => {
                self.state.history.push(original);
                return Err(Halt::Stop(reason));
            }
            Err(failure) => {
                self.state.history.push(original);
                return Err(failure.into());
            }
        };
        self.state.history.push(prompt);
        Ok(())
    }
}
