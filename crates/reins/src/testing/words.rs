//! How a scripted turn's text is cut into streamed fragments: one word at a time, each with
//! the whitespace that follows it.

/// The word of `text` at `offset` with the whitespace that follows it, moving `offset` past
/// it; `None` at the end.
pub(super) fn next_word<'t>(text: &'t str, offset: &mut usize) -> Option<&'t str> {
    let rest = text.get(*offset..).filter(|rest| !rest.is_empty())?;
    let word = rest.get(..word_end(rest))?;
    *offset += word.len();
    Some(word)
}

/// Where the first word of `text` ends: after any leading whitespace, the word, and the
/// whitespace that follows it. A streamed test turn is read one word per delta, and the
/// double's work is part of what a benchmark of it measures, so ASCII text is scanned eight
/// bytes at a time ([`Window`]); a window holding a byte that is not ASCII (it may belong to
/// a Unicode space) has the text read again as characters.
fn word_end(text: &str) -> usize {
    let bytes = text.as_bytes();
    // Each phase ends at the first byte of the other kind: a word's first byte, the space
    // after it, the next word's first byte.
    let mut wants_space = false;
    let mut phases_left = 3;
    let mut at = 0;
    while at < bytes.len() {
        let window = Window::at(bytes, at);
        if window.non_ascii != 0 {
            return word_end_by_chars(text);
        }
        let mut from = 0;
        loop {
            let ends = if wants_space {
                window.spaces
            } else {
                !window.spaces & HIGH_BITS
            };
            // The window's bytes from `from` on, as their high bits.
            let ends = ends & (HIGH_BITS << (8 * from));
            if ends == 0 {
                break;
            }
            let end = ends.trailing_zeros() as usize / 8;
            phases_left -= 1;
            if phases_left == 0 {
                return (at + end).min(bytes.len());
            }
            wants_space = !wants_space;
            from = end;
        }
        at += 8;
    }
    bytes.len()
}

/// Every byte's high bit.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
/// One in every byte.
const ONES: u64 = 0x0101_0101_0101_0101;

/// Eight bytes of text classified at once, each by its high bit: ASCII whitespace (`spaces`,
/// meaningful only when no byte is `non_ascii`) or not ASCII. Past the end of the text the
/// window reads zero bytes, which are neither, so a phase that ends there ends at the text's
/// end.
struct Window {
    spaces: u64,
    non_ascii: u64,
}

impl Window {
    fn at(bytes: &[u8], at: usize) -> Window {
        let mut lanes = [0u8; 8];
        match bytes.get(at..at + 8) {
            Some(full) => lanes.copy_from_slice(full),
            None => {
                for (lane, &byte) in lanes.iter_mut().zip(bytes.iter().skip(at)) {
                    *lane = byte;
                }
            }
        }
        let word = u64::from_le_bytes(lanes);
        let ascii = word & !HIGH_BITS;
        // With the high bits clear, `byte + (0x80 - n)` stays within its byte and has its high
        // bit set exactly when `byte >= n`.
        let at_least = |n: u64| ascii.wrapping_add(ONES * (0x80 - n)) & HIGH_BITS;
        // `\t`, `\n`, vertical tab, form feed, `\r`: 9 to 13.
        let controls = at_least(9) & !at_least(14);
        // A space is the byte that the XOR makes zero; adding 0x7f to a byte below 0x80 sets
        // its high bit exactly when it is not zero.
        let xored = ascii ^ (ONES * u64::from(b' '));
        let blanks = !xored.wrapping_add(!HIGH_BITS) & HIGH_BITS;
        Window {
            spaces: controls | blanks,
            non_ascii: word & HIGH_BITS,
        }
    }
}

/// [`word_end`] by characters, for text that is not all ASCII.
#[cold]
fn word_end_by_chars(text: &str) -> usize {
    let end = text
        .char_indices()
        .skip_while(|(_, c)| c.is_whitespace())
        .find(|(_, c)| c.is_whitespace())
        .map_or(text.len(), |(i, _)| i);
    text.get(end..)
        .and_then(|tail| tail.char_indices().find(|(_, c)| !c.is_whitespace()))
        .map_or(text.len(), |(i, _)| end + i)
}

/// Splits text into words, each keeping the whitespace that follows it.
#[cfg(test)]
fn split_words(text: &str) -> impl Iterator<Item = &str> {
    let mut offset = 0;
    std::iter::from_fn(move || next_word(text, &mut offset))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_their_spacing() {
        let words: Vec<_> = split_words("Hello  big world").collect();
        assert_eq!(words, vec!["Hello  ", "big ", "world"]);
        assert_eq!(split_words("").count(), 0);
        let words: Vec<_> = split_words(" \u{3000}leading\u{a0}x\u{2003}\u{0b}é tail\n").collect();
        assert_eq!(
            words,
            vec![" \u{3000}leading\u{a0}", "x\u{2003}\u{0b}", "é ", "tail\n"]
        );
    }

    #[test]
    fn words_are_cut_where_char_whitespace_says() {
        // The byte-level cutter against the plain definition (`char::is_whitespace` over the
        // characters, `word_end_by_chars`), on every short string over an alphabet of ASCII
        // and non-ASCII letters and spaces.
        let alphabet = ['a', ' ', '\u{0b}', '\u{85}', 'é', '\u{3000}', '\n'];
        let mut texts = vec![String::new()];
        for _ in 0..5 {
            let longer: Vec<String> = texts
                .iter()
                .flat_map(|text| alphabet.iter().map(move |c| format!("{text}{c}")))
                .collect();
            for text in &longer {
                assert_eq!(word_end(text), word_end_by_chars(text), "{text:?}");
            }
            texts = longer;
        }
    }

    #[test]
    fn long_words_are_cut_where_char_whitespace_says() {
        // Longer texts, across several eight-byte windows: every ASCII byte and a few longer
        // characters, at pseudo-random places (a fixed xorshift sequence, so a failure
        // repeats).
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let rare = ['\u{85}', 'é', '\u{3000}', '\u{a0}'];
        for _ in 0..20_000 {
            let len = next() % 40;
            let text: String = (0..len)
                .map(|_| match next() % 16 {
                    0 => rare[(next() % 4) as usize],
                    1..=4 => ' ',
                    5 => char::from((next() % 128) as u8),
                    6 => char::from(9 + (next() % 5) as u8),
                    _ => 'a',
                })
                .collect();
            assert_eq!(word_end(&text), word_end_by_chars(&text), "{text:?}");
        }
    }
}
