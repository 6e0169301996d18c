//! Why an agent file could not be made into an agent: a mistake in the file that only
//! connecting could find (exit 2, as for any invalid agent file), or a failure around it
//! (exit 1).

use std::process::ExitCode;

/// Why [`connect`](super::connect) (or a command built on it) failed.
#[derive(Debug)]
pub enum AssembleError {
    /// A mistake in the agent file found once its MCP servers listed their tools: a tool
    /// choice or an approval rule naming no tool, a server's tool named like another. The
    /// file must change, as for a mistake `reins check` finds.
    Invalid(String),
    /// Something outside the file failed: a server that cannot start or list its tools, an
    /// audit log that cannot be opened, a port already in use.
    Failed(String),
}

impl std::fmt::Display for AssembleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AssembleError::Invalid(message) | AssembleError::Failed(message) => {
                f.write_str(message)
            }
        }
    }
}

/// The errors of the parts `connect` calls, which are all failures around the file: the
/// file's own mistakes are made [`AssembleError::Invalid`] where they are found.
impl From<String> for AssembleError {
    fn from(message: String) -> Self {
        AssembleError::Failed(message)
    }
}

impl AssembleError {
    /// Says why on stderr; the exit code: 2 for the file's mistake, 1 for a failure.
    pub fn report(&self) -> ExitCode {
        crate::early::Early::text().fail(self, self.exit_code())
    }

    /// 2 for the file's mistake (as for any invalid agent file), 1 for a failure.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            AssembleError::Invalid(_) => ExitCode::from(crate::run::EXIT_INVALID),
            AssembleError::Failed(_) => ExitCode::FAILURE,
        }
    }
}
