//! Tool names: which tool a misnamed call plainly means, and the names shown to the model.

/// The prefixes models put before a tool's name, from the formats they were trained on
/// (`functions.save_note`, Gemini's `default_api.save_note`), followed by a `.`.
const NAMESPACES: [&str; 5] = ["functions", "function", "tools", "tool", "default_api"];

/// The most tool names feedback lists: a model given hundreds reads none of them well.
const MAX_LISTED: usize = 50;

/// The most characters of one name shown (MCP asks for names of at most 128).
const MAX_NAME_CHARS: usize = 128;

/// The one tool of `tools` that `called` means, if exactly one: the same name up to case, up
/// to `-` for `_` or camel case for snake case, or after a [`NAMESPACES`] prefix.
pub(super) fn meant_tool<'t>(called: &str, tools: &'t [String]) -> Option<&'t str> {
    let called = called.trim();
    let unprefixed = NAMESPACES.iter().find_map(|namespace| {
        let (head, rest) = called.split_at_checked(namespace.len())?;
        let rest = rest.strip_prefix('.')?;
        (head.eq_ignore_ascii_case(namespace) && !rest.is_empty()).then_some(rest)
    });
    let forms: Vec<Form> = std::iter::once(called)
        .chain(unprefixed)
        .map(Form::of)
        .collect();
    let mut meant = None;
    for tool in tools {
        let form = Form::of(tool);
        if !forms.iter().any(|called| called.same_tool(&form)) {
            continue;
        }
        match meant {
            // Two tools fit: which one the model meant is a guess.
            Some(other) if other != tool.as_str() => return None,
            _ => meant = Some(tool.as_str()),
        }
    }
    meant
}

/// A name in the forms two names are compared in.
struct Form {
    lowercase: String,
    /// Its words, lowercased, joined by `_`.
    words: String,
}

impl Form {
    fn of(name: &str) -> Form {
        Form {
            lowercase: name.to_lowercase(),
            words: words(name).join("_"),
        }
    }

    fn same_tool(&self, other: &Form) -> bool {
        self.lowercase == other.lowercase || (!self.words.is_empty() && self.words == other.words)
    }
}

/// The words of a name, lowercased: split at `_`, `-` and white space, and where camel case
/// starts a word (`getHTTPStatus` is get, http, status).
fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut words = Vec::new();
    let mut word = String::new();
    for (at, &c) in chars.iter().enumerate() {
        if c == '_' || c == '-' || c.is_whitespace() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        // `before` is the word's last character: `word` is not empty.
        let before = at.checked_sub(1).and_then(|before| chars.get(before));
        if let (true, Some(before)) = (c.is_uppercase() && !word.is_empty(), before) {
            let lower_after = chars.get(at + 1).is_some_and(|next| next.is_lowercase());
            if before.is_lowercase()
                || before.is_numeric()
                || (before.is_uppercase() && lower_after)
            {
                words.push(std::mem::take(&mut word));
            }
        }
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// `name` as a JSON string, cut to [`MAX_NAME_CHARS`]: quotes, line breaks and control
/// characters escaped, so that the name reads as one name, never as part of the sentence.
pub(super) fn quoted(name: &str) -> String {
    let shown = match name.char_indices().nth(MAX_NAME_CHARS) {
        Some((end, _)) => format!("{}…", &name[..end]),
        None => name.to_owned(),
    };
    serde_json::Value::String(shown).to_string()
}

/// The tools of `tools`, [`quoted`] and separated by commas, those sharing a word with
/// `called` first, at most [`MAX_LISTED`] and then how many more there are; `None` when there
/// are none.
pub(super) fn listed_tools(called: &str, tools: &[String]) -> Option<String> {
    if tools.is_empty() {
        return None;
    }
    let called_words = words(called);
    let mut ordered: Vec<&String> = tools.iter().collect();
    // Stable: otherwise in the order the tools were given to the model.
    ordered.sort_by_cached_key(|tool| !words(tool).iter().any(|word| called_words.contains(word)));
    let mut listed: Vec<String> = ordered
        .iter()
        .take(MAX_LISTED)
        .map(|tool| quoted(tool))
        .collect();
    if tools.len() > MAX_LISTED {
        listed.push(format!("and {} more", tools.len() - MAX_LISTED));
    }
    Some(listed.join(", "))
}
