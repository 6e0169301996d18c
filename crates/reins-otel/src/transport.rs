//! The HTTP client the OTLP exporters send through, in place of the one the SDK builds.
//!
//! The SDK's blocking client bounds each read of the collector's answer, not the whole of
//! it: a collector that sends its headers, then a byte a second, held the export thread for
//! as long as it went on, and every later batch queued behind it. Here each request is given
//! what is left of its export's deadline ([`Delivery::begin`]: the OTLP timeout, retries
//! included) as a total timeout, answer included; past it the export fails, its spans are
//! counted as lost, and the next batch is sent on a new connection.
//!
//! A redirect is followed only within the collector's own origin ([`within_the_collector`]):
//! the SDK's client followed one anywhere, headers and spans included.
//!
//! It also reads what a collector that took only part of a batch says (an OTLP
//! `partial_success`: how many spans or data points it rejected, and why), which the SDK only
//! logs, and gives it to the signal's [`Delivery`] to report once per streak.

use crate::delivery::{Delivery, Rejection};
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response, ResponseBodyTooLarge};
use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

/// The most of a collector's answer that is read, as the SDK's own clients read it.
const MAX_ANSWER_BYTES: u64 = 4 * 1024 * 1024;

/// What a signal's answer says it rejected, if anything: the OTLP response's
/// `partial_success`, decoded from a 2xx answer's body.
pub(crate) type RejectionReader = fn(&[u8]) -> Option<Rejection>;

/// Sends a signal's exports, each within its export's deadline.
pub(crate) struct Transport {
    client: reqwest::blocking::Client,
    delivery: Arc<Delivery>,
    rejection: RejectionReader,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport").finish_non_exhaustive()
    }
}

impl Transport {
    /// A client for the signal `delivery` watches; `rejection` reads its answers.
    pub(crate) fn new(
        delivery: Arc<Delivery>,
        rejection: RejectionReader,
    ) -> Result<Transport, String> {
        // The blocking client starts a runtime of its own, which cannot be done from inside
        // one (a caller's `#[tokio::main]`): built on a thread of its own, as the SDK does.
        let client = std::thread::Builder::new()
            .name("reins-otel-client".to_owned())
            .spawn(|| {
                reqwest::blocking::Client::builder()
                    .redirect(reqwest::redirect::Policy::custom(within_the_collector))
                    .build()
            })
            .map_err(|error| format!("the HTTP client's thread could not start: {error}"))?
            .join()
            .map_err(|_| "building the HTTP client panicked".to_owned())?
            .map_err(|error| format!("the HTTP client could not be built: {error}"))?;
        Ok(Transport {
            client,
            delivery,
            rejection,
        })
    }

    /// Sends `request` within what is left of the export's deadline, reading at most
    /// [`MAX_ANSWER_BYTES`] of the answer.
    fn send(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let left = self.delivery.time_left();
        if left.is_zero() {
            self.delivery.ran_out_of_time();
            return Err("the export's deadline has passed".into());
        }
        let mut request: reqwest::blocking::Request = request.try_into()?;
        // A request's own timeout bounds it whole, up to the last byte of the answer; the
        // client's would bound each read only.
        *request.timeout_mut() = Some(left);
        // A reqwest error's message quotes the URL, which may hold a key in its query.
        let mut response = self
            .client
            .execute(request)
            .map_err(|error| self.failed(Box::new(error.without_url())))?;
        let status = response.status();
        let headers = std::mem::take(response.headers_mut());
        let mut body = Vec::new();
        response
            .take(MAX_ANSWER_BYTES + 1)
            .read_to_end(&mut body)
            .map_err(|error| self.failed(Box::new(error)))?;
        if body.len() as u64 > MAX_ANSWER_BYTES {
            return Err(Box::new(ResponseBodyTooLarge::new()));
        }
        if status.is_success() {
            self.delivery.rejected((self.rejection)(&body));
        } else {
            self.delivery.refused(status.as_u16());
        }
        let mut response = Response::builder().status(status).body(Bytes::from(body))?;
        *response.headers_mut() = headers;
        Ok(response)
    }

    /// `error`, noting that the export ran out of time if its deadline has passed.
    fn failed(&self, error: HttpError) -> HttpError {
        if self.delivery.time_left().is_zero() {
            self.delivery.ran_out_of_time();
        }
        error
    }
}

#[async_trait::async_trait]
impl HttpClient for Transport {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        self.send(request)
    }
}

/// Whether a redirect is followed: only to the endpoint's own origin (scheme, host and port),
/// at most [`MAX_REDIRECTS`] times. A collector that sends the export to another host would
/// have it carry the spans there, and the headers of `OTEL_EXPORTER_OTLP_HEADERS` with them
/// (an `x-api-key`, say: the client drops only `Authorization` and cookies on the way); such
/// an export fails with the redirect's status instead.
fn within_the_collector(attempt: reqwest::redirect::Attempt<'_>) -> reqwest::redirect::Action {
    let endpoint = attempt.previous().first().map(reqwest::Url::origin);
    let same_origin = endpoint.is_some_and(|endpoint| endpoint == attempt.url().origin());
    if same_origin && attempt.previous().len() <= MAX_REDIRECTS {
        attempt.follow()
    } else {
        attempt.stop()
    }
}

/// How many redirects within the collector an export follows (as many as the client would).
const MAX_REDIRECTS: usize = 10;

/// How long one export of a signal may take: its own timeout variable
/// (`OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, `..._METRICS_TIMEOUT`), else
/// `OTEL_EXPORTER_OTLP_TIMEOUT`, in milliseconds, else the OTLP default of 10 s: read as the
/// SDK reads them, and given to its exporter, so both keep the same time.
pub(crate) fn export_timeout(
    signal_variable: &str,
    var: impl Fn(&str) -> Option<String>,
) -> Duration {
    [
        signal_variable,
        opentelemetry_otlp::OTEL_EXPORTER_OTLP_TIMEOUT,
    ]
    .into_iter()
    .find_map(|name| var(name)?.parse().ok())
    .map_or(
        opentelemetry_otlp::OTEL_EXPORTER_OTLP_TIMEOUT_DEFAULT,
        Duration::from_millis,
    )
}

/// What an OTLP traces answer says it rejected.
pub(crate) fn spans_rejected(body: &[u8]) -> Option<Rejection> {
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse;
    let partial = <ExportTraceServiceResponse as prost::Message>::decode(body)
        .ok()?
        .partial_success?;
    Rejection::of(partial.rejected_spans, partial.error_message)
}

/// What an OTLP metrics answer says it rejected.
pub(crate) fn data_points_rejected(body: &[u8]) -> Option<Rejection> {
    use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceResponse;
    let partial = <ExportMetricsServiceResponse as prost::Message>::decode(body)
        .ok()?
        .partial_success?;
    Rejection::of(partial.rejected_data_points, partial.error_message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_env::env;
    use opentelemetry_proto::tonic::collector::trace::v1::{
        ExportTracePartialSuccess, ExportTraceServiceResponse,
    };

    #[test]
    fn an_exports_time_is_its_signals_timeout_else_the_general_one_else_10_s() {
        let traces = "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT";
        assert_eq!(export_timeout(traces, env(&[])), Duration::from_secs(10));
        let general = [("OTEL_EXPORTER_OTLP_TIMEOUT", "2500")];
        assert_eq!(
            export_timeout(traces, env(&general)),
            Duration::from_millis(2500)
        );
        let both = [("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"), (traces, "700")];
        assert_eq!(
            export_timeout(traces, env(&both)),
            Duration::from_millis(700)
        );
        let invalid = [("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"), (traces, "2 s")];
        assert_eq!(
            export_timeout(traces, env(&invalid)),
            Duration::from_millis(2500)
        );
    }

    #[test]
    fn a_partial_success_is_read_and_an_empty_answer_is_none() {
        let answer = ExportTraceServiceResponse {
            partial_success: Some(ExportTracePartialSuccess {
                rejected_spans: 2,
                error_message: "too old".to_owned(),
            }),
        };
        let body = prost::Message::encode_to_vec(&answer);
        let rejection = spans_rejected(&body).unwrap();
        assert_eq!(
            (rejection.count, rejection.message.as_str()),
            (2, "too old")
        );
        assert!(spans_rejected(&[]).is_none());
        assert!(spans_rejected(b"not protobuf \xff\xff").is_none());
        let accepted = ExportTraceServiceResponse {
            partial_success: Some(ExportTracePartialSuccess::default()),
        };
        assert!(spans_rejected(&prost::Message::encode_to_vec(&accepted)).is_none());
    }
}
