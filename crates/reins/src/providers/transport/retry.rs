//! When a failed request is tried again, and how long to wait first.

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};
use std::time::Duration;

/// When and how often a failed request is tried again: HTTP 429 and 5xx, and connection
/// failures, with exponential backoff and jitter, honoring `Retry-After`.
///
/// A failure after the request was sent (no headers within
/// [`Timeouts::first_byte`](super::Timeouts::first_byte), a connection dropped before the
/// answer, a 5xx) is retried too, though the server may have received the request and may
/// still process it: the model call may be made twice. See `first_byte`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts after the first (0 disables retries).
    pub max_retries: u32,
    /// The wait before the first retry; it doubles each time.
    pub initial_backoff: Duration,
    /// The longest wait between attempts (a longer `Retry-After` is capped to it).
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// No retries.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// The wait before retry number `attempt` (1-based): the server's `Retry-After` when it
    /// gave one, else exponential backoff with full jitter.
    pub(crate) fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.max_backoff);
        }
        let exponential = self
            .initial_backoff
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
            .min(self.max_backoff);
        // Full jitter keeps many clients that failed together from retrying together.
        jittered(exponential, fastrand_fraction())
    }
}

/// `wait` scaled to between a half and all of it by `jitter` (in [0, 1)). Not
/// `Duration::mul_f64`, which panics when the product overflows: a backoff configured near
/// `Duration::MAX` reaches that as the factor nears 1.
fn jittered(wait: Duration, jitter: f64) -> Duration {
    Duration::try_from_secs_f64(wait.as_secs_f64() * (0.5 + jitter / 2.0))
        .map_or(wait, |scaled| scaled.min(wait))
}

/// A number in [0, 1) from the clock's sub-second noise: enough to spread retries, and no
/// extra dependency.
fn fastrand_fraction() -> f64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mixed = (u64::from(nanos)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11;
    mixed as f64 / (1u64 << 53) as f64
}

/// Whether an answer with this status is worth another attempt: rate limits and server
/// errors (Anthropic's 529 "overloaded" included).
pub(crate) fn retryable_status(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
}

/// What the warning of a retried model call says, for a person: the failure's kind in
/// words ([`CompletionError::kind_in_words`]), the wait, and which attempt comes next of the
/// most the policy makes (`attempt` is the retry's number, 1-based; the first call was 1).
///
/// [`CompletionError::kind_in_words`]: crate::completion::CompletionError
pub(crate) fn retrying_in_words(
    kind: &str,
    wait: Duration,
    attempt: u32,
    max_retries: u32,
) -> String {
    format!(
        "the model call failed ({kind}); trying again in {:.1} s (attempt {} of {})",
        wait.as_secs_f64(),
        attempt.saturating_add(1),
        max_retries.saturating_add(1)
    )
}

pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        if !seconds.is_finite() || seconds < 0.0 {
            return None;
        }
        // More seconds than a `Duration` holds is as long as can be (`delay` caps it);
        // `from_secs_f64` would panic on it.
        return Some(Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX));
    }
    // An HTTP date: wait until then.
    let when = httpdate_to_system_time(value)?;
    when.duration_since(std::time::SystemTime::now()).ok()
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form `Retry-After` uses.
/// A field out of its range is not a date; the arithmetic is checked, since the numbers are
/// the server's (an overflow would panic).
fn httpdate_to_system_time(value: &str) -> Option<std::time::SystemTime> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let day: u64 = day.parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)? as u64
        + 1;
    let year: u64 = year.parse().ok()?;
    let mut hms = time.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    // Four-digit years, as the format has them; a leap second (60) is allowed.
    if !(1..=31).contains(&day) || !(1..=9999).contains(&year) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y, mo) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * mo + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = (era * 146_097 + doe).checked_sub(719_468)?;
    let secs = days * 86_400 + h * 3600 + m * 60 + s;
    std::time::UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn a_retry_is_said_in_words_with_the_wait_and_the_attempt_to_come() {
        assert_eq!(
            retrying_in_words(
                "could not reach the server",
                Duration::from_millis(479),
                1,
                3
            ),
            "the model call failed (could not reach the server); trying again in 0.5 s \
             (attempt 2 of 4)"
        );
        assert_eq!(
            retrying_in_words(
                "the server is limiting requests: HTTP 429",
                Duration::from_secs(30),
                3,
                3
            ),
            "the model call failed (the server is limiting requests: HTTP 429); trying again \
             in 30.0 s (attempt 4 of 4)"
        );
    }

    #[test]
    fn backoff_grows_is_capped_and_honors_retry_after() {
        let policy = RetryPolicy {
            max_retries: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(1),
        };
        let first = policy.delay(1, None);
        assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
        let fifth = policy.delay(5, None);
        assert!(fifth >= Duration::from_millis(500) && fifth <= Duration::from_secs(1));
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(60))),
            Duration::from_secs(1)
        );
        assert_eq!(
            policy.delay(1, Some(Duration::from_millis(7))),
            Duration::from_millis(7)
        );
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        assert_eq!(
            httpdate_to_system_time("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(std::time::UNIX_EPOCH + Duration::from_secs(784_111_777))
        );
        headers.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
        );
        assert_eq!(
            retry_after(&headers),
            None,
            "a date in the past means no wait"
        );
    }

    #[test]
    fn a_backoff_near_the_longest_duration_is_jittered_without_overflow() {
        // The largest fraction the clock's noise gives: the factor then rounds to 1.
        let largest = ((1u64 << 53) - 1) as f64 / (1u64 << 53) as f64;
        for jitter in [0.0, 0.5, largest] {
            let wait = jittered(Duration::MAX, jitter);
            assert!(
                wait >= Duration::MAX / 2 - Duration::from_secs(1),
                "{wait:?}"
            );
        }
        assert_eq!(
            jittered(Duration::from_secs(2), 0.5),
            Duration::from_millis(1500)
        );
    }

    #[test]
    fn hostile_retry_after_values_never_panic() {
        let policy = RetryPolicy::default();
        let read = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(RETRY_AFTER, HeaderValue::from_static(value));
            retry_after(&headers)
        };
        // Too long for a `Duration`: as long as can be, then capped by the policy.
        let huge = read("1e300");
        assert_eq!(policy.delay(1, huge), policy.max_backoff);
        assert_eq!(read("-5"), None);
        assert_eq!(read("NaN"), None);
        assert_eq!(read("inf"), None);
        // Dates far past what the arithmetic holds are not dates.
        assert_eq!(read("Sun, 06 Nov 99999999999999999 08:49:37 GMT"), None);
        assert_eq!(read("Sun, 99999999999999 Nov 2030 08:49:37 GMT"), None);
        assert_eq!(read("Sun, 06 Nov 2030 99999999999999:49:37 GMT"), None);
        assert_eq!(read("Sun, 06 Nov 0 08:49:37 GMT"), None);
    }
}
