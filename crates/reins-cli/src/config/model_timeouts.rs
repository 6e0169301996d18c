//! How long a hosted model's call may take, from an agent file's `[model]`: `timeout_secs`
//! (the whole call, retries and the whole answer included) and `idle_timeout_secs` (the
//! longest silence: before the answer begins and between its parts). Checked by
//! `reins check`, and read as the provider's [`Timeouts`].
//!
//! A slow server (a large model on a CPU, a reasoning model thinking for minutes) would
//! otherwise fail every long answer at the library's defaults, with nothing in the file to
//! give it more time.

use super::diagnostic::Diagnostic;
use super::{LoadedAgent, ModelConfig};
use reins::providers::Timeouts;
use std::ops::RangeInclusive;
use std::time::Duration;
use toml::Spanned;

/// The most seconds either timeout may be given: a week. More is a typo, and no call runs
/// that long.
const MAX_SECS: u64 = 7 * 24 * 3600;

/// The seconds either timeout may be given; the check refuses any other.
const ALLOWED_SECS: RangeInclusive<u64> = 1..=MAX_SECS;

/// The provider's timeouts for `config`: the library's defaults, with the whole call and the
/// silences the file sets (a value the check refuses keeps the default).
pub fn timeouts_of(config: &ModelConfig) -> Timeouts {
    let mut timeouts = Timeouts::default();
    if let Some(total) = seconds(&config.timeout_secs) {
        timeouts.total = total;
    }
    if let Some(idle) = seconds(&config.idle_timeout_secs) {
        // The wait for the answer to begin is a silence too.
        timeouts.first_byte = idle;
        timeouts.idle = idle;
    }
    timeouts
}

/// A checked value as a duration.
fn seconds(value: &Option<Spanned<u64>>) -> Option<Duration> {
    value
        .as_ref()
        .map(|secs| *secs.get_ref())
        .filter(|secs| ALLOWED_SECS.contains(secs))
        .map(Duration::from_secs)
}

/// Each timeout from 1 second to a week, and neither on the local model, which runs in this
/// process and has no server to wait for.
pub(super) fn check_timeouts(
    agent: &LoadedAgent,
    config: &ModelConfig,
    problems: &mut Vec<Diagnostic>,
) {
    let local = config.provider.get_ref() == "local";
    let defaults = Timeouts::default();
    for (key, value, default) in [
        ("timeout_secs", &config.timeout_secs, defaults.total),
        (
            "idle_timeout_secs",
            &config.idle_timeout_secs,
            defaults.idle,
        ),
    ] {
        let Some(value) = value else { continue };
        if local {
            problems.push(agent.error_at(
                value.span(),
                format!(
                    "`{key}` is for a model reached over HTTP: the local model runs in this \
                     process (bound its answers with `max_tokens`)"
                ),
            ));
        } else if !ALLOWED_SECS.contains(value.get_ref()) {
            problems.push(agent.error_at(
                value.span(),
                format!(
                    "`{key}` is {}: give seconds from 1 to {MAX_SECS} (a week), or leave it \
                     out for the default ({} seconds)",
                    value.get_ref(),
                    default.as_secs()
                ),
            ));
        }
    }
}
