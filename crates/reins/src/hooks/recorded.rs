//! A ready-made hook's per-run state ([`Recorded`]): kept in the run's scratchpad while the
//! run goes, and recorded as the one entry of its kind whenever the run's state is taken
//! (each checkpoint, the run's end), so a durable run resumed in another process starts from
//! it, and the run's state does not grow with every change.

use crate::agent::{EntryError, HookContext, Scratchpad};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A hook's state for one run, as the scratchpad holds it (use it as the scratchpad's value,
/// `scratchpad().update(|state: &mut Recorded<T>| …)`).
pub(crate) struct Recorded<T> {
    /// `None` until first used in this process.
    state: Option<T>,
    /// Whether it changed since it was last recorded in the run's entries.
    unrecorded: bool,
}

impl<T> Default for Recorded<T> {
    fn default() -> Self {
        Recorded {
            state: None,
            unrecorded: false,
        }
    }
}

impl<T: Serialize + DeserializeOwned + Send + 'static> Recorded<T> {
    /// The run's state: on first use in this process, the run's newest entry of `kind` (a
    /// resumed run's), else `new()`, which the next checkpoint records.
    pub(crate) fn load(
        &mut self,
        ctx: &HookContext,
        kind: &'static str,
        new: impl FnOnce() -> T,
    ) -> Result<&mut T, EntryError> {
        let state = match self.state.take() {
            Some(state) => state,
            None => {
                let state = match ctx.last_entry::<T>(kind)? {
                    Some(stored) => stored,
                    None => {
                        self.unrecorded = true;
                        new()
                    }
                };
                ctx.defer_entry(kind, record::<T>);
                state
            }
        };
        Ok(self.state.insert(state))
    }

    /// The state as it stands, if it was used in this process.
    pub(crate) fn get(&self) -> Option<&T> {
        self.state.as_ref()
    }

    /// The state changed: the next checkpoint records it.
    pub(crate) fn changed(&mut self) {
        self.unrecorded = true;
    }
}

/// The state's value for its entry, if it changed since it was last recorded.
fn record<T: Serialize + Send + 'static>(scratchpad: &Scratchpad) -> Option<Value> {
    scratchpad.update(|recorded: &mut Recorded<T>| {
        let state = recorded.state.as_ref().filter(|_| recorded.unrecorded)?;
        // The hooks' states are plain data, which always serializes.
        let value = serde_json::to_value(state).ok()?;
        recorded.unrecorded = false;
        Some(value)
    })
}
