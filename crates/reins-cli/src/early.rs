//! How `reins run` and `reins runs resume` say they failed before their run started or
//! resumed (an invalid agent file, no prompt, a store or an MCP server that cannot open or
//! start, another agent's run): on stderr, as every command says it, and with `--json` as the
//! `error` event too, its `run` null (no run went on), so a script reading the events always
//! reads how the command ended. Other commands report the same way with `--json` off.

use crate::config::{self, LoadedAgent, check::Needs};
use crate::run::EXIT_INVALID;
use serde_json::json;
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

    /// Reads and checks an agent file, printing every mistake at its line (exit 2).
    pub fn load(self, path: &Path, needs: Needs) -> Result<LoadedAgent, ExitCode> {
        config::load(path, needs).map_err(|problems| {
            let mut said: Vec<String> = problems.iter().map(ToString::to_string).collect();
            for problem in &said {
                eprintln!("{problem}");
            }
            let summary = format!("{} has {} error(s)", path.display(), problems.len());
            eprintln!("reins: {summary}");
            said.push(summary);
            self.event(&said.join("\n"));
            ExitCode::from(EXIT_INVALID)
        })
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
