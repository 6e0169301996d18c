//! How a run starts: a new run's state, or a paused or stored run claimed from its store,
//! and the run's span and hook context.

use super::durable;
use super::{Durable, trace};
use crate::agent::builder::AgentConfig;
use crate::agent::error::PromptError;
use crate::agent::hook::HookContext;
use crate::agent::options::{RunOptions, RunStart};
use crate::message::Message;
use crate::run::{RunState, RunStatus, ToolDecision};
use std::sync::Arc;

/// What a run starts from: its state (new, or claimed from the store), its prompt (`None` on
/// resume), and the run's store lease with the decisions recorded for it.
pub(super) struct Begun {
    pub state: RunState,
    pub prompt: Option<Message>,
    pub decisions: Vec<(String, ToolDecision)>,
    pub durable: Option<Durable>,
    pub worker: String,
}

/// Starts a new run's state, or claims a paused or stored one.
pub(super) async fn begin(
    config: &AgentConfig,
    start: RunStart,
    options: &RunOptions,
) -> Result<Begun, PromptError> {
    // A worker name only matters for a store's lease: no random id for runs without one.
    let worker = match (&options.worker, &options.store) {
        (Some(worker), _) => worker.clone(),
        (None, Some(_)) => format!("worker-{}", uuid::Uuid::new_v4()),
        (None, None) => String::new(),
    };
    let mut decisions = options.decisions.clone();
    let mut durable = None;
    let (state, prompt) = match start {
        RunStart::New { prompt, history } => {
            let run_id = options
                .run_id
                .clone()
                .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
            let state = RunState::new(run_id, config.name.clone(), history);
            (state, Some(prompt))
        }
        RunStart::Resume(state) => {
            let mut state = *state;
            if let Some(store) = &options.store {
                let claimed = durable::claim(store, &state.run_id, &worker).await?;
                decisions.extend(claimed.decisions);
                durable = Some(Durable::new(Arc::clone(store), claimed.lease));
                state = claimed.state;
            }
            state.status = RunStatus::Running;
            (state, None)
        }
        RunStart::Stored(run_id) => {
            let Some(store) = &options.store else {
                return Err(PromptError::InvalidConfiguration(
                    "resuming a stored run needs a store".to_owned(),
                ));
            };
            // A finished run is refused by the claim, which writes nothing.
            let claimed = durable::claim(store, &run_id, &worker).await?;
            decisions.extend(claimed.decisions);
            durable = Some(Durable::new(Arc::clone(store), claimed.lease));
            let mut state = claimed.state;
            state.status = RunStatus::Running;
            (state, None)
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

/// The run's span (which records the run's id in `state`) and its hooks' context.
pub(super) fn traced(
    config: &AgentConfig,
    mut state: RunState,
    streamed: bool,
) -> (RunState, tracing::Span, HookContext) {
    let span = trace::run_span(config, &mut state);
    let ctx = HookContext::for_run(
        state.run_id.clone(),
        config.name.clone(),
        streamed,
        state.turn,
        state.entries.clone(),
    );
    (state, span, ctx)
}
