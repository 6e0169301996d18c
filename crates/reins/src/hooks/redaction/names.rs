//! Which names (of a header, a query parameter, an environment variable) say that their value
//! is a credential: shared by the providers, which keep such values out of errors and
//! answers, and by MCP servers' environments.

/// Words that make a name a credential's anywhere in it, in any case: `x-api-key`,
/// `GITHUB_TOKEN`, `DB_PASSWORD`, `Authorization`, `session`.
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

/// Words that make a name a credential's only as a whole part of it (between `_`, `-` or
/// `.`): a personal access token (`GITLAB_PAT`, not `PATH`), a data source name holding a
/// password (`SENTRY_DSN`), a password (`DB_PWD`).
const CREDENTIAL_PARTS: [&str; 3] = ["pat", "dsn", "pwd"];

/// More words that make a name a credential's anywhere in it: `GOOGLE_CREDENTIALS`,
/// `SMTP_PASSWD`, and `DATABASE_URL`, whose value carries the database's password.
const CREDENTIAL_WORDS_MORE: [&str; 3] = ["credential", "passwd", "database_url"];

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
    CREDENTIAL_WORDS
        .iter()
        .chain(&CREDENTIAL_WORDS_MORE)
        .any(|word| name.contains(word))
        || name
            .split(['_', '-', '.'])
            .any(|part| CREDENTIAL_PARTS.contains(&part))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_strings_and_access_tokens_are_credentials_and_paths_are_not() {
        for name in [
            "DATABASE_URL",
            "SENTRY_DSN",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "SMTP_PASSWD",
            "GITLAB_PAT",
            "pat",
            "DB_PWD",
        ] {
            assert!(names_a_credential(name), "{name}");
        }
        for name in [
            "PATH",
            "PYTHONPATH",
            "ROOT_DIR",
            "PATTERN",
            "DSNAME",
            "HOME_URL",
        ] {
            assert!(!names_a_credential(name), "{name}");
        }
    }
}
