//! The PostgreSQL store's connection string: what `tokio-postgres` reads, plus libpq's
//! `sslrootcert`, which it does not know and would refuse. That one parameter is taken out of
//! the string (key/value or URL form) here, and the rest is left to `tokio-postgres` as it was.
//!
//! Nothing here puts the string, or any part of it, in an error: it may hold a password.

use crate::store::StoreError;
use tokio_postgres::Config;

/// The libpq parameter naming the root certificates to trust (a PEM file, or `system`).
const ROOT_CERT: &str = "sslrootcert";

/// A connection string, read.
pub(super) struct ConnectionString {
    /// Everything `tokio-postgres` reads (the host, the user, `sslmode`, …).
    pub(super) config: Config,
    /// The `sslrootcert` parameter's value, if it was given.
    pub(super) root_cert: Option<String>,
}

/// Reads a libpq-style connection string (`host=… user=…` or a `postgresql://` URL).
pub(super) fn parse(text: &str) -> Result<ConnectionString, StoreError> {
    let (rest, root_cert) = if let Some(url) = strip_url_prefix(text) {
        take_from_url(text, url)
    } else {
        take_from_key_values(text)
    };
    let config = rest.parse().map_err(|error: tokio_postgres::Error| {
        // Its message names the parameter at fault, never a value.
        StoreError::Backend(format!(
            "reading the PostgreSQL connection string: {}",
            crate::store::error::describe_postgres(&error)
        ))
    })?;
    Ok(ConnectionString { config, root_cert })
}

fn strip_url_prefix(text: &str) -> Option<&str> {
    ["postgresql://", "postgres://"]
        .iter()
        .find_map(|prefix| text.strip_prefix(prefix))
}

/// `text` in the URL form without its `sslrootcert` query parameter, and that parameter's
/// (percent-decoded) value. `after_prefix` is `text` after `postgresql://`.
fn take_from_url(text: &str, after_prefix: &str) -> (String, Option<String>) {
    // The query starts at the first `?` after the credentials (which end at the first `@`,
    // as `tokio-postgres` reads them): a password may hold a `?` of its own.
    let authority_start = after_prefix.find('@').map_or(0, |at| at + 1);
    let Some(query_at) = after_prefix[authority_start..].find('?') else {
        return (text.to_owned(), None);
    };
    let query_at = text.len() - after_prefix.len() + authority_start + query_at;
    let mut root_cert = None;
    let mut kept = Vec::new();
    for pair in text[query_at + 1..].split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if percent_decode(key).as_deref() == Some(ROOT_CERT) {
            // Undecodable: kept as written, and `tokio-postgres` refuses the parameter.
            root_cert = percent_decode(value).or_else(|| Some(value.to_owned()));
        } else {
            kept.push(pair);
        }
    }
    let mut rest = text[..query_at].to_owned();
    if !kept.is_empty() {
        rest.push('?');
        rest.push_str(&kept.join("&"));
    }
    (rest, root_cert)
}

/// `%XX` sequences decoded; `None` when one is malformed or the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        if byte == b'%' {
            let hex = std::str::from_utf8(bytes.get(index + 1..index + 3)?).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            decoded.push(byte);
            index += 1;
        }
    }
    String::from_utf8(decoded).ok()
}

/// `text` in the key/value form without its `sslrootcert` parameter, and that parameter's
/// value. Reads the form as `tokio-postgres` does (values bare or in single quotes, `\`
/// escaping the next character); a string it cannot read is given back whole, for
/// `tokio-postgres` to refuse.
fn take_from_key_values(text: &str) -> (String, Option<String>) {
    let mut rest = String::with_capacity(text.len());
    let mut root_cert = None;
    let mut chars = text.char_indices().peekable();
    let mut kept_from = 0;
    loop {
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let Some(&(start, _)) = chars.peek() else {
            break;
        };
        let mut key_end = start;
        while let Some((at, c)) = chars.next_if(|(_, c)| !c.is_whitespace() && *c != '=') {
            key_end = at + c.len_utf8();
        }
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        if chars.next_if(|(_, c)| *c == '=').is_none() {
            return (text.to_owned(), None);
        }
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let Some((value, end)) = read_value(text, &mut chars) else {
            return (text.to_owned(), None);
        };
        if &text[start..key_end] == ROOT_CERT {
            rest.push_str(&text[kept_from..start]);
            kept_from = end;
            root_cert = Some(value);
        }
    }
    rest.push_str(&text[kept_from..]);
    (rest, root_cert)
}

/// A value (bare, or quoted in `'`) and the byte where it ends; `None` if it is malformed.
fn read_value(
    text: &str,
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
) -> Option<(String, usize)> {
    let quoted = chars.next_if(|(_, c)| *c == '\'').is_some();
    let mut value = String::new();
    loop {
        match chars.peek().copied() {
            None if quoted => return None,
            None => break,
            Some((at, '\'')) if quoted => {
                chars.next();
                return Some((value, at + 1));
            }
            Some((_, c)) if !quoted && c.is_whitespace() => break,
            Some((_, '\\')) => {
                chars.next();
                value.extend(chars.next().map(|(_, c)| c));
            }
            Some((_, c)) => {
                chars.next();
                value.push(c);
            }
        }
    }
    if value.is_empty() {
        return None;
    }
    Some((value, chars.peek().map_or(text.len(), |&(at, _)| at)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(text: &str) -> (String, Option<String>) {
        match strip_url_prefix(text) {
            Some(url) => take_from_url(text, url),
            None => take_from_key_values(text),
        }
    }

    #[test]
    fn the_root_certificate_is_taken_out_of_key_values() {
        assert_eq!(
            taken("host=db sslrootcert=/etc/ca.pem sslmode=require"),
            (
                "host=db  sslmode=require".to_owned(),
                Some("/etc/ca.pem".into())
            )
        );
        assert_eq!(
            taken("host=db sslrootcert = 'my ca\\'s.pem'"),
            ("host=db ".to_owned(), Some("my ca's.pem".into()))
        );
        assert_eq!(
            taken("password='a sslrootcert=x' host=db"),
            ("password='a sslrootcert=x' host=db".to_owned(), None)
        );
        assert_eq!(
            taken("host=db user=me"),
            ("host=db user=me".to_owned(), None)
        );
    }

    #[test]
    fn the_root_certificate_is_taken_out_of_a_url() {
        assert_eq!(
            taken("postgresql://me:p%3Fw@db/app?sslmode=require&sslrootcert=%2Fetc%2Fca.pem"),
            (
                "postgresql://me:p%3Fw@db/app?sslmode=require".to_owned(),
                Some("/etc/ca.pem".into())
            )
        );
        assert_eq!(
            taken("postgres://me:a?b@db/app?sslrootcert=ca.pem"),
            ("postgres://me:a?b@db/app".to_owned(), Some("ca.pem".into()))
        );
        assert_eq!(
            taken("postgresql://db/app"),
            ("postgresql://db/app".to_owned(), None)
        );
    }

    #[test]
    fn a_malformed_string_is_refused_without_showing_it() {
        let Err(error) = parse("host=db password='s3cret") else {
            panic!("an unterminated quote was read");
        };
        let message = error.to_string();
        assert!(message.contains("connection string"), "{message}");
        assert!(!message.contains("s3cret"), "{message}");
    }
}
