//! "Did you mean …?" for a misspelt key or value: serde's "unknown field `temperture`,
//! expected one of …" lists every name, and the one meant is easy to miss among them.

/// `message` with the closest expected name suggested, when serde's message says a field or
/// variant is unknown and one expected name is close to it.
pub fn with_suggestion(message: String) -> String {
    let hint = suggestion(&message).map(did_you_mean).unwrap_or_default();
    message + &hint
}

/// ` (did you mean `name`?)`, for the end of a message.
pub fn did_you_mean(name: &str) -> String {
    format!(" (did you mean `{name}`?)")
}

/// Of `names`, the one closest to `unknown`, if within a third of its length in edits.
pub fn closest<'n>(unknown: &str, names: impl IntoIterator<Item = &'n str>) -> Option<&'n str> {
    let limit = (unknown.chars().count() / 3).max(1);
    names
        .into_iter()
        .map(|name| (edits(unknown, name), name))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

/// The expected name closest to the unknown one in serde's message.
fn suggestion(message: &str) -> Option<&str> {
    let rest = message
        .strip_prefix("unknown field `")
        .or_else(|| message.strip_prefix("unknown variant `"))?;
    let (unknown, rest) = rest.split_once('`')?;
    let expected = rest
        .strip_prefix(", expected one of ")
        .or_else(|| rest.strip_prefix(", expected "))?;
    // serde lists one name as "`a`", two as "`a` or `b`", more as "one of `a`, `b`, `c`".
    let names = expected
        .split(", ")
        .flat_map(|names| names.split(" or "))
        .filter_map(|name| name.strip_prefix('`')?.strip_suffix('`'));
    closest(unknown, names)
}

/// Edits (insert, delete, replace, swap two neighbours) from `a` to `b`, case ignored.
fn edits(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    // Three rows of the table: two back (for swaps), the last, and this one.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut last: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let replace = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (last[j] + 1).min(row[j - 1] + 1).min(last[j - 1] + replace);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        before = std::mem::replace(&mut last, row);
    }
    last[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_field_or_variant_gets_the_name_meant() {
        assert_eq!(
            with_suggestion(
                "unknown field `temperture`, expected one of `name`, `temperature`".into()
            ),
            "unknown field `temperture`, expected one of `name`, `temperature` \
             (did you mean `temperature`?)"
        );
        assert_eq!(
            with_suggestion("unknown field `nmae`, expected one of `name`, `path`".into()),
            "unknown field `nmae`, expected one of `name`, `path` (did you mean `name`?)"
        );
        assert_eq!(
            with_suggestion("unknown variant `Anthropc`, expected `local` or `anthropic`".into()),
            "unknown variant `Anthropc`, expected `local` or `anthropic` \
             (did you mean `anthropic`?)"
        );
    }

    #[test]
    fn nothing_is_suggested_when_no_name_is_close() {
        let message = "unknown field `colour`, expected one of `name`, `path`";
        assert_eq!(with_suggestion(message.into()), message);
        let other = "invalid type: string \"x\", expected a number";
        assert_eq!(with_suggestion(other.into()), other);
    }
}
