//! Checks of the ready-made hooks' tables: a cache that records or replays (one of them), and a
//! loop breaker's counts.

use super::LoadedAgent;
use super::diagnostic::Diagnostic;

/// `[hooks.cache]` and `[hooks.loop_breaker]`.
pub(super) fn check_hooks(agent: &LoadedAgent, problems: &mut Vec<Diagnostic>) {
    let file = &agent.file;
    if let Some(cache) = &file.hooks.cache {
        let config = cache.get_ref();
        if config.record.is_some() == config.replay.is_some() {
            problems.push(agent.error_at(
                cache.span(),
                "`[hooks.cache]` needs one of `record = \"<file>\"` (call the model, keep its \
                 responses) or `replay = \"<file>\"` (serve only recorded responses)",
            ));
        }
    }
    if let Some(breaker) = &file.hooks.loop_breaker {
        for (key, count) in [
            ("feedback_after", &breaker.feedback_after),
            ("stop_after", &breaker.stop_after),
        ] {
            if let Some(count) = count.as_ref().filter(|count| *count.get_ref() < 2) {
                problems.push(agent.error_at(
                    count.span(),
                    format!("`{key}` must be at least 2: a first call is no repeat"),
                ));
            }
        }
    }
}
