//! An audit log: one JSON line per dispatch (model call or tool call) and per outcome.
//!
//! Every line has `ts` (RFC 3339, UTC, milliseconds), `run_id`, `turn`, `event`
//! (`"dispatch"` or `"outcome"`) and `kind` (`"model"` or `"tool"`). Tool lines add `tool`,
//! `call_id` (reins' call id, the same on a call's dispatch and outcome) and `effect_id`
//! (the call's idempotency key, as
//! [`ToolCallContext::effect_id`](crate::tool::ToolCallContext::effect_id) gives it to the
//! tool); model lines add `model` (the label called) and, on dispatch lines, the request's
//! `tool_choice` when set. Dispatch lines say `"decision": "proceed"`. Outcome lines say
//! `outcome` — `"success"`, `"failed"`, `"skipped"`, `"denied"`, `"suspended"` or
//! `"stopped"` (the last two written when the run ends), and for model calls also
//! `"retried"` or `"replaced"` (see below) — with a `message` for all but success, a model's
//! `usage`, and `approval` when
//! an [`ApprovalPolicy`](crate::hooks::approval::ApprovalPolicy) decided the call (see
//! [`ApprovalRecord`](crate::hooks::approval::ApprovalRecord)). With
//! [`with_args`](AuditLog::with_args), tool lines also carry `args`, through the
//! [`redact_args`](AuditLog::redact_args) closure if one is set. Fields without a value are
//! left out. A line holds no character any reader ends a line at, whatever text a model put
//! in a tool's arguments or error: besides `\n` and the other control characters, which JSON
//! escapes, `U+0085`, `U+2028` and `U+2029` (where Python's `str.splitlines` ends lines) are
//! written as `\u` escapes too.
//!
//! A tool outcome's `message` is what the model is told about the call (the failure, or the
//! reason it was not run) as the hooks registered before the log left it: a
//! [`Redaction`](crate::hooks::redaction::Redaction) registered before the log masks it in
//! the log too. (Arguments are not masked by it: hand its masking to
//! [`redact_args`](AuditLog::redact_args), as that method's example shows.)
//!
//! # Where to register it
//!
//! **Last.** A skip, denial or suspension ends the dispatch chain, so a hook after the one
//! that refused never sees that dispatch. Registered last, the log's dispatch line means
//! "every other hook let this run, with these arguments"; a refused call has no dispatch line
//! but always an outcome line, which records the final outcome (`"denied"` with the message,
//! and the approval record). Suspended calls get their outcome line when the run ends.
//! Registered first instead, the log records every call as the model made it, before any
//! policy saw it, and the outcome lines still record what was decided.
//!
//! A hook's `stop` is not a refusal: it ends the run at once. The call it stopped on, and
//! every other call of that turn without an outcome (not yet run, or still running when the
//! run ended), gets a `"stopped"` outcome line when the run ends, with the run's error as its
//! `message` — also when the run ends another way before answering them (a tool failure that
//! fails the run, whose own text the message leaves out, or an invalid call). The log knows a
//! turn's calls from the model's response, so even a call stopped at dispatch by an earlier
//! hook gets its line.
//!
//! Every model call with a dispatch line gets one outcome line, wherever the log is
//! registered. A hook registered before the log can decide a model call's outcome so that the
//! log never sees it (the first hook to retry a call on another model, to serve a failed
//! call's turn with its own response, or to stop, ends the outcome chain). The log then
//! writes the missing line when it learns what became of the call — at the next model call's
//! dispatch, or when the run ends — under the call's own `turn` and `model`: `"retried"` when
//! the turn was sent to a model again (a
//! [`ModelFallback`](crate::hooks::fallback::ModelFallback) registered before the log: the
//! call failed or answered nothing usable), `"replaced"` when the run went on with a hook's
//! response in place of a failed call, `"stopped"` when the run ended on it. Registered
//! before the fallback instead, the log writes the failed call's own `"failed"` line, with
//! the provider's error as its `message`.
//!
//! The log only observes: it answers proceed to everything, and a failed write is reported
//! with `tracing::warn!` and never stops the run; a line a failed write cut short (a disk
//! that filled up mid-line) is ended before the next line is written, so the cut line stands
//! alone and the lines after it stay whole. Lines are written (and flushed) while the
//! run waits, behind a mutex shared by every clone; hand it a fast writer.

mod file;
mod line;
mod sink;
#[cfg(test)]
mod tests;
mod time;
mod unanswered;
mod unanswered_model;

use crate::agent::{
    AgentHook, DispatchAction, DispatchEvent, HookContext, OutcomeAction, OutcomeEvent,
    PromptError, RunSettledEvent, StepEventKind, ToolResult,
};
use crate::hooks::approval::approval_record;
use crate::tool::ToolOutcome;
use file::LogFile;
use line::Line;
use serde_json::Value;
use sink::Sink;
use std::borrow::Cow;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

type Redactor = Arc<dyn Fn(&str, Value) -> Value + Send + Sync>;

/// Writes one JSON line per dispatch and outcome; see the [module docs](self).
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::hooks::audit::AuditLog;
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::tool_fn;
/// use serde_json::{Value, json};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let path = std::env::temp_dir().join(format!("reins-audit-doc-{}.jsonl", std::process::id()));
/// let login = tool_fn("login", "Logs in.", |_: Value| async {
///     Ok::<_, std::convert::Infallible>("welcome")
/// });
/// let model = ScriptedModel::new([
///     Turn::tool_call("login", json!({"user": "ada", "password": "hunter2"})),
///     Turn::text("Logged in."),
/// ]);
/// let audit = AuditLog::append_to(&path)?
///     .redact_args(|_tool, mut args| {
///         args["password"] = json!("***");
///         args
///     });
/// let agent = AgentBuilder::new(model).tool(login).add_hook(audit).build();
/// agent.prompt("Log me in.").await?;
///
/// let text = std::fs::read_to_string(&path)?;
/// std::fs::remove_file(&path)?;
/// let lines: Vec<Value> = text.lines().map(serde_json::from_str).collect::<Result<_, _>>()?;
/// let events: Vec<(&str, &str)> = lines
///     .iter()
///     .map(|line| (line["event"].as_str().unwrap(), line["kind"].as_str().unwrap()))
///     .collect();
/// assert_eq!(
///     events,
///     [
///         ("dispatch", "model"), ("outcome", "model"),
///         ("dispatch", "tool"), ("outcome", "tool"),
///         ("dispatch", "model"), ("outcome", "model"),
///     ]
/// );
/// assert_eq!(lines[2]["args"], json!({"user": "ada", "password": "***"}));
/// assert_eq!(lines[3]["outcome"], "success");
/// assert!(!text.contains("hunter2"));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct AuditLog {
    sink: Arc<Mutex<Sink>>,
    args: bool,
    redact: Option<Redactor>,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("args", &self.args)
            .field("redact", &self.redact.is_some())
            .finish_non_exhaustive()
    }
}

impl AuditLog {
    /// A log writing to `writer` (a file, a socket, a buffer …), flushed after each line.
    pub fn new(writer: impl Write + Send + 'static) -> Self {
        AuditLog {
            sink: Arc::new(Mutex::new(Sink::new(Box::new(writer)))),
            args: false,
            redact: None,
        }
    }

    /// A log writing to the process's stderr.
    pub fn stderr() -> Self {
        AuditLog::new(std::io::stderr())
    }

    /// A log appending to the file at `path`, created if missing. When the file is rotated
    /// away (renamed or deleted, as logrotate does by default), the next line opens `path`
    /// again, so lines go to the new file rather than on into the old one.
    pub fn append_to(path: impl AsRef<Path>) -> std::io::Result<Self> {
        Ok(AuditLog::new(LogFile::open(path.as_ref())?))
    }

    /// Writes tool calls' arguments too (off by default: arguments may hold secrets).
    pub fn with_args(mut self) -> Self {
        self.args = true;
        self
    }

    /// Writes tool calls' arguments as `redact(tool_name, args)` returns them (and turns
    /// [`with_args`](Self::with_args) on). Arguments that are not JSON reach it as a JSON
    /// string; if it panics, `"[redaction failed]"` is written instead, never the original.
    ///
    /// A [`Redaction`](crate::hooks::redaction::Redaction) hook does not mask what the log
    /// writes of arguments, wherever it is registered; hand it its masking here:
    ///
    /// ```
    /// use reins::agent::AgentBuilder;
    /// use reins::hooks::audit::AuditLog;
    /// use reins::hooks::redaction::Redaction;
    /// use reins::testing::{ScriptedModel, Turn};
    /// use reins::tool::tool_fn;
    /// use serde_json::{Value, json};
    /// use std::io::Write;
    /// use std::sync::{Arc, Mutex};
    ///
    /// /// The log's lines, kept to be read.
    /// #[derive(Clone, Default)]
    /// struct Lines(Arc<Mutex<Vec<u8>>>);
    /// impl Write for Lines {
    ///     fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
    ///         self.0.lock().unwrap().write(bytes)
    ///     }
    ///     fn flush(&mut self) -> std::io::Result<()> {
    ///         Ok(())
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let redaction = Redaction::new().secret("hunter2");
    /// let masking = redaction.clone();
    /// let lines = Lines::default();
    /// let audit = AuditLog::new(lines.clone())
    ///     .redact_args(move |_tool, args| masking.redact_json(&args).unwrap_or(args));
    /// let login = tool_fn("login", "Logs in.", |_: Value| async {
    ///     Ok::<_, std::convert::Infallible>("welcome")
    /// });
    /// let model = ScriptedModel::new([
    ///     Turn::tool_call("login", json!({"password": "hunter2"})),
    ///     Turn::text("Logged in."),
    /// ]);
    /// let agent = AgentBuilder::new(model)
    ///     .tool(login)
    ///     .add_hook(redaction)
    ///     .add_hook(audit)
    ///     .build();
    /// agent.prompt("Log me in.").await.unwrap();
    /// let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    /// assert!(text.contains(r#""args":{"password":"#) && !text.contains("hunter2"));
    /// # }
    /// ```
    pub fn redact_args(
        mut self,
        redact: impl Fn(&str, Value) -> Value + Send + Sync + 'static,
    ) -> Self {
        self.args = true;
        self.redact = Some(Arc::new(redact));
        self
    }

    /// The arguments to write for a call of `tool`, if arguments are written: `read` from
    /// the call (the model's own value, borrowed, unless a redaction closure takes it), or
    /// their `text` as a JSON string when they are not JSON.
    fn args<'v>(
        &self,
        tool: &str,
        read: impl FnOnce() -> Option<Result<Cow<'v, Value>, serde_json::Error>>,
        text: impl FnOnce() -> &'v str,
    ) -> Option<Cow<'v, Value>> {
        if !self.args {
            return None;
        }
        let args = match read() {
            Some(Ok(args)) => args,
            _ => Cow::Owned(Value::String(text().to_owned())),
        };
        Some(match &self.redact {
            None => args,
            Some(redact) => Cow::Owned(
                catch_unwind(AssertUnwindSafe(|| redact(tool, args.into_owned())))
                    .unwrap_or_else(|_| Value::String("[redaction failed]".to_owned())),
            ),
        })
    }

    /// This log's key among the logs of a run: clones share it, as they share their lines.
    fn id(&self) -> usize {
        Arc::as_ptr(&self.sink).cast::<()>() as usize
    }

    fn write(&self, line: &Line<'_>) {
        // A writer that panicked mid-line leaves at worst a torn line; later lines still go.
        let mut sink = self.sink.lock().unwrap_or_else(PoisonError::into_inner);
        sink.write(line);
    }
}

/// What became of a model call whose outcome the log did not see (see `unanswered_model`).
enum MissedOutcome<'a> {
    /// A hook had the turn sent to a model again: the model of the next call, when known.
    RetriedOn(&'a str),
    /// As [`MissedOutcome::RetriedOn`], the next call's model unknown (its dispatch never
    /// reached the log).
    Retried,
    /// The run went on past the call without failing: a hook served the turn in place of a
    /// failed call.
    Replaced,
    /// The run ended on the call, with this message.
    Stopped(String),
}

impl AuditLog {
    /// Writes the outcome line of a model call whose outcome a hook registered before the log
    /// decided without it (see `unanswered_model`), under the call's own turn and model.
    fn write_missed(
        &self,
        ctx: &HookContext,
        missed: &unanswered_model::Call,
        outcome: MissedOutcome<'_>,
    ) {
        let mut line = Line::new(ctx, "outcome", "model");
        line.turn = missed.turn;
        line.model = Some(&missed.model);
        let (outcome, message) = match outcome {
            MissedOutcome::RetriedOn(next) => (
                "retried",
                format!("a hook registered before the audit log sent the turn to model `{next}`"),
            ),
            MissedOutcome::Retried => (
                "retried",
                "a hook registered before the audit log sent the turn to another model".to_owned(),
            ),
            MissedOutcome::Replaced => (
                "replaced",
                "a hook registered before the audit log answered the turn in place of this call"
                    .to_owned(),
            ),
            MissedOutcome::Stopped(message) => ("stopped", message),
        };
        line.outcome = Some(outcome);
        line.message = Some(message);
        self.write(&line);
    }
}

/// The message of the calls a run ended before answering: the run's error.
fn run_end_message(error: &PromptError) -> String {
    match error {
        // A failure's own text can quote what a redaction masked for the model; the failed
        // call's outcome line has the masked text.
        PromptError::Tool { tool_name, .. } => {
            format!("the run ended when tool `{tool_name}` failed")
        }
        other => other.to_string(),
    }
}

/// The `outcome` and `message` of a tool call's result. The message is the text the model
/// is shown, not the raw outcome's: earlier hooks' rewrites (a redaction's masks above all)
/// must hold in the log too, and a failure's text can quote a secret.
fn describe(result: &ToolResult<'_>) -> (&'static str, Option<String>) {
    let outcome = match result.outcome() {
        ToolOutcome::Success => return ("success", None),
        ToolOutcome::Failed(_) => "failed",
        ToolOutcome::Skipped { .. } => "skipped",
        ToolOutcome::Denied { .. } => "denied",
    };
    (outcome, Some(result.output_text().to_owned()))
}

impl AgentHook for AuditLog {
    fn observes(&self, kind: StepEventKind) -> bool {
        matches!(
            kind,
            StepEventKind::CompletionDispatch
                | StepEventKind::ToolDispatch
                | StepEventKind::CompletionOutcome
                | StepEventKind::ToolOutcome
                | StepEventKind::RunSettled
        )
    }

    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if let (Some(tool), Some(call_id)) = (event.tool_name(), event.internal_call_id()) {
            let mut line = Line::new(ctx, "dispatch", "tool").call(tool, call_id);
            line.args = self.args(
                tool,
                || event.tool_args_value(),
                || event.tool_args().unwrap_or_default(),
            );
            line.decision = Some("proceed");
            self.write(&line);
        } else if let Some(request) = event.request() {
            let model = event.model().unwrap_or_default();
            if let Some(missed) = unanswered_model::dispatched(ctx, self.id(), model) {
                let outcome = if missed.retried_by(ctx.turn(), ctx.model_attempt()) {
                    MissedOutcome::RetriedOn(model)
                } else {
                    MissedOutcome::Replaced
                };
                self.write_missed(ctx, &missed, outcome);
            }
            let mut line = Line::new(ctx, "dispatch", "model");
            line.model = event.model();
            line.tool_choice = request.tool_choice.as_ref();
            line.decision = Some("proceed");
            self.write(&line);
        }
        DispatchAction::proceed()
    }

    async fn on_outcome(&self, ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(result) = event.tool_outcome() {
            let call_id = result.internal_call_id();
            let mut line = Line::new(ctx, "outcome", "tool").call(result.tool_name(), call_id);
            line.args = self.args(
                result.tool_name(),
                || Some(result.args_value()),
                || result.args(),
            );
            let (outcome, message) = describe(result);
            line.outcome = Some(outcome);
            line.message = message;
            line.approval = approval_record(ctx, call_id);
            self.write(&line);
            unanswered::answered(ctx, self.id(), call_id);
        } else if let Some(response) = event.completion() {
            unanswered::track(ctx, self.id(), response, self.args);
            unanswered_model::answered(ctx, self.id());
            let mut line = Line::new(ctx, "outcome", "model");
            line.model = event.model();
            line.outcome = Some("success");
            line.usage = Some(response.usage);
            self.write(&line);
        } else if let Some(error) = event.completion_error() {
            // Each failed call gets its line here, the ones a fallback hook registered after
            // the log retried included (one registered before writes `retried`: see
            // `write_missed`).
            unanswered_model::answered(ctx, self.id());
            let mut line = Line::new(ctx, "outcome", "model");
            line.model = event.model();
            line.outcome = Some("failed");
            line.message = Some(error.to_string());
            self.write(&line);
        }
        OutcomeAction::proceed()
    }

    async fn on_run_settled(&self, ctx: &HookContext, event: RunSettledEvent<'_>) {
        if let Some(missed) = unanswered_model::take(ctx, self.id()) {
            let (turn, attempt) = (ctx.turn(), ctx.model_attempt());
            let outcome = if missed.retried_by(turn, attempt) {
                MissedOutcome::Retried
            } else if missed.superseded_by(turn, attempt) {
                MissedOutcome::Replaced
            } else {
                match event.result {
                    Err(error) => MissedOutcome::Stopped(run_end_message(error)),
                    Ok(_) => MissedOutcome::Replaced,
                }
            };
            self.write_missed(ctx, &missed, outcome);
        }
        let Err(error) = event.result else {
            return;
        };
        let PromptError::Suspended { run } = error else {
            // The calls the run ended before answering: their outcome is the run's end.
            let message = run_end_message(error);
            for call in unanswered::take(ctx, self.id()) {
                let mut line = Line::new(ctx, "outcome", "tool").call(&call.tool, &call.id);
                if let Some(args) = call.args {
                    line.args = self.args(&call.tool, || Some(Ok(Cow::Owned(args))), || "");
                }
                line.outcome = Some("stopped");
                line.message = Some(message.clone());
                line.approval = approval_record(ctx, &call.id);
                self.write(&line);
            }
            return;
        };
        // Suspended tool calls never reach `on_outcome`: the run ends with them.
        for pending in run.pending() {
            let call_id = pending.internal_call_id.as_str();
            let tool = pending.call.name.as_str();
            let mut line = Line::new(ctx, "outcome", "tool").call(tool, call_id);
            // The arguments as the model sent them.
            let arguments = &pending.call.arguments;
            line.args = self.args(tool, || Some(Ok(Cow::Borrowed(arguments))), || "");
            line.outcome = Some("suspended");
            line.message = pending.suspended.clone();
            line.approval = approval_record(ctx, call_id);
            self.write(&line);
        }
    }
}
