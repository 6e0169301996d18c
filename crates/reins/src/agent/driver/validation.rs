//! Checking a turn's tool calls and asking `on_invalid_tool_call` about invalid ones.

use super::{Driver, Halt, MAX_REPAIRS_PER_CALL, internal_call_id, render_args};
use crate::agent::hook::{
    InvalidToolCallAction, InvalidToolCallContext, InvalidToolCallReason, StepEventKind,
};
use crate::agent::options::UnhandledInvalidToolCall;
use crate::agent::output_spec::{OUTPUT_TOOL_NAME, OutputMode};
use crate::completion::{CompletionResponse, FinishReason};
use crate::json_depth::{READABLE_DEPTH, nests_deeper_than};
use crate::json_integers::{oversized_integer_in_json, too_large_message};
use crate::message::{AssistantContent, OneOrMany, ToolCall, ToolChoice};
use crate::run::{CallRecord, PendingCall};
use crate::tool::{ToolDefinition, ToolFailure, ToolOutcome, ToolResultExtensions};
use serde_json::Value;

/// The tool calls of a received turn, after validation.
pub(super) enum CheckedCalls {
    /// Drop the turn and ask again with this feedback.
    Retry(String),
    /// A call was skipped: every call of the turn is answered without running any.
    SkipTurn {
        recovered_content: OneOrMany<AssistantContent>,
        answered: Vec<PendingCall>,
    },
    /// The calls to run (some already answered, e.g. malformed arguments).
    Run {
        recovered: bool,
        content: Option<OneOrMany<AssistantContent>>,
        calls: Vec<PendingCall>,
        /// The calls hold no arguments yet: each is to take its own from the turn's content,
        /// in order, when the turn enters the history (see `Driver::lend_arguments`).
        arguments_deferred: bool,
    },
}

/// The most levels of objects and arrays a call's arguments may nest. A stored run holds
/// them several levels down in its record, which is read back only to a depth of
/// [`READABLE_DEPTH`]: deeper arguments would leave the run stored but never read again.
/// No tool's arguments need as many; a model that writes them is told so, as for arguments
/// that are not JSON.
pub(crate) const MAX_ARGUMENT_DEPTH: usize = 100;

const _: () = assert!(MAX_ARGUMENT_DEPTH + 20 <= READABLE_DEPTH);

/// Whether `arguments` nest deeper than [`MAX_ARGUMENT_DEPTH`].
fn nests_too_deep(arguments: &Value) -> bool {
    nests_deeper_than(arguments, MAX_ARGUMENT_DEPTH)
}

/// Keeps the arguments of `call` as their JSON text, as arguments that are not JSON are, if
/// they nest too deep to be stored: the call is then invalid (malformed arguments) and the
/// run's history holds a string, which any record holds. Says whether it did.
fn keep_readable(call: &mut ToolCall) -> bool {
    if !nests_too_deep(&call.arguments) {
        return false;
    }
    call.arguments = Value::String(render_args(&call.arguments));
    true
}

/// A call answered without running it.
pub(super) fn answered(
    call: ToolCall,
    internal_call_id: String,
    text: String,
    outcome: ToolOutcome,
) -> PendingCall {
    PendingCall {
        internal_call_id,
        call,
        result: Some(CallRecord {
            output: text,
            outcome,
            extensions: ToolResultExtensions::new(),
        }),
        suspended: None,
        started: None,
        in_doubt: false,
        starts: 0,
    }
}

impl Driver<'_> {
    /// Why `call` is invalid this turn, if it is.
    pub(super) fn invalid_reason(
        &self,
        call: &ToolCall,
        advertised: &[ToolDefinition],
        tool_choice: Option<&ToolChoice>,
    ) -> Option<InvalidToolCallReason> {
        let is_output_tool = call.name == OUTPUT_TOOL_NAME
            && self
                .output
                .is_some_and(|spec| spec.mode == OutputMode::Tool);
        if !is_output_tool && !self.tools.set.contains(&call.name) {
            return Some(InvalidToolCallReason::UnknownTool);
        }
        let advertised_now = advertised.iter().any(|tool| tool.name == call.name);
        if !advertised_now || !tool_choice.is_none_or(|choice| choice.allows(&call.name)) {
            return Some(InvalidToolCallReason::NotAllowed);
        }
        if !call.arguments.is_object() || nests_too_deep(&call.arguments) {
            return Some(InvalidToolCallReason::MalformedArguments);
        }
        None
    }

    /// Checks every tool call of the turn, asking `on_invalid_tool_call` about invalid ones.
    pub(super) async fn check_tool_calls(
        &mut self,
        response: &CompletionResponse,
        advertised: &[ToolDefinition],
        tool_choice: Option<&ToolChoice>,
    ) -> Result<CheckedCalls, Halt> {
        let turn = self.state.turn;
        // The usual turn: every call valid, and the turn's content kept as received. Unless
        // the run is durable (its checkpoints store the history while calls run) or answers
        // with structured output (which reads the calls first), a call's arguments are not
        // copied: the pending call borrows them from the history while it runs.
        let all_valid = response
            .tool_calls()
            .all(|call| self.invalid_reason(call, advertised, tool_choice).is_none());
        if all_valid {
            let arguments_deferred = self.durable.is_none() && self.output.is_none();
            // The last turn's list, emptied, holds this turn's calls: no allocation a turn.
            let mut calls = std::mem::take(&mut self.spare_calls);
            calls.extend(
                response
                    .tool_calls()
                    .enumerate()
                    .map(|(ordinal, call)| PendingCall {
                        internal_call_id: internal_call_id(turn, ordinal),
                        call: ToolCall {
                            id: call.id.clone(),
                            name: call.name.clone(),
                            arguments: if arguments_deferred {
                                Value::Null
                            } else {
                                call.arguments.clone()
                            },
                        },
                        result: None,
                        suspended: None,
                        started: None,
                        in_doubt: false,
                        starts: 0,
                    }),
            );
            return Ok(CheckedCalls::Run {
                recovered: false,
                content: None,
                calls,
                arguments_deferred,
            });
        }
        let mut changed = false;
        let mut recovered = false;
        let mut kept: Vec<AssistantContent> = Vec::with_capacity(response.content.len());
        let mut calls: Vec<PendingCall> = Vec::new();
        let mut ordinal = 0;
        for part in response.content.iter() {
            let AssistantContent::ToolCall(call) = part else {
                kept.push(part.clone());
                continue;
            };
            let internal_id = internal_call_id(turn, ordinal);
            ordinal += 1;
            let mut call = call.clone();
            let too_deep = keep_readable(&mut call);
            changed |= too_deep;
            let mut preset = None;
            let mut repairs = 0;
            let mut dropped = false;
            while let Some(reason) = self.invalid_reason(&call, advertised, tool_choice) {
                let decision = if self.observes(StepEventKind::InvalidToolCall) {
                    let context = InvalidToolCallContext {
                        tool_name: call.name.clone(),
                        tool_call_id: call.id.clone(),
                        args: render_args(&call.arguments),
                        available_tools: advertised
                            .iter()
                            .filter(|tool| tool_choice.is_none_or(|c| c.allows(&tool.name)))
                            .map(|tool| tool.name.clone())
                            .collect(),
                        reason,
                        history: self.state.history.clone(),
                    };
                    self.hooks.invalid_tool_call(self.ctx, &context).await?
                } else {
                    None
                };
                let invalid = || Halt::InvalidCall {
                    tool_name: call.name.clone(),
                    reason,
                };
                match decision {
                    None if reason == InvalidToolCallReason::MalformedArguments => {
                        // A call the token limit cut off is unparsable for that reason:
                        // the model is told so, so it can write a shorter call.
                        let cut_off = if response.finish_reason == Some(FinishReason::Length) {
                            " (the answer was cut off at its output token limit)"
                        } else {
                            ""
                        };
                        // Only JSON refused for a huge integer alone: text broken otherwise
                        // (cut off, say) is answered with why, whatever digits it holds.
                        let too_large = call.arguments.as_str().and_then(oversized_integer_in_json);
                        let message = if too_deep {
                            format!(
                                "the arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels of \
                                 objects and arrays; write them with fewer levels"
                            )
                        } else if let Some(literal) = too_large {
                            too_large_message(literal)
                        } else {
                            format!(
                                "the arguments must be a JSON object{cut_off}; received: {}",
                                render_args(&call.arguments)
                            )
                        };
                        let failure = ToolFailure::InvalidArguments { message };
                        preset = Some((failure.to_string(), ToolOutcome::Failed(failure)));
                        break;
                    }
                    None if self.options.unhandled_invalid_tool_call
                        == UnhandledInvalidToolCall::Ignore =>
                    {
                        dropped = true;
                        break;
                    }
                    None | Some(InvalidToolCallAction::Fail) => return Err(invalid()),
                    Some(InvalidToolCallAction::Stop(reason)) => return Err(Halt::Stop(reason)),
                    Some(InvalidToolCallAction::Retry(feedback)) => {
                        if self.state.invalid_tool_call_retries
                            >= self.options.max_invalid_tool_call_retries
                        {
                            return Err(invalid());
                        }
                        self.state.invalid_tool_call_retries += 1;
                        return Ok(CheckedCalls::Retry(feedback));
                    }
                    Some(InvalidToolCallAction::Repair(name)) => {
                        // Renaming cannot fix arguments, and a chain of renames must end.
                        if reason == InvalidToolCallReason::MalformedArguments
                            || repairs >= MAX_REPAIRS_PER_CALL
                        {
                            return Err(invalid());
                        }
                        repairs += 1;
                        call.name = name;
                        changed = true;
                        recovered = true;
                    }
                    Some(InvalidToolCallAction::Skip(reason)) => {
                        return Ok(self.skip_turn(response, &call, reason));
                    }
                }
            }
            if dropped {
                changed = true;
                continue;
            }
            kept.push(AssistantContent::ToolCall(call.clone()));
            calls.push(match preset {
                Some((text, outcome)) => answered(call, internal_id, text, outcome),
                None => PendingCall {
                    internal_call_id: internal_id,
                    call,
                    result: None,
                    suspended: None,
                    started: None,
                    in_doubt: false,
                    starts: 0,
                },
            });
        }
        let content = if changed {
            Some(
                OneOrMany::many(kept).unwrap_or_else(|| OneOrMany::one(AssistantContent::text(""))),
            )
        } else {
            None
        };
        Ok(CheckedCalls::Run {
            arguments_deferred: false,
            recovered,
            content,
            calls,
        })
    }

    /// Answers the skipped call with `reason` and every other call as not executed.
    fn skip_turn(
        &self,
        response: &CompletionResponse,
        skipped: &ToolCall,
        reason: String,
    ) -> CheckedCalls {
        let turn = self.state.turn;
        let mut answers = Vec::new();
        let mut content = Vec::with_capacity(response.content.len());
        for part in response.content.iter() {
            let AssistantContent::ToolCall(call) = part else {
                content.push(part.clone());
                continue;
            };
            let call = if call.id == skipped.id {
                skipped.clone()
            } else {
                let mut call = call.clone();
                keep_readable(&mut call);
                call
            };
            let text = if call.id == skipped.id {
                reason.clone()
            } else {
                format!(
                    "Not executed: the call to `{}` in the same turn was skipped.",
                    skipped.name
                )
            };
            content.push(AssistantContent::ToolCall(call.clone()));
            let internal_id = internal_call_id(turn, answers.len());
            let outcome = ToolOutcome::Skipped {
                reason: text.clone(),
            };
            answers.push(answered(call, internal_id, text, outcome));
        }
        CheckedCalls::SkipTurn {
            recovered_content: OneOrMany::many(content)
                .unwrap_or_else(|| OneOrMany::one(AssistantContent::text(""))),
            answered: answers,
        }
    }
}
