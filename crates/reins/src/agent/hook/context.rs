//! [`HookContext`]: what every hook method of one run is handed: the run's id and turn, its
//! [`Scratchpad`], and the entries recorded with the run's state.

use super::scratchpad::Scratchpad;
use crate::agent::options::DEFAULT_MAX_TURNS;
use crate::agent::output_spec::OUTPUT_TOOL_NAME;
use crate::panics::panic_message;
use crate::run::{Entry, EntryError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Run-scoped information and state handed to every hook method.
///
/// A context is shared by all hooks of one run (and by concurrent tool calls when
/// `tool_concurrency > 1`), so everything in it is safe to use from several tasks at once.
/// It holds the run's id and turn, a [`Scratchpad`] of typed values for the run's hooks, and
/// entries: values recorded with the run's state, which a durable run keeps across a pause.
///
/// ```
/// use reins::agent::{AgentBuilder, AgentHook, HookContext, OutcomeAction, OutcomeEvent};
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// /// Records which tools ran, turn by turn, with the run.
/// struct Ledger;
///
/// impl AgentHook for Ledger {
///     async fn on_outcome(&self, ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
///         if let Some(result) = event.tool_result() {
///             let line = format!("turn {}: {}", ctx.turn(), result.tool_name());
///             ctx.append_entry("ledger", &line).expect("text is recordable");
///         }
///         OutcomeAction::proceed()
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([Turn::tool_call("now", json!({})), Turn::text("Noon.")]);
/// let now = reins::tool::tool_fn("now", "The time.", |_: serde_json::Value| async move {
///     Ok::<_, std::convert::Infallible>("12:00")
/// });
/// let agent = AgentBuilder::new(model).tool(now).add_hook(Ledger).build();
/// let run = agent.prompt("Time?").extended_details().await.unwrap();
/// let ledger: Vec<_> = run.entries().iter().map(|e| (e.kind.as_str(), &e.value)).collect();
/// assert_eq!(ledger, [("ledger", &json!("turn 1: now"))]);
/// # }
/// ```
#[derive(Debug)]
pub struct HookContext {
    run_id: String,
    agent_name: Option<String>,
    streaming: bool,
    max_turns: usize,
    output_tool: bool,
    turn: AtomicUsize,
    model_attempt: AtomicUsize,
    scratchpad: Scratchpad,
    entries: Mutex<Vec<Entry>>,
    /// Entries written from the scratchpad when the run's entries are taken.
    deferred: Mutex<Vec<DeferredEntry>>,
}

/// An entry written from the scratchpad when the run's entries are taken (see
/// [`HookContext::defer_entry`]).
#[derive(Debug, Clone, Copy)]
struct DeferredEntry {
    kind: &'static str,
    write: fn(&Scratchpad) -> Option<Value>,
}

impl HookContext {
    /// A context for the run `run_id`, e.g. to call a hook directly in a unit test: turn 0,
    /// not streamed, the default limit of model calls, no output tool.
    pub fn new(run_id: impl Into<String>) -> Self {
        HookContext {
            run_id: run_id.into(),
            agent_name: None,
            streaming: false,
            max_turns: DEFAULT_MAX_TURNS,
            output_tool: false,
            turn: AtomicUsize::new(0),
            model_attempt: AtomicUsize::new(0),
            scratchpad: Scratchpad::default(),
            entries: Mutex::new(Vec::new()),
            deferred: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn for_run(
        run_id: String,
        agent_name: Option<String>,
        streaming: bool,
        turn: usize,
        entries: Vec<Entry>,
    ) -> Self {
        HookContext {
            run_id,
            agent_name,
            streaming,
            max_turns: DEFAULT_MAX_TURNS,
            output_tool: false,
            turn: AtomicUsize::new(turn),
            model_attempt: AtomicUsize::new(0),
            scratchpad: Scratchpad::default(),
            entries: Mutex::new(entries),
            deferred: Mutex::new(Vec::new()),
        }
    }

    /// This context with the run's limit of model calls and whether its answer comes through
    /// the output tool (see [`max_turns`](Self::max_turns) and
    /// [`output_tool`](Self::output_tool)), e.g. to call a hook directly in a unit test.
    ///
    /// ```
    /// use reins::agent::{HookContext, OUTPUT_TOOL_NAME};
    ///
    /// let ctx = HookContext::new("run-1").with_run_shape(3, true);
    /// assert_eq!(ctx.max_turns(), 3);
    /// assert_eq!(ctx.output_tool(), Some(OUTPUT_TOOL_NAME));
    /// ```
    pub fn with_run_shape(mut self, max_turns: usize, output_tool: bool) -> Self {
        self.max_turns = max_turns;
        self.output_tool = output_tool;
        self
    }

    /// The run's id: unique per run, unchanged when a durable run is resumed.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The one-based index of the current model call (0 before the first call).
    pub fn turn(&self) -> usize {
        self.turn.load(Ordering::Relaxed)
    }

    pub(crate) fn set_turn(&self, turn: usize) {
        self.turn.store(turn, Ordering::Relaxed);
    }

    /// The zero-based index of the current model call within its turn: 0 for the turn's
    /// call, then 1, 2… for each call a hook had made again on another model
    /// ([`OutcomeAction::retry_on`](crate::agent::OutcomeAction::retry_on)). With
    /// [`turn`](Self::turn) it names each model call of a run once, e.g. to count a failed
    /// call and its retry as two.
    pub fn model_attempt(&self) -> usize {
        self.model_attempt.load(Ordering::Relaxed)
    }

    pub(crate) fn set_model_attempt(&self, attempt: usize) {
        self.model_attempt.store(attempt, Ordering::Relaxed);
    }

    /// The most model calls the run may make. A hook that asks the model again on the
    /// call numbered `max_turns` ([`turn`](Self::turn)) ends the run as out of turns, so a
    /// hook with a better reason to give stops there instead.
    pub fn max_turns(&self) -> usize {
        self.max_turns
    }

    /// The tool through which the model gives the run's typed answer
    /// ([`OUTPUT_TOOL_NAME`]), when the run asks for structured output that way; `None` for a
    /// run whose answer is text (or JSON text, with native structured output). A turn that
    /// calls this tool is the run's final answer (none of its other calls runs), so a hook may
    /// ask for it again (`repeat` or `retry_with_feedback`, which answers the call with the
    /// feedback).
    pub fn output_tool(&self) -> Option<&'static str> {
        self.output_tool.then_some(OUTPUT_TOOL_NAME)
    }

    /// Whether the run is streamed.
    pub fn is_streaming(&self) -> bool {
        self.streaming
    }

    /// The agent's name, if it was given one.
    pub fn agent_name(&self) -> Option<&str> {
        self.agent_name.as_deref()
    }

    /// Typed in-memory state shared by all hooks of the run.
    pub fn scratchpad(&self) -> &Scratchpad {
        &self.scratchpad
    }

    /// Records `value` under `kind` in the run's serializable state. Entries are persisted
    /// with the run, so hooks of a resumed run see them.
    pub fn append_entry<T: Serialize + ?Sized>(
        &self,
        kind: impl Into<String>,
        value: &T,
    ) -> Result<(), EntryError> {
        let entry = Entry::of(kind, value)?;
        self.lock_entries().push(entry);
        Ok(())
    }

    /// Records `value` under `kind` in place of the newest entry of that kind (appended when
    /// there is none), and persisted with the run like any entry. For state a hook rewrites as
    /// the run goes (a counter, a ledger) and reads back with [`last_entry`](Self::last_entry):
    /// the run's state then stays the same size however many times it changes, where
    /// [`append_entry`](Self::append_entry) would keep every version.
    ///
    /// ```
    /// use reins::agent::HookContext;
    ///
    /// let ctx = HookContext::new("run-1");
    /// for calls in 1..=3u32 {
    ///     ctx.replace_entry("calls", &calls).unwrap();
    /// }
    /// assert_eq!(ctx.entries::<u32>("calls").unwrap(), vec![3]);
    /// assert_eq!(ctx.last_entry::<u32>("calls").unwrap(), Some(3));
    /// ```
    pub fn replace_entry<T: Serialize + ?Sized>(
        &self,
        kind: impl Into<String>,
        value: &T,
    ) -> Result<(), EntryError> {
        let Entry { kind, value } = Entry::of(kind, value)?;
        self.put_newest(kind, value);
        Ok(())
    }

    /// Puts `value` in place of the newest entry of `kind`, or appends it.
    fn put_newest(&self, kind: impl Into<String> + AsRef<str>, value: Value) {
        let mut entries = self.lock_entries();
        match entries
            .iter_mut()
            .rev()
            .find(|entry| entry.kind == kind.as_ref())
        {
            Some(newest) => newest.value = value,
            None => entries.push(Entry {
                kind: kind.into(),
                value,
            }),
        }
    }

    /// Has the entry `kind` written by `write` from the scratchpad whenever the run's state
    /// is taken (each checkpoint of a durable run, a suspension, the run's end), in place of
    /// the newest entry of that kind; `write` answers `None` when there is nothing new to
    /// record. For state a hook changes on every call and keeps in the scratchpad: it is
    /// then serialized once per checkpoint, not once per change, and a resumed run reads it
    /// back with [`last_entry`](Self::last_entry). Between checkpoints the entries hold the
    /// value as last taken. Registering a kind again changes nothing. (`write` runs while the
    /// scratchpad is free: it may call [`Scratchpad::update`].) A `write` that panics is
    /// logged, and the entry keeps the value it had: the state is taken where no hook call is
    /// left to fail, at a checkpoint or at the run's end.
    ///
    /// ```
    /// use reins::agent::{HookContext, Scratchpad};
    ///
    /// /// Tool calls so far, kept in the scratchpad.
    /// #[derive(Default)]
    /// struct Calls(u64);
    ///
    /// fn record(scratchpad: &Scratchpad) -> Option<serde_json::Value> {
    ///     scratchpad.update(|calls: &mut Calls| Some(calls.0.into()))
    /// }
    ///
    /// let ctx = HookContext::new("run-1");
    /// ctx.defer_entry("calls", record);
    /// for _ in 0..3 {
    ///     ctx.scratchpad().update(|calls: &mut Calls| calls.0 += 1);
    /// }
    /// // Nothing is serialized until the run's state is taken.
    /// assert_eq!(ctx.last_entry::<u64>("calls").unwrap(), None);
    /// ```
    pub fn defer_entry(&self, kind: &'static str, write: fn(&Scratchpad) -> Option<Value>) {
        let mut deferred = self.deferred.lock().unwrap_or_else(PoisonError::into_inner);
        if !deferred.iter().any(|known| known.kind == kind) {
            deferred.push(DeferredEntry { kind, write });
        }
    }

    /// Every entry recorded under `kind`, oldest first, read as `T`.
    pub fn entries<T: DeserializeOwned>(&self, kind: &str) -> Result<Vec<T>, EntryError> {
        self.lock_entries()
            .iter()
            .filter(|entry| entry.kind == kind)
            .map(|entry| entry.read())
            .collect()
    }

    /// The newest entry recorded under `kind`, read as `T`.
    pub fn last_entry<T: DeserializeOwned>(&self, kind: &str) -> Result<Option<T>, EntryError> {
        self.lock_entries()
            .iter()
            .rev()
            .find(|entry| entry.kind == kind)
            .map(|entry| entry.read())
            .transpose()
    }

    /// The run's entries for its state, the deferred ones written first.
    pub(crate) fn snapshot_entries(&self) -> Vec<Entry> {
        // Copied out of its lock, and each value written outside the entries' lock: a hook
        // registers a kind and reads entries while it holds the scratchpad's lock, so neither
        // of the other two locks may be held while the scratchpad's is taken.
        let deferred = self
            .deferred
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for entry in deferred {
            // The hook's own code, run outside any hook call (at a checkpoint or the run's
            // end), so no call is there to fail: a panic keeps the entry as last taken.
            match catch_unwind(AssertUnwindSafe(|| (entry.write)(&self.scratchpad))) {
                Ok(Some(value)) => self.put_newest(entry.kind, value),
                Ok(None) => {}
                Err(panic) => tracing::error!(
                    kind = entry.kind,
                    message = %panic_message(&*panic),
                    "a deferred entry's write panicked; the entry keeps its last value"
                ),
            }
        }
        self.lock_entries().clone()
    }

    fn lock_entries(&self) -> MutexGuard<'_, Vec<Entry>> {
        // A hook that panicked while holding the lock cannot leave a half-written entry (the
        // push is the only mutation), so a poisoned lock is still consistent.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_typed_and_ordered() {
        let ctx = HookContext::new("r");
        ctx.append_entry("audit", &"a").unwrap();
        ctx.append_entry("other", &1).unwrap();
        ctx.append_entry("audit", &"b").unwrap();
        assert_eq!(ctx.entries::<String>("audit").unwrap(), vec!["a", "b"]);
        assert_eq!(
            ctx.last_entry::<String>("audit").unwrap().as_deref(),
            Some("b")
        );
        assert_eq!(ctx.last_entry::<String>("none").unwrap(), None);
        let err = ctx.entries::<u32>("audit").unwrap_err();
        assert_eq!(err.kind, "audit");
    }

    #[derive(Default)]
    struct Pending(Option<u32>);

    fn take_pending(scratchpad: &Scratchpad) -> Option<Value> {
        scratchpad.update(|pending: &mut Pending| pending.0.take().map(Value::from))
    }

    #[test]
    fn a_deferred_entry_is_written_when_the_runs_state_is_taken() {
        let ctx = HookContext::for_run(
            "r".into(),
            None,
            false,
            0,
            vec![Entry {
                kind: "count".into(),
                value: Value::from(1),
            }],
        );
        ctx.defer_entry("count", take_pending);
        ctx.defer_entry("count", take_pending);
        ctx.scratchpad()
            .update(|pending: &mut Pending| pending.0 = Some(5));
        assert_eq!(ctx.last_entry::<u32>("count").unwrap(), Some(1), "not yet");
        let kinds = |entries: Vec<Entry>| -> Vec<(String, Value)> {
            entries.into_iter().map(|e| (e.kind, e.value)).collect()
        };
        assert_eq!(
            kinds(ctx.snapshot_entries()),
            [("count".into(), Value::from(5))]
        );
        // Nothing new: the entry stays as last taken.
        assert_eq!(
            kinds(ctx.snapshot_entries()),
            [("count".into(), Value::from(5))]
        );
        assert_eq!(ctx.last_entry::<u32>("count").unwrap(), Some(5));
    }

    #[test]
    fn a_deferred_write_that_panics_keeps_its_entry_and_spares_the_others() {
        fn panics(scratchpad: &Scratchpad) -> Option<Value> {
            // Inside the scratchpad's lock, which the panic poisons.
            scratchpad.update(|_: &mut Pending| panic!("write bug"))
        }
        let ctx = HookContext::new("r");
        ctx.replace_entry("broken", &1).unwrap();
        ctx.defer_entry("broken", panics);
        ctx.defer_entry("count", take_pending);
        ctx.scratchpad()
            .update(|pending: &mut Pending| pending.0 = Some(7));
        let entries: Vec<_> = ctx
            .snapshot_entries()
            .into_iter()
            .map(|e| (e.kind, e.value))
            .collect();
        assert_eq!(
            entries,
            [
                ("broken".into(), Value::from(1)),
                ("count".into(), Value::from(7))
            ]
        );
        // The scratchpad is still usable.
        ctx.scratchpad()
            .update(|pending: &mut Pending| pending.0 = Some(8));
        assert_eq!(ctx.snapshot_entries().len(), 2);
        assert_eq!(ctx.last_entry::<u32>("count").unwrap(), Some(8));
    }

    #[test]
    fn a_replaced_entry_keeps_its_place_and_leaves_other_kinds_alone() {
        let ctx = HookContext::new("r");
        ctx.replace_entry("ledger", &1).unwrap();
        ctx.append_entry("audit", &10).unwrap();
        ctx.replace_entry("ledger", &2).unwrap();
        ctx.append_entry("audit", &11).unwrap();
        assert_eq!(ctx.entries::<u32>("ledger").unwrap(), vec![2]);
        assert_eq!(ctx.entries::<u32>("audit").unwrap(), vec![10, 11]);
        let kinds: Vec<_> = ctx
            .snapshot_entries()
            .into_iter()
            .map(|entry| entry.kind)
            .collect();
        assert_eq!(kinds, ["ledger", "audit", "audit"]);
        // Of entries appended earlier (by a version that appended), the newest is replaced.
        ctx.append_entry("ledger", &3).unwrap();
        ctx.replace_entry("ledger", &4).unwrap();
        assert_eq!(ctx.entries::<u32>("ledger").unwrap(), vec![2, 4]);
        // A value that cannot be recorded is an error, and the entry stays as it was.
        let unrecordable = std::collections::BTreeMap::from([((1u8, 2u8), 3u8)]);
        let error = ctx.replace_entry("ledger", &unrecordable).unwrap_err();
        assert_eq!(error.kind, "ledger");
        assert_eq!(ctx.last_entry::<u32>("ledger").unwrap(), Some(4));
    }
}
