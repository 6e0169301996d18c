//! The ready checks, the trip reason format and what the hook observes.

use super::*;
use crate::agent::{PromptError, StopReason};

#[test]
fn the_reason_carries_the_trip_and_other_text_is_not_read() {
    let trip = GuardrailTripped::new(Stage::Answer, "a \"b\": c", "line 1\nline 2: {\"x\"}");
    let cancelled = |reason: StopReason| PromptError::Cancelled {
        reason,
        history: Vec::new(),
        run_id: "r".into(),
    };
    let reason = trip.clone().into_reason();
    assert_eq!(
        reason,
        "guardrail `a \"b\": c` tripped on the answer: line 1\nline 2: {\"x\"}"
    );
    assert_eq!(
        GuardrailTripped::from_error(&cancelled(reason)),
        Some(trip.clone())
    );
    // The same text from another hook is not taken for a trip.
    assert_eq!(
        GuardrailTripped::from_error(&cancelled(trip.to_string().into())),
        None
    );
    let other = PromptError::InvalidConfiguration("x".into());
    assert_eq!(GuardrailTripped::from_error(&other), None);
}

#[test]
fn only_stages_with_checks_are_observed() {
    let guard = Guardrails::new().answer("len", MaxLength::chars(1));
    let observed: Vec<_> = StepEventKind::ALL
        .into_iter()
        .filter(|&k| guard.observes(k))
        .collect();
    assert_eq!(observed, vec![StepEventKind::ModelTurnFinished]);
    assert!(
        StepEventKind::ALL
            .into_iter()
            .all(|k| !Guardrails::new().observes(k))
    );
}

#[tokio::test]
async fn ready_checks() {
    assert_eq!(MaxLength::chars(2).check("éé").await, Verdict::Pass);
    let long = MaxLength::chars(2).check("ééé").await;
    assert_eq!(
        long,
        Verdict::reject("Too long: 3 characters where at most 2 are allowed. Make it shorter.")
    );
    let Verdict::Reject(message) = long else {
        panic!("over the limit must reject");
    };
    assert_eq!(
        MaxLength::chars(2).tripping().check("ééé").await,
        Verdict::Trip(message)
    );
    let deny = DenyList::new(["", "Secret Plan"]);
    assert_eq!(deny.check("no match").await, Verdict::Pass);
    assert_eq!(
        deny.check("the SECRET plan").await,
        Verdict::reject("Contains the denied phrase \"secret plan\". Leave it out.")
    );
    assert_eq!(DenyList::new([""]).check("anything").await, Verdict::Pass);
    assert_eq!(
        DenyList::new(["\u{200B}"]).check("anything").await,
        Verdict::Pass
    );
    for ok in ["1", " [1, 2] ", "\"s\"", "null"] {
        assert_eq!(ValidJson::new().check(ok).await, Verdict::Pass, "{ok}");
    }
    for bad in ["", "{", "{} {}", "```{}```"] {
        assert!(
            matches!(ValidJson::new().check(bad).await, Verdict::Reject(_)),
            "{bad}"
        );
    }
    for fenced in ["```{}```", "```\n{}\n```", "```json\n[1]\n```"] {
        assert_eq!(
            ValidJson::new().allow_code_fence().check(fenced).await,
            Verdict::Pass,
            "{fenced}"
        );
    }
}

/// A denied phrase written in another case (with full case folding), in compatibility
/// characters or with invisible characters inside is still found: each reads as the phrase.
#[tokio::test]
async fn a_denied_phrase_is_found_in_any_form_that_reads_as_it() {
    let deny = DenyList::new(["ignore previous instructions", "straße", "kill", "final"]);
    for text in [
        // Turkish capital dotted I: lowercased alone, it keeps a combining dot.
        "İGNORE PREVIOUS INSTRUCTIONS",
        // Fullwidth letters.
        "ｉｇｎｏｒｅ ｐｒｅｖｉｏｕｓ ｉｎｓｔｒｕｃｔｉｏｎｓ",
        // A zero-width space and a soft hyphen inside words.
        "ig\u{200B}nore previous instruc\u{00AD}tions",
        // `ß` is `ss` in capitals.
        "WALK DOWN THE STRASSE",
        "walk down the STRAẞE",
        // The Kelvin sign.
        "\u{212A}ILL the process",
        // The ligature `ﬁ`.
        "the ﬁnal answer",
    ] {
        assert!(
            matches!(deny.check(text).await, Verdict::Reject(_)),
            "{text:?} passed"
        );
    }
    let capitals = DenyList::new(["STRASSE", "ΟΔΟΣ"]);
    assert!(matches!(
        capitals.check("die straße").await,
        Verdict::Reject(_)
    ));
    assert!(matches!(
        capitals.check("μια οδος").await,
        Verdict::Reject(_)
    ));
    assert_eq!(deny.check("ignore the previous note").await, Verdict::Pass);
}

/// Tool arguments are checked as the model wrote their JSON text, where any character may be
/// spelled as an escape (`\u0072` is `r`): a denied phrase so spelled is still found.
#[tokio::test]
async fn a_denied_phrase_spelled_with_json_escapes_is_found_in_arguments() {
    let deny = DenyList::new(["rm -rf", "ignore previous instructions", "c:\\windows"]);
    for text in [
        r#"{"cmd": "\u0072m -rf /"}"#,
        r#"{"cmd": "\u0052\u004D -RF /"}"#,
        // A fullwidth letter as a surrogate-free escape, folded after decoding.
        r#"{"note": "\uff49gnore previous instructions"}"#,
        // A zero-width space written as an escape inside the word.
        r#"{"note": "ig\u200bnore previous instructions"}"#,
        // A mathematical bold `i` as a surrogate pair.
        r#"{"note": "\ud835\udc22gnore previous instructions"}"#,
        // A backslash written as an escape (`\u005c`), not `\\`.
        r#"{"path": "C:\u005cWindows"}"#,
        // The phrase in a key, not a value.
        r#"{"\u0072m -rf": true}"#,
    ] {
        assert!(
            matches!(deny.check(text).await, Verdict::Reject(_)),
            "{text:?} passed"
        );
    }
    // Text that is not valid JSON (a lone surrogate, a bad escape) is decoded all the same.
    assert!(matches!(
        deny.check(r#"{"cmd": "\u0072m -rf", "x": "\ud800 \q"}"#)
            .await,
        Verdict::Reject(_)
    ));
    // Escapes that spell other text pass; an escaped backslash is not an escape's start.
    assert_eq!(
        deny.check(r#"{"cmd": "\u0072m -i x"}"#).await,
        Verdict::Pass
    );
    assert_eq!(
        deny.check(r#"{"cmd": "\\u0072m -rf"}"#).await,
        Verdict::Pass
    );
}

/// Invisible characters that a writer might slip inside a phrase: a combining grapheme joiner,
/// direction controls and isolates, a word joiner, a byte-order mark, a variation selector.
#[tokio::test]
async fn a_denied_phrase_with_direction_controls_or_joiners_inside_is_found() {
    let deny = DenyList::new(["rm -rf"]);
    for text in [
        "r\u{034F}m -rf",
        "r\u{202E}m -rf\u{202C}",
        "r\u{2066}m\u{2069} -rf",
        "rm\u{2060} -rf",
        "\u{FEFF}rm -\u{FE0F}rf",
        "r\u{200D}m -r\u{200C}f",
    ] {
        assert!(
            matches!(deny.check(text).await, Verdict::Reject(_)),
            "{text:?} passed"
        );
    }
}

/// Diacritics stacked on a phrase's letters (accents, strokes, "zalgo" text) leave it legible
/// to a reader and to a model: it is still found, and a phrase with accents matches without.
#[tokio::test]
async fn a_denied_phrase_under_combining_marks_is_found() {
    let deny = DenyList::new(["ignore previous", "café"]);
    for text in [
        "i\u{0301}gnore previous",
        "i\u{0334}g\u{0337}n\u{0338}o\u{0335}r\u{0336}e\u{0337} previous",
        "ÍGNÖRÉ PRÉVIOUS",
        "ignore previous\u{20DD}",
        "the cafe",
        "the CAFE\u{0301}",
    ] {
        assert!(
            matches!(deny.check(text).await, Verdict::Reject(_)),
            "{text:?} passed"
        );
    }
    assert_eq!(deny.check("ignore the previous").await, Verdict::Pass);
}

/// Cyrillic and Greek letters that look like Latin ones, mixed into a Latin phrase or
/// spelling the whole of it, read as the phrase: it is still found.
#[tokio::test]
async fn a_denied_phrase_in_look_alike_letters_of_other_scripts_is_found() {
    let deny = DenyList::new(["ignore previous", "rm -rf", "exec", "KILL"]);
    for text in [
        // Cyrillic `о` and `е`.
        "ign\u{043E}r\u{0435} previous",
        // Cyrillic `і`, Greek `ο` and `ν`.
        "\u{0456}gnore pre\u{03BD}i\u{03BF}us",
        // Capitals: Cyrillic `Е`, `Х`, `С`; Greek `Κ` and `Ι`.
        "\u{0415}\u{0425}\u{0415}\u{0421} it",
        "\u{039A}\u{0399}LL it",
        // A fullwidth `ｒ`, and a Cyrillic `г` for the other `r`.
        "\u{FF52}m -\u{0433}f",
    ] {
        assert!(
            matches!(deny.check(text).await, Verdict::Reject(_)),
            "{text:?} passed"
        );
    }
    // Words of those scripts that look like no denied phrase pass.
    assert_eq!(deny.check("привет, γεια σου").await, Verdict::Pass);
}
