//! Which runs the inbox serves: those of its own agent. Agents beside each other share a
//! store (`.reins/runs.sqlite`), and a run of another agent resumed here would go on with
//! this agent's model and tools, and fail on a call to a tool it does not have.

use super::App;
use super::refused;
use axum::http::StatusCode;
use axum::response::Response;
use reins::agent::RunState;
use reins::store::RunStore;

/// Whether the inbox serves a run of the agent `agent_name`: its own agent's (or of no named
/// agent).
pub(super) fn serves(app: &App, agent_name: Option<&str>) -> bool {
    agent_name.is_none_or(|owner| owner == app.name)
}

/// The state of `run`, if it is stored and a run of this inbox's agent.
pub(super) async fn own_run(app: &App, run: &str) -> Result<RunState, Response> {
    let state = app
        .store
        .load(run)
        .await
        .map_err(|error| refused(StatusCode::NOT_FOUND, &error.to_string(), None))?;
    if !serves(app, state.agent_name.as_deref()) {
        let owner = state.agent_name.as_deref().unwrap_or_default();
        let message = format!(
            "`{run}` is a run of the agent `{owner}`, not `{}`: open it in the inbox of \
             `{owner}`'s agent file",
            app.name
        );
        return Err(refused(StatusCode::NOT_FOUND, &message, None));
    }
    Ok(state)
}
