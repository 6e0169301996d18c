//! Bytes as lower-case hexadecimal text: digests in cache keys, decision bindings, model
//! checksums and webhook signatures.

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
}
