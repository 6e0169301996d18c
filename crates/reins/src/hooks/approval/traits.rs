use serde::{Deserialize, Serialize};

/// What a tool says about itself, as MCP tool annotations do (`readOnlyHint`,
/// `destructiveHint`, `idempotentHint`). Tell an [`ApprovalPolicy`](super::ApprovalPolicy)
/// per tool name with [`tool_traits`](super::ApprovalPolicy::tool_traits); rules read it
/// with [`Rule::when_traits`](super::Rule::when_traits).
///
/// These are claims, not guarantees: a rule that allows read-only tools trusts whoever
/// declared them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ToolTraits {
    /// The tool changes nothing.
    pub read_only: bool,
    /// The tool may delete or overwrite something (meaningful when not read-only).
    pub destructive: bool,
    /// Calling the tool twice with the same arguments has no further effect.
    pub idempotent: bool,
}

impl Default for ToolTraits {
    /// MCP's defaults for a tool that declares nothing: not read-only, possibly destructive,
    /// not idempotent — the worst case, so an undeclared tool never passes as harmless.
    fn default() -> Self {
        ToolTraits {
            read_only: false,
            destructive: true,
            idempotent: false,
        }
    }
}

impl ToolTraits {
    /// A tool that only reads (and so is idempotent and not destructive).
    pub const fn read_only() -> Self {
        ToolTraits {
            read_only: true,
            destructive: false,
            idempotent: true,
        }
    }

    /// A tool that may delete or overwrite something.
    pub const fn destructive() -> Self {
        ToolTraits {
            read_only: false,
            destructive: true,
            idempotent: false,
        }
    }

    /// A tool that changes something without destroying anything (it only adds, e.g. writes
    /// a new note or sends a message).
    pub const fn additive() -> Self {
        ToolTraits {
            read_only: false,
            destructive: false,
            idempotent: false,
        }
    }

    /// These traits with `idempotent` set as given.
    pub const fn with_idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }
}
