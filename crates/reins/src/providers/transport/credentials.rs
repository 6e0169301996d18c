//! Which header and query values are probably credentials, so that `Debug` output and errors
//! never show them: shared by the builder (which marks them) and the client (whose errors
//! quote its URL).

use super::settings::ApiKey;
use crate::hooks::redaction::names_a_credential;

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

/// Whether a query parameter is probably a secret: as a header would be, or a signature
/// (`sig`, as in Azure's shared access signatures).
pub(super) fn secret_query(name: &str, value: &str, key: Option<&ApiKey>) -> bool {
    let name = name.to_ascii_lowercase();
    name == "sig" || looks_like_credential(&name, value, key)
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
