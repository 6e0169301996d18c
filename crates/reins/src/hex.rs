//! Bytes as lower-case hexadecimal text: digests in cache keys, decision bindings, model
//! checksums and webhook signatures; and the byte a percent escape (`%2F`, either case)
//! stands for, for the providers' and the redaction hook's readings of encoded secrets.

/// `bytes` as lower-case hex, two digits a byte.
pub(crate) fn lower_hex(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(2 * bytes.len());
    push_lower_hex(&mut text, bytes);
    text
}

/// Appends `bytes` to `text` as lower-case hex, two digits a byte.
pub(crate) fn push_lower_hex(text: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for byte in bytes {
        text.push(char::from(DIGITS[usize::from(byte >> 4)]));
        text.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
}

/// The byte the percent escape at the start of `text` (`%` and two hex digits, either case)
/// stands for, if it starts with one.
pub(crate) fn percent_escaped_byte(text: &[u8]) -> Option<u8> {
    match text {
        [b'%', high, low, ..] => {
            let digit = |byte: u8| char::from(byte).to_digit(16);
            let value = digit(*high)? * 16 + digit(*low)?;
            u8::try_from(value).ok()
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_is_two_lower_case_digits() {
        assert_eq!(lower_hex(&[0, 1, 15, 16, 0xab, 255]), "00010f10abff");
        assert_eq!(lower_hex(&[]), "");
        let every: Vec<u8> = (0..=255).collect();
        let expected: String = every.iter().map(|byte| format!("{byte:02x}")).collect();
        assert_eq!(lower_hex(&every), expected);
        let mut text = "sha256:".to_owned();
        push_lower_hex(&mut text, &[0xde, 0xad]);
        assert_eq!(text, "sha256:dead");
    }

    #[test]
    fn a_percent_escape_is_read_in_either_case_and_nothing_else_is() {
        assert_eq!(percent_escaped_byte(b"%2Fa"), Some(b'/'));
        assert_eq!(percent_escaped_byte(b"%2f"), Some(b'/'));
        assert_eq!(percent_escaped_byte(b"%ff"), Some(0xff));
        for not_one in [&b"%2"[..], b"%g0", b"2F", b"%+1", b""] {
            assert_eq!(percent_escaped_byte(not_one), None, "{not_one:?}");
        }
    }
}
