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

#[derive(Debug)]
struct CallInfo {
    run_id: String,
    internal_call_id: String,
    tool_call_id: String,
    extensions: Mutex<ToolResultExtensions>,
}

impl ToolCallContext {
    /// A context for the call `internal_call_id` (answering the provider's `tool_call_id`)
    /// of the run `run_id`.
    pub fn new(
        run_id: impl Into<String>,
        internal_call_id: impl Into<String>,
        tool_call_id: impl Into<String>,
    ) -> Self {
        ToolCallContext {
            inner: Arc::new(CallInfo {
                run_id: run_id.into(),
                internal_call_id: internal_call_id.into(),
                tool_call_id: tool_call_id.into(),
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
        &self.inner.run_id
    }

    /// reins' id of this call, unique within the run and stable across re-executions.
    pub fn internal_call_id(&self) -> &str {
        &self.inner.internal_call_id
    }

    /// The provider's id of this call.
    pub fn tool_call_id(&self) -> &str {
        &self.inner.tool_call_id
    }

    /// A stable id of this call's effect, the same on every re-execution of the same call of
    /// the same run: use it as an idempotency key for side effects.
    pub fn effect_id(&self) -> String {
        format!("{}/{}", self.inner.run_id, self.inner.internal_call_id)
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
