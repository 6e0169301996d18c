//! Values never shown: a credential kept in a setting ([`Redacted`], hidden from `Debug`),
//! and text that may quote one, with each replaced by what may be shown ([`scrub`]).

/// A value whose `Debug` output is hidden.
#[derive(Clone)]
pub(crate) struct Redacted<T>(pub(crate) T);

impl<T> std::fmt::Debug for Redacted<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

/// `message` with every secret replaced by what may be shown instead: an HTTP library's
/// error may quote what it sent.
pub(crate) fn scrub(message: &str, secrets: &[(String, String)]) -> String {
    secrets
        .iter()
        .fold(message.to_owned(), |message, (secret, shown)| {
            message.replace(secret.as_str(), shown)
        })
}
