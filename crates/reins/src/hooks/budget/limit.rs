//! The typed stop: which limit a run went past, and the stable reason text that carries it
//! through [`PromptError::Cancelled`].

use crate::agent::PromptError;
use std::fmt;
use std::str::FromStr;

/// One of the limits a [`Budget`](super::Budget) enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BudgetLimit {
    /// Input (prompt) tokens over the run, as the providers reported them.
    InputTokens,
    /// Output (generated) tokens over the run.
    OutputTokens,
    /// Input plus output tokens over the run, as the providers counted them (each call's
    /// at least its input plus output, whatever total its provider reported).
    TotalTokens,
    /// The cost of the run's model calls, in the unit of the price table.
    Cost,
    /// Model calls made by the run (retries and repeats included).
    ModelCalls,
    /// Tool calls the budget let through.
    ToolCalls,
    /// Wall time since the run started, in seconds (a durable run's pause included).
    WallTime,
}

impl BudgetLimit {
    /// Every limit, in the order a budget checks them.
    pub const ALL: [BudgetLimit; 7] = [
        BudgetLimit::ModelCalls,
        BudgetLimit::ToolCalls,
        BudgetLimit::InputTokens,
        BudgetLimit::OutputTokens,
        BudgetLimit::TotalTokens,
        BudgetLimit::Cost,
        BudgetLimit::WallTime,
    ];

    /// The limit's name in stop reasons: `input_tokens`, `output_tokens`, `total_tokens`,
    /// `cost`, `model_calls`, `tool_calls` or `wall_time`.
    pub fn name(self) -> &'static str {
        match self {
            BudgetLimit::InputTokens => "input_tokens",
            BudgetLimit::OutputTokens => "output_tokens",
            BudgetLimit::TotalTokens => "total_tokens",
            BudgetLimit::Cost => "cost",
            BudgetLimit::ModelCalls => "model_calls",
            BudgetLimit::ToolCalls => "tool_calls",
            BudgetLimit::WallTime => "wall_time",
        }
    }
}

impl fmt::Display for BudgetLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BudgetLimit {
    type Err = ();

    /// Reads a name written by [`BudgetLimit::name`].
    fn from_str(name: &str) -> Result<Self, ()> {
        BudgetLimit::ALL
            .into_iter()
            .find(|limit| limit.name() == name)
            .ok_or(())
    }
}

/// A run went past a [`Budget`](super::Budget) limit: the run was stopped with this as the
/// typed cause of its [`StopReason`](crate::agent::StopReason).
///
/// The reason's text is this value's `Display`:
///
/// ```text
/// budget exceeded: <limit> used <used> of <max>
/// ```
///
/// where `<limit>` is a [`BudgetLimit::name`]. Read the value back with
/// [`BudgetExceeded::from_error`] (or `PromptError::stopped_by`) rather than by matching the
/// text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetExceeded {
    /// The limit that was reached.
    pub limit: BudgetLimit,
    /// What the run had used when it was stopped: tokens, cost, calls already made, or
    /// seconds. Always at least `max`: a limit stops the next call once it is used up.
    pub used: f64,
    /// The limit in force: the configured one, or the hard one after a switch to a cheaper
    /// model.
    pub max: f64,
}

const PREFIX: &str = "budget exceeded: ";

impl BudgetExceeded {
    /// The budget stop carried by `error`, if a [`Budget`](super::Budget) stopped the run.
    /// `None` for any other error, including a budget's fail-closed stops (an unreadable
    /// budget record, a model without a price), whose reasons do not claim a limit was
    /// reached.
    pub fn from_error(error: &PromptError) -> Option<Self> {
        crate::hooks::stopped_by(error)
    }
}

impl fmt::Display for BudgetExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{PREFIX}{} used {} of {}",
            self.limit, self.used, self.max
        )
    }
}

impl std::error::Error for BudgetExceeded {}
