//! Wrong tokens, counted: an inbox reachable from other machines is guessed at, and each
//! guess cost an attacker nothing but a 401. Past [`ALLOWED_PER_MINUTE`] wrong tokens in a
//! minute, the next ones are answered 429 until the minute is over. The right token is
//! always let in, so guessing never locks a person out.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Wrong tokens answered 401 in one minute, the rest 429: enough for a person mistyping, far
/// too few to guess a token of 16 characters.
pub(super) const ALLOWED_PER_MINUTE: u32 = 10;

const MINUTE: Duration = Duration::from_secs(60);

/// The wrong tokens of the current minute.
#[derive(Debug)]
pub(super) struct WrongTokens {
    /// When the current minute began, and how many wrong tokens came in it.
    window: Mutex<(Instant, u32)>,
}

impl WrongTokens {
    pub(super) fn new() -> Self {
        WrongTokens {
            window: Mutex::new((Instant::now(), 0)),
        }
    }

    /// Counts one wrong token. `None` while the minute allows it; else how long until it
    /// is over (the `Retry-After` of the 429).
    pub(super) fn count(&self) -> Option<Duration> {
        let now = Instant::now();
        // A poisoned count is still a count: nothing holding it can leave it half-written.
        let mut window = self
            .window
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (began, count) = &mut *window;
        if now.duration_since(*began) >= MINUTE {
            *began = now;
            *count = 0;
        }
        *count = count.saturating_add(1);
        (*count > ALLOWED_PER_MINUTE).then(|| MINUTE.saturating_sub(now.duration_since(*began)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_tokens_past_the_allowance_wait_out_the_minute() {
        let wrong = WrongTokens::new();
        for _ in 0..ALLOWED_PER_MINUTE {
            assert_eq!(wrong.count(), None);
        }
        let wait = wrong.count().expect("one too many");
        assert!(wait > Duration::ZERO && wait <= MINUTE, "{wait:?}");
        // A new minute allows as many again.
        {
            let mut window = wrong.window.lock().expect("the count");
            window.0 = window.0.checked_sub(MINUTE).expect("a minute ago");
        }
        assert_eq!(wrong.count(), None);
    }
}
