//! Per-test tracing subscribers that see every span and event, whatever other tests run beside
//! them in the same process.
//!
//! tracing caches, per callsite, whether any subscriber is interested. While exactly one
//! subscriber exists in the process, a callsite first reached on another thread (another
//! test's run, with no subscriber of its own) asks only that thread's default — none — and is
//! cached as "never": the one test's subscriber then misses it, now and then, depending on
//! which test reaches the callsite first. A second subscriber kept for the whole process makes
//! tracing ask every live subscriber instead.

use std::sync::OnceLock;
use tracing::Dispatch;
use tracing::subscriber::NoSubscriber;

/// Call before setting a test's own subscriber (`set_default`, `with_subscriber`): keeps a
/// subscriber alive for the rest of the process so that tracing asks every live subscriber
/// whether a callsite is wanted.
pub fn ask_every_subscriber() {
    static ANCHOR: OnceLock<Dispatch> = OnceLock::new();
    ANCHOR.get_or_init(|| Dispatch::new(NoSubscriber::default()));
}
