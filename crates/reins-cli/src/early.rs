//! How `reins run` and `reins runs resume` say they failed before their run started or
//! resumed (an invalid agent file, no prompt, a store or an MCP server that cannot open or
//! start, another agent's run): on stderr, as every command says it, and with `--json` as the
//! `error` event too, its `run` null (no run went on), so a script reading the events always
//! reads how the command ended. Other commands report the same way with `--json` off. So
//! does a command line clap refuses (an unknown flag, a missing argument): [`usage_error`].

use crate::config::diagnostic::Diagnostic;
use crate::config::{self, LoadedAgent, check::Needs};
use crate::run::EXIT_INVALID;
use serde_json::json;
use std::ffi::OsString;
use std::fmt::Display;
use std::path::Path;
use std::process::ExitCode;

/// Where a failure before the run is said: stderr, and the `error` event with `--json`.
#[derive(Debug, Clone, Copy)]
pub struct Early {
    json: bool,
}

impl Early {
    /// With the `error` event when `json`.
    pub fn new(json: bool) -> Self {
        Early { json }
    }

    /// On stderr only (a command without `--json` events).
    pub fn text() -> Self {
        Early::new(false)
    }

    /// Says why the command failed (what a model, a server or a file said is shown as text,
    /// its control sequences made visible); returns `code`.
    pub fn fail(self, message: impl Display, code: ExitCode) -> ExitCode {
        let message = message.to_string();
        eprintln!("reins: {}", reins::text::printable(&message));
        self.event(&message);
        code
    }

    /// [`fail`](Early::fail) for a mistake of the agent file or the command line (exit 2).
    pub fn invalid(self, message: impl Display) -> ExitCode {
        self.fail(message, ExitCode::from(EXIT_INVALID))
    }

    /// Reads and checks an agent file, printing every mistake at its line (exit 2), and every
    /// warning (which fails nothing: the `error` event holds the errors only).
    pub fn load(self, path: &Path, needs: Needs) -> Result<LoadedAgent, ExitCode> {
        self.load_for(path, |_| needs)
    }

    /// [`load`](Early::load), the variables checked those `needs` says the command needs
    /// given the file as read (on the Restate store, a command runs no model): the file is
    /// read once, so it is one agent throughout, and a file given as a pipe can be used.
    pub fn load_for(
        self,
        path: &Path,
        needs: impl FnOnce(&LoadedAgent) -> Needs,
    ) -> Result<LoadedAgent, ExitCode> {
        let loaded = config::read(path).and_then(|agent| {
            let needs = needs(&agent);
            config::checked(agent, needs)
        });
        self.said(path, loaded).map(|(agent, _)| agent)
    }

    /// [`load`](Early::load), with how many warnings it printed (`reins check` says it).
    pub fn load_warned(self, path: &Path, needs: Needs) -> Result<(LoadedAgent, usize), ExitCode> {
        self.said(path, config::load(path, needs))
    }

    /// The agent `loaded` holds, its warnings printed and counted; or its problems printed,
    /// exit 2.
    fn said(
        self,
        path: &Path,
        loaded: Result<(LoadedAgent, Vec<Diagnostic>), Vec<Diagnostic>>,
    ) -> Result<(LoadedAgent, usize), ExitCode> {
        let problems = match loaded {
            Ok((agent, warnings)) => {
                for warning in &warnings {
                    eprintln!("{warning}");
                }
                return Ok((agent, warnings.len()));
            }
            Err(problems) => problems,
        };
        for problem in &problems {
            eprintln!("{problem}");
        }
        let errors: Vec<_> = problems.iter().filter(|p| p.is_error()).collect();
        let mut said: Vec<String> = errors.iter().map(ToString::to_string).collect();
        let summary = format!("{} has {} error(s)", path.display(), errors.len());
        eprintln!("reins: {summary}");
        said.push(summary);
        self.event(&said.join("\n"));
        Err(ExitCode::from(EXIT_INVALID))
    }

    fn event(self, message: &str) {
        if self.json {
            outln!(
                "{}",
                json!({"event": "error", "run": null, "message": message})
            );
        }
    }
}

/// Reports a command line clap could not read as clap does (its text on stderr, with the
/// usage), and as the `error` event too when it asked `reins run` or `reins runs resume` for
/// `--json`; returns clap's exit code (2 for a usage mistake). `--help` and `--version`,
/// which clap also answers this way, print what they print and succeed.
pub fn usage_error(error: &clap::Error, args: &[OsString]) -> ExitCode {
    if error.use_stderr() && asks_for_events(args) {
        let text = error.render().to_string();
        let message = text.trim().trim_start_matches("error: ");
        Early::new(true).event(message);
    }
    // Where clap's own `exit` prints it; a closed stderr leaves nothing to tell.
    let _ = error.print();
    ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(EXIT_INVALID))
}

/// Whether the command line `args` (the program's name first) is `reins run` or `reins runs
/// resume` with `--json` among its options (before a `--`, after which every argument is a
/// value), given a value or not (`--json=true`, which clap refuses, still asked for events).
fn asks_for_events(args: &[OsString]) -> bool {
    let words: Vec<&str> = args
        .iter()
        .skip(1)
        .map(|arg| arg.to_str().unwrap_or_default())
        .take_while(|arg| *arg != "--")
        .collect();
    let emits_events = matches!(words.as_slice(), ["run", ..] | ["runs", "resume", ..]);
    emits_events
        && words
            .iter()
            .any(|word| *word == "--json" || word.starts_with("--json="))
}

#[cfg(test)]
mod tests {
    use super::asks_for_events;
    use std::ffi::OsString;

    fn asks(line: &[&str]) -> bool {
        let args: Vec<OsString> = std::iter::once("reins")
            .chain(line.iter().copied())
            .map(OsString::from)
            .collect();
        asks_for_events(&args)
    }

    #[test]
    fn only_run_and_runs_resume_with_json_ask_for_events() {
        assert!(asks(&["run", "a.toml", "--json", "--bogus"]));
        assert!(asks(&["runs", "resume", "--json"]));
        assert!(asks(&["run", "a.toml", "--json=true", "hi"]));
        assert!(!asks(&["run", "a.toml", "--jsonl"]));
        assert!(!asks(&["run", "a.toml", "--bogus"]));
        assert!(!asks(&["runs", "list", "a.toml", "--json", "--bogus"]));
        assert!(!asks(&["run", "a.toml", "--", "--json"]));
        assert!(!asks(&["check", "--json"]));
    }
}
