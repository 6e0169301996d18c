//! Function names as Gemini takes them. Gemini refuses a name that starts with a digit or `-`,
//! which the other providers accept: such a name is sent with `_` before it. So that every
//! name still maps back, a name that already starts with `_`s and then a digit or `-` gets one
//! `_` more too; every other name is sent as it is.

use std::borrow::Cow;

/// Whether `name` is one that goes to Gemini with one `_` more (see the module docs).
fn shifted(name: &str) -> bool {
    name.trim_start_matches('_')
        .starts_with(|c: char| c.is_ascii_digit() || c == '-')
}

/// The name Gemini is sent for the tool `name`: `name` itself, or with one `_` before it (see
/// [the module's docs](super)). For a tool near the 64-character limit, this is the name
/// that must fit.
///
/// ```
/// use reins::providers::gemini::function_name;
///
/// assert_eq!(function_name("3d_render"), "_3d_render");
/// assert_eq!(function_name("render"), "render");
/// ```
pub fn function_name(name: &str) -> Cow<'_, str> {
    if shifted(name) {
        Cow::Owned(format!("_{name}"))
    } else {
        Cow::Borrowed(name)
    }
}

/// The tool a name Gemini called is for: [`function_name`] undone. A name [`function_name`] never
/// gives (a digit first, say) is kept as it is, for the run's hooks to repair or refuse.
pub(super) fn from_gemini(name: &str) -> &str {
    match name.strip_prefix('_') {
        Some(rest) if shifted(rest) => rest,
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::{from_gemini, function_name};

    #[test]
    fn names_gemini_would_refuse_get_an_underscore_and_come_back() {
        for (name, sent) in [
            ("add", "add"),
            ("_private", "_private"),
            ("a1", "a1"),
            ("3d_render", "_3d_render"),
            ("-x", "_-x"),
            ("_3d", "__3d"),
            ("__-x", "___-x"),
        ] {
            assert_eq!(function_name(name), sent);
            assert_eq!(from_gemini(sent), name);
        }
    }

    #[test]
    fn a_name_never_sent_is_kept() {
        assert_eq!(from_gemini("3d"), "3d");
        assert_eq!(from_gemini("_"), "_");
        assert_eq!(from_gemini(""), "");
    }
}
