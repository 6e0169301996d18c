use super::ToolResultExtensions;
use serde_json::Value;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

tokio::task_local! {
    static CURRENT_CALL: ToolCallContext;
}

/// What a running tool can learn about the call it serves, and where it attaches metadata.
///
/// Inside [`Tool::call`](super::Tool::call), [`ToolCallContext::current`] returns the context
/// of the call being executed.
#[derive(Debug, Clone)]
pub struct ToolCallContext {
    inner: Arc<CallInfo>,
}

/// The call's three ids in one string (`run id`, then `internal call id`, then `tool call
/// id`), so a context costs two allocations whatever the ids' lengths.
#[derive(Debug)]
struct CallInfo {
    ids: String,
    /// Where the internal call id starts and ends in `ids`.
    internal_start: usize,
    internal_end: usize,
    extensions: Mutex<ToolResultExtensions>,
}

impl ToolCallContext {
    /// A context for the call `internal_call_id` (answering the provider's `tool_call_id`)
    /// of the run `run_id`.
    pub fn new(
        run_id: impl AsRef<str>,
        internal_call_id: impl AsRef<str>,
        tool_call_id: impl AsRef<str>,
    ) -> Self {
        let (run_id, internal_call_id, tool_call_id) = (
            run_id.as_ref(),
            internal_call_id.as_ref(),
            tool_call_id.as_ref(),
        );
        let mut ids =
            String::with_capacity(run_id.len() + internal_call_id.len() + tool_call_id.len());
        ids.push_str(run_id);
        ids.push_str(internal_call_id);
        ids.push_str(tool_call_id);
        ToolCallContext {
            inner: Arc::new(CallInfo {
                internal_start: run_id.len(),
                internal_end: run_id.len() + internal_call_id.len(),
                ids,
                extensions: Mutex::new(ToolResultExtensions::new()),
            }),
        }
    }

    /// The context of the tool call running on this task, if any.
    pub fn current() -> Option<ToolCallContext> {
        CURRENT_CALL.try_with(Clone::clone).ok()
    }

    /// The id of the run the call belongs to.
    pub fn run_id(&self) -> &str {
        self.inner
            .ids
            .get(..self.inner.internal_start)
            .unwrap_or_default()
    }

    /// reins' id of this call, unique within the run and stable across re-executions.
    pub fn internal_call_id(&self) -> &str {
        let info = &*self.inner;
        info.ids
            .get(info.internal_start..info.internal_end)
            .unwrap_or_default()
    }

    /// The provider's id of this call.
    pub fn tool_call_id(&self) -> &str {
        self.inner
            .ids
            .get(self.inner.internal_end..)
            .unwrap_or_default()
    }

    /// A stable id of this call's effect, the same on every re-execution of the same call of
    /// the same run: use it as an idempotency key for side effects.
    pub fn effect_id(&self) -> String {
        format!("{}/{}", self.run_id(), self.internal_call_id())
    }

    /// Attaches metadata to the call's result; hooks see it, the model never does.
    pub fn set_extension(&self, key: impl Into<String>, value: Value) {
        self.inner
            .extensions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, value);
    }

    pub(crate) fn take_extensions(&self) -> ToolResultExtensions {
        std::mem::take(
            &mut *self
                .inner
                .extensions
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    pub(crate) fn scope<F: Future>(self, future: F) -> impl Future<Output = F::Output> {
        CURRENT_CALL.scope(self, future)
    }
}

#[cfg(test)]
mod tests {
    use super::ToolCallContext;

    #[test]
    fn each_id_reads_back_as_given() {
        for (run, internal, call) in [
            ("run-1", "t1c0", "call_abc"),
            ("", "", ""),
            ("rün", "", "ça"),
            ("r", "t2c1", ""),
        ] {
            let context = ToolCallContext::new(run, internal, call);
            assert_eq!(
                (
                    context.run_id(),
                    context.internal_call_id(),
                    context.tool_call_id()
                ),
                (run, internal, call)
            );
            assert_eq!(context.effect_id(), format!("{run}/{internal}"));
        }
    }
}
