//! RFC 3339 timestamps from `SystemTime`, without a date-time dependency.

use std::time::{SystemTime, UNIX_EPOCH};

/// A time as RFC 3339 text in UTC with milliseconds, e.g. `2024-02-29T12:34:56.500Z`, kept
/// inline: an audit line writes one for every dispatch and outcome, and `format!` would cost
/// more than the rest of the line.
pub(crate) struct Rfc3339([u8; 24]);

impl Rfc3339 {
    /// `time`, read in UTC. Times before 1970 read as the epoch; times after 9999 as the last
    /// millisecond of 9999.
    pub(crate) fn of(time: SystemTime) -> Self {
        /// 9999-12-31T23:59:59Z, the last second a four-digit year can write.
        const MAX_SECS: u64 = 253_402_300_799;
        // Seconds and milliseconds apart: a `u128` count of milliseconds costs a 128-bit
        // division per line.
        let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
        let (secs, millis) = match since.as_secs() {
            secs if secs > MAX_SECS => (MAX_SECS, 999),
            secs => (secs, since.subsec_millis()),
        };
        // Fits: MAX_SECS < 2^38.
        let secs = secs as i64;
        let (year, month, day) = civil_from_days(secs.div_euclid(86_400));
        let of_day = secs.rem_euclid(86_400);
        let mut text = *b"0000-00-00T00:00:00.000Z";
        // Two digits at a time. Every value is in range for its place (the clamp above keeps
        // the year to four digits), so each pair is 0..=99.
        let mut pair = |at: usize, value: i64| {
            let digits = TWO_DIGITS[(value % 100) as usize];
            text[at] = digits[0];
            text[at + 1] = digits[1];
        };
        pair(0, year / 100);
        pair(2, year);
        pair(5, month);
        pair(8, day);
        pair(11, of_day / 3600);
        pair(14, of_day % 3600 / 60);
        pair(17, of_day % 60);
        pair(21, i64::from(millis));
        text[20] = b'0' + (millis / 100) as u8;
        Rfc3339(text)
    }

    /// The text's bytes (ASCII).
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The text.
    #[cfg(test)]
    pub(crate) fn as_str(&self) -> &str {
        // Only ASCII digits and separators are ever written.
        std::str::from_utf8(&self.0).unwrap_or("")
    }
}

/// `00` to `99`, the two ASCII digits of each.
const TWO_DIGITS: [[u8; 2]; 100] = {
    let mut digits = [[0; 2]; 100];
    let mut n = 0;
    while n < 100 {
        digits[n] = [b'0' + (n / 10) as u8, b'0' + (n % 10) as u8];
        n += 1;
    }
    digits
};

/// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of era, 0..=146096
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // year of era
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of year from March 1st
    let mp = (5 * doy + 2) / 153; // month from March, 0..=11
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(millis: u64) -> String {
        Rfc3339::of(UNIX_EPOCH + Duration::from_millis(millis))
            .as_str()
            .to_owned()
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(at(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(5), "1970-01-01T00:00:00.005Z");
        assert_eq!(at(61_050), "1970-01-01T00:01:01.050Z");
        assert_eq!(at(3_599_999), "1970-01-01T00:59:59.999Z");
        assert_eq!(at(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(at(951_868_799_999), "2000-02-29T23:59:59.999Z");
        assert_eq!(at(1_709_210_096_500), "2024-02-29T12:34:56.500Z");
        assert_eq!(at(4_107_542_400_000), "2100-03-01T00:00:00.000Z");
        assert_eq!(at(1_735_689_599_000), "2024-12-31T23:59:59.000Z");
    }

    #[test]
    fn clamps_times_outside_the_four_digit_years() {
        assert_eq!(
            Rfc3339::of(UNIX_EPOCH - Duration::from_secs(10)).as_str(),
            "1970-01-01T00:00:00.000Z"
        );
        assert_eq!(at(u64::MAX / 2), "9999-12-31T23:59:59.999Z");
    }
}
