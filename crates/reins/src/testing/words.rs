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
/// whitespace that follows it. Text is scanned as bytes, in one pass, because a streamed test
/// turn is read one word per delta and the double's work is part of what a benchmark of it
/// measures; at the first byte that is not ASCII (a byte of a longer character may belong to a
/// Unicode space), the text is read again as characters.
fn word_end(text: &str) -> usize {
    /// Where the scan is: before the word, in it, or in the whitespace after it.
    enum Scanning {
        Leading,
        Word,
        Trailing,
    }
    let mut scanning = Scanning::Leading;
    for (at, &byte) in text.as_bytes().iter().enumerate() {
        if !byte.is_ascii() {
            return word_end_by_chars(text);
        }
        // ASCII whitespace, as `char::is_whitespace` has it.
        let space = matches!(byte, b'\t'..=b'\r' | b' ');
        match scanning {
            Scanning::Leading if !space => scanning = Scanning::Word,
            Scanning::Word if space => scanning = Scanning::Trailing,
            Scanning::Trailing if !space => return at,
            _ => {}
        }
    }
    text.len()
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
        // The byte-level cutter against the plain definition, on every short string over an
        // alphabet of ASCII and non-ASCII letters and spaces.
        fn reference(text: &str) -> usize {
            let end = text
                .char_indices()
                .skip_while(|(_, c)| c.is_whitespace())
                .find(|(_, c)| c.is_whitespace())
                .map_or(text.len(), |(i, _)| i);
            text[end..]
                .char_indices()
                .find(|(_, c)| !c.is_whitespace())
                .map_or(text.len(), |(i, _)| end + i)
        }
        let alphabet = ['a', ' ', '\u{0b}', '\u{85}', 'é', '\u{3000}', '\n'];
        let mut texts = vec![String::new()];
        for _ in 0..5 {
            let longer: Vec<String> = texts
                .iter()
                .flat_map(|text| alphabet.iter().map(move |c| format!("{text}{c}")))
                .collect();
            for text in &longer {
                assert_eq!(word_end(text), reference(text), "{text:?}");
            }
            texts = longer;
        }
    }
}
