//! Words of the commands the CLI suggests (`reins runs resume <file> <run>`): a path with a
//! space, a quote or a `$` must reach `reins` as one argument, unchanged, when the command is
//! pasted into a shell as printed.

use std::borrow::Cow;
use std::path::Path;

/// `text` as one POSIX shell word: as it is when a shell takes every character literally,
/// else in single quotes, a single quote inside written as `'\''`.
pub fn quoted(text: &str) -> Cow<'_, str> {
    let literal = !text.is_empty()
        && text
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"_-./:@%+=,".contains(&byte));
    if literal {
        return Cow::Borrowed(text);
    }
    let mut word = String::with_capacity(text.len() + 2);
    word.push('\'');
    for part in text.split_inclusive('\'') {
        match part.strip_suffix('\'') {
            Some(before) => {
                word.push_str(before);
                word.push_str("'\\''");
            }
            None => word.push_str(part),
        }
    }
    word.push('\'');
    Cow::Owned(word)
}

/// The path `path` as one shell word (a path that is not UTF-8 is shown lossily: it cannot be
/// printed as it is in any case).
pub fn path(path: &Path) -> String {
    quoted(&path.to_string_lossy()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::quoted;

    #[test]
    fn plain_words_stay_as_they_are() {
        for plain in [
            "agent.toml",
            "/home/ana/agents/notes-v2.toml",
            "run_01",
            "a=b,c",
        ] {
            assert_eq!(quoted(plain), plain);
        }
    }

    #[test]
    fn other_words_are_single_quoted() {
        assert_eq!(quoted("my agents/a.toml"), "'my agents/a.toml'");
        assert_eq!(quoted("$HOME/a.toml"), "'$HOME/a.toml'");
        assert_eq!(quoted("~/a.toml"), "'~/a.toml'");
        assert_eq!(quoted(""), "''");
        assert_eq!(quoted("ana's.toml"), "'ana'\\''s.toml'");
        assert_eq!(quoted("'"), "''\\'''");
    }
}
