//! The runs list of the inbox's first page: its agent's runs with who drives each, the calls
//! that wait, prices and ages, and the store's runs this release cannot read. The page is
//! fetched again every two seconds while it is open: it lists at most
//! [`MOST_RUNS_LISTED`](super::runs_shown::MOST_RUNS_LISTED) runs, those waiting for a
//! decision first, chosen from the store's run summaries before any run is read
//! ([`runs_shown`](super::runs_shown)); the runs of other agents sharing the store are passed
//! over by their summaries, unread. It says how many more `reins runs list` lists; of the
//! runs this release cannot read it names at most
//! [`MOST_UNREADABLE_LISTED`](super::html::MOST_UNREADABLE_LISTED), and says how many more
//! there are. They are listed in the same order: the runs with a call waiting for a decision at the top, however
//! long ago they were written (the person who opens the inbox is there to decide them), then
//! the others; each group the most recently written first.

use super::runs_shown::shown_runs;
use super::{App, html, server_error, serves};
use crate::runs::ListedRun;
use axum::response::Response;

/// The runs list as HTML (the live part of the first page).
pub(super) async fn runs_html(app: &App) -> Result<String, Response> {
    let shown = shown_runs(&app.store, |agent_name| serves(app, agent_name))
        .await
        .map_err(server_error)?;
    let table = html::RunsTable {
        waiting: &shown.waiting,
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
        agent_file: &crate::shell_word::path(&app.agent.path),
    };
    // Whose the unreadable runs are cannot be read either: each is named, so none is lost
    // silently.
    let waits = |run: &ListedRun| shown.waiting.iter().any(|p| p.run_id == run.state.run_id);
    let mut listed: Vec<&ListedRun> = shown.runs.iter().rev().collect();
    // Stable: each group keeps the most recently written first.
    listed.sort_by_key(|run| !waits(run));
    Ok(html::runs_table(&listed, &table)
        + &html::runs_left_out(shown.left_out, shown.older_not_counted, table.agent_file)
        + &html::unreadable_runs(&shown.unreadable, table.agent_file))
}
