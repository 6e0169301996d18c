//! reins' own ids of a run's tool calls (`t<turn>c<ordinal>`), written by hand: they are
//! made for every call.

/// reins' id of the `ordinal`-th tool call of `turn`.
pub(crate) fn internal_call_id(turn: usize, ordinal: usize) -> String {
    // Built by hand: this runs for every call, and `format!` costs several times as much.
    let mut id = String::with_capacity(12);
    id.push('t');
    push_decimal(&mut id, turn);
    id.push('c');
    push_decimal(&mut id, ordinal);
    id
}

/// Appends `n` in decimal.
fn push_decimal(text: &mut String, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    text.extend(digits[start..].iter().map(|&digit| char::from(digit)));
}

#[cfg(test)]
mod tests {
    use super::internal_call_id;

    #[test]
    fn internal_call_ids_spell_turn_and_ordinal_in_decimal() {
        assert_eq!(internal_call_id(1, 0), "t1c0");
        assert_eq!(internal_call_id(10, 9), "t10c9");
        assert_eq!(internal_call_id(407, 120), "t407c120");
        assert_eq!(
            internal_call_id(usize::MAX, 0),
            format!("t{}c0", usize::MAX)
        );
    }
}
