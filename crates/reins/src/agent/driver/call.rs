//! One tool call's path: dispatch → execute → outcome ([`CallEnv::answer`]), with what it
//! needs from the run borrowed, so several calls of a turn can run while the driver records
//! results.

use super::{Halt, trace};
use crate::agent::StopReason;
use crate::agent::hook::{
    ArgsText, CallParts, DispatchTarget, HookContext, HookStack, Stacked, StepEventKind,
    ToolCallView, ToolDispatchDecision, ToolResult,
};
use crate::agent::options::{RunOptions, ToolErrorPolicy};
use crate::completion::Usage;
use crate::message::ToolCall;
use crate::run::{CallRecord, PendingCall, ToolDecision};
use crate::store::StoreError;
use crate::tool::{
    ToolCallContext, ToolExecution, ToolOutcome, ToolOutput, ToolResultExtensions, ToolSet,
};
use futures::channel::{mpsc, oneshot};
use serde_json::Value;
use std::future::Future;

/// What answering one call gave.
pub(super) enum CallOutcome {
    /// The call has its result, and the tokens its tool counted in
    /// ([`ToolCallContext::add_usage`]).
    Done(CallRecord, Usage),
    /// A hook suspended the call.
    Suspend(String),
}

/// A call about to execute asks the driver to journal its start; the tool runs once the
/// driver's checkpoint has committed and `committed` fires.
pub(super) struct StartRequest {
    pub index: usize,
    pub arguments: Value,
    pub committed: oneshot::Sender<()>,
}

/// What executing a call needs; copied into each call's future so the run's state stays free
/// to record results while other calls still run.
#[derive(Clone, Copy)]
pub(super) struct CallEnv<'a> {
    /// The tools of the turn whose calls these are.
    pub tools: &'a ToolSet,
    pub hooks: &'a HookStack,
    pub ctx: &'a HookContext,
    pub options: &'a RunOptions,
    pub run_id: &'a str,
    /// Where a durable run's calls ask for their start to be journaled; `None` without a
    /// store.
    pub starts: Option<&'a mpsc::UnboundedSender<StartRequest>>,
}

/// What one call does instead of, or before, the outcome hooks.
enum Step {
    /// Execute the tool with these arguments (`None`: the model's), and their text when a
    /// hook had it written. (Boxed: a JSON value's tag byte would become the step's own, and
    /// the step would be copied byte-wise on the way to the execution.)
    Run(Option<Box<(Value, Option<String>)>>),
    /// Record this result without executing the tool. (Boxed, as is a suspension's reason:
    /// the step stays in the run's future while the tool runs.)
    Answer(Box<(String, ToolOutcome)>),
    Stop(StopReason),
    Suspend(Box<str>),
}

impl Step {
    fn answer(text: String, outcome: ToolOutcome) -> Self {
        Step::Answer(Box::new((text, outcome)))
    }
}

impl CallEnv<'_> {
    fn observes(&self, kind: StepEventKind) -> bool {
        self.hooks.observes(kind)
    }

    /// One call's dispatch → execute → outcome path. A decision given on resume replaces the
    /// dispatch hooks for that call; a call that started before a crash and is executed
    /// again (its tool declares that safe, or a decision said so) runs with the arguments it
    /// started with, without asking the dispatch hooks again.
    // An `async move` block rather than an `async fn`, which would keep its arguments twice
    // in the run's future.
    #[allow(clippy::manual_async_fn)]
    pub(super) fn answer<'s>(
        &'s self,
        index: usize,
        pending: &'s PendingCall,
        decision: Option<&'s ToolDecision>,
    ) -> impl Future<Output = Result<CallOutcome, Halt>> + Send + 's {
        async move {
            let call = &pending.call;
            let internal_id = pending.internal_call_id.as_str();
            // Who listens is read once for the call: what a stack learns of a hook's answers to
            // one kind says nothing of the other.
            let dispatch_observed = self.observes(StepEventKind::ToolDispatch);
            let outcome_observed = self.observes(StepEventKind::ToolOutcome);
            let observed = dispatch_observed || outcome_observed;
            // The arguments' text, for hooks: written only when one reads it, or for the result
            // an outcome hook sees.
            let args_text = ArgsText::of(&call.arguments);
            // Recorded on the call's span once the hooks or the decision settle them.
            let arguments = trace::ToolArguments::asked(&call.arguments);
            if let Some(decision) = decision {
                trace::record_resume_decision(decision);
            }
            // One lookup serves what the tool says about itself (for hooks) and its execution.
            let tool = self.tools.lookup(&call.name);
            let (traits, origin) = if observed {
                (tool.traits(), tool.origin())
            } else {
                (None, None)
            };
            let step = match decision {
                Some(ToolDecision::Approve | ToolDecision::Rerun) => {
                    Step::Run(pending.started.clone().map(|args| Box::new((args, None))))
                }
                // As a hook's rewrite: no tool runs with arguments that are not an object.
                Some(ToolDecision::ApproveWithArgs { args }) if !args.is_object() => {
                    let reason = "not run: the decision's replacement arguments are not a JSON \
                                  object, which no tool takes";
                    Step::answer(
                        reason.to_owned(),
                        ToolOutcome::Skipped {
                            reason: reason.to_owned(),
                        },
                    )
                }
                Some(ToolDecision::ApproveWithArgs { args }) => {
                    Step::Run(Some(Box::new((args.clone(), None))))
                }
                Some(ToolDecision::Deny { message }) => Step::answer(
                    message.clone(),
                    ToolOutcome::Denied {
                        report: message.clone(),
                    },
                ),
                Some(ToolDecision::Skip { message }) => Step::answer(
                    message.clone(),
                    ToolOutcome::Skipped {
                        reason: message.clone(),
                    },
                ),
                Some(ToolDecision::SupplyResult { output }) => {
                    Step::answer(output.clone(), ToolOutcome::Success)
                }
                // Started before a crash, and its tool declares a second execution safe.
                None if pending.started.is_some() => {
                    Step::Run(pending.started.clone().map(|args| Box::new((args, None))))
                }
                None if dispatch_observed => {
                    let target = DispatchTarget::Tool(ToolCallView {
                        name: &call.name,
                        tool_call_id: &call.id,
                        internal_call_id: internal_id,
                        args: &args_text,
                        traits,
                        origin,
                        parameters: tool.parameters(),
                    });
                    let dispatched = self.hooks.dispatch_tool(self.ctx, &target).await?;
                    trace::record_dispatch(&dispatched);
                    match dispatched {
                        ToolDispatchDecision::Proceed(rewritten) => Step::Run(rewritten),
                        ToolDispatchDecision::Skip(reason) => {
                            Step::answer(reason.clone(), ToolOutcome::Skipped { reason })
                        }
                        ToolDispatchDecision::Deny(report) => {
                            Step::answer(report.clone(), ToolOutcome::Denied { report })
                        }
                        ToolDispatchDecision::Stop(reason) => Step::Stop(reason),
                        ToolDispatchDecision::Suspend(reason) => Step::Suspend(reason.into()),
                    }
                }
                None => Step::Run(None),
            };
            arguments.settle(match &step {
                Step::Run(Some(run)) => &run.0,
                _ => &call.arguments,
            });
            let (execution, usage, mut rewritten) = match step {
                Step::Run(rewritten) => {
                    let args = rewritten
                        .as_ref()
                        .map_or(&call.arguments, |rewritten| &rewritten.0);
                    self.journal_start(index, args).await?;
                    let context = ToolCallContext::new(self.run_id, internal_id, &call.id);
                    let (execution, usage) = tool.call(&call.name, args, context).await;
                    (execution, usage, rewritten)
                }
                Step::Answer(answer) => {
                    let (text, outcome) = *answer;
                    (
                        ToolExecution {
                            output: ToolOutput::Text(text),
                            outcome,
                            extensions: ToolResultExtensions::new(),
                        },
                        Usage::default(),
                        None,
                    )
                }
                Step::Stop(reason) => return Err(Halt::Stop(reason)),
                Step::Suspend(reason) => return Ok(CallOutcome::Suspend(reason.into())),
            };
            if !outcome_observed {
                // Nobody looks at the result: no copy of the call's names for a hook.
                trace::record_tool_result(&execution.output, &execution.outcome);
                return self.finish(
                    call,
                    execution.output,
                    execution.outcome,
                    execution.extensions,
                    usage,
                );
            }
            // The result borrows the call's names, ids and arguments from the pending call, and its
            // output and outcome from the execution: nothing is copied for the outcome hooks. (The
            // rewritten arguments stay boxed while the hooks run.)
            let args = match &mut rewritten {
                Some(rewritten) => ArgsText::with_text(&rewritten.0, rewritten.1.take()),
                None => args_text,
            };
            let parts = CallParts {
                tool_name: &call.name,
                tool_call_id: &call.id,
                internal_call_id: internal_id,
                args: &args,
                outcome: &execution.outcome,
                extensions: &execution.extensions,
                traits,
                origin,
                usage,
            };
            let mut result = ToolResult::lent(&parts, &execution.output);
            let answered = self.hooks.tool_outcome(self.ctx, &mut result).await;
            // A rewrite, or the text a hook had written (the output is not written twice),
            // and the outcome as a hook masked it: what the run keeps, streams and traces.
            let (shown, masked) = result.into_shown();
            if let Stacked::Stop(reason) = answered? {
                return Err(Halt::Stop(reason));
            }
            let ToolExecution {
                output,
                outcome,
                extensions,
            } = execution;
            let output = shown.unwrap_or(output);
            let outcome = masked.unwrap_or(outcome);
            trace::record_tool_result(&output, &outcome);
            self.finish(call, output, outcome, extensions, usage)
        }
    }

    /// The call's record, or the run's failure when tool errors fail the run.
    fn finish(
        &self,
        call: &ToolCall,
        output: ToolOutput,
        outcome: ToolOutcome,
        extensions: ToolResultExtensions,
        usage: Usage,
    ) -> Result<CallOutcome, Halt> {
        if self.options.tool_errors == ToolErrorPolicy::Fail {
            if let ToolOutcome::Failed(failure) = &outcome {
                return Err(Halt::Tool {
                    tool_name: call.name.clone(),
                    failure: failure.clone(),
                });
            }
        }
        Ok(CallOutcome::Done(
            CallRecord {
                output: output.into_text(),
                outcome,
                extensions,
            },
            usage,
        ))
    }

    /// In a durable run, waits until the driver has checkpointed that the call at `index`
    /// starts executing with `arguments`.
    async fn journal_start(&self, index: usize, arguments: &Value) -> Result<(), Halt> {
        let Some(starts) = self.starts else {
            return Ok(());
        };
        let (committed, is_committed) = oneshot::channel();
        let request = StartRequest {
            index,
            arguments: arguments.clone(),
            committed,
        };
        let gone = || {
            Halt::Store(StoreError::Backend(
                "the run stopped before the call's start was journaled".to_owned(),
            ))
        };
        starts.unbounded_send(request).map_err(|_| gone())?;
        is_committed.await.map_err(|_| gone())
    }
}
