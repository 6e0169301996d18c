//! An endpoint's user info (`http://user:password@collector:4318`) taken out of its URL
//! before the exporter is built, and sent as an `Authorization: Basic` header instead: the
//! OpenTelemetry SDK keeps its endpoint's URL whole, and quotes it in its logs (a failed
//! export's `url`), in its error messages and in its exporters' `Debug` output. A header is
//! kept out of all three. An `authorization` header set in `OTEL_EXPORTER_OTLP_HEADERS` (or a
//! signal's own `..._HEADERS`) replaces this one: the SDK reads those after the headers it is
//! given, and an explicit header is the user's last word.

use base64::Engine as _;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use percent_encoding::percent_decode_str;
use std::collections::HashMap;
use std::fmt;

/// The variable every signal's endpoint is read from, unless the signal has one of its own.
const ENDPOINT_VAR: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

/// The header the credentials are sent in.
const AUTHORIZATION: &str = "authorization";

/// One signal's endpoint: its own variable, and the path added to [`ENDPOINT_VAR`]'s URL.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Signal {
    variable: &'static str,
    path: &'static str,
}

/// Traces' endpoint.
pub(crate) const TRACES: Signal = Signal {
    variable: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    path: "/v1/traces",
};

/// Metrics' endpoint.
pub(crate) const METRICS: Signal = Signal {
    variable: "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    path: "/v1/metrics",
};

/// A signal's endpoint whose URL named credentials: the URL without them, and the header
/// that carries them. Its `Debug` shows neither the URL (its query may hold a key) nor the
/// header.
pub(crate) struct Credentialed {
    /// The variable the URL was read from.
    pub(crate) variable: &'static str,
    /// The signal's full URL (its path included), without user info.
    pub(crate) url: String,
    /// `Basic base64(user:password)`.
    authorization: String,
}

impl fmt::Debug for Credentialed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentialed")
            .field("variable", &self.variable)
            .finish_non_exhaustive()
    }
}

impl Credentialed {
    /// `builder` exporting to the URL without user info, with the credentials' header.
    pub(crate) fn apply<B: WithExportConfig + WithHttpConfig>(&self, builder: B) -> B {
        builder
            .with_endpoint(self.url.clone())
            .with_headers(HashMap::from([(
                AUTHORIZATION.to_owned(),
                self.authorization.clone(),
            )]))
    }
}

/// `signal`'s endpoint, read from the environment (`var`) as the SDK reads it (its own
/// variable as it is, else [`ENDPOINT_VAR`]'s with the signal's path; an empty value is
/// unset), if its URL names credentials. `None` leaves the endpoint to the SDK.
pub(crate) fn credentialed(
    signal: Signal,
    var: impl Fn(&str) -> Option<String>,
) -> Option<Credentialed> {
    let set = |name| var(name).filter(|value: &String| !value.is_empty());
    let (variable, url) = match set(signal.variable) {
        Some(url) => (signal.variable, url),
        None => (ENDPOINT_VAR, with_path(set(ENDPOINT_VAR)?, signal.path)),
    };
    let (url, user_info) = without_user_info(&url)?;
    let (user, password) = user_info.split_once(':').unwrap_or((user_info, ""));
    let pair = [
        // User info is percent-encoded: a `@` or `:` in a password is written `%40`, `%3A`.
        percent_decode_str(user).collect(),
        b":".to_vec(),
        percent_decode_str(password).collect(),
    ]
    .concat();
    let authorization = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    );
    Some(Credentialed {
        variable,
        url,
        authorization,
    })
}

/// The variable `signal`'s endpoint is read from (its own when set and not empty, else
/// [`ENDPOINT_VAR`]): how a report of a failed export names the endpoint, never by its URL.
pub(crate) fn variable(signal: Signal, var: impl Fn(&str) -> Option<String>) -> &'static str {
    match var(signal.variable) {
        Some(url) if !url.is_empty() => signal.variable,
        _ => ENDPOINT_VAR,
    }
}

/// `endpoint` followed by `path`, with one slash between them, as the SDK joins them.
fn with_path(endpoint: String, path: &str) -> String {
    match endpoint.strip_suffix('/') {
        Some(base) => format!("{base}{path}"),
        None => endpoint + path,
    }
}

/// `url` without its user info, and the user info, if it has any (`scheme://info@host`).
fn without_user_info(url: &str) -> Option<(String, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (user_info, host) = rest[..authority_end].rsplit_once('@')?;
    if user_info.is_empty() {
        return None;
    }
    let url = format!("{scheme}://{host}{}", &rest[authority_end..]);
    Some((url, user_info))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_env::env;

    /// The user and password a `Basic` header carries.
    fn decoded(authorization: &str) -> String {
        let encoded = authorization.strip_prefix("Basic ").unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap();
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn user_info_moves_from_the_url_to_a_basic_header() {
        let vars = [(ENDPOINT_VAR, "http://phoenix:s3cret@collector:4318")];
        let traces = credentialed(TRACES, env(&vars)).unwrap();
        assert_eq!(traces.url, "http://collector:4318/v1/traces");
        assert_eq!(traces.variable, ENDPOINT_VAR);
        assert_eq!(decoded(&traces.authorization), "phoenix:s3cret");
        let metrics = credentialed(METRICS, env(&vars)).unwrap();
        assert_eq!(metrics.url, "http://collector:4318/v1/metrics");
    }

    #[test]
    fn a_signals_own_endpoint_is_taken_as_it_is_and_an_escaped_password_decoded() {
        let vars = [
            (ENDPOINT_VAR, "http://collector:4318"),
            (
                TRACES.variable,
                "https://key%40team:p%3Aw@traces.example/ingest/?q=1",
            ),
        ];
        let traces = credentialed(TRACES, env(&vars)).unwrap();
        assert_eq!(traces.url, "https://traces.example/ingest/?q=1");
        assert_eq!(traces.variable, TRACES.variable);
        assert_eq!(decoded(&traces.authorization), "key@team:p:w");
        assert!(credentialed(METRICS, env(&vars)).is_none(), "no user info");
    }

    /// A `%` begins an escape only before two hex digits: `%+1` is three characters of the
    /// password, not a byte (`u8::from_str_radix` reads `+1` as one).
    #[test]
    fn a_percent_sign_before_no_hex_digits_is_kept() {
        let vars = [(ENDPOINT_VAR, "http://ops:50%+1%zz%4@collector:4318")];
        let traces = credentialed(TRACES, env(&vars)).unwrap();
        assert_eq!(decoded(&traces.authorization), "ops:50%+1%zz%4");
    }

    #[test]
    fn an_endpoint_without_user_info_is_left_to_the_sdk() {
        for vars in [
            &[][..],
            &[(ENDPOINT_VAR, "http://collector:4318/")][..],
            &[(ENDPOINT_VAR, "http://collector:4318/path@v1?to=a@b")][..],
            &[(ENDPOINT_VAR, "http://@collector:4318")][..],
            &[(ENDPOINT_VAR, "not a url")][..],
        ] {
            assert!(credentialed(TRACES, env(vars)).is_none(), "{vars:?}");
        }
        let vars = [
            (ENDPOINT_VAR, "http://token@collector:4318/"),
            (TRACES.variable, ""),
        ];
        let traces = credentialed(TRACES, env(&vars)).unwrap();
        assert_eq!(traces.url, "http://collector:4318/v1/traces", "one slash");
        assert_eq!(decoded(&traces.authorization), "token:");
    }

    #[test]
    fn a_signal_is_named_by_the_variable_its_endpoint_is_read_from() {
        let vars = [
            (ENDPOINT_VAR, "http://collector:4318"),
            (TRACES.variable, ""),
        ];
        assert_eq!(variable(TRACES, env(&vars)), ENDPOINT_VAR, "empty is unset");
        let vars = [(METRICS.variable, "http://metrics:4318/v1/metrics")];
        assert_eq!(variable(METRICS, env(&vars)), METRICS.variable);
        assert_eq!(variable(TRACES, env(&vars)), ENDPOINT_VAR);
    }

    #[test]
    fn its_debug_shows_neither_the_credentials_nor_the_url() {
        let vars = [(
            ENDPOINT_VAR,
            "http://phoenix:s3cret@collector:4318/?key=k3y",
        )];
        let debug = format!("{:?}", credentialed(TRACES, env(&vars)).unwrap());
        for secret in ["s3cret", "k3y", &base64_of("phoenix:s3cret")] {
            assert!(!debug.contains(secret), "{debug}");
        }
    }

    fn base64_of(text: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(text)
    }
}
