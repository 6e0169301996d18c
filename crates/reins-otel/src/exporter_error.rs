//! Why an OTLP exporter could not be built, said without the endpoint it was given: the
//! exporter's own message quotes an invalid endpoint whole, and an endpoint's user info or
//! query may hold credentials (`https://user:password@collector:4318`).

use crate::endpoint::Credentialed;

/// The variables an endpoint is read from.
const ENDPOINT_VARS: [&str; 3] = [
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
];

/// `error`'s message with each endpoint variable's value replaced by the variable's name, as
/// is the URL the exporter was given in its place (`credentialed`: the variable's without its
/// user info, which the SDK quotes when it is invalid).
pub(crate) fn described(
    error: &opentelemetry_otlp::ExporterBuildError,
    credentialed: &Option<Credentialed>,
) -> String {
    let mut values: Vec<_> = ENDPOINT_VARS
        .iter()
        .map(|&name| (name, std::env::var(name).ok()))
        .collect();
    if let Some(credentialed) = credentialed {
        values.push((credentialed.variable, Some(credentialed.url.clone())));
    }
    masked(error.to_string(), &values)
}

/// `message` (an export's failure) with each endpoint variable's value replaced by the
/// variable's name: OpenTelemetry's export errors quote no URL today, and this keeps it so
/// should one start to.
pub(crate) fn without_endpoints(message: String) -> String {
    let values: Vec<_> = ENDPOINT_VARS
        .iter()
        .map(|&name| (name, std::env::var(name).ok()))
        .collect();
    masked(message, &values)
}

/// `message` with every non-empty value of `values` replaced by `<NAME>`.
fn masked(mut message: String, values: &[(&str, Option<String>)]) -> String {
    for (name, value) in values {
        if let Some(value) = value.as_deref().filter(|value| !value.is_empty()) {
            message = message.replace(value, &format!("<{name}>"));
        }
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_is_named_by_its_variable() {
        let endpoint = "http://u:pw@collector host:4318";
        let message = format!("OTEL_EXPORTER_OTLP_ENDPOINT: invalid endpoint '{endpoint}'");
        let values = [("OTEL_EXPORTER_OTLP_ENDPOINT", Some(endpoint.to_owned()))];
        assert_eq!(
            masked(message, &values),
            "OTEL_EXPORTER_OTLP_ENDPOINT: invalid endpoint '<OTEL_EXPORTER_OTLP_ENDPOINT>'"
        );
    }
}
