//! Whether the server ended a session (see the parent module's documentation).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the server ended the session: it answered a POST carrying the session id with 404.
/// Shared by a client, its clones, and the connection they serve.
#[derive(Clone, Default)]
pub(crate) struct SessionEnd(Arc<AtomicBool>);

impl SessionEnd {
    /// Whether the server ended the session.
    pub(crate) fn has_ended(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    pub(super) fn mark(&self) {
        self.0.store(true, Ordering::Release);
    }
}
