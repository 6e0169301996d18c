//! The built-in [`Pattern`]s, and [`Match`]es as [`Redaction::find`](super::Redaction::find)
//! reports them.

use super::{exponent, scan};
use std::ops::Range;

/// A built-in family of things to mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Pattern {
    /// API keys of well-known services: `sk-…` (OpenAI, Anthropic), `AKIA…`/`ASIA…` (AWS),
    /// `ghp_…` and the other GitHub tokens, `xoxb-…`/`xoxp-…` (Slack), `AIza…` (Google),
    /// `sk_live_…`/`rk_test_…` (Stripe), and JSON Web Tokens (`eyJ….eyJ….…`).
    ApiKey,
    /// The token of an `Authorization: Bearer <token>` header.
    BearerToken,
    /// Email addresses, letters beyond ASCII included (`josé@example.com`, `почта@пример.рф`).
    Email,
    /// Payment card numbers: 13 to 19 digits, optionally grouped with spaces or dashes,
    /// starting with 2 to 6 and passing the Luhn check; also written as a float in exponent
    /// notation (`4.111111111111111e15`).
    CreditCard,
    /// US social security numbers written `ddd-dd-dddd`.
    Ssn,
    /// IPv4 addresses (off by default: version numbers look alike).
    Ipv4,
}

impl Pattern {
    /// Every built-in pattern.
    pub const ALL: [Pattern; 6] = [
        Pattern::ApiKey,
        Pattern::BearerToken,
        Pattern::Email,
        Pattern::CreditCard,
        Pattern::Ssn,
        Pattern::Ipv4,
    ];

    /// The kind a match of this pattern reports (and the `<kind>` of the replacement):
    /// `api_key`, `bearer_token`, `email`, `credit_card`, `ssn` or `ipv4`.
    pub fn kind(self) -> &'static str {
        match self {
            Pattern::ApiKey => "api_key",
            Pattern::BearerToken => "bearer_token",
            Pattern::Email => "email",
            Pattern::CreditCard => "credit_card",
            Pattern::Ssn => "ssn",
            Pattern::Ipv4 => "ipv4",
        }
    }

    pub(super) fn scan(self, text: &str, emit: scan::Emit<'_>) {
        match self {
            Pattern::ApiKey => scan::api_keys(text, emit),
            Pattern::BearerToken => scan::bearer_tokens(text, emit),
            Pattern::Email => scan::emails(text, emit),
            Pattern::CreditCard => {
                scan::credit_cards(text, emit);
                exponent::card_floats(text, emit);
            }
            Pattern::Ssn => scan::ssns(text, emit),
            Pattern::Ipv4 => scan::ipv4s(text, emit),
        }
    }

    pub(super) fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// One masked span: its byte range in the text and its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match<'r> {
    /// The bytes masked.
    pub range: Range<usize>,
    /// What was found: a [`Pattern::kind`], [`SECRET_KIND`](super::SECRET_KIND), or a
    /// matcher's kind.
    pub kind: &'r str,
}

/// Sorts matches and merges overlapping ones, so no part of any match is left unmasked.
pub(super) fn merge(mut found: Vec<Match<'_>>) -> Vec<Match<'_>> {
    if found.len() < 2 {
        return found;
    }
    found.sort_by(|a, b| {
        a.range
            .start
            .cmp(&b.range.start)
            .then(b.range.end.cmp(&a.range.end))
    });
    let mut merged: Vec<Match<'_>> = Vec::with_capacity(found.len());
    for next in found {
        match merged.last_mut() {
            Some(last) if next.range.start < last.range.end => {
                last.range.end = last.range.end.max(next.range.end);
            }
            _ => merged.push(next),
        }
    }
    merged
}
