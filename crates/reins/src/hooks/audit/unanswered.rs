//! The tool calls of the current turn that have no outcome line yet, so that the calls a run
//! ends before answering (a hook's `stop`, a tool failure that fails the run, an invalid call)
//! still get one when the run ends.
//!
//! The calls are taken from the model's response as the log sees it at the model call's
//! outcome, under the ids the run gives them (`t<turn>c<ordinal>`, the ordinal counting the
//! response's tool calls), because a call stopped at dispatch by a hook registered before the
//! log never reaches the log otherwise.

use crate::agent::{HookContext, internal_call_id};
use crate::completion::CompletionResponse;
use serde_json::Value;
use std::collections::HashMap;

/// One log's calls awaiting an outcome line, per log (two logs in one run keep their own),
/// in the run's scratchpad.
#[derive(Default)]
struct Unanswered(HashMap<usize, Vec<Call>>);

/// A call of the current turn without an outcome line.
pub(super) struct Call {
    /// reins' id of the call.
    pub id: String,
    /// The tool the model called.
    pub tool: String,
    /// The arguments as the model sent them, kept only when the log writes arguments.
    pub args: Option<Value>,
}

/// Remembers the tool calls of `response` (the turn's model call) for the log `log`, in
/// place of the previous turn's: a new model call means every earlier call was answered.
/// The output tool's call is an answer, not a call to run, and is left out.
pub(super) fn track(ctx: &HookContext, log: usize, response: &CompletionResponse, args: bool) {
    let turn = ctx.turn();
    let output_tool = ctx.output_tool();
    let calls: Vec<Call> = response
        .tool_calls()
        .enumerate()
        .filter(|(_, call)| Some(call.name.as_str()) != output_tool)
        .map(|(ordinal, call)| Call {
            id: internal_call_id(turn, ordinal),
            tool: call.name.clone(),
            args: args.then(|| call.arguments.clone()),
        })
        .collect();
    ctx.scratchpad().update(|unanswered: &mut Unanswered| {
        if calls.is_empty() {
            unanswered.0.remove(&log);
        } else {
            unanswered.0.insert(log, calls);
        }
    });
}

/// Notes that the call `id` got its outcome line from the log `log`.
pub(super) fn answered(ctx: &HookContext, log: usize, id: &str) {
    ctx.scratchpad().update(|unanswered: &mut Unanswered| {
        if let Some(calls) = unanswered.0.get_mut(&log) {
            calls.retain(|call| call.id != id);
        }
    });
}

/// The calls the log `log` has written no outcome line for, taken.
pub(super) fn take(ctx: &HookContext, log: usize) -> Vec<Call> {
    ctx.scratchpad()
        .update(|unanswered: &mut Unanswered| unanswered.0.remove(&log))
        .unwrap_or_default()
}
