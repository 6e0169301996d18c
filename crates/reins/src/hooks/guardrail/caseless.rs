//! Text as a deny list compares it: without the differences a reader (or a model) does not
//! see, so a denied phrase cannot be slipped past in another case, in compatibility
//! characters, with invisible characters inside it or spelled with JSON escapes.

use unicode_normalization::UnicodeNormalization;

/// `text` folded for caseless comparison: compatibility characters replaced by the
/// characters they stand for and accented letters taken apart (NFKD: `ｉｇｎｏｒｅ` →
/// `ignore`, `ﬁ` → `fi`, the Kelvin sign → `K`, `é` → `e` and an acute accent), then
/// lowercased with the full case folding's expansions (`ß` and `ẞ` → `ss`; `İ`, taken
/// apart, → `i`), and left out: the characters that show nothing (zero-width spaces and
/// joiners, soft hyphens, variation selectors, direction marks) and the diacritics of the
/// combining-mark blocks (accents, overlaid strokes, enclosing circles), which leave a word
/// legible. Two texts a reader takes for the same words fold alike in these ways; look-alike
/// letters of other scripts (a Cyrillic `а`) are left to [`latin_skeleton`].
pub(super) fn fold(text: &str) -> String {
    let mut folded = String::with_capacity(text.len());
    for c in text.nfkd() {
        match c {
            c if is_default_ignorable(c) || is_combining_diacritic(c) => {}
            // Full case folding: `ß` is `ss` (`STRASSE` and `straße` are the same word).
            'ß' | 'ẞ' => folded.push_str("ss"),
            // Case folding has one sigma: a word's last (`ς`) is the same letter.
            'ς' => folded.push('σ'),
            c => folded.extend(c.to_lowercase()),
        }
    }
    folded
}

/// Whether `c` is in one of Unicode's blocks of combining diacritical marks (the marks of
/// Latin, Greek and Cyrillic letters, and the marks for symbols): the vowel signs of other
/// scripts, which change a word, are kept.
fn is_combining_diacritic(c: char) -> bool {
    matches!(
        c,
        '\u{0300}'..='\u{036F}'
            | '\u{1AB0}'..='\u{1AFF}'
            | '\u{1DC0}'..='\u{1DFF}'
            | '\u{20D0}'..='\u{20FF}'
            | '\u{FE20}'..='\u{FE2F}'
    )
}

/// Whether `c` is a default ignorable code point (Unicode's `Default_Ignorable_Code_Point`):
/// shown as nothing, so a phrase with one inside reads as the phrase.
fn is_default_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFF8}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

/// `text` with its JSON string escapes read as the characters they spell (`\u0072` → `r`,
/// `\\` → `\`, `\"` → `"`, `\n` → a line break), or `None` when it has no backslash. Tool
/// arguments are the model's JSON text, in which any character may be written as an escape;
/// decoding leniently (a lone surrogate reads as U+FFFD, a malformed escape as itself) reads
/// text that is not valid JSON too, so a phrase cannot hide behind a parse error.
pub(super) fn decode_json_escapes(text: &str) -> Option<String> {
    if !text.contains('\\') {
        return None;
    }
    let mut decoded = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        decoded.push_str(&rest[..at]);
        let escape = &rest[at + 1..];
        let (spelled, used) = match escape.chars().next() {
            Some('u') => match hex_unit(escape) {
                // A high surrogate followed by a low one: one character of the astral planes.
                Some(high @ 0xD800..=0xDBFF) => match escape[5..]
                    .strip_prefix('\\')
                    .and_then(hex_unit)
                    .filter(|low| (0xDC00..=0xDFFF).contains(low))
                {
                    Some(low) => {
                        let scalar = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                        (char::from_u32(scalar), 11)
                    }
                    None => (Some(char::REPLACEMENT_CHARACTER), 5),
                },
                Some(unit) => (
                    Some(char::from_u32(unit).unwrap_or(char::REPLACEMENT_CHARACTER)),
                    5,
                ),
                None => (None, 0),
            },
            Some('b') => (Some('\u{8}'), 1),
            Some('f') => (Some('\u{C}'), 1),
            Some('n') => (Some('\n'), 1),
            Some('r') => (Some('\r'), 1),
            Some('t') => (Some('\t'), 1),
            Some(c @ ('"' | '\\' | '/')) => (Some(c), 1),
            _ => (None, 0),
        };
        match spelled {
            Some(c) => decoded.push(c),
            // Not an escape: the backslash is itself.
            None => decoded.push('\\'),
        }
        rest = &escape[used..];
    }
    decoded.push_str(rest);
    Some(decoded)
}

/// The code unit of the four hex digits after the `u` that `escape` starts with.
fn hex_unit(escape: &str) -> Option<u32> {
    let digits = escape.get(1..5)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

/// Folded text with the Cyrillic and Greek letters that look like Latin ones (once
/// lowercased: a Cyrillic `а`, `і` or `с`; a Greek `ο`, `ν` or `κ`, and the lowercase of a
/// capital that looks Latin, as a Greek `Η`'s `η`) written as those Latin letters, or
/// `None` when it has none. A Latin phrase cannot be slipped past in such letters; a phrase
/// of those scripts is compared by this skeleton too, so it may be found in Latin text that
/// looks like it.
pub(super) fn latin_skeleton(folded: &str) -> Option<String> {
    if !folded.chars().any(|c| latin_look_alike(c).is_some()) {
        return None;
    }
    Some(
        folded
            .chars()
            .map(|c| latin_look_alike(c).unwrap_or(c))
            .collect(),
    )
}

/// The Latin letter a lowercase Cyrillic or Greek letter (or its capital) looks like.
fn latin_look_alike(c: char) -> Option<char> {
    Some(match c {
        // Cyrillic.
        'а' => 'a',
        'в' => 'b',
        'г' => 'r',
        'ԁ' => 'd',
        'е' | 'є' => 'e',
        'һ' | 'н' => 'h',
        'і' | 'ї' => 'i',
        'ј' => 'j',
        'к' => 'k',
        'ӏ' => 'l',
        'м' => 'm',
        'о' => 'o',
        'р' => 'p',
        'ԛ' => 'q',
        'ѕ' => 's',
        'т' => 't',
        'с' => 'c',
        'ѵ' => 'v',
        'ԝ' => 'w',
        'х' => 'x',
        'у' => 'y',
        // Greek.
        'α' => 'a',
        'β' => 'b',
        'ε' => 'e',
        'η' => 'h',
        'ι' => 'i',
        'κ' => 'k',
        'μ' => 'm',
        'ν' => 'v',
        'ο' => 'o',
        'ρ' => 'p',
        'τ' => 't',
        'υ' => 'u',
        'χ' => 'x',
        'ζ' => 'z',
        _ => return None,
    })
}
