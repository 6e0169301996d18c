//! Secrets and card numbers in the other forms a tool's answer or the model may give them:
//! a literal secret in base64 (a Basic auth header, an encoded config), a card number
//! written as a JSON float.

use super::*;
use serde_json::json;

const SECRET: &str = "hunter2-staging";

fn masked(text: &str) -> String {
    Redaction::empty().secret(SECRET).redact(text).into_owned()
}

#[test]
fn base64_of_a_secret_is_masked_at_each_alignment() {
    // base64 of the secret after a prefix of 0, 1 and 2 bytes (modulo 3), with the number of
    // leading characters that carry only the prefix's bits: those stay, the rest is masked,
    // the padding included.
    let cases = [
        ("aHVudGVyMi1zdGFnaW5n", 0),         // the secret alone
        ("YWh1bnRlcjItc3RhZ2luZw==", 1),     // "a" + secret
        ("YWJodW50ZXIyLXN0YWdpbmc=", 2),     // "ab" + secret
        ("YWxpY2U6aHVudGVyMi1zdGFnaW5n", 8), // "alice:" + secret
        ("Ym9iOmh1bnRlcjItc3RhZ2luZw==", 5), // "bob:" + secret
        ("dXNlcjpodW50ZXIyLXN0YWdpbmc=", 6), // "user:" + secret
    ];
    for (encoded, kept) in cases {
        let text = format!("Authorization: Basic {encoded}\r\nHost: x");
        assert_eq!(
            masked(&text),
            format!(
                "Authorization: Basic {}[REDACTED:secret]\r\nHost: x",
                &encoded[..kept]
            ),
            "{encoded}"
        );
    }
}

#[test]
fn base64_of_a_secret_inside_a_longer_value_is_masked_where_it_lies() {
    // base64("user:hunter2-staging@db"): the six characters before the secret's carry only
    // "user:", and the five after it only "@db" (the one carrying the secret's last bits and
    // the first of "@" is masked).
    let text = "dXNlcjpodW50ZXIyLXN0YWdpbmdAZGI=";
    assert_eq!(masked(text), "dXNlcj[REDACTED:secret]AZGI=");
}

#[test]
fn standard_and_url_safe_base64_are_both_masked() {
    let secret = "k3y>>>?~~~secret";
    let redaction = Redaction::empty().secret(secret);
    let forms = [
        "azN5Pj4+P35+fnNlY3JldA==",     // standard
        "azN5Pj4-P35-fnNlY3JldA==",     // URL-safe
        "azN5Pj4-P35-fnNlY3JldA",       // URL-safe, unpadded (a JWT's, say)
        "eHlrM3k+Pj4/fn5+c2VjcmV0",     // standard, after "xy"
        "eHlrM3k-Pj4_fn5-c2VjcmV0",     // URL-safe, after "xy"
        r#"eHlrM3k+Pj4\/fn5+c2VjcmV0"#, // standard, its slash JSON-escaped
    ];
    for form in forms {
        // Masked to its end; only the leading characters of the prefix ("x", "xy") stay.
        let out = redaction.redact(form);
        let kept = out.strip_suffix("[REDACTED:secret]");
        assert!(kept.is_some_and(|kept| kept.len() <= 2), "{form}: {out}");
    }
}

#[test]
fn a_secret_too_short_for_a_distinctive_base64_form_is_masked_only_as_written() {
    // base64 of three bytes at an offset is a character or two, which would be found in
    // any base64 text.
    let redaction = Redaction::empty().secret("abc");
    assert_eq!(redaction.redact("YWJj and xYWJjeA"), "YWJj and xYWJjeA");
    assert_eq!(redaction.redact("abc"), "[REDACTED:secret]");
}

#[test]
fn base64_text_without_the_secret_is_left_alone() {
    let text = "aGVsbG8gd29ybGQ= and dGhlIHF1aWNrIGJyb3duIGZveA==";
    assert_eq!(masked(text), text);
}

#[test]
fn card_numbers_written_as_json_floats_are_masked() {
    let redaction = Redaction::new();
    let card = "[REDACTED:credit_card]";
    // A float holding a card number exactly, as serde_json reads `4.111111111111111e15`.
    let float: Value = serde_json::from_str("4.111111111111111e15").unwrap();
    assert!(float.is_f64());
    assert_eq!(redaction.redact_json(&float), Some(json!(card)));
    assert_eq!(
        redaction.redact_json(&json!({"card": 4111111111111111.0_f64})),
        Some(json!({ "card": card }))
    );
    // A negative one is a card number with a sign.
    assert_eq!(
        redaction.redact_json(&json!(-4111111111111111_i64)),
        Some(json!(format!("-{card}")))
    );
    // Floats that are not card numbers stay numbers.
    for value in [
        json!(1.5e15),
        json!(4111111111111112.0_f64),
        json!(0.5),
        json!(1e300),
    ] {
        assert_eq!(redaction.redact_json(&value), None, "{value}");
    }
}

#[test]
fn card_numbers_in_exponent_notation_in_text_are_masked() {
    let redaction = Redaction::new();
    for (text, expected) in [
        (
            r#"{"card":4.111111111111111e15}"#,
            r#"{"card":[REDACTED:credit_card]}"#,
        ),
        (
            "card 4.111111111111111E+15.",
            "card [REDACTED:credit_card].",
        ),
        ("4111111111111111e0", "[REDACTED:credit_card]"),
        ("0.4111111111111111e16", "[REDACTED:credit_card]"),
        ("4.1111111111111110000e15", "[REDACTED:credit_card]"),
        ("41111111111111110e-1", "[REDACTED:credit_card]"),
        // Not card numbers: a failing checksum, a fraction, too few digits, a longer word.
        ("4.111111111111112e15", "4.111111111111112e15"),
        ("4.1111111111111111e15", "4.1111111111111111e15"),
        ("4.111e5", "4.111e5"),
        ("v4.111111111111111e15", "v4.111111111111111e15"),
        ("4.111111111111111e15x", "4.111111111111111e15x"),
        ("1.4.111111111111111e15", "1.4.111111111111111e15"),
    ] {
        assert_eq!(redaction.redact(text), expected, "{text}");
    }
}
