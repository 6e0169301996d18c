//! What to write where the file gave one thing and a list was wanted, the two ways a person
//! new to TOML gets a list wrong: a tool under `[tools.shell]` (a table) where each tool is an
//! entry of a list of tables, `[[tools.shell]]`; and a command line as one string
//! (`command = "python3 save.py {text}"`) where each argument is its own string. serde only
//! says "expected a list", which names neither fix.

use std::ops::Range;

/// The end of `message` (already in the file's words, [`super::diagnostic::plain`]) naming
/// what to write instead, when it says a list was wanted at `span` of `source` in one of
/// those two ways; else nothing.
pub fn hint(source: &str, span: Option<&Range<usize>>, message: &str) -> String {
    let Some(span) = span else {
        return String::new();
    };
    if !message.ends_with("expected a list (`[...]`)") {
        return String::new();
    }
    let Some(text) = source.get(span.clone()) else {
        return String::new();
    };
    if message.starts_with("invalid type: table") {
        return double_brackets(text).unwrap_or_default();
    }
    if message.starts_with("invalid type: string") {
        let line_start = source[..span.start].rfind('\n').map_or(0, |at| at + 1);
        let key = source[line_start..span.start]
            .trim_end()
            .strip_suffix('=')
            .map(str::trim);
        if let Some(key @ ("command" | "args")) = key {
            return one_string_per_argument(key, text).unwrap_or_default();
        }
    }
    String::new()
}

/// `[tools.shell]`'s header as the `[[tools.shell]]` meant.
fn double_brackets(header: &str) -> Option<String> {
    let name = header.trim().strip_prefix('[')?.strip_suffix(']')?.trim();
    if name.starts_with('[') || name.is_empty() {
        return None;
    }
    let entry = if name.starts_with("tools.") {
        "each tool"
    } else {
        "each entry"
    };
    Some(format!(
        ": write `[[{name}]]` (two brackets: {entry} is its own table)"
    ))
}

/// `command = "python3 save.py {text}"` as the list meant, split at whitespace (a word the
/// string quoted for a shell is left for the person to join).
fn one_string_per_argument(key: &str, literal: &str) -> Option<String> {
    let value: toml::Value = toml::from_str(&format!("v = {literal}")).ok()?;
    let line = value.get("v")?.as_str()?;
    let words: Vec<String> = line
        .split_whitespace()
        .map(|word| toml::Value::String(word.to_owned()).to_string())
        .collect();
    if words.is_empty() {
        return None;
    }
    Some(format!(
        ": one string for each argument: `{key} = [{}]`",
        words.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::hint;

    fn hint_at(source: &str, mistake: &str, message: &str) -> String {
        let start = source.find(mistake).unwrap_or_default();
        hint(source, Some(&(start..start + mistake.len())), message)
    }

    #[test]
    fn a_table_header_gets_its_double_brackets() {
        let source = "[hooks.x]\n[tools.shell]\nname = \"a\"\n";
        let message = "invalid type: table, expected a list (`[...]`)";
        assert_eq!(
            hint_at(source, "[tools.shell]", message),
            ": write `[[tools.shell]]` (two brackets: each tool is its own table)"
        );
    }

    #[test]
    fn a_command_string_gets_its_list() {
        let source = "command = 'sh -c \"a\"'\n";
        let message = "invalid type: string \"sh -c \\\"a\\\"\", expected a list (`[...]`)";
        assert_eq!(
            hint_at(source, "'sh -c \"a\"'", message),
            r#": one string for each argument: `command = ["sh", "-c", '"a"']`"#
        );
    }

    #[test]
    fn other_strings_and_messages_get_none() {
        let list = "invalid type: string \"x\", expected a list (`[...]`)";
        assert_eq!(hint_at("include = \"x\"\n", "\"x\"", list), "");
        assert_eq!(hint_at("command = 5\n", "5", "expected a string"), "");
    }
}
