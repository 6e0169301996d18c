use crate::run::{Entry, EntryError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Run-scoped information and state handed to every hook method.
///
/// A context is shared by all hooks of one run (and by concurrent tool calls when
/// `tool_concurrency > 1`), so everything in it is safe to use from several tasks at once.
#[derive(Debug)]
pub struct HookContext {
    run_id: String,
    agent_name: Option<String>,
    streaming: bool,
    turn: AtomicUsize,
    scratchpad: Scratchpad,
    entries: Mutex<Vec<Entry>>,
}

impl HookContext {
    /// A context for the run `run_id`, e.g. to call a hook directly in a unit test.
    pub fn new(run_id: impl Into<String>) -> Self {
        HookContext {
            run_id: run_id.into(),
            agent_name: None,
            streaming: false,
            turn: AtomicUsize::new(0),
            scratchpad: Scratchpad::default(),
            entries: Mutex::new(Vec::new()),
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
            turn: AtomicUsize::new(turn),
            scratchpad: Scratchpad::default(),
            entries: Mutex::new(entries),
        }
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
        let kind = kind.into();
        let value = serde_json::to_value(value).map_err(|source| EntryError {
            kind: kind.clone(),
            message: source.to_string(),
        })?;
        self.lock_entries().push(Entry { kind, value });
        Ok(())
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

    pub(crate) fn snapshot_entries(&self) -> Vec<Entry> {
        self.lock_entries().clone()
    }

    fn lock_entries(&self) -> MutexGuard<'_, Vec<Entry>> {
        // A hook that panicked while holding the lock cannot leave a half-written entry (the
        // push is the only mutation), so a poisoned lock is still consistent.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Typed state shared by the hooks of one run: one value per type, created with `Default` on
/// first use. It lives in memory for the run only; use entries for state that must survive a
/// durable pause.
#[derive(Default)]
pub struct Scratchpad {
    values: Mutex<HashMap<TypeId, Box<dyn Any + Send>>>,
}

impl std::fmt::Debug for Scratchpad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = self.lock().len();
        write!(f, "Scratchpad({count} values)")
    }
}

impl Scratchpad {
    /// Runs `f` on the value of type `T`, created with `T::default()` if absent, and returns
    /// what `f` returns.
    pub fn update<T: Default + Send + 'static, R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut values = self.lock();
        let slot = values
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::new(T::default()));
        match slot.downcast_mut::<T>() {
            Some(value) => f(value),
            // The map is keyed by the value's own TypeId, so the slot always holds a `T`;
            // replace it rather than panic if that ever did not hold.
            None => {
                let mut value = T::default();
                let result = f(&mut value);
                *slot = Box::new(value);
                result
            }
        }
    }

    /// A copy of the value of type `T`, if one was stored.
    pub fn get<T: Clone + 'static>(&self) -> Option<T> {
        self.lock()
            .get(&TypeId::of::<T>())
            .and_then(|value| value.downcast_ref::<T>())
            .cloned()
    }

    /// Stores `value`, returning the previous value of that type.
    pub fn set<T: Send + 'static>(&self, value: T) -> Option<T> {
        self.lock()
            .insert(TypeId::of::<T>(), Box::new(value))
            .and_then(|old| old.downcast::<T>().ok())
            .map(|old| *old)
    }

    /// Removes and returns the value of type `T`.
    pub fn remove<T: 'static>(&self) -> Option<T> {
        self.lock()
            .remove(&TypeId::of::<T>())
            .and_then(|old| old.downcast::<T>().ok())
            .map(|old| *old)
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<TypeId, Box<dyn Any + Send>>> {
        self.values.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default, Clone, Debug, PartialEq)]
    struct Counter(u32);

    #[test]
    fn scratchpad_keeps_one_value_per_type() {
        let pad = Scratchpad::default();
        assert_eq!(
            pad.update(|c: &mut Counter| {
                c.0 += 1;
                c.0
            }),
            1
        );
        assert_eq!(
            pad.update(|c: &mut Counter| {
                c.0 += 1;
                c.0
            }),
            2
        );
        assert_eq!(pad.get::<Counter>(), Some(Counter(2)));
        assert_eq!(pad.set(Counter(9)), Some(Counter(2)));
        assert_eq!(pad.remove::<Counter>(), Some(Counter(9)));
        assert_eq!(pad.get::<Counter>(), None);
    }

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
}
