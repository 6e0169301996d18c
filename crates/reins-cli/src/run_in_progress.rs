//! Why a call of a running run cannot be decided with `reins runs approve|edit|deny|skip|
//! supply`: the run is in progress, so none of its calls waits in the store. Said with who
//! drives it (the process holding its lease), where a call it asks about is asked (that
//! process's terminal; a run the inbox drives suspends instead, as the inbox asks nobody),
//! and how to take the run over when that process is gone, rather than only the run's status.

use crate::decide_commands::resume_invocation;
use crate::lease_keeper::holder_is_gone;
use reins::agent::RunStatus;
use reins::store::{BoxedStore, RunStore};
use reins::text::printable;
use std::path::Path;

/// `refused` (why a decision about `run`, of the agent file `agent`, was refused), or, when
/// the run is running, why no call of it waits and what to do instead.
pub async fn explained(store: &BoxedStore, agent: &Path, run: &str, refused: String) -> String {
    match in_progress(store, agent, run).await {
        Some(why) => why,
        None => refused,
    }
}

/// Why no call of `run` waits for a decision while it runs (`None`: it does not run, or it
/// cannot be read now, and the refusal says enough).
async fn in_progress(store: &BoxedStore, agent: &Path, run: &str) -> Option<String> {
    let state = store.load(run).await.ok()?;
    if state.status != RunStatus::Running {
        return None;
    }
    let listed = crate::runs::summary_of(store, run).await.ok().flatten()?;
    let resume = resume_invocation(agent, run);
    let asked_here = "a call it asks about is then asked at your terminal (without one, the \
                      run suspends and the call waits for `reins runs approve|deny`)";
    Some(match &listed.lease {
        Some(held) if holder_is_gone(&held.owner) => format!(
            "run `{run}` has no call waiting for a decision: it was in progress, driven by {}, \
             which is no longer running; {resume} takes the run over, and {asked_here}",
            printable(&held.owner)
        ),
        Some(held) => {
            let command =
                crate::lease_keeper::parse_worker_name(&held.owner).map(|worker| worker.command);
            // A `reins run` or `chat` process created the run it drives: it has driven it
            // since then. Another worker (a resume, the inbox) claimed it later.
            let since = match command {
                Some("run" | "chat") => {
                    format!("since {}", crate::trail::utc_time(listed.created_at_ms))
                }
                _ => format!(
                    "its last step written at {}",
                    crate::trail::utc_time(listed.updated_at_ms)
                ),
            };
            // The inbox asks nobody at its terminal (`CliDecider::suspend_only`): its runs
            // suspend by themselves, and a person sent to its terminal would wait there for
            // a question that never comes.
            let asked = match command {
                Some("ui") => format!(
                    "A call that needs one makes the run suspend with the call waiting, to be \
                     decided in the inbox (`reins ui {agent}`) or with `reins runs \
                     approve|deny`",
                    agent = crate::shell_word::path(agent)
                ),
                _ => "A call that needs one is asked at that process's terminal: answer it \
                      there, or press Ctrl-C at the question to leave the call waiting for \
                      `reins runs approve|deny` (a run without a terminal suspends with the \
                      call waiting by itself)"
                    .to_owned(),
            };
            format!(
                "run `{run}` is in progress: {} drives it ({since}), so no call of it waits \
                 for a decision here. {asked}. If that process is gone, {resume} takes the \
                 run over once its lease runs out at {}",
                printable(&held.owner),
                crate::trail::utc_time(held.expires_at_ms)
            )
        }
        None => format!(
            "run `{run}` has no call waiting for a decision: it is running, but no process \
             drives it (it was stopped, or its process died and its lease ran out); {resume} \
             continues it, and {asked_here}"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::explained;
    use crate::test_runs::state;
    use reins::agent::RunStatus;
    use reins::store::{BoxedStore, MemoryStore, RunStore};
    use std::path::Path;

    /// A run the web inbox resumes is asked about at no terminal: the inbox's runs suspend
    /// by themselves when a call needs a decision, so a person told to answer at the inbox's
    /// terminal would wait there for a question that never comes.
    #[tokio::test]
    async fn a_run_the_inbox_drives_is_not_said_to_ask_at_a_terminal() {
        let memory = MemoryStore::new();
        let inbox = crate::lease_keeper::worker_name("ui");
        memory
            .create(&state("r1", RunStatus::Running), &inbox)
            .await
            .expect("created");
        let store = BoxedStore::new(memory);

        let said = explained(&store, Path::new("a.toml"), "r1", "refused".to_owned()).await;

        assert!(said.contains("is in progress"), "{said}");
        assert!(said.contains(&inbox), "{said}");
        assert!(!said.contains("terminal"), "{said}");
        assert!(said.contains("makes the run suspend"), "{said}");
        assert!(said.contains("`reins ui a.toml`"), "{said}");
    }

    /// A run a `reins run` drives asks at that process's terminal, as before.
    #[tokio::test]
    async fn a_run_a_terminal_drives_is_said_to_ask_there() {
        let memory = MemoryStore::new();
        let run = crate::lease_keeper::worker_name("run");
        memory
            .create(&state("r1", RunStatus::Running), &run)
            .await
            .expect("created");
        let store = BoxedStore::new(memory);

        let said = explained(&store, Path::new("a.toml"), "r1", "refused".to_owned()).await;

        assert!(said.contains("at that process's terminal"), "{said}");
    }
}
