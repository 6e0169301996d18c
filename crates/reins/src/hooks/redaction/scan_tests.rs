//! Each built-in pattern's positives and negatives.

use super::{Pattern, Redaction};

/// The texts `pattern` alone finds in `text`.
fn found(pattern: Pattern, text: &str) -> Vec<&str> {
    Redaction::empty()
        .enable(pattern)
        .find(text)
        .into_iter()
        .map(|found| &text[found.range])
        .collect()
}

fn assert_finds(pattern: Pattern, text: &str, expected: &[&str]) {
    assert_eq!(found(pattern, text), expected, "{pattern:?} in {text:?}");
}

const OPENAI: &str = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12";
const ANTHROPIC: &str = "sk-ant-api03-AbCdEf0123456789_xyz-QRS";
const AWS: &str = "AKIAIOSFODNN7EXAMPLE";
const GITHUB: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
const SLACK: &str = "xoxb-1234567890-abcdefABCDEF";
const GOOGLE: &str = "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q";
const STRIPE: &str = "sk_live_51HqLyjWDarjtT1zdp7dcXYZabcdefghijkl";
const STRIPE_RESTRICTED: &str = "rk_test_4eC39HqLyjWDarjtT1zdp7dc";
const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";

#[test]
fn api_keys() {
    assert_eq!(GOOGLE.len(), 39);
    for key in [
        OPENAI,
        ANTHROPIC,
        AWS,
        GITHUB,
        SLACK,
        GOOGLE,
        STRIPE,
        STRIPE_RESTRICTED,
        JWT,
    ] {
        assert_finds(Pattern::ApiKey, key, &[key]);
        assert_finds(Pattern::ApiKey, &format!("KEY={key}\n"), &[key]);
        assert_finds(Pattern::ApiKey, &format!("{{\"k\":\"{key}\"}}"), &[key]);
    }
    assert_finds(
        Pattern::ApiKey,
        "ASIAIOSFODNN7EXAMPLE.",
        &["ASIAIOSFODNN7EXAMPLE"],
    );
    assert_finds(
        Pattern::ApiKey,
        "github_pat_11ABCDEFG0123456789_abcdefghij",
        &["github_pat_11ABCDEFG0123456789_abcdefghij"],
    );
    let negatives = [
        "sk-short-key",                             // too short
        "task-0123456789abcdefghijklmnop",          // `sk-` inside a word
        "AKIAIOSFODNN7EXAMPL",                      // 15 characters
        "AKIAIOSFODNN7EXAMPLEX",                    // 17 characters
        "AKIAiosfodnn7example",                     // lower case
        "xAKIAIOSFODNN7EXAMPLE",                    // inside a word
        "ghp_tooshort123",                          // too short
        "ghx_abcdefghijklmnopqrstuvwxyz0123456789", // not a GitHub prefix
        "xoxq-1234567890-abcdef",                   // not a Slack prefix
        "xoxb-123",                                 // too short
        "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6",   // 34 after AIza
        "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6QR", // 36 after AIza
        "the sky is blue; ask-me-anything",
        "sk_live_short",                           // too short
        "sk_prod_51HqLyjWDarjtT1zdp7dcXYZabc",     // not a Stripe mode
        "eyJhbGciOiJIUzI1NiJ9",                    // a header alone
        "eyJhbGciOiJIUzI1NiJ9.notjson.sig",        // a payload that is no JSON
        "keyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.x", // inside a word
        "eyJ.eyJ.x",                               // too short to be a token
    ];
    for text in negatives {
        assert_finds(Pattern::ApiKey, text, &[]);
    }
}

#[test]
fn bearer_tokens() {
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abc-_123";
    assert_finds(
        Pattern::BearerToken,
        &format!("Authorization: Bearer {jwt}"),
        &[jwt],
    );
    assert_finds(
        Pattern::BearerToken,
        "authorization: bearer  tok3n12345==;",
        &["tok3n12345=="],
    );
    assert_finds(
        Pattern::BearerToken,
        "BEARER abc/def+123~",
        &["abc/def+123~"],
    );
    for text in [
        "the bearer of bad news",
        "Bearer responsibilities", // no digit
        "Bearer abc123",           // too short
        "Bearer\tabc12345678",     // a tab is not the header's space
        "Forbearer x12345678",     // inside a word
        "Bearer",
    ] {
        assert_finds(Pattern::BearerToken, text, &[]);
    }
}

#[test]
fn emails() {
    assert_finds(
        Pattern::Email,
        "Mail ada.lovelace+work@example.co.uk.",
        &["ada.lovelace+work@example.co.uk"],
    );
    assert_finds(
        Pattern::Email,
        "<a@b.io>, c_d@e-f.org",
        &["a@b.io", "c_d@e-f.org"],
    );
    assert_finds(Pattern::Email, "\"x@y.com\"", &["x@y.com"]);
    // Letters beyond ASCII, in the local part and the domain, whole characters only.
    assert_finds(Pattern::Email, "é.bob@example.com", &["é.bob@example.com"]);
    assert_finds(
        Pattern::Email,
        "mail josé@example.com now",
        &["josé@example.com"],
    );
    assert_finds(
        Pattern::Email,
        "to müller.hans@example.com.",
        &["müller.hans@example.com"],
    );
    assert_finds(
        Pattern::Email,
        "ünïcode.user@exämple.com",
        &["ünïcode.user@exämple.com"],
    );
    assert_finds(Pattern::Email, "почта@пример.рф", &["почта@пример.рф"]);
    // In a sentence of a script written without spaces, the address alone, not the sentence.
    assert_finds(
        Pattern::Email,
        "请联系support@example.com获取帮助",
        &["support@example.com"],
    );
    assert_finds(
        Pattern::Email,
        "メールはtaro@example.jpまでお願いします",
        &["taro@example.jp"],
    );
    assert_finds(Pattern::Email, "é@ü.de", &["é@ü.de"]);
    assert_finds(
        Pattern::Email,
        "ａｄａ@example.com",
        &["ａｄａ@example.com"],
    );
    assert_finds(
        Pattern::Email,
        "jose\u{301}@example.com",
        &["jose\u{301}@example.com"],
    );
    // Punctuation beyond ASCII around an address is not part of it.
    assert_finds(Pattern::Email, "“ada@example.com”", &["ada@example.com"]);
    assert_finds(Pattern::Email, "—ada@example.com—x", &["ada@example.com"]);
    for text in [
        "@mention",
        "user@localhost",
        "user@example.c",
        "user@example.123",
        "user@-example.com",
        "user@example..com",
        "a @ b.com",
        "no at sign here.com",
        "ü@ö",
        "ada@example.c😀",
    ] {
        assert_finds(Pattern::Email, text, &[]);
    }
}

#[test]
fn credit_cards() {
    for card in [
        "4111111111111111",
        "4111 1111 1111 1111",
        "5500-0000-0000-0004",
        "378282246310005", // 15-digit Amex
        "6011000990139424",
        "4222222222222", // 13 digits
    ] {
        assert_finds(Pattern::CreditCard, card, &[card]);
        assert_finds(Pattern::CreditCard, &format!("card: {card}."), &[card]);
    }
    assert_finds(
        Pattern::CreditCard,
        "{\"card\":4111111111111111}",
        &["4111111111111111"],
    );
    // A card followed by more digit groups is still found.
    assert_finds(
        Pattern::CreditCard,
        "4111 1111 1111 1111 2024",
        &["4111 1111 1111 1111"],
    );
    assert_finds(
        Pattern::CreditCard,
        "ref 12-4111-1111-1111-1111",
        &["4111-1111-1111-1111"],
    );
    // A word that starts with a digit after the card (`2FA`, `3rd`) is not one of its groups.
    for (text, card) in [
        (
            "card 4111 1111 1111 1111 2FA enabled",
            "4111 1111 1111 1111",
        ),
        ("4111-1111-1111-1111 3rd attempt", "4111-1111-1111-1111"),
        ("4111 1111 1111 1111 2024 4K", "4111 1111 1111 1111"),
        ("4111111111111111 2fa", "4111111111111111"),
    ] {
        assert_finds(Pattern::CreditCard, text, &[card]);
    }
    for text in [
        "4111111111111112", // fails Luhn
        "4111 1111 1111 1112",
        "1700000000000",        // a millisecond timestamp (starts with 1)
        "411111111111",         // 12 digits
        "41111111111111111111", // 20 digits
        "4111  1111 1111 1111", // a double space splits the number
        "id4111111111111111",   // inside a word
        "4111111111111111abc",
        "4111 1111 1111 1111abc", // the last group is part of a word: 12 digits are left
        "41111111111111111111 2FA", // 20 digits, then a word
        "7111111111111111",       // not a card network's range
    ] {
        assert_finds(Pattern::CreditCard, text, &[]);
    }
}

#[test]
fn luhn() {
    assert!(super::scan::luhn(&[7, 9, 9, 2, 7, 3, 9, 8, 7, 1, 3]));
    assert!(!super::scan::luhn(&[7, 9, 9, 2, 7, 3, 9, 8, 7, 1, 4]));
}

#[test]
fn ssns() {
    assert_finds(Pattern::Ssn, "SSN 123-45-6789.", &["123-45-6789"]);
    assert_finds(
        Pattern::Ssn,
        "078-05-1120,123-45-6789",
        &["078-05-1120", "123-45-6789"],
    );
    for text in [
        "000-12-3456",
        "666-12-3456",
        "900-12-3456",
        "123-00-4567",
        "123-45-0000",
        "123-456-789",
        "1234-56-7890",
        "123-45-67890",
        "123-45-6789-1",
        "9-123-45-6789",
        "x123-45-6789",
        "2024-01-15",
    ] {
        assert_finds(Pattern::Ssn, text, &[]);
    }
}

#[test]
fn ipv4s() {
    assert_finds(
        Pattern::Ipv4,
        "host 192.168.0.1:8080 and 10.0.0.255.",
        &["192.168.0.1", "10.0.0.255"],
    );
    assert_finds(Pattern::Ipv4, "0.0.0.0", &["0.0.0.0"]);
    for text in [
        "256.1.1.1",
        "1.2.3",
        "1.2.3.4.5",
        "01.2.3.4",
        "v1.2.3.4",
        "1.2.3.4a",
        "1..2.3",
    ] {
        assert_finds(Pattern::Ipv4, text, &[]);
    }
    // Off by default.
    assert!(Redaction::new().find("10.0.0.1").is_empty());
}

#[test]
fn nothing_found_in_unicode_and_edge_texts() {
    let redaction = Redaction::new().enable(Pattern::Ipv4);
    for text in [
        "",
        "-",
        "@",
        "é@ü",
        "日本語のテキスト 123-45",
        "sk-",
        "Bearer ",
        "4",
    ] {
        assert!(redaction.find(text).is_empty(), "{text:?}");
    }
}
