//! `reins runs list`: the table of an agent's runs, or one JSON line per run.

use super::{
    ListedRun, listed_lease_shown, listed_runs, model_shown, status_name, summary, tokens,
    with_creation,
};
use reins::store::BoxedStore;
use reins::text::printable;
use serde_json::json;

/// `reins runs list` of the store of `agent_file`.
pub async fn list(
    store: &BoxedStore,
    agent_file: &std::path::Path,
    json_lines: bool,
    own_model: &str,
) -> Result<(), String> {
    let listed = listed_runs(store).await?;
    if listed.is_empty() && !json_lines {
        // On stderr: the table on stdout stays a header and its rows.
        eprintln!("reins: {}", crate::run_id::no_runs_yet(agent_file));
    }
    if !json_lines {
        outln!(
            "{:<18} {:<10} {:<16} {:>5} {:>8}  {:<20}  LEASE",
            "RUN",
            "STATUS",
            "AGENT",
            "TURNS",
            "TOKENS",
            "MODEL"
        );
    }
    for run in listed {
        match run {
            Ok(ListedRun {
                state,
                lease,
                created_at_ms,
            }) if json_lines => {
                let mut value = summary(&state, lease.as_ref(), own_model);
                with_creation(&mut value, created_at_ms);
                outln!("{value}");
            }
            // A shared store's runs were written by other programs too: shown, never acted on.
            Ok(ListedRun { state, lease, .. }) => outln!(
                "{}",
                printable(&format!(
                    "{:<18} {:<10} {:<16} {:>5} {:>8}  {:<20}  {}",
                    state.run_id,
                    status_name(state.status),
                    state.agent_name.as_deref().unwrap_or("-"),
                    state.turn,
                    tokens(&state.usage),
                    model_shown(&state, own_model),
                    listed_lease_shown(&state, lease.as_ref(), agent_file),
                ))
            ),
            Err(run) if json_lines => {
                outln!("{}", json!({"run": run.run_id, "unreadable": run.reason}));
            }
            // Its reason takes the row's place: nothing else of it can be read.
            Err(run) => outln!(
                "{}",
                printable(&format!(
                    "{:<18} {:<10} {}",
                    run.run_id, "unreadable", run.reason
                ))
            ),
        }
    }
    Ok(())
}
