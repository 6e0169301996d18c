//! The built-in patterns, written by hand: each family is one pass over the bytes of the text
//! and reports matches through a callback, so a text without matches costs no allocation.
//!
//! Every pattern but the email addresses' is ASCII, so each match starts and ends on a
//! character boundary; an address's letters beyond ASCII are read as whole characters.

use memchr::{memchr_iter, memchr2_iter};

/// Reports one match as a byte range.
pub(super) type Emit<'e> = &'e mut dyn FnMut(usize, usize);

/// A character of an API key: `[A-Za-z0-9_-]`.
fn is_key_char(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-'
}

/// A character of a word: `[A-Za-z0-9_]`.
fn is_word(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// The byte at `index`, or 0 past the end (0 is no character class's member).
fn at(bytes: &[u8], index: usize) -> u8 {
    bytes.get(index).copied().unwrap_or(0)
}

/// The byte before `index` as a pattern's start sees it: 0 at the start of the text, and 0
/// for the letter of a JSON escape (`\n`, `\t`, `\r`, `\b`, `\f`), which stands for a
/// space-like character. A tool's JSON answer is scanned as its text, where a line break is
/// the two characters `\n`: read as the letter `n`, it would hide the card or key after it.
pub(super) fn byte_before(bytes: &[u8], index: usize) -> u8 {
    let Some(before) = index.checked_sub(1).map(|i| bytes[i]) else {
        return 0;
    };
    if !matches!(before, b'n' | b't' | b'r' | b'b' | b'f') {
        return before;
    }
    // The letter follows an escaping backslash when an odd number of backslashes precede it
    // (`\\n` is a backslash and the letter `n`).
    let backslashes = bytes[..index - 1]
        .iter()
        .rev()
        .take_while(|&&b| b == b'\\')
        .count();
    if backslashes % 2 == 1 { 0 } else { before }
}

/// How many bytes from `from` on satisfy `class`.
fn run_len(bytes: &[u8], from: usize, class: impl Fn(u8) -> bool) -> usize {
    bytes
        .get(from..)
        .map_or(0, |rest| rest.iter().take_while(|&&b| class(b)).count())
}

/// API keys, each starting at a word boundary:
///
/// - `sk-…` with at least 20 key characters (OpenAI; Anthropic's `sk-ant-…`);
/// - `AKIA` or `ASIA` and exactly 16 upper-case letters or digits (AWS);
/// - `ghp_`, `gho_`, `ghu_`, `ghs_` or `ghr_` and at least 30 letters or digits, and
///   `github_pat_…` (GitHub);
/// - `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-` or `xoxs-` and at least 10 more (Slack);
/// - `AIza` and exactly 35 key characters (Google);
/// - `sk_live_`, `sk_test_`, `rk_live_` or `rk_test_` and at least 16 letters or digits
///   (Stripe secret and restricted keys);
/// - JSON Web Tokens: `eyJ…` `.` `eyJ…` `.` and a signature, each part of key characters
///   (a JSON header and payload in base64url always start `eyJ`).
pub(super) fn api_keys(text: &str, emit: Emit<'_>) {
    let bytes = text.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        let starts_word = !is_key_char(byte_before(bytes, index));
        if starts_word && matches!(bytes[index], b's' | b'A' | b'g' | b'x' | b'r' | b'e') {
            if let Some(end) = key_at(bytes, index) {
                emit(index, end);
                index = end;
                continue;
            }
        }
        index += 1;
    }
}

fn key_at(bytes: &[u8], start: usize) -> Option<usize> {
    let rest = &bytes[start..];
    let alnum = |b: u8| b.is_ascii_alphanumeric();
    let at_least = |prefix: usize, min: usize, class: &dyn Fn(u8) -> bool| {
        let len = run_len(bytes, start + prefix, class);
        (len >= min).then_some(start + prefix + len)
    };
    let exactly = |prefix: usize, len: usize, class: &dyn Fn(u8) -> bool| {
        let end = start + prefix + len;
        let fits = run_len(bytes, start + prefix, class) >= len && !is_key_char(at(bytes, end));
        fits.then_some(end)
    };
    if rest.starts_with(b"sk-") {
        at_least(3, 20, &is_key_char)
    } else if [b"sk_live_", b"sk_test_", b"rk_live_", b"rk_test_"]
        .iter()
        .any(|prefix| rest.starts_with(*prefix))
    {
        at_least(8, 16, &alnum)
    } else if rest.starts_with(b"eyJ") {
        jwt_at(bytes, start)
    } else if rest.starts_with(b"AKIA") || rest.starts_with(b"ASIA") {
        exactly(4, 16, &|b: u8| b.is_ascii_uppercase() || b.is_ascii_digit())
    } else if rest.starts_with(b"AIza") {
        exactly(4, 35, &is_key_char)
    } else if rest.starts_with(b"github_pat_") {
        at_least(11, 22, &|b: u8| alnum(b) || b == b'_')
    } else if rest.starts_with(b"gh") && matches!(at(rest, 2), b'p' | b'o' | b'u' | b's' | b'r') {
        if at(rest, 3) == b'_' {
            at_least(4, 30, &alnum)
        } else {
            None
        }
    } else if rest.starts_with(b"xox") && matches!(at(rest, 3), b'a' | b'b' | b'p' | b'r' | b's') {
        if at(rest, 4) == b'-' {
            at_least(5, 10, &|b: u8| alnum(b) || b == b'-')
        } else {
            None
        }
    } else {
        None
    }
}

/// A JSON Web Token from `start` (at its `eyJ`): a header and a payload of at least 4 key
/// characters after their `eyJ`, the payload starting `eyJ` too, and a signature (empty
/// for an unsigned token), separated by dots.
fn jwt_at(bytes: &[u8], start: usize) -> Option<usize> {
    let header = run_len(bytes, start, is_key_char);
    let payload = start + header + 1;
    let json_part = |from: usize, len: usize| len >= 7 && bytes[from..].starts_with(b"eyJ");
    if !json_part(start, header) || at(bytes, payload - 1) != b'.' {
        return None;
    }
    let payload_len = run_len(bytes, payload, is_key_char);
    let signature = payload + payload_len + 1;
    if !json_part(payload, payload_len) || at(bytes, signature - 1) != b'.' {
        return None;
    }
    Some(signature + run_len(bytes, signature, is_key_char))
}

/// The token after `Bearer` (any case) and one or more spaces: at least 8 characters of
/// `[A-Za-z0-9-._~+/_]` (then any `=` padding) including a digit, so prose such as "bearer of
/// news" is left alone. Only the token is masked.
pub(super) fn bearer_tokens(text: &str, emit: Emit<'_>) {
    let bytes = text.as_bytes();
    let token_char = |b: u8| b.is_ascii_alphanumeric() || b"-._~+/_".contains(&b);
    let mut resume = 0;
    for start in memchr2_iter(b'b', b'B', bytes) {
        if start < resume || byte_before(bytes, start).is_ascii_alphanumeric() {
            continue;
        }
        let word = bytes.get(start..start + 6);
        if !word.is_some_and(|word| word.eq_ignore_ascii_case(b"bearer")) {
            continue;
        }
        let spaces = run_len(bytes, start + 6, |b| b == b' ');
        if spaces == 0 {
            continue;
        }
        let token = start + 6 + spaces;
        let len = run_len(bytes, token, token_char);
        let has_digit = bytes[token..token + len].iter().any(u8::is_ascii_digit);
        if len >= 8 && has_digit {
            let end = token + len + run_len(bytes, token + len, |b| b == b'=');
            emit(token, end);
            resume = end;
        }
    }
}

/// `local@domain.tld`: a local part of `[A-Za-z0-9._%+_-]` and letters and digits beyond
/// ASCII (`josé`, `müller`), and a domain of dot-separated labels of `[A-Za-z0-9-]` and such
/// letters, ending in a top-level domain of two or more letters (`.com`, `.рф`). ASCII is
/// read a byte at a time; only a byte beyond ASCII next to an address is decoded, so the
/// match starts and ends on character boundaries.
pub(super) fn emails(text: &str, emit: Emit<'_>) {
    let bytes = text.as_bytes();
    let mut resume = 0;
    for at_sign in memchr_iter(b'@', bytes) {
        if at_sign < resume {
            continue;
        }
        // Back from the `@` a character at a time; `resume`, the end of the last address, is
        // a character boundary like `start`.
        let mut start = at_sign;
        while start > resume {
            match local_char_before(text, start) {
                Some(len) => start -= len,
                None => break,
            }
        }
        while start < at_sign && bytes[start] == b'.' {
            start += 1;
        }
        if start == at_sign {
            continue;
        }
        let domain_start = at_sign + 1;
        let mut end = domain_start;
        while let Some(len) = domain_char_at(text, end) {
            end += len;
        }
        // A sentence's full stop or a dash after the address is not part of it.
        while end > domain_start && matches!(bytes[end - 1], b'.' | b'-') {
            end -= 1;
        }
        if text.get(domain_start..end).is_some_and(valid_domain) {
            emit(start, end);
            resume = end;
        }
    }
}

/// A letter or digit beyond ASCII in an address (combining accents included, so a
/// decomposed `é` stays in it) — but not of the scripts written without spaces between
/// words (Chinese, Japanese, Thai and their neighbours): there an address sits in a run of
/// letters that are the sentence around it, which would be masked whole.
fn is_address_letter(c: char) -> bool {
    (c.is_alphanumeric() || ('\u{300}'..='\u{36f}').contains(&c)) && !is_unspaced_script(c)
}

/// A character of a script written without spaces between words.
fn is_unspaced_script(c: char) -> bool {
    matches!(c,
        '\u{0E00}'..='\u{0EFF}'   // Thai, Lao
        | '\u{1000}'..='\u{109F}' // Myanmar
        | '\u{1780}'..='\u{17FF}' // Khmer
        | '\u{2E80}'..='\u{2FDF}' // CJK radicals
        | '\u{3000}'..='\u{30FF}' // CJK punctuation, Hiragana, Katakana
        | '\u{3100}'..='\u{31FF}' // Bopomofo, Katakana extensions
        | '\u{3400}'..='\u{4DBF}' // CJK extension A
        | '\u{4E00}'..='\u{9FFF}' // CJK unified ideographs
        | '\u{F900}'..='\u{FAFF}' // CJK compatibility ideographs
        | '\u{FF66}'..='\u{FF9F}' // halfwidth Katakana
        | '\u{20000}'..='\u{3FFFF}' // CJK extensions B and later
    )
}

/// The length in bytes of the local-part character ending at `index`, if there is one.
fn local_char_before(text: &str, index: usize) -> Option<usize> {
    let before = byte_before(text.as_bytes(), index);
    if before.is_ascii() {
        let local = before.is_ascii_alphanumeric() || b"._%+-_".contains(&before);
        return local.then_some(1);
    }
    let c = text.get(..index)?.chars().next_back()?;
    is_address_letter(c).then(|| c.len_utf8())
}

/// The length in bytes of the domain character starting at `index`, if there is one.
fn domain_char_at(text: &str, index: usize) -> Option<usize> {
    let byte = at(text.as_bytes(), index);
    if byte.is_ascii() {
        let domain = byte.is_ascii_alphanumeric() || byte == b'.' || byte == b'-';
        return domain.then_some(1);
    }
    let c = text.get(index..)?.chars().next()?;
    is_address_letter(c).then(|| c.len_utf8())
}

fn valid_domain(domain: &str) -> bool {
    let Some((_, tld)) = domain.rsplit_once('.') else {
        return false;
    };
    domain
        .split('.')
        .all(|label| !label.is_empty() && !label.starts_with('-'))
        && tld.chars().nth(1).is_some()
        && tld.chars().all(char::is_alphabetic)
}

/// Payment card numbers: 13 to 19 digits, optionally in groups separated by single spaces or
/// dashes, starting with 2 to 6 (the card networks' ranges, which also leaves millisecond
/// timestamps alone) and passing the Luhn check.
///
/// The boundary rule: a run of digit groups (digits, with single spaces or dashes between
/// digits) must not touch a word on either side. When a letter or `_` follows the run, its
/// last group is the start of that word (`2FA`, `3rd`, `4K`), not a digit group: the run ends
/// at the separator before it, so `4111 1111 1111 1111 2FA` still holds the card. A run of one
/// group glued to a word (`4111111111111111abc`) is a word, never a card. Groups that simply
/// go on (`… 1111 2024`, or 20 digits in a row) stay in the run, where a card is only found
/// ending at a group's end: a longer number is not cut into a card.
pub(super) fn credit_cards(text: &str, emit: Emit<'_>) {
    let bytes = text.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        let before = byte_before(bytes, index);
        if !bytes[index].is_ascii_digit() || before.is_ascii_alphanumeric() || before == b'_' {
            index += 1;
            continue;
        }
        // The run: digits, with single separators between digits.
        let mut end = index;
        while end < bytes.len() {
            let byte = bytes[end];
            let separator = (byte == b' ' || byte == b'-')
                && at(bytes, end + 1).is_ascii_digit()
                && end > index;
            if byte.is_ascii_digit() || separator {
                end += 1;
            } else {
                break;
            }
        }
        let next = at(bytes, end);
        let card_end = if next.is_ascii_alphanumeric() || next == b'_' {
            // The last group belongs to the word after the run: the run ends at the separator
            // before that group, or there is no run when it is the only group.
            let group = bytes[index..end]
                .iter()
                .rev()
                .take_while(|b| b.is_ascii_digit())
                .count();
            (end - group).checked_sub(1).filter(|&cut| cut > index)
        } else {
            Some(end)
        };
        if let Some(card_end) = card_end {
            cards_in_run(bytes, index, card_end, emit);
        }
        index = end.max(index + 1);
    }
}

/// Finds cards in one run of digit groups: from each group start, the longest candidate
/// ending at a group end that is a valid card number.
fn cards_in_run(bytes: &[u8], run_start: usize, run_end: usize, emit: Emit<'_>) {
    let mut start = run_start;
    while start < run_end {
        let mut digits = [0u8; 19];
        let mut count = 0;
        let mut found = None;
        let mut position = start;
        while position < run_end && count < 19 {
            let byte = bytes[position];
            if byte.is_ascii_digit() {
                digits[count] = byte - b'0';
                count += 1;
                let group_end = position + 1 == run_end || !bytes[position + 1].is_ascii_digit();
                if group_end
                    && count >= 13
                    && (2..=6).contains(&digits[0])
                    && luhn(&digits[..count])
                {
                    found = Some(position + 1);
                }
            }
            position += 1;
        }
        if let Some(end) = found {
            emit(start, end);
            start = end;
        }
        // On to the next group start.
        start += run_len(bytes, start, |b| b.is_ascii_digit());
        start += run_len(bytes, start, |b| !b.is_ascii_digit()).min(run_end - start);
    }
}

/// The Luhn checksum of payment card numbers.
pub(super) fn luhn(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(position, &digit)| {
            let digit = u32::from(digit);
            if position % 2 == 1 {
                let doubled = digit * 2;
                if doubled > 9 { doubled - 9 } else { doubled }
            } else {
                digit
            }
        })
        .sum();
    sum % 10 == 0
}

/// US social security numbers `ddd-dd-dddd`, leaving out numbers never issued (area 000,
/// 666 or 900–999, group 00, serial 0000).
pub(super) fn ssns(text: &str, emit: Emit<'_>) {
    let bytes = text.as_bytes();
    for dash in memchr_iter(b'-', bytes) {
        let Some(start) = dash.checked_sub(3) else {
            continue;
        };
        let Some(candidate) = bytes.get(start..start + 11) else {
            break;
        };
        let digit_at = |i: usize| candidate[i].is_ascii_digit();
        let shape = (0..11).all(|i| {
            if i == 3 || i == 6 {
                candidate[i] == b'-'
            } else {
                digit_at(i)
            }
        });
        let before = byte_before(bytes, start);
        let after = at(bytes, start + 11);
        let joined_before = is_word(before) || before == b'-';
        let joined_after =
            is_word(after) || (after == b'-' && at(bytes, start + 12).is_ascii_digit());
        let bounded = !joined_before && !joined_after;
        if shape && bounded {
            let area = &candidate[0..3];
            let issued = area != b"000"
                && area != b"666"
                && area[0] != b'9'
                && &candidate[4..6] != b"00"
                && &candidate[7..11] != b"0000";
            if issued {
                emit(start, start + 11);
            }
        }
    }
}

/// IPv4 addresses: four decimal octets 0–255 without leading zeros, not part of a longer
/// dotted number (a version such as `1.2.3.4.5`).
pub(super) fn ipv4s(text: &str, emit: Emit<'_>) {
    let bytes = text.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        let before = byte_before(bytes, index);
        let bounded = !(before.is_ascii_alphanumeric() || before == b'.' || before == b'_');
        if bytes[index].is_ascii_digit() && bounded {
            if let Some(end) = ipv4_at(bytes, index) {
                emit(index, end);
                index = end;
                continue;
            }
            index += run_len(bytes, index, |b| b.is_ascii_digit());
            continue;
        }
        index += 1;
    }
}

fn ipv4_at(bytes: &[u8], start: usize) -> Option<usize> {
    let mut position = start;
    for octet in 0..4 {
        if octet > 0 {
            if at(bytes, position) != b'.' {
                return None;
            }
            position += 1;
        }
        let len = run_len(bytes, position, |b| b.is_ascii_digit());
        let digits = bytes.get(position..position + len)?;
        let value = digits
            .iter()
            .fold(0u32, |value, d| value * 10 + u32::from(d - b'0'));
        if len == 0 || len > 3 || (len > 1 && digits[0] == b'0') || value > 255 {
            return None;
        }
        position += len;
    }
    let after = at(bytes, position);
    let continues = after.is_ascii_alphanumeric()
        || after == b'_'
        || (after == b'.' && at(bytes, position + 1).is_ascii_digit());
    (!continues).then_some(position)
}
