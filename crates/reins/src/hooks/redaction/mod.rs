//! [`Redaction`]: secrets and personal data masked in tool results before the model sees
//! them, and in every request sent to the model.
//!
//! The built-in [`Pattern`]s are written by hand (no regular expressions): API keys, bearer
//! tokens, email addresses, payment card numbers (Luhn-checked), US social security numbers
//! and, when enabled, IPv4 addresses. Add literal secrets (such as the values of environment
//! variables) with [`Redaction::secret`] and your own matchers with [`Redaction::matcher`].
//! Each match becomes `[REDACTED:<kind>]` unless [`Redaction::replacement`] says otherwise.
//!
//! Each pattern family is one pass over the text, and a text with nothing to mask is scanned
//! without allocating, unless it holds JSON escapes that could hide a match (`\\`, `\/`,
//! or `\u` and an ASCII code): those are decoded, up to three levels deep (JSON text in a
//! JSON string), and the decoded text is scanned as well, so `ada\u0040example.com` and a
//! doubly encoded tool answer are masked too. So are URL percent escapes of ASCII characters
//! (`%40`, `%2F`…): `?email=ada%40example.com` in a URL a tool quotes is masked, and so is a
//! literal secret with such characters as a query string spells it. A literal secret is
//! also looked for in the forms JSON writers give it ([`Redaction::secret`]), non-ASCII
//! characters escaped included (percent-encoded, those are not: add that form as a secret of
//! its own), and in base64, standard and URL-safe, alone or inside longer encoded data (a
//! Basic auth header's `user:password`). Card numbers are found as JSON writes a float
//! too (`4.111111111111111e15`, and a number [`Redaction::redact_json`] reads as one).
//!
//! Redaction is a best-effort filter, not a data-loss-prevention guarantee: patterns miss
//! secrets they do not know and can mask look-alikes. Not covered by the built-in patterns,
//! among others: AWS secret access keys (40 characters with no prefix, unlike their
//! `AKIA…` ids), passwords and other values by the name of their field
//! (`password=…`, `"x-api-key": "…"`: mask those fields with [`Redaction::matcher`], or the
//! values with [`Redaction::secret`]), private keys (`-----BEGIN … PRIVATE KEY-----`),
//! connection strings with credentials (`postgres://user:pass@…`), keys of services not
//! listed under [`Pattern::ApiKey`], cards written with other separators (`4111.1111…`),
//! social security numbers without dashes, phone numbers, postal addresses and names.
//! What the model writes itself streams to the caller as it is written: the patterns mask
//! tool results and requests, not the model's answer.

mod exponent;
mod history;
mod names;
mod pattern;
mod scan;
mod secret_forms;
mod unescape;

#[cfg(test)]
mod encoded_tests;
#[cfg(test)]
mod scan_tests;
#[cfg(test)]
mod tests;

pub use names::names_a_credential;
pub use pattern::{Match, Pattern};

use crate::agent::{
    AgentHook, DispatchAction, DispatchEvent, HookContext, OutcomeAction, OutcomeEvent,
    StepEventKind,
};
use memchr::memmem::Finder;
use pattern::merge;
use secret_forms::EncodedSecret;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// The kind reported for literal secrets added with [`Redaction::secret`].
pub const SECRET_KIND: &str = "secret";

/// Literal secrets shorter than this, read from the environment, are not masked: a value
/// such as `8080` or `true` would mask ordinary text everywhere.
pub const MIN_ENV_SECRET_LEN: usize = 6;

/// A user-supplied matcher: the byte ranges of `text` to mask.
type MatcherFn = dyn Fn(&str) -> Vec<Range<usize>> + Send + Sync;

#[derive(Clone)]
struct Matcher {
    kind: Arc<str>,
    find: Arc<MatcherFn>,
}

/// Masks secrets and personal data in tool results and outgoing model requests; see the
/// [module docs](self).
///
/// - **Tool results** (`on_outcome`): the text the model will see for each tool call, whatever
///   its outcome, and the outcome's own text ([`ToolOutcome::text`](crate::tool::ToolOutcome::text):
///   a failed call's error message, a skip's reason, a denial's report) are masked with
///   [`OutcomeAction::mask_tool_result`]. The masked outcome is the one the run keeps: hooks
///   registered after this one read it, a stream yields it
///   ([`StreamItem::ToolResult`](crate::agent::StreamItem::ToolResult)), a durable run stores
///   it (the call's [`CallRecord`](crate::run::CallRecord)`::outcome` and `tool_call` journal
///   entry, and [`RunState::failure`](crate::run::RunState::failure) when the failure failed
///   the run), [`PromptError::Tool`](crate::agent::PromptError::Tool) carries it, and so
///   every tool, whatever its kind, fails with the secrets masked. Hooks registered before
///   this one see the call unmasked: register it before audit or logging hooks that should
///   not see the secrets either. Calls the run answers before any tool or outcome hook is
///   reached are not masked: arguments that are not a JSON object (the answer quotes them, as
///   the turn in the history holds them) and the calls of a turn an
///   [`on_invalid_tool_call`](crate::agent::AgentHook::on_invalid_tool_call) hook skipped
///   (the hook's own reason).
/// - **Requests** (`on_dispatch` of each model call): when anything in the request about to
///   be sent needs masking — its history (the user's prompt included), its preamble (system
///   prompt) or its context documents (their ids and texts) — the call is sent with a masked
///   copy through a [`RequestPatch`](crate::agent::RequestPatch) (the documents through
///   [`RequestPatch::documents`](crate::agent::RequestPatch::documents), which replaces
///   them); the run's own history and the agent's preamble and documents keep the original.
///   Register it last among hooks that change the request, so it sees their changes.
///   Reasoning that carries a provider signature is sent unchanged, as changing it would
///   invalidate the signature. The tool definitions and provider parameters are not masked.
///
/// What it does not mask: the run's own history (which a durable run stores) holds the
/// prompt and the history as written; only the requests the model is sent are masked. A
/// failed call's error is masked in its outcome, not where the tool itself writes it (its
/// own logs, say).
///
/// On Restate (reins-restate) a tool call's result is journaled by the call's step, before
/// any hook runs: register the redaction with the run's steps as well
/// (`.add_hook(steps.redaction(Redaction::new()))`), and the step journals the result — its
/// output, or its error's text — masked by [`redact_tool_result`](Self::redact_tool_result),
/// the function this hook masks with.
///
/// It keeps no state, so one instance serves any number of concurrent runs.
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::hooks::redaction::Redaction;
/// use reins::message::Message;
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::tool_fn;
/// use serde_json::{Value, json};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let lookup = tool_fn("lookup", "Looks up a customer.", |_: Value| async {
///     Ok::<_, std::convert::Infallible>(json!({"email": "ada@example.com", "plan": "pro"}))
/// });
/// let model = ScriptedModel::new([
///     Turn::tool_call("lookup", json!({})),
///     Turn::text("Ada is on the pro plan."),
/// ]);
/// let agent = AgentBuilder::new(model.clone())
///     .tool(lookup)
///     .add_hook(Redaction::new().secret("hunter2-staging"))
///     .build();
///
/// let response = agent
///     .prompt("My card is 4111 1111 1111 1111 and the password is hunter2-staging.")
///     .extended_details()
///     .await
///     .unwrap();
///
/// let requests = model.requests();
/// // The model never saw the card number or the password...
/// assert_eq!(
///     requests[0].history[0].text(),
///     "My card is [REDACTED:credit_card] and the password is [REDACTED:secret]."
/// );
/// // ...nor the email address in the tool's result.
/// let tool_message = requests[1].history.last().unwrap();
/// assert_eq!(tool_message.text(), r#"{"email":"[REDACTED:email]","plan":"pro"}"#);
/// // The run's own history keeps the prompt as the user wrote it.
/// assert!(response.history()[0].text().contains("4111 1111 1111 1111"));
/// # }
/// ```
#[derive(Clone)]
pub struct Redaction {
    patterns: u8,
    secrets: Vec<Finder<'static>>,
    /// The secrets' base64 forms, found by their cores.
    encoded_secrets: Vec<EncodedSecret>,
    matchers: Vec<Matcher>,
    /// The replacement text before and after the kind; no kind when `after` is `None`.
    before: String,
    after: Option<String>,
    tool_results: bool,
    requests: bool,
}

impl Default for Redaction {
    fn default() -> Self {
        Redaction::new()
    }
}

impl fmt::Debug for Redaction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let patterns: Vec<_> = self.enabled().map(Pattern::kind).collect();
        let matchers: Vec<_> = self.matchers.iter().map(|m| &*m.kind).collect();
        // The secrets themselves are never printed.
        f.debug_struct("Redaction")
            .field("patterns", &patterns)
            .field("secrets", &self.secrets.len())
            .field("encoded_secrets", &self.encoded_secrets.len())
            .field("matchers", &matchers)
            .field("tool_results", &self.tool_results)
            .field("requests", &self.requests)
            .finish()
    }
}

impl Redaction {
    /// Every built-in pattern but [`Pattern::Ipv4`], on tool results and requests, replaced
    /// with `[REDACTED:<kind>]`.
    pub fn new() -> Self {
        Redaction::empty()
            .enable(Pattern::ApiKey)
            .enable(Pattern::BearerToken)
            .enable(Pattern::Email)
            .enable(Pattern::CreditCard)
            .enable(Pattern::Ssn)
    }

    /// No pattern at all: enable the ones you want, add secrets or matchers.
    pub fn empty() -> Self {
        Redaction {
            patterns: 0,
            secrets: Vec::new(),
            encoded_secrets: Vec::new(),
            matchers: Vec::new(),
            before: "[REDACTED:".to_owned(),
            after: Some("]".to_owned()),
            tool_results: true,
            requests: true,
        }
    }

    /// Masks matches of `pattern`.
    pub fn enable(mut self, pattern: Pattern) -> Self {
        self.patterns |= pattern.bit();
        self
    }

    /// Stops masking matches of `pattern`.
    pub fn disable(mut self, pattern: Pattern) -> Self {
        self.patterns &= !pattern.bit();
        self
    }

    /// Masks every occurrence of `secret` (case-sensitive), reported as [`SECRET_KIND`]. An
    /// empty secret is ignored. Its JSON-escaped forms are masked too, for tool results
    /// rendered as JSON: quotes, backslashes and control characters escaped, and non-ASCII
    /// characters as `\uXXXX` (either case of hex), as writers that keep their output ASCII
    /// write them (Python's `json.dumps` by default).
    ///
    /// Its base64 encodings are masked too, standard and URL-safe, padded or not, alone or
    /// inside longer encoded data (`Authorization: Basic` and base64 of `user:secret`, a
    /// secret in an encoded config file): wherever it starts in the encoded data, the
    /// characters that carry its bits are masked, and those that carry only the data's
    /// other bytes are left. A secret shorter than 5 bytes is not looked for in base64 (its
    /// few characters would turn up in any base64 text), and neither is base64 broken over
    /// lines inside the secret (MIME's lines of 76 characters).
    ///
    /// ```
    /// use reins::hooks::redaction::Redaction;
    ///
    /// let redaction = Redaction::empty().secret("hunter2-staging");
    /// // base64("alice:hunter2-staging"), as a Basic auth header carries it.
    /// let header = "Authorization: Basic YWxpY2U6aHVudGVyMi1zdGFnaW5n";
    /// assert_eq!(redaction.redact(header), "Authorization: Basic YWxpY2U6[REDACTED:secret]");
    /// ```
    pub fn secret(mut self, secret: impl AsRef<str>) -> Self {
        let secret = secret.as_ref();
        if secret.is_empty() {
            return self;
        }
        for form in secret_forms::secret_forms(secret) {
            self.secrets.push(Finder::new(form.as_bytes()).into_owned());
        }
        (self.encoded_secrets).extend(
            secret_forms::base64_forms(secret)
                .iter()
                .map(EncodedSecret::new),
        );
        self
    }

    /// Masks each of `secrets`; see [`secret`](Self::secret).
    pub fn secrets<I, S>(self, secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        secrets.into_iter().fold(self, Redaction::secret)
    }

    /// Masks the value of the environment variable `name`, read now. Nothing is added when it
    /// is unset, not Unicode, or shorter than [`MIN_ENV_SECRET_LEN`].
    pub fn secret_from_env(self, name: &str) -> Self {
        match std::env::var(name) {
            Ok(value) if value.len() >= MIN_ENV_SECRET_LEN => self.secret(value),
            _ => self,
        }
    }

    /// Masks what `find` reports, as `kind`: the byte ranges of the text to mask. Ranges that
    /// are empty, out of bounds or not on character boundaries are ignored.
    pub fn matcher<F>(mut self, kind: impl Into<String>, find: F) -> Self
    where
        F: Fn(&str) -> Vec<Range<usize>> + Send + Sync + 'static,
    {
        self.matchers.push(Matcher {
            kind: Arc::from(kind.into()),
            find: Arc::new(find),
        });
        self
    }

    /// The text each match becomes; `{kind}` in it is replaced by the match's kind
    /// (default `[REDACTED:{kind}]`).
    pub fn replacement(mut self, template: impl Into<String>) -> Self {
        let template = template.into();
        match template.split_once("{kind}") {
            Some((before, after)) => {
                self.before = before.to_owned();
                self.after = Some(after.to_owned());
            }
            None => {
                self.before = template;
                self.after = None;
            }
        }
        self
    }

    /// Whether tool results are masked (default true).
    pub fn tool_results(mut self, on: bool) -> Self {
        self.tool_results = on;
        self
    }

    /// Whether each model request (its history, preamble and documents) is masked (default
    /// true).
    pub fn requests(mut self, on: bool) -> Self {
        self.requests = on;
        self
    }

    fn enabled(&self) -> impl Iterator<Item = Pattern> + '_ {
        Pattern::ALL
            .into_iter()
            .filter(|pattern| self.patterns & pattern.bit() != 0)
    }

    /// What would be masked in `text`: sorted, with overlapping matches merged into one (of
    /// the kind of the one that starts first). Matches hidden by JSON escapes
    /// (`ada\u0040example.com`, or JSON text held in a JSON string) are found too, and
    /// cover their escapes whole.
    pub fn find<'r>(&'r self, text: &str) -> Vec<Match<'r>> {
        let mut found: Vec<Match<'r>> = Vec::new();
        self.find_in(text, &mut found);
        for view in unescape::views(text) {
            let mut in_view = Vec::new();
            self.find_in(&view.text, &mut in_view);
            for Match { range, kind } in in_view {
                let Some(range) = view.original(range) else {
                    continue;
                };
                if text.is_char_boundary(range.start) && text.is_char_boundary(range.end) {
                    found.push(Match { range, kind });
                }
            }
        }
        merge(found)
    }

    /// Every match in `text`, unsorted and unmerged.
    fn find_in<'r>(&'r self, text: &str, found: &mut Vec<Match<'r>>) {
        for pattern in self.enabled() {
            pattern.scan(text, &mut |start, end| {
                found.push(Match {
                    range: start..end,
                    kind: pattern.kind(),
                });
            });
        }
        for secret in &self.secrets {
            let len = secret.needle().len();
            for start in secret.find_iter(text.as_bytes()) {
                // A secret that is not valid UTF-8 on its own cannot occur in a `&str` other
                // than on boundaries, but check rather than risk slicing inside a character.
                if text.is_char_boundary(start) && text.is_char_boundary(start + len) {
                    found.push(Match {
                        range: start..start + len,
                        kind: SECRET_KIND,
                    });
                }
            }
        }
        for encoded in &self.encoded_secrets {
            encoded.find_in(text.as_bytes(), &mut |range| {
                found.push(Match {
                    range,
                    kind: SECRET_KIND,
                });
            });
        }
        for matcher in &self.matchers {
            for range in (matcher.find)(text) {
                let valid = range.start < range.end
                    && range.end <= text.len()
                    && text.is_char_boundary(range.start)
                    && text.is_char_boundary(range.end);
                if valid {
                    found.push(Match {
                        range,
                        kind: &matcher.kind,
                    });
                }
            }
        }
    }

    /// `text` with every match replaced; borrowed, without allocating, when nothing matches.
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let found = self.find(text);
        if found.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut masked = String::with_capacity(text.len());
        let mut copied = 0;
        for found in &found {
            masked.push_str(&text[copied..found.range.start]);
            masked.push_str(&self.before);
            if let Some(after) = &self.after {
                masked.push_str(found.kind);
                masked.push_str(after);
            }
            copied = found.range.end;
        }
        masked.push_str(&text[copied..]);
        Cow::Owned(masked)
    }

    /// The text of a tool call's result as this hook masks it before the model sees it:
    /// [`redact`](Self::redact), or `text` unchanged when tool results are not masked
    /// ([`tool_results`](Self::tool_results)`(false)`). The hook masks with it, and so does an
    /// engine that persists tool results before the hook runs (reins-restate masks what a
    /// tool call's step journals with it), so that what is persisted is masked alike.
    pub fn redact_tool_result<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if self.tool_results {
            self.redact(text)
        } else {
            Cow::Borrowed(text)
        }
    }

    /// `value` with every string, object keys included (and every number long enough to be a
    /// card number, a float holding a whole one included, written back as a masked string),
    /// masked, or `None` when nothing in it matches. Two keys of one object
    /// masked alike keep both entries: the later one gets `#2` (`#3`…) after its key.
    pub fn redact_json(&self, value: &Value) -> Option<Value> {
        history::redact_json(self, value)
    }
}

impl AgentHook for Redaction {
    fn observes(&self, kind: StepEventKind) -> bool {
        match kind {
            StepEventKind::ToolOutcome => self.tool_results,
            StepEventKind::CompletionDispatch => self.requests,
            _ => false,
        }
    }

    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        // Failed, skipped and denied calls too: an error message can quote a secret.
        let Some(result) = event.tool_outcome() else {
            return OutcomeAction::proceed();
        };
        // The text the model would see, written once for every hook that reads it, and the
        // outcome's own text (a failure's message, a skip's reason, a denial's report), which
        // the run keeps, streams and stores: masked alike.
        let masked = |text: &str| match self.redact_tool_result(text) {
            Cow::Owned(masked) => Some(masked),
            Cow::Borrowed(_) => None,
        };
        let shown = masked(result.output_text());
        let outcome_text = result.outcome().text().and_then(masked);
        OutcomeAction::mask_tool_result(&event, shown, outcome_text)
    }

    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        let Some(request) = event.request() else {
            return DispatchAction::proceed();
        };
        match history::redact_request(self, request) {
            Some(patch) => DispatchAction::patch(patch),
            None => DispatchAction::proceed(),
        }
    }
}
