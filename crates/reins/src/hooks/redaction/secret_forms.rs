//! The forms a literal secret takes in text: as given, and as JSON writers escape it inside
//! a string (a tool's answer rendered as JSON), so [`Redaction::secret`](super::Redaction::secret)
//! masks it in either.

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
