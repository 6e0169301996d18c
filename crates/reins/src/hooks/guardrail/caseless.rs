//! Text as a deny list compares it: without the differences a reader (or a model) does not
//! see, so a denied phrase cannot be slipped past in another case, in compatibility
//! characters or with invisible characters inside it.

use unicode_normalization::UnicodeNormalization;

/// `text` folded for caseless comparison: compatibility characters replaced by the
/// characters they stand for (NFKC: `ｉｇｎｏｒｅ` → `ignore`, `ﬁ` → `fi`, the Kelvin sign →
/// `K`), then lowercased with the full case folding's expansions (`ß` and `ẞ` → `ss`, `İ` →
/// `i`), and the characters that show nothing (zero-width spaces and joiners, soft hyphens,
/// variation selectors, direction marks) left out. Two texts a reader takes for the same
/// words fold alike in these ways; look-alike letters of other scripts (a Cyrillic `а`) are
/// not folded.
pub(super) fn fold(text: &str) -> String {
    let mut folded = String::with_capacity(text.len());
    for c in text.nfkc() {
        match c {
            c if is_default_ignorable(c) => {}
            // Full case folding: `ß` is `ss` (`STRASSE` and `straße` are the same word).
            'ß' | 'ẞ' => folded.push_str("ss"),
            // Case folding has one sigma: a word's last (`ς`) is the same letter.
            'ς' => folded.push('σ'),
            // Lowercased, `İ` gains a combining dot (`i̇`) that no `i` in a phrase has.
            'İ' => folded.push('i'),
            c => folded.extend(c.to_lowercase()),
        }
    }
    folded
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
