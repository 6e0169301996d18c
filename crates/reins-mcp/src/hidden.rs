//! Values never shown: a credential kept in a setting ([`Redacted`], hidden from `Debug`),
//! and text that may quote one, with each replaced by what may be shown ([`scrub`]); a
//! server's tool names as errors and warnings quote them ([`Credentials::tool_name`]).

use reins::hooks::redaction::Redaction;
use std::fmt;

/// How much of a tool's name an error or a warning quotes: the server chooses the name, and
/// MCP suggests at most 128 characters.
const SHOWN_TOOL_NAME_BYTES: usize = 128;

/// How much of a server's error a warning quotes (a parse error, a schema's compile
/// error: either may quote what the server sent, whole).
pub(crate) const LOGGED_ERROR_BYTES: usize = 512;

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

/// A server's credentials, as what errors and warnings quote of the server must not show
/// them: each with what errors show instead, and the redaction its tool lists and results go
/// through (`echoes.rs`).
#[derive(Clone, Default)]
pub(crate) struct Credentials {
    pub(crate) secrets: Vec<(String, String)>,
    echoes: Option<Redaction>,
}

impl Credentials {
    pub(crate) fn new(secrets: Vec<(String, String)>) -> Self {
        Credentials {
            echoes: crate::echoes::redaction(&secrets),
            secrets,
        }
    }

    /// The redaction of the credentials long enough to look for (`echoes.rs`), if any.
    pub(crate) fn echoes(&self) -> Option<&Redaction> {
        self.echoes.as_ref()
    }

    /// The tool `name` as errors and warnings quote it: the credentials replaced as in the
    /// tool list (`echoes.rs`) and as in errors, control sequences shown as text, cut to
    /// [`SHOWN_TOOL_NAME_BYTES`]. The server chooses its tools' names, and calls go by them
    /// unchanged.
    pub(crate) fn tool_name(&self, name: &str) -> String {
        let name = match &self.echoes {
            Some(echoes) => echoes.redact(name),
            None => name.into(),
        };
        let mut shown = reins::text::printable(&scrub(&name, &self.secrets)).into_owned();
        if shown.len() > SHOWN_TOOL_NAME_BYTES {
            let total = shown.len();
            shown.truncate(crate::content::head(&shown, SHOWN_TOOL_NAME_BYTES).len());
            shown.push_str(&format!("… ({total} bytes)"));
        }
        shown
    }

    /// [`Credentials::tool_name`] for a warning's field: made only if the warning is logged.
    pub(crate) fn logged_tool_name<'a>(&'a self, name: &'a str) -> LoggedToolName<'a> {
        LoggedToolName {
            credentials: self,
            name,
        }
    }
}

/// A tool's name as a warning shows it ([`Credentials::logged_tool_name`]).
pub(crate) struct LoggedToolName<'a> {
    credentials: &'a Credentials,
    name: &'a str,
}

impl fmt::Display for LoggedToolName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.credentials.tool_name(self.name))
    }
}
