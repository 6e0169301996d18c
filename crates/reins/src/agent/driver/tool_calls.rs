//! Answering a turn's tool calls: dispatch → execute → outcome for each, up to
//! `tool_concurrency` at once, each result recorded in the run's state as it arrives.

use super::{Driver, Halt, RunOptions, render_args, trace};
use crate::agent::builder::AgentConfig;
use crate::agent::hook::{
    HookContext, HookStack, Stacked, StepEventKind, ToolCallView, ToolDispatchDecision, ToolResult,
};
use crate::agent::prompt::ToolErrorPolicy;
use crate::agent::run::{CallRecord, PendingCall, ToolDecision};
use crate::agent::stream::StreamItem;
use crate::message::Message;
use crate::tool::{ToolCallContext, ToolExecution, ToolOutcome, ToolOutput, ToolResultExtensions};
use futures::StreamExt;
use tracing::Instrument;

/// What answering one call gave.
enum CallOutcome {
    /// The call has its result.
    Done(CallRecord),
    /// A hook suspended the call.
    Suspend(String),
}

/// What executing a call needs; copied into each call's future so the run's state stays free
/// to record results while other calls still run.
#[derive(Clone, Copy)]
struct CallEnv<'a> {
    config: &'a AgentConfig,
    hooks: &'a HookStack,
    ctx: &'a HookContext,
    options: &'a RunOptions,
    run_id: &'a str,
}

impl Driver<'_> {
    /// Answers every pending call that has no result yet (and, for a suspended call, has a
    /// decision now), then commits the results to the history in call order. Ends the run as
    /// suspended when a call waits for a decision.
    pub(super) async fn answer_pending_calls(&mut self) -> Result<(), Halt> {
        let run_id = self.state.run_id.clone();
        let env = CallEnv {
            config: self.config,
            hooks: self.hooks,
            ctx: self.ctx,
            options: self.options,
            run_id: &run_id,
        };
        let work: Vec<(usize, PendingCall, Option<ToolDecision>)> = self
            .state
            .pending_calls
            .iter()
            .enumerate()
            .filter(|(_, pending)| pending.result.is_none())
            .filter_map(|(index, pending)| {
                let decision = self
                    .decisions
                    .iter()
                    .rev()
                    .find(|(id, _)| *id == pending.internal_call_id)
                    .map(|(_, decision)| decision.clone());
                // A suspended call waits until a decision arrives.
                (pending.suspended.is_none() || decision.is_some())
                    .then(|| (index, pending.clone(), decision))
            })
            .collect();
        if !work.is_empty() {
            let mut running = futures::stream::iter(work.into_iter().map(
                |(index, pending, decision)| async move {
                    let span = trace::tool_span(&pending, env.run_id);
                    let answer = env.answer(&pending, decision.as_ref());
                    (index, answer.instrument(span).await)
                },
            ))
            .buffer_unordered(self.options.tool_concurrency.max(1));
            while let Some((index, outcome)) = running.next().await {
                let outcome = outcome?;
                let Some(pending) = self.state.pending_calls.get_mut(index) else {
                    continue;
                };
                match outcome {
                    CallOutcome::Done(record) => {
                        let journaled = self.durable.is_some().then(|| {
                            let payload = serde_json::to_value(&record).unwrap_or_default();
                            (pending.effect_id(&run_id), payload)
                        });
                        pending.result = Some(record);
                        pending.suspended = None;
                        // The result is checkpointed before anything else happens, so a
                        // resumed run replays it instead of calling the tool again.
                        if let Some((effect_id, payload)) = journaled {
                            self.journal(effect_id, "tool_call", payload);
                            self.checkpoint(false).await?;
                        }
                    }
                    CallOutcome::Suspend(reason) => pending.suspended = Some(reason),
                }
            }
        }
        if self
            .state
            .pending_calls
            .iter()
            .any(PendingCall::awaits_decision)
        {
            return Err(Halt::Suspended);
        }
        for pending in std::mem::take(&mut self.state.pending_calls) {
            let Some(record) = pending.result else {
                continue;
            };
            let PendingCall { call, .. } = pending;
            let text = record.output;
            self.emit(|| StreamItem::ToolResult {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                result: text.clone(),
                outcome: record.outcome,
            });
            self.state
                .history
                .push(Message::tool_result(call.id, call.name, text));
        }
        Ok(())
    }
}

impl CallEnv<'_> {
    fn observes(&self, kind: StepEventKind) -> bool {
        self.hooks.observes(kind)
    }

    /// One call's dispatch → execute → outcome path. A decision given on resume replaces the
    /// dispatch hooks for that call.
    async fn answer(
        &self,
        pending: &PendingCall,
        decision: Option<&ToolDecision>,
    ) -> Result<CallOutcome, Halt> {
        let call = &pending.call;
        let internal_id = pending.internal_call_id.as_str();
        let observed =
            self.observes(StepEventKind::ToolDispatch) || self.observes(StepEventKind::ToolOutcome);
        let args_text = if observed {
            render_args(&call.arguments)
        } else {
            String::new()
        };
        let dispatch = match decision {
            Some(ToolDecision::Approve) => ToolDispatchDecision::Proceed(None),
            Some(ToolDecision::ApproveWithArgs { args }) => {
                ToolDispatchDecision::Proceed(Some(args.clone()))
            }
            Some(ToolDecision::Deny { message }) => ToolDispatchDecision::Deny(message.clone()),
            None if self.observes(StepEventKind::ToolDispatch) => {
                let view = ToolCallView {
                    name: &call.name,
                    tool_call_id: &call.id,
                    internal_call_id: internal_id,
                    args: &args_text,
                };
                self.hooks.dispatch_tool(self.ctx, view).await?
            }
            None => ToolDispatchDecision::Proceed(None),
        };
        trace::record_dispatch(&dispatch, decision.is_some());
        let preset = |text: String, outcome: ToolOutcome| ToolExecution {
            output: ToolOutput::Text(text),
            outcome,
            extensions: ToolResultExtensions::new(),
        };
        let (execution, args_text) = match dispatch {
            ToolDispatchDecision::Proceed(rewritten) => {
                let args = rewritten.as_ref().unwrap_or(&call.arguments);
                let context = ToolCallContext::new(self.run_id, internal_id, &call.id);
                let execution = self.config.tools.call(&call.name, args, context).await;
                let args_text = match rewritten {
                    Some(args) if observed => args.to_string(),
                    _ => args_text,
                };
                (execution, args_text)
            }
            ToolDispatchDecision::Skip(reason) => (
                preset(reason.clone(), ToolOutcome::Skipped { reason }),
                args_text,
            ),
            ToolDispatchDecision::Deny(report) => (
                preset(report.clone(), ToolOutcome::Denied { report }),
                args_text,
            ),
            ToolDispatchDecision::Stop(reason) => return Err(Halt::Stop(reason)),
            ToolDispatchDecision::Suspend(reason) => return Ok(CallOutcome::Suspend(reason)),
        };
        let mut result = ToolResult {
            tool_name: call.name.clone(),
            tool_call_id: call.id.clone(),
            internal_call_id: internal_id.to_owned(),
            args: args_text,
            output: execution.output,
            outcome: execution.outcome,
            extensions: execution.extensions,
        };
        if self.observes(StepEventKind::ToolOutcome) {
            if let Stacked::Stop(reason) = self.hooks.tool_outcome(self.ctx, &mut result).await? {
                return Err(Halt::Stop(reason));
            }
        }
        trace::record_tool_result(&result);
        if self.options.tool_errors == ToolErrorPolicy::Fail {
            if let ToolOutcome::Failed(failure) = &result.outcome {
                return Err(Halt::Tool {
                    tool_name: call.name.clone(),
                    failure: failure.clone(),
                });
            }
        }
        Ok(CallOutcome::Done(CallRecord {
            output: result.output.render(),
            outcome: result.outcome,
            extensions: result.extensions,
        }))
    }
}
