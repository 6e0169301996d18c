//! The runs list of the inbox's first page: its agent's runs with who drives each, the calls
//! that wait, prices and ages, and the store's runs this release cannot read. The page is
//! fetched again every two seconds while it is open: it lists at most [`MOST_RUNS_LISTED`]
//! runs, those waiting for a decision first, and says how many more `reins runs list` lists.

use super::{App, html, server_error, serves};
use crate::runs::{self, ListedRun};
use axum::response::Response;
use reins::store::{PendingApproval, RunStore};
use std::collections::{HashMap, HashSet};

/// The most runs the first page lists: a store of thousands would make a page of megabytes,
/// built (a query per run) and sent again every two seconds.
const MOST_RUNS_LISTED: usize = 200;

/// The runs the page lists out of `listed` (the last written last), in the same order: those
/// waiting for a decision (the inbox is for them), then the most recently written, up to
/// [`MOST_RUNS_LISTED`]; and how many are left out.
fn runs_listed(listed: Vec<ListedRun>, waiting: &[PendingApproval]) -> (Vec<ListedRun>, usize) {
    if listed.len() <= MOST_RUNS_LISTED {
        return (listed, 0);
    }
    let waits: HashSet<&str> = waiting.iter().map(|p| p.run_id.as_str()).collect();
    let newest_first = || listed.iter().enumerate().rev();
    let chosen: HashSet<usize> = newest_first()
        .filter(|(_, run)| waits.contains(run.state.run_id.as_str()))
        .chain(newest_first().filter(|(_, run)| !waits.contains(run.state.run_id.as_str())))
        .map(|(at, _)| at)
        .take(MOST_RUNS_LISTED)
        .collect();
    let left_out = listed.len() - chosen.len();
    let shown = listed
        .into_iter()
        .enumerate()
        .filter(|(at, _)| chosen.contains(at))
        .map(|(_, run)| run)
        .collect();
    (shown, left_out)
}

/// The runs list as HTML (the live part of the first page).
pub(super) async fn runs_html(app: &App) -> Result<String, Response> {
    let (readable, unreadable): (Vec<_>, Vec<_>) = runs::listed_runs(&app.store)
        .await
        .map_err(server_error)?
        .into_iter()
        .partition(Result::is_ok);
    let listed: Vec<_> = readable
        .into_iter()
        .filter_map(Result::ok)
        .filter(|run| serves(app, &run.state))
        .collect();
    // Whose they are cannot be read either: each is named, so none is lost silently.
    let unreadable: Vec<_> = unreadable.into_iter().filter_map(Result::err).collect();
    let mut waiting = app
        .store
        .pending_approvals()
        .await
        .map_err(server_error)?
        .approvals;
    waiting.retain(|pending| listed.iter().any(|run| run.state.run_id == pending.run_id));
    let (listed, left_out) = runs_listed(listed, &waiting);
    let mut started_ms = HashMap::new();
    for run in &listed {
        let run_id = &run.state.run_id;
        if let Some(first) = app
            .store
            .checkpoints(run_id)
            .await
            .map_err(server_error)?
            .first()
        {
            started_ms.insert(run_id.clone(), first.created_at_ms);
        }
    }
    let table = html::RunsTable {
        waiting: &waiting,
        own_model: &app.model,
        pricing: app.pricing.as_ref(),
        // The agent's own model's price, else the one for every model.
        prices: [
            &app.agent.file.model.get_ref().price_per_million,
            &app.agent.file.limits.price_per_million,
        ]
        .into_iter()
        .flatten()
        .next()
        .map(|price| *price.get_ref()),
        started_ms: &started_ms,
        agent_file: &crate::shell_word::path(&app.agent.path),
    };
    Ok(html::runs_table(&listed, &table)
        + &html::runs_left_out(left_out, table.agent_file)
        + &html::unreadable_runs(&unreadable))
}
