//! What of reins's own logging the trace export leaves out, and how a warning reads there.
//!
//! reins's libraries log what they recover from (a tool source that fails to list its tools,
//! a lease not renewed, a cache not written) with the error's text, for the person at the
//! terminal. Inside a run those events would become events of its spans, exported whether
//! content is recorded or not: the text may hold a server's words, a prompt a provider
//! echoed, or a URL's credentials. So an event of reins's crates with an `error` field, or at
//! the `ERROR` level (a hook's panic and its message), is not exported (stderr and other
//! layers still get it). And no event changes a span's status: reins records a span's failure
//! itself (`error.type`, and the status described by it), while tracing-opentelemetry would
//! otherwise mark a span that recovered as failed (any `ERROR` event does) and describe it
//! with the error's text.

use tracing::{Level, Metadata};

/// Whether an event or span of `metadata` is exported: every one but an event of reins's
/// crates carrying an `error` field or at the `ERROR` level.
pub(crate) fn exported(metadata: &Metadata<'_>) -> bool {
    !(metadata.is_event()
        && is_reins_crate(metadata.target())
        && (*metadata.level() == Level::ERROR || metadata.fields().field("error").is_some()))
}

/// Whether `target` is one of reins's crates' (`reins`, `reins::tools`, `reins_mcp`, ...).
fn is_reins_crate(target: &str) -> bool {
    let Some(rest) = target.strip_prefix("reins") else {
        return false;
    };
    rest.is_empty() || rest.starts_with("::") || rest.starts_with('_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reins_crates_are_told_by_their_target() {
        for (target, reins) in [
            ("reins", true),
            ("reins::tools", true),
            ("reins_mcp", true),
            ("reins_mcp::server_log", true),
            ("reinsurance", false),
            ("myapp", false),
        ] {
            assert_eq!(is_reins_crate(target), reins, "{target}");
        }
    }
}
