//! The runs list of the inbox's first page: its agent's runs with who drives each, the calls
//! that wait, prices and ages, and the store's runs this release cannot read.

use super::{App, html, server_error, serves};
use crate::runs;
use axum::response::Response;
use reins::store::RunStore;
use std::collections::HashMap;

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
    Ok(html::runs_table(&listed, &table) + &html::unreadable_runs(&unreadable))
}
