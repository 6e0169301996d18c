//! A registry for one test's recorder (`WithSubscriber::with_subscriber`) that sees every span
//! and event reins emits, whatever other tests run beside it
//! ([`reins_test_servers::ask_every_subscriber`] says why that needs care).

use tracing_subscriber::Registry;

/// A registry to layer a test's recorder on.
pub fn registry() -> Registry {
    reins_test_servers::ask_every_subscriber();
    tracing_subscriber::registry()
}
