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
        /// 9999-12-31T23:59:59.999Z, the last instant a four-digit year can write.
        const MAX_MILLIS: u128 = 253_402_300_799_999;
        let millis = time
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_millis())
            .min(MAX_MILLIS);
        // Fits: MAX_MILLIS / 1000 < 2^38.
        let secs = (millis / 1000) as i64;
        let (year, month, day) = civil_from_days(secs.div_euclid(86_400));
        let of_day = secs.rem_euclid(86_400);
        let mut text = *b"0000-00-00T00:00:00.000Z";
        let fields = [
            (0, 4, year),
            (5, 2, month),
            (8, 2, day),
            (11, 2, of_day / 3600),
            (14, 2, of_day % 3600 / 60),
            (17, 2, of_day % 60),
            (20, 3, (millis % 1000) as i64),
        ];
        for (start, width, mut value) in fields {
            for place in text[start..start + width].iter_mut().rev() {
                // `value` is in range for its width (the clamp above keeps the year to four
                // digits), so each digit is 0..=9.
                *place = b'0' + (value % 10) as u8;
                value /= 10;
            }
        }
        Rfc3339(text)
    }

    /// The text.
    pub(crate) fn as_str(&self) -> &str {
        // Only ASCII digits and separators are ever written.
        std::str::from_utf8(&self.0).unwrap_or("")
    }
}

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
