//! Which names (of a header, a query parameter, an environment variable) say that their value
//! is a credential: shared by the providers, which keep such values out of errors and
//! answers, and by MCP servers' environments.

/// Words that make a name a credential's, in any case: `x-api-key`, `GITHUB_TOKEN`,
/// `DB_PASSWORD`, `Authorization`, `session`.
const CREDENTIAL_WORDS: [&str; 8] = [
    "auth",
    "key",
    "token",
    "secret",
    "cookie",
    "password",
    "session",
    "signature",
];

/// Whether `name` (a header's, a query parameter's, an environment variable's) is the name of
/// a credential, so that its value is kept out of what is shown.
///
/// ```
/// use reins::hooks::redaction::names_a_credential;
///
/// assert!(names_a_credential("GITHUB_TOKEN"));
/// assert!(names_a_credential("x-api-key"));
/// assert!(!names_a_credential("ROOT_DIR"));
/// ```
pub fn names_a_credential(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    CREDENTIAL_WORDS.iter().any(|word| name.contains(word))
}
