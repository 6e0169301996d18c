//! The forms a literal secret takes in text: as given, and as JSON writers escape it inside
//! a string (a tool's answer rendered as JSON), so [`Redaction::secret`](super::Redaction::secret)
//! masks it in either; and as base64 encodes it.

use memchr::memmem::Finder;
use std::ops::Range;

/// `secret` as given, then each distinct JSON-escaped form of it: quotes, backslashes and
/// control characters escaped (how every writer escapes them), and, for a secret with
/// non-ASCII characters, also each of those as `\uXXXX` in lower- and upper-case hex (how
/// writers that keep their output ASCII write it: Python's `json.dumps`, PHP's
/// `json_encode`, Jackson's `ESCAPE_NON_ASCII`). The redaction's views decode only escapes
/// of ASCII characters, which is all its patterns read; a literal secret can be any text.
pub(super) fn secret_forms(secret: &str) -> Vec<String> {
    let mut forms = vec![secret.to_owned()];
    let Ok(quoted) = serde_json::to_string(secret) else {
        return forms;
    };
    let escaped = &quoted[1..quoted.len() - 1];
    let candidates = [
        Some(escaped.to_owned()),
        (!escaped.is_ascii()).then(|| ascii_only(escaped, false)),
        (!escaped.is_ascii()).then(|| ascii_only(escaped, true)),
    ];
    for form in candidates.into_iter().flatten() {
        if !forms.contains(&form) {
            forms.push(form);
        }
    }
    forms
}

/// `text` with each non-ASCII character written as a JSON `\uXXXX` escape (a surrogate pair
/// beyond the Basic Multilingual Plane), its hex digits upper-case when `upper`.
fn ascii_only(text: &str, upper: bool) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
            continue;
        }
        let mut units = [0u16; 2];
        for unit in c.encode_utf16(&mut units) {
            if upper {
                out.push_str(&format!("\\u{unit:04X}"));
            } else {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// The base64 alphabets: the standard one, and the URL-safe one (`-` and `_` for `+` and `/`)
/// of URLs, JSON Web Tokens and file names.
const ALPHABETS: [&[u8; 64]; 2] = [
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
];

/// The fewest characters a base64 form of a secret is looked for with: 36 bits of it, which
/// base64 text that does not hold the secret has by chance once in 2^36 places. A secret of
/// at least 5 bytes has a form this long at each alignment; a shorter one has none.
const MIN_ENCODED_LEN: usize = 6;

/// A secret as base64 writes it at one alignment, in one alphabet: the characters that carry
/// the secret's bits alone, which are the same whatever comes before and after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Encoded {
    /// The characters looked for.
    pub core: String,
    /// Whether the character before `core` carries the secret's first bits (with the bits of
    /// the byte before it), and is masked with it.
    pub lead: bool,
    /// Whether the character after `core` carries its last bits (with the bits of the byte
    /// after it, or zeros and `=` padding when the data ends there), and is masked with it.
    pub trail: bool,
}

/// The base64 forms of `secret`: for each of the three alignments base64 can give it (it
/// starts 0, 1 or 2 bytes past a multiple of three in the encoded data: the secret alone,
/// or after `user:` in a Basic auth header), in the standard and the URL-safe alphabet, the
/// distinct ones at least [`MIN_ENCODED_LEN`] characters long.
pub(super) fn base64_forms(secret: &str) -> Vec<Encoded> {
    let mut forms: Vec<Encoded> = Vec::new();
    for offset in 0..3 {
        let mut data = vec![0u8; offset];
        data.extend_from_slice(secret.as_bytes());
        let start_bits = offset * 8;
        let end_bits = data.len() * 8;
        // The first character wholly the secret's, and the one after its last such.
        let lead = start_bits % 6 != 0;
        let first = start_bits / 6 + usize::from(lead);
        let last = end_bits / 6;
        let trail = end_bits % 6 != 0;
        if last < first + MIN_ENCODED_LEN {
            continue;
        }
        for alphabet in ALPHABETS {
            let encoded = encode_unpadded(&data, alphabet);
            let form = Encoded {
                core: encoded[first..last].to_owned(),
                lead,
                trail,
            };
            if !forms.contains(&form) {
                forms.push(form);
            }
        }
    }
    forms
}

/// `data` in base64 with `alphabet`, without padding.
fn encode_unpadded(data: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let bytes = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let bits = u32::from(bytes[0]) << 16 | u32::from(bytes[1]) << 8 | u32::from(bytes[2]);
        // A chunk of n bytes fills n + 1 characters.
        for index in 0..=chunk.len() {
            let sextet = (bits >> (18 - 6 * index)) & 0x3f;
            out.push(char::from(alphabet[sextet as usize]));
        }
    }
    out
}

/// Whether `byte` is a character of either base64 alphabet.
fn is_base64_char(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'-' | b'_')
}

/// A literal secret's base64 form ([`Encoded`]), ready to search for.
#[derive(Clone)]
pub(super) struct EncodedSecret {
    core: Finder<'static>,
    lead: bool,
    trail: bool,
}

impl EncodedSecret {
    pub(super) fn new(form: &Encoded) -> Self {
        EncodedSecret {
            core: Finder::new(form.core.as_bytes()).into_owned(),
            lead: form.lead,
            trail: form.trail,
        }
    }

    /// Reports each occurrence in `bytes`, widened to the characters around its core that
    /// carry some of the secret's bits, and to the padding after them.
    pub(super) fn find_in(&self, bytes: &[u8], found: &mut dyn FnMut(Range<usize>)) {
        let is_base64 = |index: usize| bytes.get(index).is_some_and(|&b| is_base64_char(b));
        for start in self.core.find_iter(bytes) {
            let mut range = start..start + self.core.needle().len();
            if self.lead && range.start > 0 && is_base64(range.start - 1) {
                range.start -= 1;
            }
            if self.trail && is_base64(range.end) {
                range.end += 1;
                let padding = bytes[range.end..]
                    .iter()
                    .take(2)
                    .take_while(|&&b| b == b'=');
                range.end += padding.count();
            }
            // Every byte of a form, and those around it that widen it, is ASCII: the range
            // starts and ends on character boundaries.
            found(range);
        }
    }
}
