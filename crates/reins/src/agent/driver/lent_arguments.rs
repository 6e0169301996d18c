//! A turn's tool-call arguments, held once while the turn's calls run.
//!
//! The history's assistant message and the turn's pending calls both describe each call. The
//! arguments are the costly part to copy (a JSON object tree), so in the usual turn the
//! pending calls take them from the message that entered the history, and give them back when
//! the calls are answered. Whenever the run's state can be seen from outside (the run ends,
//! is suspended or fails), the message gets its arguments back first. A durable run never
//! lends: its checkpoints store the history while calls run.

use super::Driver;
use crate::message::{AssistantContent, Message, OneOrMany, ToolCall};
use crate::run::PendingCall;

impl Driver<'_> {
    /// Moves each call's arguments from `content` (the turn about to enter the history) into
    /// its pending call, in order, and remembers the message lends them.
    pub(super) fn lend_arguments(
        &mut self,
        content: &mut OneOrMany<AssistantContent>,
        calls: &mut [PendingCall],
    ) {
        for (part, pending) in tool_calls_mut(content).zip(calls.iter_mut()) {
            pending.call.arguments = std::mem::take(&mut part.arguments);
        }
        self.lent_arguments = Some(self.state.history.len());
    }

    /// Gives the lent arguments back to the history's message: moved when `consume` (the
    /// pending calls are about to be dropped), else copied (they stay in the run's state).
    pub(super) fn return_arguments(&mut self, consume: bool) {
        let Some(at) = self.lent_arguments.take() else {
            return;
        };
        let Some(Message::Assistant { content }) = self.state.history.get_mut(at) else {
            return;
        };
        for (part, pending) in tool_calls_mut(content).zip(self.state.pending_calls.iter_mut()) {
            part.arguments = if consume {
                std::mem::take(&mut pending.call.arguments)
            } else {
                pending.call.arguments.clone()
            };
        }
    }
}

/// The tool calls of a turn's content, in order, to change in place.
fn tool_calls_mut(
    content: &mut OneOrMany<AssistantContent>,
) -> impl Iterator<Item = &mut ToolCall> {
    content.iter_mut().filter_map(|part| match part {
        AssistantContent::ToolCall(call) => Some(call),
        _ => None,
    })
}
