//! A run named on the command line (`reins runs show|approve|... RUN`, `reins chat
//! --resume RUN`) by its whole id or by the start of it, as `git` takes a commit: a run's id
//! is long (`run-41aa3b0c6411`) and people type the first few characters they see in
//! `reins runs list`. The start may leave out `run-` too. A start several runs share names
//! none of them (the command would otherwise act on a run the person did not mean), and the
//! message lists them. Before any run, a run named is said not to be there because there are
//! none yet, with how to start one.

use reins::store::{BoxedStore, RunCursor, RunQuery, RunStore};
use std::path::Path;

/// How many of the runs an ambiguous start matches the message lists.
const SHOWN: usize = 5;

/// The prefix every id `reins` gives a run starts with; people may leave it out.
const RUN_PREFIX: &str = "run-";

/// The id of the one stored run whose id is `given` or starts with it (or with `run-` and
/// `given`). A run whose id is exactly `given` is chosen even when others start with it. No
/// such run, or several: the message says so and what to do (`reins runs list` with
/// `agent_file` lists them).
pub async fn resolve(store: &BoxedStore, given: &str, agent_file: &Path) -> Result<String, String> {
    let list = format!(
        "`reins runs list {}` lists the runs",
        crate::shell_word::path(agent_file)
    );
    if given.is_empty() {
        return Err(format!("no run is named: give a run's id ({list})"));
    }
    let mut matches = starting_with(store, given).await?;
    if matches.is_empty() && !given.starts_with(RUN_PREFIX) {
        matches = starting_with(store, &format!("{RUN_PREFIX}{given}")).await?;
    }
    if let Some(exact) = matches.iter().find(|id| *id == given) {
        return Ok(exact.clone());
    }
    match matches.as_slice() {
        [] if no_runs(store).await? => Err(format!(
            "no run `{given}` is stored: there are {}",
            no_runs_yet(agent_file)
        )),
        [] => Err(format!("no run `{given}` is stored ({list})")),
        [only] => Ok(only.clone()),
        several => {
            let shown: Vec<&str> = several.iter().take(SHOWN).map(String::as_str).collect();
            let more = if several.len() > SHOWN { ", ..." } else { "" };
            Err(format!(
                "`{given}` is the start of more than one run's id ({}{more}): give more of it",
                shown.join(", ")
            ))
        }
    }
}

/// What is said of a store without runs, as `runs list` and a run named there say it: `no
/// runs yet: `reins run agent.toml "PROMPT"` starts one`.
pub fn no_runs_yet(agent_file: &Path) -> String {
    format!(
        "no runs yet: `reins run {} \"PROMPT\"` starts one",
        crate::shell_word::path(agent_file)
    )
}

/// Whether the store holds no run at all (readable or not).
async fn no_runs(store: &BoxedStore) -> Result<bool, String> {
    let page = store
        .list_runs(&RunQuery::new().page_size(1))
        .await
        .map_err(|error| error.to_string())?;
    Ok(page.runs.is_empty() && page.unreadable.is_empty())
}

/// The ids of the stored runs (readable or not) that start with `prefix`, in byte order; at
/// most one more than [`SHOWN`], which is enough to tell one from several and to list them.
async fn starting_with(store: &BoxedStore, prefix: &str) -> Result<Vec<String>, String> {
    // Ids are listed in byte order: those starting with `prefix` come right after the
    // prefix less its last character, and end at the first id that does not start with it.
    let mut before = prefix.to_owned();
    before.pop();
    let mut query = RunQuery::new().after(RunCursor::new(before));
    let mut found = Vec::new();
    loop {
        let page = store
            .list_runs(&query)
            .await
            .map_err(|error| error.to_string())?;
        let mut ids: Vec<String> = page
            .runs
            .into_iter()
            .map(|run| run.run_id)
            .chain(page.unreadable.into_iter().map(|run| run.run_id))
            .collect();
        ids.sort();
        let past = ids
            .iter()
            .any(|id| id.as_str() > prefix && !id.starts_with(prefix));
        found.extend(ids.into_iter().filter(|id| id.starts_with(prefix)));
        if found.len() > SHOWN || past {
            return Ok(found);
        }
        match page.next {
            Some(next) => query = query.after(next),
            None => return Ok(found),
        }
    }
}
