//! The seam between the run loop and the engine: a [`Steps`] handle that wrapped models and
//! tools hand their work to. Embedded, the work simply runs. On Restate, each piece of work
//! becomes one journaled step (`ctx.run`) executed by the invocation's step port, so a replayed
//! invocation gets the recorded result back instead of running the work again.
//!
//! Why a channel and not the Restate context itself: the context borrows the invocation and
//! cannot live inside an [`Agent`](reins::agent::Agent)'s `'static` model and tools. The port
//! owns the context; the work itself still runs on the caller's task (inside the driver's tool
//! scope, so [`ToolCallContext::current`](reins::tool::ToolCallContext::current) works), and
//! the port only records its result.

use crate::args_schema::ArgsSchemas;
use crate::awaiting::decisions;
use crate::wire::PendingDecision;
use reins::agent::ToolDecision;
use restate_sdk::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tokio::sync::{mpsc, oneshot};

/// The prefix of the state keys listing the journaled steps: one key per step,
/// `step/<n>/<name>` (`n` counted from 1, zero-padded), with an empty value.
///
/// Why one key per step, with the name in the key: a single list rewritten after every step
/// made each step's state write (and its journal entry) as long as the run so far — a cost
/// growing with the square of a run's length — and `status` reads every step's name with
/// one call for the keys instead of one read per step.
pub(crate) const STEP_KEY_PREFIX: &str = "step/";

/// The state key under which runs recorded before the per-step keys kept the names of their
/// journaled steps, as one JSON list rewritten after every step. Still read by `status`: a
/// run finished under the old layout keeps its state until Restate forgets it, and one still
/// pinned to an old deployment goes on writing it.
pub(crate) const LEGACY_STEPS_STATE: &str = "steps";

/// The state key of the `n`th journaled step, named `name`.
fn step_key(n: usize, name: &str) -> String {
    format!("{STEP_KEY_PREFIX}{n:08}/{name}")
}

/// The journaled steps' names, oldest first: the list a run kept under
/// [`LEGACY_STEPS_STATE`] (`legacy`, empty for runs that never had one), then the steps named
/// by the workflow's per-step state keys.
pub(crate) fn steps_from_keys(legacy: Vec<String>, keys: Vec<String>) -> Vec<String> {
    let mut numbered: Vec<(usize, String)> = keys
        .into_iter()
        .filter_map(|key| {
            let (n, name) = key.strip_prefix(STEP_KEY_PREFIX)?.split_once('/')?;
            Some((n.parse().ok()?, name.to_owned()))
        })
        .collect();
    numbered.sort_by_key(|(n, _)| *n);
    legacy
        .into_iter()
        .chain(numbered.into_iter().map(|(_, name)| name))
        .collect()
}

tokio::task_local! {
    /// Set while a step's work runs, to refuse a step nested in it.
    static INSIDE_STEP: ();
}

/// Where a wrapped model or tool sends its work: straight through (embedded) or into a Restate
/// invocation's journal.
///
/// Build an agent from a function taking `&Steps`, wrapping its model with
/// [`Steps::model`](crate::Steps::model) and its tools with [`Steps::tool`](crate::Steps::tool);
/// the same function serves embedded runs ([`Steps::embedded`]) and Restate runs (the
/// [`AgentService`](crate::AgentService) passes its own).
#[derive(Clone, Debug)]
pub struct Steps {
    inner: Arc<StepsInner>,
}

#[derive(Debug)]
struct StepsInner {
    /// `None` when embedded.
    port: Option<mpsc::UnboundedSender<StepRequest>>,
    run_id: String,
    /// Model calls made so far in this invocation attempt, to name model steps.
    model_calls: AtomicUsize,
    /// What a tool call's step masks before journaling its result
    /// ([`Steps::redaction`](crate::Steps::redaction)).
    redactions: std::sync::Mutex<Vec<reins::hooks::redaction::Redaction>>,
}

/// What the step port does with a request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum StepKind {
    /// A journaled step, listed in the run's `status` (model and tool calls, records, answers).
    Listed,
    /// A journaled step that is not listed: the start marker journaled before a tool call
    /// whose tool does not declare a second execution safe (see [`crate::JournaledTool`]).
    StartMarker,
    /// No step: wait for a person's decision about a call in doubt, listed in the run's
    /// pending calls; the result is the decision as JSON.
    Decision(Box<PendingDecision>),
}

/// One piece of work for the step port.
pub(crate) struct StepRequest {
    /// The step's name in the journal (the effect id for tool calls).
    pub name: String,
    /// What to do with it.
    pub kind: StepKind,
    /// Asks the caller to run the work now (only on first execution): the caller sends the
    /// work's result back on the enclosed sender — a value to journal, or why the work has
    /// none (journaled as the step's failure, so a replay fails the same way).
    pub execute: oneshot::Sender<oneshot::Sender<Result<Value, String>>>,
    /// The recorded result (fresh or replayed), or why the engine refused the step.
    pub result: oneshot::Sender<Result<Value, String>>,
}

/// Why a journaled step has no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the Restate step `{step}` failed: {message}")]
pub struct StepError {
    /// The step's name.
    pub step: String,
    /// What the engine said.
    pub message: String,
}

impl Steps {
    /// Steps for an embedded run (memory, SQLite or PostgreSQL store, or none): work runs
    /// directly, durability comes from the run's store.
    pub fn embedded() -> Self {
        Steps {
            inner: Arc::new(StepsInner {
                port: None,
                run_id: String::new(),
                model_calls: AtomicUsize::new(0),
                redactions: std::sync::Mutex::default(),
            }),
        }
    }

    /// Steps journaled through `port` for the run `run_id`.
    pub(crate) fn journaled(run_id: String, port: mpsc::UnboundedSender<StepRequest>) -> Self {
        Steps {
            inner: Arc::new(StepsInner {
                port: Some(port),
                run_id,
                model_calls: AtomicUsize::new(0),
                redactions: std::sync::Mutex::default(),
            }),
        }
    }

    /// The redactions a tool call's step masks its result with before journaling it.
    pub(crate) fn redactions(
        &self,
    ) -> std::sync::MutexGuard<'_, Vec<reins::hooks::redaction::Redaction>> {
        // A panic while the list was held leaves it whole (pushes only): use it as it is.
        self.inner
            .redactions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether steps are journaled by Restate (false when embedded).
    pub fn is_journaled(&self) -> bool {
        self.inner.port.is_some()
    }

    /// The name of the next model step: `<run id>/model/<n>`, counted from 1 in call order,
    /// the same on every replay.
    pub(crate) fn next_model_step(&self) -> String {
        let n = self.inner.model_calls.fetch_add(1, Ordering::SeqCst) + 1;
        format!("{}/model/{n}", self.inner.run_id)
    }

    /// The name of a step this crate journals for `what` (e.g. `approval/t1c0`):
    /// `<run id>/<what>`.
    pub(crate) fn step_name(&self, what: &str) -> String {
        format!("{}/{what}", self.inner.run_id)
    }

    /// Journals what a hook (or any code the run loop calls) learns from the outside world —
    /// the time, a random number, a lookup — so that a replay takes the same path: on first
    /// execution `work` runs and its result is journaled as the step
    /// `<run id>/record/<name>`; on replay the journaled result is returned and `work` does
    /// not run. The `record/` namespace is the caller's alone: no name can clash with the
    /// steps this crate journals (`model/<n>`, a tool call's `t<turn>c<ordinal>`,
    /// `approval/<call>`).
    ///
    /// The value goes through JSON: one that does not serialize (a map with non-string
    /// keys, a `Serialize` impl that fails) is a [`StepError`] at the call, and on Restate
    /// that failure is journaled, so a replay fails the same way. Embedded, `work` runs and
    /// its value makes the same round trip through JSON, so the agent sees what it would see
    /// on Restate.
    ///
    /// Call it from a hook, in an order that depends only on the run, like every other step —
    /// never from inside a tool: a tool call already is one step, and the invocation journals
    /// one step at a time, so a step nested in it is refused with a [`StepError`].
    ///
    /// ```
    /// # async fn demo(steps: reins_restate::Steps) -> Result<(), reins_restate::StepError> {
    /// let now_ms: u128 = steps
    ///     .record("clock", || async {
    ///         std::time::SystemTime::now()
    ///             .duration_since(std::time::UNIX_EPOCH)
    ///             .map(|elapsed| elapsed.as_millis())
    ///             .unwrap_or(0)
    ///     })
    ///     .await?;
    /// # let _ = now_ms; Ok(()) }
    /// ```
    pub async fn record<T, F, Fut>(&self, name: &str, work: F) -> Result<T, StepError>
    where
        T: Serialize + DeserializeOwned,
        F: FnOnce() -> Fut,
        Fut: Future<Output = T>,
    {
        self.journal_value(self.step_name(&format!("record/{name}")), work)
            .await
    }

    /// Runs `work` as the journaled step `step` and returns its value, through JSON both on
    /// Restate and embedded (see [`Steps::record`]).
    pub(crate) async fn journal_value<T, F, Fut>(
        &self,
        step: String,
        work: F,
    ) -> Result<T, StepError>
    where
        T: Serialize + DeserializeOwned,
        F: FnOnce() -> Fut,
        Fut: Future<Output = T>,
    {
        let serialized = || async {
            serde_json::to_value(work().await).map_err(|error| {
                format!("the value cannot be journaled: it does not serialize to JSON: {error}")
            })
        };
        let recorded = self
            .try_step(step.clone(), StepKind::Listed, serialized)
            .await?;
        serde_json::from_value(recorded).map_err(|error| StepError {
            step,
            message: format!("the journaled value cannot be read: {error}"),
        })
    }

    /// Runs `work` as the journaled step `name` and returns its recorded result: the work's
    /// own result on first execution, the journaled one on replay (then `work` is not run).
    /// Embedded, `work` just runs.
    pub(crate) async fn step<F, Fut>(&self, name: String, work: F) -> Result<Value, StepError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Value>,
    {
        self.try_step(name, StepKind::Listed, || async { Ok(work().await) })
            .await
    }

    /// Journals that a tool call is about to start, as the unlisted step `name`, and tells
    /// whether this is the first execution: `false` when the marker comes from the journal,
    /// i.e. an earlier attempt of the invocation journaled it.
    pub(crate) async fn start_marker(&self, name: String) -> Result<bool, StepError> {
        let fresh = AtomicBool::new(false);
        self.try_step(name, StepKind::StartMarker, || async {
            fresh.store(true, Ordering::SeqCst);
            Ok(Value::Null)
        })
        .await?;
        Ok(fresh.load(Ordering::SeqCst))
    }

    /// Lists `pending` (a call in doubt) among the run's pending calls and waits — suspended
    /// in Restate, holding no worker — for the decision `decide` takes about it.
    pub(crate) async fn await_decision(
        &self,
        pending: PendingDecision,
    ) -> Result<ToolDecision, StepError> {
        let name = pending.call.clone();
        let decided = self
            .try_step(
                name.clone(),
                StepKind::Decision(Box::new(pending)),
                || async { Err("a decision is no work to run".to_owned()) },
            )
            .await?;
        serde_json::from_value(decided).map_err(|error| StepError {
            step: name,
            message: format!("the decision cannot be read: {error}"),
        })
    }

    /// [`Steps::step`] for work that may have no value: its error is journaled as the step's
    /// failure and returned as a [`StepError`], on first execution and on replay alike.
    async fn try_step<F, Fut>(
        &self,
        name: String,
        kind: StepKind,
        work: F,
    ) -> Result<Value, StepError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Value, String>>,
    {
        let Some(port) = &self.inner.port else {
            return work().await.map_err(|message| StepError {
                step: name,
                message,
            });
        };
        if INSIDE_STEP.try_with(|_| ()).is_ok() {
            // The port is busy with the enclosing step: waiting would never end.
            return Err(StepError {
                step: name,
                message: "a step cannot run inside another step (e.g. Steps::record inside \
                          a tool call)"
                    .to_owned(),
            });
        }
        let gone = |name: &str| StepError {
            step: name.to_owned(),
            message: "the invocation's step port has stopped".to_owned(),
        };
        let (execute, execute_rx) = oneshot::channel();
        let (result, result_rx) = oneshot::channel();
        port.send(StepRequest {
            name: name.clone(),
            kind,
            execute,
            result,
        })
        .map_err(|_| gone(&name))?;
        // On replay the port drops `execute` unused; then only the recorded result comes.
        if let Ok(done) = execute_rx.await {
            let value = INSIDE_STEP.scope((), work()).await;
            let _ = done.send(value.and_then(within_step_limit));
        }
        match result_rx.await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(message)) => Err(StepError {
                step: name,
                message,
            }),
            Err(_) => Err(gone(&name)),
        }
    }
}

/// The most bytes a journaled step's value may hold, as JSON: 8 MiB.
///
/// Why a limit of reins's own: Restate refuses a journal entry over its message size limit
/// (32 MiB by default, with a warning from 10 MiB) as a retryable failure, so a tool that
/// returned more would be run again and refused again without end. A larger value is
/// journaled as the step's failure instead, and a replay fails the same way; a tool call's
/// entry gives way before that (the call fails with the result's size and this limit, and
/// what the tool attached, its usage first, is kept: see [`JournaledTool`](crate::JournaledTool)).
/// Embedded runs have no such limit.
pub const MAX_STEP_BYTES: usize = 8 * 1024 * 1024;

/// How many bytes `value` takes as JSON (0 for a value that does not serialize).
pub(crate) fn json_size(value: &impl Serialize) -> usize {
    let mut counted = ByteCount(0);
    // Counting only: the writer never fails.
    match serde_json::to_writer(&mut counted, value) {
        Ok(()) => counted.0,
        Err(_) => 0,
    }
}

/// `value` if its JSON fits in [`MAX_STEP_BYTES`], else why it cannot be journaled.
fn within_step_limit(value: Value) -> Result<Value, String> {
    let size = json_size(&value);
    if size <= MAX_STEP_BYTES {
        return Ok(value);
    }
    Err(format!(
        "the result is {size} bytes as JSON, more than a journaled step may hold \
         ({MAX_STEP_BYTES} bytes)"
    ))
}

/// A writer that only counts what it is given.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 = self.0.saturating_add(bytes.len());
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The code of the terminal error Restate answers a step with once its invocation is
/// cancelled.
pub(crate) const CANCELLED: u16 = 409;

/// Serves the steps of one invocation in the order they arrive, each as one `ctx.run`, until
/// the driver stops sending (`None`) or the invocation ends with a terminal error: a
/// cancellation ([`CANCELLED`]), which ends the run (Restate delivers it once, to the step then
/// awaited, and a run that took it for the step's failure would go on), or the rejection of a
/// decision a call in doubt waits on. Every listed step gets its state key
/// ([`STEP_KEY_PREFIX`], read by the `status` handler); `recorded` counts them over the
/// invocation. Edited arguments in a decision about a call in doubt must fit the tool's
/// schema in `schemas`, as any decision's.
pub(crate) async fn serve_steps(
    ctx: &WorkflowContext<'_>,
    port: &mut mpsc::UnboundedReceiver<StepRequest>,
    recorded: &mut usize,
    schemas: &ArgsSchemas,
) -> Option<TerminalError> {
    while let Some(StepRequest {
        name,
        kind,
        execute,
        result,
    }) = port.recv().await
    {
        if let StepKind::Decision(pending) = kind {
            let decided = match decisions(ctx, vec![*pending], schemas).await {
                Ok(mut taken) => taken.pop().map(|(_, decision)| decision),
                Err(ended) => return Some(ended),
            };
            let _ = result.send(
                decided
                    .ok_or_else(|| "no decision was taken".to_owned())
                    .and_then(|decision| {
                        serde_json::to_value(decision).map_err(|error| error.to_string())
                    }),
            );
            continue;
        }
        let outcome = ctx
            .run(move || async move {
                let (done, done_rx) = oneshot::channel();
                execute
                    .send(done)
                    .map_err(|_| TerminalError::new("the step's caller has stopped"))?;
                let value = done_rx
                    .await
                    .map_err(|_| TerminalError::new("the step's work was abandoned"))?;
                // A terminal error is journaled as the step's outcome: a replay fails alike.
                value
                    .map(Json)
                    .map_err(|message| TerminalError::new(message).into())
            })
            .name(name.clone())
            .await;
        if let Err(cancelled) = &outcome
            && cancelled.code() == CANCELLED
        {
            return Some(TerminalError::new_with_code(
                CANCELLED,
                cancelled.message().to_owned(),
            ));
        }
        if kind == StepKind::Listed {
            *recorded += 1;
            ctx.set(&step_key(*recorded, &name), ());
        }
        let _ = result.send(
            outcome
                .map(Json::into_inner)
                .map_err(|error| error.message().to_owned()),
        );
    }
    None
}

#[cfg(test)]
mod test_ports;
#[cfg(test)]
pub(crate) use test_ports::{Journal, executing_port, recording_port, replaying_port};

#[cfg(test)]
mod tests;
