//! An inbox started without the model's key: a colleague who only approves calls has none,
//! and needs none to decide (a decision is a record in the store, [`RunStore::decide`]). Only
//! going on with the run calls the model. So the inbox starts, records every decision, and
//! leaves the run to `reins runs resume FILE RUN` where the key is set, saying so once at
//! start-up and on each run's page, in place of its resume button. Resuming whenever a run
//! is decided, rather than once on a later command, would need the key after all; and a
//! resume that failed for want of it would read as a broken run. Only the variable's name is
//! said (never its value, which the inbox does not have).
//!
//! [`RunStore::decide`]: reins::store::RunStore::decide

use super::escape::escape;
use crate::config::check::Needs;
use crate::config::{LoadedAgent, model_keys};
use crate::decide_commands::resume_line;
use std::path::Path;
use std::process::ExitCode;

/// Whether this inbox goes on with the runs it decides.
pub enum Resuming {
    /// It resumes a run once no call of it waits, and offers the resume button.
    Here,
    /// It does not: the model's key is missing.
    Elsewhere {
        /// Why, at start-up: `OPENAI_API_KEY is not set` (or `is empty`).
        why: String,
        /// The variables, by name: `OPENAI_API_KEY`.
        variables: String,
    },
}

/// Reads and checks the agent file for `reins ui`: an agent on the Restate store is refused
/// first (its worker calls the model, and the inbox has no records to read); then, when a
/// model's key is missing, the agent as the store's commands read it and [`Resuming::Elsewhere`];
/// else as a run needs it, every variable a run reads checked.
pub fn load_agent(path: &Path) -> Result<(LoadedAgent, Resuming), ExitCode> {
    // Read once: the variables checked follow from what the file says.
    let needs = |agent: &LoadedAgent| match crate::restate::ingress(agent).is_some()
        || missing_keys(agent).is_some()
    {
        true => Needs::Store,
        false => Needs::Running,
    };
    let loaded = crate::early::Early::text().load_for(path, needs)?;
    if let Some(error) = crate::restate::unsupported(&loaded, "ui") {
        return Err(crate::fail(error));
    }
    match missing_keys(&loaded) {
        Some(resuming) => Ok((loaded, resuming)),
        None => Ok((loaded, Resuming::Here)),
    }
}

/// [`Resuming::Elsewhere`] when a key one of the agent's models reads (its own, a fallback,
/// the over-budget one) is not set or empty.
fn missing_keys(agent: &LoadedAgent) -> Option<Resuming> {
    let mut missing: Vec<(String, &str)> = Vec::new();
    for (_, model) in agent.file.labeled_models() {
        let Some(variable) = model_keys::key_env(model.get_ref()) else {
            continue;
        };
        let Some(how) = crate::config::variable_missing(variable) else {
            continue;
        };
        if !missing.iter().any(|(name, _)| name == variable) {
            missing.push((variable.to_owned(), how));
        }
    }
    if missing.is_empty() {
        return None;
    }
    let why = missing
        .iter()
        .map(|(name, how)| format!("{name} {how}"))
        .collect::<Vec<_>>()
        .join(", ");
    let variables = missing
        .iter()
        .map(|(name, _)| name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    Some(Resuming::Elsewhere { why, variables })
}

impl Resuming {
    /// The line said at start-up when runs are not resumed here; `None` when they are.
    pub fn startup_line(&self, agent: &Path) -> Option<String> {
        match self {
            Resuming::Here => None,
            Resuming::Elsewhere { why, .. } => Some(format!(
                "reins: runs are not resumed here because {why}: decisions made in the inbox \
                 are recorded, and `reins runs resume {} RUN` resumes a run where the key is set",
                crate::shell_word::path(agent)
            )),
        }
    }

    /// What a run's page shows about going on with `run`: `button` (a resume form) when
    /// the inbox resumes runs; else that it does not, and the command that does.
    pub fn resume_or_command(&self, agent: &Path, run: &str, button: String) -> String {
        match self {
            Resuming::Here => button,
            Resuming::Elsewhere { variables, .. } => format!(
                "<p id=\"not-resumed-here\">This inbox records decisions but does not resume \
                 runs: it was started without {variables}, the model's key. Where the key is \
                 set, <code>{command}</code> resumes the run once none of its calls waits.</p>",
                variables = escape(variables),
                command = escape(&resume_line(agent, run)),
            ),
        }
    }

    /// Why a resume sent to this inbox is refused; `None` when it resumes runs.
    pub fn refusal(&self, agent: &Path, run: &str) -> Option<String> {
        match self {
            Resuming::Here => None,
            Resuming::Elsewhere { variables, .. } => Some(format!(
                "this inbox does not resume runs: it was started without {variables}, the \
                 model's key. Resume the run where the key is set with `{}`",
                resume_line(agent, run)
            )),
        }
    }

    /// How a run whose calls were all decided elsewhere goes on, as a refusal to decide one
    /// of them says it.
    pub fn continues(&self, agent: &Path, run: &str) -> String {
        match self {
            Resuming::Here => "resume the run from its page".to_owned(),
            Resuming::Elsewhere { .. } => {
                format!("resume the run with `{}`", resume_line(agent, run))
            }
        }
    }
}
