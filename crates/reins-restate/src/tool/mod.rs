//! [`JournaledTool`]: a tool whose every call is one journaled step, named by its effect id.

mod recorded;

use crate::steps::Steps;
use crate::wire::PendingDecision;
use futures::FutureExt;
use recorded::{JournaledCall, RecordedCall, replayed};
use reins::agent::ToolDecision;
use reins::hooks::redaction::Redaction;
use reins::tool::{
    RetrySafety, Tool, ToolAttachments, ToolCallContext, ToolFailure, ToolOutcome, ToolTraits,
};
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

/// A tool whose calls are journaled steps on Restate (and plain calls when embedded).
///
/// The step is named by the call's effect id
/// ([`ToolCallContext::effect_id`](reins::tool::ToolCallContext::effect_id),
/// `<run id>/<internal call id>`), which is the same on every replay; the tool still reads it
/// from [`ToolCallContext::current`] as an idempotency key. A journaled call's output, error,
/// timeout or panic is replayed as recorded, and so is what the tool attached to its call:
/// the tokens it counted in the run ([`ToolCallContext::add_usage`]), counted once whether
/// the invocation is replayed or not, the metadata for hooks
/// ([`ToolCallContext::set_extension`]) and an answer in place of its own
/// ([`ToolCallContext::answer_skipped`], [`ToolCallContext::answer_denied`]), seen alike on
/// every replay.
///
/// Arguments that do not read as the inner tool's answer the call with
/// [`ToolFailure::InvalidArguments`] (what hooks see; the model reads `invalid arguments: at
/// ...`), as a run of the tool unwrapped does. A result whose entry would pass
/// [`MAX_STEP_BYTES`](crate::MAX_STEP_BYTES) is not journaled: the call fails with its size
/// and the limit, and what the tool attached is kept (its usage always).
///
/// On Restate the tool's [`timeout`](Tool::timeout) is applied inside the step (so a timeout
/// is journaled like any failure); it reaches the model as the tool's error text. What the
/// tool declares about itself (traits, origin, retry safety) is the tool's own.
#[derive(Debug, Clone)]
pub struct JournaledTool<T> {
    inner: T,
    steps: Steps,
}

impl<T> JournaledTool<T> {
    /// Wraps `inner`; prefer [`Steps::tool`].
    pub fn new(inner: T, steps: Steps) -> Self {
        JournaledTool { inner, steps }
    }
}

impl Steps {
    /// Wraps a tool so that each of its calls is one journaled step.
    pub fn tool<T: Tool>(&self, tool: T) -> JournaledTool<T> {
        JournaledTool::new(tool, self.clone())
    }

    /// Masks what `redaction` masks in every tool result these steps journal, and returns it
    /// for the agent's hooks: `.add_hook(steps.redaction(Redaction::new()))`.
    ///
    /// Why: a tool call's step journals the tool's result before any hook runs, so a
    /// [`Redaction`] hook alone masks what the model sees while Restate's journal (readable
    /// through its admin API) keeps the secret. Registered here, the step journals the text the
    /// hook would show the model instead
    /// ([`Redaction::redact_tool_result`]): the output, rendered as the model reads it, when
    /// anything in it is masked, and an error's text. A waiting call's arguments and a
    /// decision's text are kept as given (the crate docs, "Secrets in the journal", say why).
    /// Embedded, nothing is journaled and the
    /// hook alone masks, as usual. Call it from the function that builds the agent; it may be
    /// called more than once (each redaction masks in turn).
    pub fn redaction(&self, redaction: Redaction) -> Redaction {
        self.redactions().push(redaction.clone());
        redaction
    }
}

/// Why a call in doubt waits, as listed in the run's pending calls.
const IN_DOUBT_REASON: &str = "in doubt: the call started on a worker that stopped before its \
     result was journaled, and its tool does not declare that running it again is safe";

/// What a decision about a call in doubt makes of it.
enum Resolved {
    /// Execute the tool (again) with these arguments.
    Run(Value),
    /// Answer the call without executing the tool.
    Answer(Answer),
}

/// How a decision answers a call in doubt without executing its tool.
enum Answer {
    /// The model reads this as the tool's output: a supplied result, a success.
    Supplied(String),
    /// Not run: the model reads the reason, and the call's outcome is a skip.
    Skipped(String),
    /// Not run: the model reads the report, and the call's outcome is a denial.
    Denied(String),
}

/// What `decision` about a call in doubt, started with `args`, makes of it: a decision reads
/// as it does for a stored run's call in doubt (`approve` is `rerun`, `skip` and `deny` answer
/// the call with their outcome, `supply_result` with its output as a success).
fn resolve(decision: ToolDecision, args: Value) -> Resolved {
    match decision {
        ToolDecision::Approve | ToolDecision::Rerun => Resolved::Run(args),
        ToolDecision::ApproveWithArgs { args } => Resolved::Run(args),
        ToolDecision::Skip { message } => Resolved::Answer(Answer::Skipped(message)),
        ToolDecision::SupplyResult { output } => Resolved::Answer(Answer::Supplied(output)),
        ToolDecision::Deny { message } => Resolved::Answer(Answer::Denied(message)),
    }
}

/// The call's answer for a decision that does not run the tool. Through the run loop (a call
/// context), a skip and a denial are marked on the call, so the run records them as a
/// stored run does ([`ToolOutcome::Skipped`](reins::tool::ToolOutcome::Skipped) with the
/// reason, [`ToolOutcome::Denied`](reins::tool::ToolOutcome::Denied) with the report), not as
/// the tool's success or error. Replays take the same decision from the journal (its
/// awakeable), so every replay answers alike.
fn answered(answer: Answer, context: Option<&ToolCallContext>) -> Result<Value, String> {
    match (answer, context) {
        (Answer::Supplied(output), _) => Ok(Value::String(output)),
        (Answer::Skipped(reason), Some(call)) => {
            call.answer_skipped(reason.clone());
            Ok(Value::String(reason))
        }
        (Answer::Denied(report), Some(call)) => {
            call.answer_denied(report.clone());
            Ok(Value::String(report))
        }
        // Called directly, outside a run: the closest a tool's result comes.
        (Answer::Skipped(reason), None) => Ok(Value::String(reason)),
        (Answer::Denied(report), None) => Err(report),
    }
}

impl<T: Tool> JournaledTool<T> {
    /// Runs the inner tool once, turning every way it can end into data.
    async fn execute(&self, args: Value) -> RecordedCall {
        let args = match reins::tool::read_arguments::<T::Args>(&args) {
            Ok(args) => args,
            Err(failure) => {
                return RecordedCall::Error {
                    message: refused(failure),
                };
            }
        };
        let call = AssertUnwindSafe(self.inner.call(args)).catch_unwind();
        let finished = match self.inner.timeout() {
            Some(limit) => match tokio::time::timeout(limit, call).await {
                Ok(finished) => finished,
                Err(_) => return timed_out(limit),
            },
            None => call.await,
        };
        match finished {
            Ok(Ok(output)) => match serde_json::to_value(output) {
                Ok(value) => RecordedCall::Output { value },
                Err(error) => RecordedCall::Error {
                    message: format!("the tool's output could not be serialized: {error}"),
                },
            },
            Ok(Err(error)) => RecordedCall::Error {
                message: error.to_string(),
            },
            Err(panic) => RecordedCall::Panicked {
                message: panic_message(&*panic),
            },
        }
    }
}

/// Answers the call running on this task, if any, with `failure` (its arguments do not read
/// as the tool's), and returns the failure's text (what a call outside a run fails with).
///
/// Why an answer and not the tool's error: the run reads this tool's arguments as JSON, which
/// always fit, and the inner tool's are read here; failed with the text, the call would reach
/// hooks as the tool's own failure ([`ToolFailure::Execution`]) and the model would read
/// `the tool failed: invalid arguments: …`. Answered, hooks see
/// [`ToolFailure::InvalidArguments`] and the model reads `invalid arguments: …`, as for a
/// tool that is not wrapped. Journaled, the answer is part of the call's entry (what the tool
/// attached), so a replay answers alike; entries journaled before it hold only the error, and
/// replay as they first ran.
fn refused(failure: ToolFailure) -> String {
    let text = failure.to_string();
    if let Some(call) = ToolCallContext::current() {
        let mut answer = ToolAttachments::default();
        answer.answer = Some(ToolOutcome::Failed(failure));
        call.attach(answer);
    }
    text
}

fn timed_out(limit: Duration) -> RecordedCall {
    RecordedCall::Error {
        message: format!("the tool timed out after {} ms", limit.as_millis()),
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

impl<T: Tool> Tool for JournaledTool<T> {
    type Args = Value;
    type Output = Value;
    type Error = String;

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn description(&self) -> &str {
        self.inner.description()
    }

    fn parameters(&self) -> Value {
        self.inner.parameters()
    }

    fn traits(&self) -> Option<ToolTraits> {
        self.inner.traits()
    }

    fn origin(&self) -> Option<&str> {
        self.inner.origin()
    }

    fn retry_safety(&self) -> RetrySafety {
        self.inner.retry_safety()
    }

    fn timeout(&self) -> Option<Duration> {
        // Embedded, the run loop applies it as usual; journaled, it is applied in the step.
        if self.steps.is_journaled() {
            None
        } else {
            self.inner.timeout()
        }
    }

    async fn call(&self, args: Value) -> Result<Value, String> {
        if !self.steps.is_journaled() {
            let args = reins::tool::read_arguments::<T::Args>(&args).map_err(refused)?;
            let output = self
                .inner
                .call(args)
                .await
                .map_err(|error| error.to_string())?;
            return serde_json::to_value(output).map_err(|error| error.to_string());
        }
        let context = ToolCallContext::current();
        let name = match &context {
            Some(call) => call.effect_id(),
            None => format!("tool/{}", self.inner.name()),
        };
        if self.inner.retry_safety().allows_reexecution() {
            // Executed again after a crash, as the tool declares safe: no marker needed.
            let recorded = self
                .steps
                .step(name, || async {
                    self.recorded(args, context.as_ref()).await
                })
                .await
                .map_err(|error| error.to_string())?;
            return replayed(recorded, context.as_ref());
        }
        let call = context
            .as_ref()
            .map_or_else(|| name.clone(), |call| call.internal_call_id().to_owned());
        let mut args = args;
        for attempt in 1u32.. {
            // Journaled (and acknowledged) before the tool runs: a replay that finds the marker
            // and no result knows the tool started and may have had its effect.
            let marker = match attempt {
                1 => format!("{name}/started"),
                n => format!("{name}/started/{n}"),
            };
            let fresh = self
                .steps
                .start_marker(marker)
                .await
                .map_err(|error| error.to_string())?;
            let recorded = self
                .steps
                .step(name.clone(), || async {
                    if fresh {
                        self.recorded(args.clone(), context.as_ref()).await
                    } else {
                        JournaledCall::bare(RecordedCall::InDoubt).to_json()
                    }
                })
                .await
                .map_err(|error| error.to_string())?;
            if !JournaledCall::is_in_doubt(&recorded) {
                return replayed(recorded, context.as_ref());
            }
            let pending = PendingDecision {
                call: call.clone(),
                tool: self.inner.name().to_owned(),
                arguments: args.clone(),
                reason: IN_DOUBT_REASON.to_owned(),
                awakeable: String::new(),
                in_doubt: true,
            };
            let decision = self
                .steps
                .await_decision(pending)
                .await
                .map_err(|error| error.to_string())?;
            match resolve(decision, args) {
                Resolved::Run(rerun) => args = rerun,
                Resolved::Answer(answer) => return answered(answer, context.as_ref()),
            }
        }
        Err("the call was started more times than can be counted".to_owned())
    }
}

impl<T: Tool> JournaledTool<T> {
    /// Runs the inner tool once, as the journaled value of its step: how it ended, and what
    /// it attached to `call` (taken from the call, to be attached from the journal).
    async fn recorded(&self, args: Value, call: Option<&ToolCallContext>) -> Value {
        let entry = match call {
            Some(call) => {
                let (ended, attached) = call.capture(self.execute(args)).await;
                JournaledCall {
                    call: ended,
                    attached,
                }
            }
            None => JournaledCall::bare(self.execute(args).await),
        };
        self.steps
            .masked_entry(entry)
            .within_journal_limit()
            .to_json()
    }
}

#[cfg(test)]
mod in_doubt_tests;
#[cfg(test)]
mod tests;
