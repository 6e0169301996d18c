//! Reading a typed answer out of an accepted turn, and deciding how the run asks for one.

use super::validation::answered;
use super::{Driver, Halt};
use crate::agent::builder::AgentConfig;
use crate::agent::error::PromptError;
use crate::agent::output_spec::{OUTPUT_TOOL_NAME, OutputMode, OutputSpec};
use crate::completion::CompletionResponse;
use crate::run::PendingCall;
use crate::tool::ToolOutcome;

impl Driver<'_> {
    pub(super) fn structured_answer(
        &self,
        spec: &OutputSpec,
        response: &CompletionResponse,
        calls: &[PendingCall],
    ) -> StructuredStep {
        match spec.mode {
            OutputMode::Native => {
                if !calls.is_empty() {
                    return StructuredStep::NotFinal;
                }
                match spec.read_text(&response.text()) {
                    Ok(value) => StructuredStep::Done(value.to_string()),
                    Err(problem) => StructuredStep::Feedback {
                        feedback: format!(
                            "Your answer must be JSON matching the required schema: {problem}. \
                             Answer again with only the JSON."
                        ),
                        problem: format!("it is not JSON matching the schema: {problem}"),
                    },
                }
            }
            _ => {
                // The first answer that reads as the type is the run's, wherever it is among
                // the turn's output calls; none: the first one's problem is the feedback.
                let mut first_problem = None;
                for planned in calls.iter().filter(|p| p.call.name == OUTPUT_TOOL_NAME) {
                    // A call already answered as invalid (arguments not JSON, or nested too
                    // deep, kept as text): its answer says what is wrong better than a parse
                    // of that text would.
                    if let Some(answered) = &planned.result {
                        first_problem.get_or_insert_with(|| answered.output.clone());
                        continue;
                    }
                    match spec.read_tool_args(&planned.call.arguments) {
                        Ok(value) => return StructuredStep::Done(value.to_string()),
                        Err(problem) => {
                            first_problem.get_or_insert(problem);
                        }
                    }
                }
                match first_problem {
                    Some(problem) => StructuredStep::AnswerCalls {
                        answered: answer_calls(
                            calls,
                            &format!("The answer does not match the required schema: {problem}"),
                        ),
                        problem: format!("it does not match the schema: {problem}"),
                    },
                    None if calls.is_empty() => StructuredStep::Feedback {
                        feedback: format!(
                            "Give your final answer by calling the `{OUTPUT_TOOL_NAME}` tool."
                        ),
                        problem: format!("it is text, not a call of the `{OUTPUT_TOOL_NAME}` tool"),
                    },
                    None => StructuredStep::NotFinal,
                }
            }
        }
    }

    /// Refuses `action` for a turn that calls tools, but for a typed answer given through
    /// the output tool: it is the run's answer, none of the turn's calls has run, and the
    /// model may give it again.
    pub(super) fn reject_retry_with_calls(
        &self,
        calls: &[PendingCall],
        action: &str,
    ) -> Result<(), Halt> {
        let gives_typed_answer = self
            .ctx
            .output_tool()
            .is_some_and(|output| calls.iter().any(|pending| pending.call.name == output));
        if calls.is_empty() || gives_typed_answer {
            Ok(())
        } else {
            Err(Halt::Rejected(format!(
                "`{action}` was returned for turn {} which calls tools; retrying a turn with \
                 tool calls is rejected (steer the calls with on_dispatch instead)",
                self.state.turn
            )))
        }
    }
}

/// Answers the output-tool call with `feedback` (what was wrong with the answer), and the
/// turn's other calls as not run.
pub(super) fn answer_calls(calls: &[PendingCall], feedback: &str) -> Vec<PendingCall> {
    calls
        .iter()
        .map(|pending| {
            let text = if pending.call.name == OUTPUT_TOOL_NAME {
                feedback.to_owned()
            } else {
                "Not executed: the final answer was invalid.".to_owned()
            };
            let outcome = ToolOutcome::Skipped {
                reason: text.clone(),
            };
            answered(
                pending.call.clone(),
                pending.internal_call_id.clone(),
                text,
                outcome,
            )
        })
        .collect()
}

/// What structured output makes of an accepted turn. A refused answer's `problem` says what
/// was wrong with it, for the run's error should no model call be left to answer again.
pub(super) enum StructuredStep {
    /// The typed answer, as JSON text.
    Done(String),
    /// Tell the model how to answer (`feedback`, as a user message), and ask again.
    Feedback { feedback: String, problem: String },
    /// The output tool was called with a bad answer: the turn's calls, answered with it.
    AnswerCalls {
        answered: Vec<PendingCall>,
        problem: String,
    },
    /// The turn is not the final answer: run its tools.
    NotFinal,
}

/// Decides the structured-output mode from the default model's abilities.
pub(super) fn resolve_output(
    config: &AgentConfig,
    output: Option<&mut OutputSpec>,
) -> Result<(), PromptError> {
    let Some(spec) = output else {
        return Ok(());
    };
    let native = config.models.default_model().supports_native_output();
    spec.mode = match (spec.mode, native) {
        (OutputMode::Auto, true) => OutputMode::Native,
        (OutputMode::Auto, false) => OutputMode::Tool,
        (OutputMode::Native, false) => {
            return Err(PromptError::InvalidConfiguration(
                "native structured output was requested, but the default model does not \
                 support it; use OutputMode::Tool or OutputMode::Auto"
                    .to_owned(),
            ));
        }
        (mode, _) => mode,
    };
    Ok(())
}
