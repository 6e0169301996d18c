//! A model's prices, per million tokens, and the cost of the tokens it used.

use crate::completion::Usage;

/// What one model's tokens cost, per million: input read plainly, input read from the
/// provider's prompt cache, input written to it, and output.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Price {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

impl Price {
    /// `(input, output)` with the cache prices given, or the input price for each not given.
    pub fn new((input, output): (f64, f64), cache: Option<(f64, f64)>) -> Self {
        let (cache_read, cache_write) = cache.unwrap_or((input, input));
        Price {
            input,
            output,
            cache_read,
            cache_write,
        }
    }

    /// The cost of `usage`: its cached input at the cache prices, the rest of its input at
    /// the input price. The cache counts are parts of the input ([`cached_within_input`]
    /// keeps them so in the ledger); they are cut to it here again, so no count can take
    /// tokens off the input twice.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = cached_within_input(*usage);
        let read = cached.cache_read_input_tokens;
        let written = cached.cache_creation_input_tokens;
        let plain = usage.input_tokens - read - written;
        // Token counts stay far below 2^53, where an f64 is exact.
        (plain as f64 * self.input
            + read as f64 * self.cache_read
            + written as f64 * self.cache_write
            + usage.output_tokens as f64 * self.output)
            / 1e6
    }
}

/// `usage` with its cache counts cut to what its input holds: the reads first, then the
/// writes to what is left. A provider (or a server posing as one) reporting more cached
/// tokens than input tokens would otherwise have input priced at a cache price it was not.
pub(super) fn cached_within_input(usage: Usage) -> Usage {
    let read = usage.cache_read_input_tokens.min(usage.input_tokens);
    let written = (usage.cache_creation_input_tokens).min(usage.input_tokens - read);
    Usage {
        cache_read_input_tokens: read,
        cache_creation_input_tokens: written,
        ..usage
    }
}

/// Whether every one of `prices` can be used: finite and not negative.
pub(super) fn valid(prices: &[f64]) -> bool {
    prices
        .iter()
        .all(|price| price.is_finite() && *price >= 0.0)
}
