//! Ready-made checks. Each rejects (so the model gets another chance where the stage allows
//! one); call [`Check::tripping`] on it to stop the run instead.

use super::caseless::{decode_json_escapes, fold, latin_skeleton};
use super::check::{Check, Verdict};

/// Rejects text longer than a number of characters (Unicode scalar values, not bytes).
///
/// ```
/// use reins::hooks::guardrail::{Check, MaxLength, Verdict};
/// # futures::executor::block_on(async {
/// assert_eq!(MaxLength::chars(3).check("héé").await, Verdict::Pass);
/// assert!(matches!(MaxLength::chars(3).check("four").await, Verdict::Reject(_)));
/// # });
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaxLength {
    max_chars: usize,
}

impl MaxLength {
    /// At most `max_chars` characters.
    pub fn chars(max_chars: usize) -> Self {
        MaxLength { max_chars }
    }
}

impl Check for MaxLength {
    async fn check(&self, text: &str) -> Verdict {
        // A text of at most `max_chars` bytes has at most that many characters: skip the
        // count for the common short case.
        if text.len() <= self.max_chars {
            return Verdict::Pass;
        }
        let count = text.chars().count();
        if count <= self.max_chars {
            Verdict::Pass
        } else {
            Verdict::Reject(format!(
                "Too long: {count} characters where at most {} are allowed. Make it shorter.",
                self.max_chars
            ))
        }
    }
}

/// Rejects text containing any of a list of phrases, compared caselessly (plain substrings,
/// no patterns).
///
/// Both the phrases and the text are folded before they are compared, so that a phrase
/// cannot be slipped past in a form a reader (or a model) takes for the same words: another
/// case, with Unicode's full case folding (`STRASSE` holds `straße`, `İGNORE` holds
/// `ignore`); compatibility characters (fullwidth `ｉｇｎｏｒｅ`, the ligature `ﬁ`, the Kelvin
/// sign), compared as the characters they stand for (NFKD); invisible characters (a
/// zero-width space or a soft hyphen inside a word) and diacritics (accents, overlaid
/// strokes: `ÍGNÖRÉ` holds `ignore`, and the phrase `café` is found in `cafe`), left out.
/// Cyrillic and Greek letters that look like Latin ones (`іgnоrе` with a Cyrillic `і`, `о` and
/// `е`) are compared as those Latin letters too, so a phrase of those scripts may also be
/// found in Latin text that looks like it. Look-alikes of other scripts and symbols,
/// spelling and spacing are not folded: a deny list is a tripwire, not a filter a
/// determined writer cannot get past.
///
/// A phrase is also found spelled with JSON string escapes, in any text: a check of tool
/// arguments ([`Guardrails::tool_args`](super::Guardrails::tool_args)) reads the JSON text the
/// model wrote, where the path `C:\Windows` is written `C:\\Windows` and any character may
/// be written as a `\u` escape (`\u0072m -rf` is `rm -rf`). The text is read both as it is
/// and with its escapes decoded, leniently (text that is not valid JSON is decoded too).
///
/// By default the rejection names the phrase found (lowercased), which helps the model
/// rephrase; set [`message`](Self::message) when the list itself must stay private.
///
/// ```
/// use reins::hooks::guardrail::{Check, DenyList, Verdict};
/// # futures::executor::block_on(async {
/// let deny = DenyList::new(["ignore previous instructions"]);
/// assert!(matches!(deny.check("Please IGNORE previous Instructions").await, Verdict::Reject(_)));
/// assert!(matches!(deny.check("İGNORE PREVIOUS INSTRUCTIONS").await, Verdict::Reject(_)));
/// assert_eq!(deny.check("Follow the instructions").await, Verdict::Pass);
/// # });
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DenyList {
    /// The phrases, folded once here so each check folds only the text.
    phrases: Vec<Phrase>,
    message: Option<String>,
}

/// A denied phrase: as the rejection names it, and as it is compared.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Phrase {
    shown: String,
    folded: String,
    /// `folded` with look-alike letters of other scripts as Latin ones, when that differs.
    skeleton: Option<String>,
}

impl Phrase {
    fn new(phrase: &str) -> Phrase {
        let folded = fold(phrase);
        Phrase {
            shown: phrase.to_lowercase(),
            skeleton: latin_skeleton(&folded),
            folded,
        }
    }

    /// Whether one of `texts`, each folded (or its skeleton), holds the phrase.
    fn found_in(&self, texts: &[String]) -> bool {
        texts.iter().any(|text| {
            text.contains(self.folded.as_str())
                || self
                    .skeleton
                    .as_deref()
                    .is_some_and(|skeleton| text.contains(skeleton))
        })
    }
}

impl DenyList {
    /// Denies each of `phrases`. Empty phrases are ignored: they would match every text.
    pub fn new<I, S>(phrases: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        DenyList {
            phrases: phrases
                .into_iter()
                .map(|phrase| Phrase::new(phrase.as_ref()))
                // An empty phrase (or one of invisible characters only) matches every text.
                .filter(|phrase| !phrase.folded.is_empty())
                .collect(),
            message: None,
        }
    }

    /// Rejects with `message` instead of naming the phrase found.
    pub fn message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

impl Check for DenyList {
    async fn check(&self, text: &str) -> Verdict {
        if self.phrases.is_empty() {
            return Verdict::Pass;
        }
        // As written, and with JSON escapes read (a phrase spelled `\u0072m` or `C:\\x`).
        let mut texts = vec![fold(text)];
        texts.extend(decode_json_escapes(text).map(|decoded| fold(&decoded)));
        // And with look-alike letters of other scripts read as the Latin ones.
        let skeletons: Vec<String> = texts.iter().filter_map(|t| latin_skeleton(t)).collect();
        texts.extend(skeletons);
        match self.phrases.iter().find(|phrase| phrase.found_in(&texts)) {
            None => Verdict::Pass,
            Some(phrase) => Verdict::Reject(match &self.message {
                Some(message) => message.clone(),
                None => format!(
                    "Contains the denied phrase \"{}\". Leave it out.",
                    phrase.shown
                ),
            }),
        }
    }
}

/// Rejects text that is not valid JSON (any JSON value; no schema). Meant for answers.
///
/// ```
/// use reins::hooks::guardrail::{Check, ValidJson, Verdict};
/// # futures::executor::block_on(async {
/// assert_eq!(ValidJson::new().check(r#" {"ok": true} "#).await, Verdict::Pass);
/// assert!(matches!(ValidJson::new().check("{ok: true}").await, Verdict::Reject(_)));
/// let fenced = "```json\n{\"ok\": true}\n```";
/// assert!(matches!(ValidJson::new().check(fenced).await, Verdict::Reject(_)));
/// assert_eq!(ValidJson::new().allow_code_fence().check(fenced).await, Verdict::Pass);
/// # });
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidJson {
    allow_code_fence: bool,
}

impl ValidJson {
    /// The text, trimmed of surrounding whitespace, must be one JSON value.
    pub fn new() -> Self {
        ValidJson::default()
    }

    /// Also accepts JSON wrapped in one Markdown code fence (```` ``` ```` or
    /// ```` ```json ````), as models often write it.
    pub fn allow_code_fence(mut self) -> Self {
        self.allow_code_fence = true;
        self
    }
}

impl Check for ValidJson {
    async fn check(&self, text: &str) -> Verdict {
        let mut body = text.trim();
        if self.allow_code_fence {
            body = strip_code_fence(body);
        }
        match serde_json::from_str::<serde::de::IgnoredAny>(body) {
            Ok(_) => Verdict::Pass,
            Err(error) => Verdict::Reject(format!(
                "Not valid JSON ({error}). Answer with the JSON value only."
            )),
        }
    }
}

/// The inside of a Markdown code fence around the whole of `text`, or `text` itself.
fn strip_code_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let Some(inner) = rest.strip_suffix("```") else {
        return text;
    };
    // Drop the info string (`json`) up to the end of the opening line.
    match inner.split_once('\n') {
        Some((info, body)) if !info.trim().contains(char::is_whitespace) => body.trim(),
        _ => inner.trim(),
    }
}
