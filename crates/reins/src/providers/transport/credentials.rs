//! Which header and query values are probably credentials, so that `Debug` output and errors
//! never show them: shared by the builder (which marks them) and the client (whose errors
//! quote its URL).

use super::settings::ApiKey;
use crate::hooks::redaction::names_a_credential;
use reqwest::Url;

/// The query as `Debug` shows it: values that look like credentials are redacted.
pub(super) fn shown_query<'a>(
    query: &'a [(String, String)],
    key: Option<&ApiKey>,
) -> Vec<(&'a str, &'a str)> {
    query
        .iter()
        .map(|(name, value)| {
            let shown = if secret_query(name, value, key) {
                "<redacted>"
            } else {
                value.as_str()
            };
            (name.as_str(), shown)
        })
        .collect()
}

/// Where `url` points: its scheme, host, port (when not the scheme's own) and path, without a
/// trailing slash. User info, query and fragment, where a credential may be written, are left
/// out. What a model says of where it is served, and what errors quote of a request's URL.
pub(super) fn endpoint_of(url: &Url) -> String {
    let mut endpoint = format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default());
    if let Some(port) = url.port() {
        endpoint.push(':');
        endpoint.push_str(&port.to_string());
    }
    endpoint.push_str(url.path().trim_end_matches('/'));
    endpoint
}

/// `text`, a URL as given (perhaps not a valid one), as an error may quote it: as
/// [`endpoint_of`] says where it points, or, when it does not parse as a URL with a host, without what follows a
/// `?` or `#` and without user info (what comes before an `@` ahead of the path).
pub(super) fn shown_url(text: &str) -> String {
    // `user:password@host` parses too, as a URL of scheme `user` without a host.
    if let Ok(url) = Url::parse(text).as_ref()
        && url.has_host()
    {
        return endpoint_of(url);
    }
    crate::text::url_without_credentials(text)
}

/// `value` as a URL's query carries it (percent-encoded), as a transport error quotes it.
pub(super) fn url_encoded(value: &str) -> String {
    let Ok(mut url) = reqwest::Url::parse("http://localhost/") else {
        return value.to_owned();
    };
    url.query_pairs_mut().append_pair("v", value);
    url.query()
        .and_then(|query| query.strip_prefix("v="))
        .unwrap_or(value)
        .to_owned()
}

/// Whether a query parameter is probably a secret: as a header would be, a signature
/// (`sig`, as in Azure's shared access signatures), or a function key (`code`, as Azure
/// Functions take one).
pub(super) fn secret_query(name: &str, value: &str, key: Option<&ApiKey>) -> bool {
    let name = name.to_ascii_lowercase();
    matches!(name.as_str(), "sig" | "code") || looks_like_credential(&name, value, key)
}

/// Whether a header or query parameter is probably a secret: by its name, by the shape of
/// its value (`Bearer …`, `sk-…`), or because it holds the key.
pub(super) fn looks_like_credential(name: &str, value: &str, key: Option<&ApiKey>) -> bool {
    const VALUE_PREFIXES: [&str; 8] = [
        "bearer ", "basic ", "token ", "sk-", "sk_", "pk-", "key-", "ghp_",
    ];
    let lower_value = value.trim().to_ascii_lowercase();
    names_a_credential(name)
        || VALUE_PREFIXES
            .iter()
            .any(|prefix| lower_value.starts_with(prefix))
        || key.is_some_and(|key| !key.expose().is_empty() && value.contains(key.expose()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_shown_without_user_info_query_or_fragment() {
        for (given, shown) in [
            (
                "https://alice:pw1@host:8443/v1/?key=k1#f",
                "https://host:8443/v1",
            ),
            ("ftp://alice:pw1@host/v1?key=k1", "ftp://host/v1"),
            // Not valid URLs (a port out of range, no scheme), cut all the same.
            (
                "http://alice:p@w1@host:99999/v1?key=k1",
                "http://host:99999/v1",
            ),
            ("alice:pw1@host/v1#key=k1", "host/v1"),
        ] {
            assert_eq!(shown_url(given), shown, "{given}");
        }
    }

    #[test]
    fn credentials_are_recognised_by_name_value_or_key() {
        let key = ApiKey::new("k-123456");
        assert!(looks_like_credential("x-api-key", "abc", None));
        assert!(looks_like_credential("x-weird", "Bearer abc", None));
        assert!(looks_like_credential("x-weird", "sk-live-1", None));
        assert!(looks_like_credential(
            "x-weird",
            "prefix k-123456",
            Some(&key)
        ));
        assert!(!looks_like_credential("x-title", "my app", Some(&key)));
    }
}
