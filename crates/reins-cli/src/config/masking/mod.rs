//! What a diagnostic's quoted line may not show: whatever in an agent file may be a secret,
//! masked `*` for `*` (one per character, so columns and carets stay where they were) before
//! any line of it is quoted. Every diagnostic goes through it, the generic ones above all: a
//! TOML syntax error, an unknown key, a wrong type or a duplicate key quote the line as
//! written, whatever was pasted on it.
//!
//! Masked: a URL's user info and its query's and fragment's values (anywhere, even in a
//! comment or a line that is not TOML); the value of a key whose name says credential
//! ([`names_a_credential`]: `api_key`, `token`, a header table's `Authorization`), every
//! string and bare word under it (an inline table's, a list's, a `[secrets]` table's); and a
//! value that does not look like a variable's name where one belongs (a key ending in `_env`,
//! whose value is a variable's name, not a secret, and is shown). Numbers and booleans are
//! shown, and so is every other value: a model's name, a path, a URL's host and path, a shell
//! tool's `schema` (its property names, `token` say, describe arguments, not the file's values).
//!
//! The file is read as TOML as far as it goes, not parsed: a file with a syntax error is
//! masked too, a string left open masked to the end of its line.

use reins::hooks::redaction::names_a_credential;

/// Keys of the agent file whose names hold a credential's word but whose values are none:
/// counts of tokens, and the Restate server's public keys.
const NOT_SECRET: [&str; 5] = [
    "max_tokens",
    "max_input_tokens",
    "max_output_tokens",
    "max_total_tokens",
    "restate_identity_keys",
];

/// `text` with every character that may belong to a secret replaced by `*`: the same lines,
/// each as many characters long.
pub(super) fn masked(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut scan = Scan {
        chars: &chars,
        at: 0,
        hidden: vec![false; chars.len()],
        depth: 0,
    };
    scan.statements();
    let mut hidden = scan.hidden;
    hide_in_urls(&chars, &mut hidden);
    shown(&chars, &hidden)
}

/// `text` (a message, say) with its URLs' user info and query values masked.
pub(super) fn masked_urls(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut hidden = vec![false; chars.len()];
    hide_in_urls(&chars, &mut hidden);
    shown(&chars, &hidden)
}

fn shown(chars: &[char], hidden: &[bool]) -> String {
    chars
        .iter()
        .zip(hidden)
        .map(|(&c, &hide)| {
            if hide && c != '\n' && c != '\r' {
                '*'
            } else {
                c
            }
        })
        .collect()
}

/// What the values under a key hold.
#[derive(Debug, Clone, Copy, Default)]
struct Holds {
    /// A credential: every value masked.
    secret: bool,
    /// A variable's name: a value that does not look like one is masked.
    variable: bool,
    /// A shell tool's `schema`: a description of arguments, whose property names (`token`,
    /// `key`) say what a call passes, not what the file holds.
    schema: bool,
}

impl Holds {
    /// What the values under `key`, within these, hold.
    fn under(self, key: &str) -> Holds {
        if self.schema || key == "schema" {
            return Holds {
                schema: true,
                ..Holds::default()
            };
        }
        if NOT_SECRET.contains(&key) {
            return Holds::default();
        }
        let variable = self.variable || key.ends_with("_env");
        Holds {
            secret: !variable && (self.secret || names_a_credential(key)),
            variable,
            schema: false,
        }
    }

    /// Whether `value` (a string's contents, a bare word) is to be masked.
    fn hides(self, value: &str) -> bool {
        let a_name =
            !value.is_empty() && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        self.secret || (self.variable && !a_name)
    }
}

/// A reading of TOML that never fails: what it cannot make sense of it steps over.
struct Scan<'a> {
    chars: &'a [char],
    at: usize,
    hidden: Vec<bool>,
    /// How many inline tables and lists the value being read is inside.
    depth: usize,
}

/// The deepest inline tables and lists are read: a value nested deeper (no agent file's is;
/// a file that is not one can be) hides the rest of the file, rather than be read by a
/// recursion as deep as the file is long.
const MAX_DEPTH: usize = 64;

impl Scan<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn starts_with(&self, text: &str) -> bool {
        let mut at = self.at;
        text.chars().all(|c| {
            let same = self.chars.get(at) == Some(&c);
            at += 1;
            same
        })
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.at += 1;
        }
    }

    /// Blanks, line ends and comments: what may stand between a list's or an inline table's
    /// items.
    fn skip_space(&mut self) {
        loop {
            match self.peek() {
                Some(' ' | '\t' | '\n' | '\r') => self.at += 1,
                Some('#') => self.skip_line(),
                _ => return,
            }
        }
    }

    fn skip_line(&mut self) {
        while self.peek().is_some_and(|c| c != '\n') {
            self.at += 1;
        }
    }

    /// Key/value lines and table headers, to the end.
    fn statements(&mut self) {
        let mut table = Holds::default();
        loop {
            self.skip_space();
            let start = self.at;
            match self.peek() {
                None => return,
                Some('[') => table = self.header(),
                Some(_) => {
                    if let Some(holds) = self.key_path(table)
                        && self.peek() == Some('=')
                    {
                        self.at += 1;
                        self.skip_blanks();
                        self.value(holds);
                    } else {
                        self.at = start;
                        self.skip_token();
                    }
                }
            }
        }
    }

    /// A `[table]` or `[[table]]` header: what its keys' values hold.
    fn header(&mut self) -> Holds {
        while self.peek() == Some('[') {
            self.at += 1;
        }
        let holds = self.key_path(Holds::default()).unwrap_or_default();
        self.skip_line();
        holds
    }

    /// A dotted key, and what its value holds within `holds`; `None` when there is none.
    fn key_path(&mut self, mut holds: Holds) -> Option<Holds> {
        loop {
            self.skip_blanks();
            let key = self.key()?;
            holds = holds.under(&key);
            self.skip_blanks();
            if self.peek() != Some('.') {
                return Some(holds);
            }
            self.at += 1;
        }
    }

    fn key(&mut self) -> Option<String> {
        match self.peek()? {
            '"' | '\'' => Some(self.string(Holds::default())),
            _ => {
                let start = self.at;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                {
                    self.at += 1;
                }
                (self.at > start).then(|| self.chars[start..self.at].iter().collect())
            }
        }
    }

    /// One value: a string, an inline table, a list or a bare word.
    fn value(&mut self, holds: Holds) {
        if matches!(self.peek(), Some('{' | '[')) && self.depth >= MAX_DEPTH {
            let end = self.chars.len();
            self.hide(self.at, end);
            self.at = end;
            return;
        }
        self.depth += 1;
        self.nested_value(holds);
        self.depth -= 1;
    }

    /// [`value`](Self::value), one level deeper.
    fn nested_value(&mut self, holds: Holds) {
        match self.peek() {
            Some('"' | '\'') => {
                self.string(holds);
            }
            Some('{') => {
                self.at += 1;
                loop {
                    self.skip_space();
                    match self.peek() {
                        None => return,
                        Some('}') => {
                            self.at += 1;
                            return;
                        }
                        Some(',') => self.at += 1,
                        Some(_) => {
                            let Some(inner) = self.key_path(holds) else {
                                return;
                            };
                            if self.peek() != Some('=') {
                                return;
                            }
                            self.at += 1;
                            self.skip_blanks();
                            self.value(inner);
                        }
                    }
                }
            }
            Some('[') => {
                self.at += 1;
                loop {
                    self.skip_space();
                    match self.peek() {
                        None => return,
                        Some(']') => {
                            self.at += 1;
                            return;
                        }
                        Some(',') => self.at += 1,
                        Some(_) => {
                            let before = self.at;
                            self.value(holds);
                            if self.at == before {
                                return;
                            }
                        }
                    }
                }
            }
            _ => {
                let start = self.at;
                while self.peek().is_some_and(|c| {
                    !c.is_whitespace() && !matches!(c, ',' | ']' | '}' | '#' | '"' | '\'')
                }) {
                    self.at += 1;
                }
                let word: String = self.chars[start..self.at].iter().collect();
                if !a_literal(&word) && holds.hides(&word) {
                    self.hide(start, self.at);
                }
            }
        }
    }

    /// A string at the quote it starts with, its contents masked when `holds` says so; its
    /// contents (escapes as written). One left open ends at its line's end.
    fn string(&mut self, holds: Holds) -> String {
        let (close, multiline, escapes) = if self.starts_with("\"\"\"") {
            ("\"\"\"", true, true)
        } else if self.starts_with("'''") {
            ("'''", true, false)
        } else if self.starts_with("\"") {
            ("\"", false, true)
        } else {
            ("'", false, false)
        };
        self.at += close.chars().count();
        let start = self.at;
        let mut end = start;
        loop {
            match self.peek() {
                None => break,
                Some('\n') if !multiline => break,
                Some('\\') if escapes => {
                    self.at += 1;
                    if self.peek().is_some_and(|c| multiline || c != '\n') {
                        self.at += 1;
                    }
                    end = self.at;
                }
                Some(_) if self.starts_with(close) => {
                    end = self.at;
                    self.at += close.chars().count();
                    break;
                }
                Some(_) => {
                    self.at += 1;
                    end = self.at;
                }
            }
        }
        let contents: String = self.chars[start..end].iter().collect();
        if holds.hides(&contents) {
            self.hide(start, end);
        }
        contents
    }

    /// Steps over one thing that is no key/value: a string (whole, so that its quotes are not
    /// taken for others), a comment, a word or a character.
    fn skip_token(&mut self) {
        match self.peek() {
            None => {}
            Some('"' | '\'') => {
                self.string(Holds::default());
            }
            Some('#') => self.skip_line(),
            Some(c) if c.is_ascii_alphanumeric() || c == '_' || c == '-' => {
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                {
                    self.at += 1;
                }
            }
            Some(_) => self.at += 1,
        }
    }

    fn hide(&mut self, start: usize, end: usize) {
        for hidden in &mut self.hidden[start..end] {
            *hidden = true;
        }
    }
}

/// Whether a bare word is a boolean, a number or a date: no secret, shown.
fn a_literal(word: &str) -> bool {
    let digits = word.replace('_', "");
    matches!(
        word,
        "true" | "false" | "inf" | "+inf" | "-inf" | "nan" | "+nan" | "-nan"
    ) || digits.parse::<i64>().is_ok()
        || digits.parse::<f64>().is_ok()
        || (word.len() >= 10
            && word.as_bytes().get(4) == Some(&b'-')
            && word
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '-' | ':' | 'T' | 'Z' | '.' | '+')))
}

/// Marks, in every URL of `chars` (`scheme://…`, to a blank or a quote), its user info and
/// the values of its query and fragment (a parameter without `=` whole).
fn hide_in_urls(chars: &[char], hidden: &mut [bool]) {
    let mut at = 1;
    while at + 3 <= chars.len() {
        let a_url = chars[at..].starts_with(&[':', '/', '/'])
            && (chars[at - 1].is_ascii_alphanumeric() || matches!(chars[at - 1], '+' | '-' | '.'));
        if !a_url {
            at += 1;
            continue;
        }
        let start = at + 3;
        let end = (start..chars.len())
            .find(|&i| chars[i].is_whitespace() || matches!(chars[i], '"' | '\'' | '`'))
            .unwrap_or(chars.len());
        let authority_end = (start..end)
            .find(|&i| matches!(chars[i], '/' | '?' | '#'))
            .unwrap_or(end);
        if let Some(user_end) = (start..authority_end).rev().find(|&i| chars[i] == '@') {
            hidden[start..user_end].fill(true);
        }
        if let Some(query) = (authority_end..end).find(|&i| matches!(chars[i], '?' | '#')) {
            let mut parameter = query + 1;
            for i in query + 1..=end {
                if i < end && !matches!(chars[i], '&' | ';' | '#') {
                    continue;
                }
                let value = (parameter..i)
                    .find(|&j| chars[j] == '=')
                    .map_or(parameter, |equals| equals + 1);
                hidden[value..i].fill(true);
                parameter = i + 1;
            }
        }
        at = end.max(at + 1);
    }
}

#[cfg(test)]
mod tests;
