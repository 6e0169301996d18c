//! [`Scratchpad`]: typed values the hooks of one run share, in memory for the run only.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Typed state shared by the hooks of one run: one value per type, created with `Default` on
/// first use. It lives in memory for the run only; use entries for state that must survive a
/// durable pause.
///
/// Two hooks of one run share a count through it; each run starts from zero:
///
/// ```
/// use reins::prelude::*;
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// /// How many searches this run made (the scratchpad's value of this type).
/// #[derive(Default)]
/// struct Searches(u32);
///
/// /// Counts the run's searches.
/// struct CountSearches;
///
/// impl AgentHook for CountSearches {
///     async fn on_outcome(&self, ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
///         if event.tool_result().is_some_and(|r| r.tool_name() == "search") {
///             ctx.scratchpad().update(|searches: &mut Searches| searches.0 += 1);
///         }
///         OutcomeAction::proceed()
///     }
/// }
///
/// /// Ends a run that searched twice without answering.
/// struct TwoSearches;
///
/// impl AgentHook for TwoSearches {
///     async fn on_completion_call(
///         &self,
///         ctx: &HookContext,
///         _event: CompletionCallEvent<'_>,
///     ) -> CompletionCallAction {
///         match ctx.scratchpad().update(|searches: &mut Searches| searches.0) {
///             2.. => CompletionCallAction::stop("two searches found nothing"),
///             _ => CompletionCallAction::continue_run(),
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let search = tool_fn("search", "Searches.", |_: serde_json::Value| async {
///     Ok::<_, std::convert::Infallible>("nothing")
/// });
/// let model = ScriptedModel::new([
///     Turn::tool_call("search", json!({"q": "a"})),
///     Turn::tool_call("search", json!({"q": "b"})),
///     Turn::text("Never reached."),
/// ]);
/// let agent = AgentBuilder::new(model)
///     .tool(search)
///     .add_hook(CountSearches)
///     .add_hook(TwoSearches)
///     .build();
/// let error = agent.prompt("Find it.").await.unwrap_err();
/// assert!(format!("{error}").contains("two searches found nothing"), "{error}");
/// # }
/// ```
#[derive(Default)]
pub struct Scratchpad {
    values: Mutex<Values>,
}

/// The scratchpad's values by type.
type Values = HashMap<TypeId, Box<dyn Any + Send>, BuildHasherDefault<TypeIdHasher>>;

/// Hashes a `TypeId` by its own bits: it is a hash already, and the default hasher (SipHash)
/// cost more than the rest of a scratchpad update, which ready-made hooks make on every call.
#[derive(Default)]
struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        // Not how `TypeId` hashes today (`write_u64`), but correct whatever it writes.
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, bits: u64) {
        self.0 ^= bits;
    }

    fn finish(&self) -> u64 {
        self.0
    }
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

    fn lock(&self) -> MutexGuard<'_, Values> {
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
    fn scratchpad_keeps_values_of_many_types_apart() {
        let pad = Scratchpad::default();
        pad.set(1u8);
        pad.set(2u16);
        pad.set(3u32);
        pad.set(4u64);
        pad.set("five");
        pad.set(Counter(6));
        pad.set(vec![7i32]);
        assert_eq!(pad.get::<u8>(), Some(1));
        assert_eq!(pad.get::<u16>(), Some(2));
        assert_eq!(pad.get::<u32>(), Some(3));
        assert_eq!(pad.get::<u64>(), Some(4));
        assert_eq!(pad.get::<&str>(), Some("five"));
        assert_eq!(pad.get::<Counter>(), Some(Counter(6)));
        assert_eq!(pad.get::<Vec<i32>>(), Some(vec![7]));
        assert_eq!(pad.get::<i64>(), None);
    }
}
