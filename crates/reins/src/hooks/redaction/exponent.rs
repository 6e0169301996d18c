//! Card numbers in exponent notation: `4.111111111111111e15` is how a JSON writer (or a
//! model) may write a card number held as a float, which the digit-group scan reads as a
//! one-digit number and a word.

use super::scan::{Emit, byte_before, luhn};
use memchr::memchr2_iter;

/// The most digits (and a dot) a mantissa is read with: a card number has 19 at most, and
/// zeros after them (`4.1111111111111110000e15`) are all a longer one could add.
const MAX_MANTISSA: usize = 40;

/// Numbers in exponent notation (`d[.d…]e[+|-]d…`) whose value is a whole number that is a
/// payment card number, as the card scan defines one (13 to 19 digits, starting with 2 to
/// 6, passing the Luhn check). The number, its exponent included, is the match (not its
/// sign). It must stand alone: not after a letter, digit, `_` or `.`, nor before a letter,
/// digit, `_` or a `.` and a digit.
pub(super) fn card_floats(text: &str, emit: Emit<'_>) {
    let bytes = text.as_bytes();
    for e in memchr2_iter(b'e', b'E', bytes) {
        if let Some((start, end)) = card_float_at(bytes, e) {
            emit(start, end);
        }
    }
}

/// The range of the card number whose exponent marker is at `e`, if it is one.
fn card_float_at(bytes: &[u8], e: usize) -> Option<(usize, usize)> {
    let digits_before = |end: usize| {
        bytes[..end]
            .iter()
            .rev()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    // The mantissa: whole digits, then a fraction's after a dot.
    let last_run = digits_before(e);
    let (start, whole_end, fraction) = if e > last_run && bytes[e - last_run - 1] == b'.' {
        let dot = e - last_run - 1;
        (dot - digits_before(dot), dot, last_run)
    } else {
        (e - last_run, e, 0)
    };
    let before = byte_before(bytes, start);
    let stands_alone = !(before.is_ascii_alphanumeric() || matches!(before, b'_' | b'.'));
    if start == whole_end || !stands_alone || e - start > MAX_MANTISSA + 1 {
        return None;
    }
    // The exponent: a sign, then up to three digits.
    let mut index = e + 1;
    let negative = bytes.get(index) == Some(&b'-');
    if matches!(bytes.get(index), Some(b'+' | b'-')) {
        index += 1;
    }
    let exponent_len = bytes[index.min(bytes.len())..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let end = index + exponent_len;
    let after = bytes.get(end).copied().unwrap_or(0);
    let dotted_digit = after == b'.' && bytes.get(end + 1).is_some_and(u8::is_ascii_digit);
    if !(1..=3).contains(&exponent_len)
        || after.is_ascii_alphanumeric()
        || after == b'_'
        || dotted_digit
    {
        return None;
    }
    let exponent = bytes[index..end]
        .iter()
        .fold(0i32, |value, digit| value * 10 + i32::from(digit - b'0'));
    let exponent = if negative { -exponent } else { exponent };
    let mantissa: Vec<u8> = bytes[start..e]
        .iter()
        .filter(|b| b.is_ascii_digit())
        .map(|digit| digit - b'0')
        .collect();
    // The mantissa is at most `MAX_MANTISSA` digits: its fraction's length fits an `i32`.
    let digits = whole_number(mantissa, exponent - i32::try_from(fraction).ok()?)?;
    let is_card =
        (13..=19).contains(&digits.len()) && (2..=6).contains(&digits[0]) && luhn(&digits);
    is_card.then_some((start, end))
}

/// The digits of `mantissa` times ten to the `shift`, without leading zeros, when that is a
/// whole number of at most 19 digits.
fn whole_number(mut mantissa: Vec<u8>, shift: i32) -> Option<Vec<u8>> {
    if shift > 19 {
        return None;
    }
    if shift >= 0 {
        mantissa.resize(mantissa.len() + shift.unsigned_abs() as usize, 0);
    } else {
        // The digits shifted past the point must all be zeros.
        let cut = mantissa.len().checked_sub(shift.unsigned_abs() as usize)?;
        if mantissa[cut..].iter().any(|&digit| digit != 0) {
            return None;
        }
        mantissa.truncate(cut);
    }
    let leading_zeros = mantissa.iter().take_while(|&&digit| digit == 0).count();
    mantissa.drain(..leading_zeros);
    (mantissa.len() <= 19).then_some(mantissa)
}
