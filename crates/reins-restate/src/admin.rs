//! Registering a worker's deployment with Restate's admin API.

use crate::answer::refusal;
use crate::client_error::ClientError;
use crate::http::{
    CONNECT_TIMEOUT, NOT_HTTP, authorized, base_url, bearer, credentials, transport_text,
};
use reqwest::header::HeaderValue;
use std::time::Duration;

/// How long a registration may take before it is [`ClientError::AdminTimeout`]: the admin API
/// answers once it has discovered the worker (or given up on it), which takes seconds.
///
/// Why a limit: an admin address that takes the connection and never answers (a wrong port
/// behind a proxy, a stuck server) would otherwise hold `reins serve --register` without end.
pub const REGISTRATION_TIMEOUT: Duration = Duration::from_secs(120);

/// Registers the deployment at `deployment` (a worker's endpoint, e.g.
/// `http://127.0.0.1:9080`) with the Restate admin API at `admin` (e.g.
/// `http://127.0.0.1:9070`): Restate discovers the `ReinsAgent` service there and sends it
/// invocations. Registering the same endpoint again replaces it (`force`), so a worker
/// restarted with the same code can register on every start; a new version goes to a new
/// address while runs are in flight (see the crate docs on upgrading a deployment).
pub async fn register_deployment(admin: &str, deployment: &str) -> Result<(), ClientError> {
    register(admin, deployment, None, REGISTRATION_TIMEOUT).await
}

/// [`register_deployment`] through an admin API that wants `Authorization: Bearer <token>`
/// (Restate Cloud, or one behind an authenticating proxy). The token is not shown in errors.
pub async fn register_deployment_with_token(
    admin: &str,
    deployment: &str,
    bearer_token: &str,
) -> Result<(), ClientError> {
    register(
        admin,
        deployment,
        Some(&bearer(bearer_token)?),
        REGISTRATION_TIMEOUT,
    )
    .await
}

async fn register(
    admin: &str,
    deployment: &str,
    authorization: Option<&HeaderValue>,
    timeout: Duration,
) -> Result<(), ClientError> {
    let mut url = base_url(admin).map_err(ClientError::AdminUrl)?;
    url.path_segments_mut()
        .map_err(|()| ClientError::AdminUrl(NOT_HTTP.to_owned()))?
        .pop_if_empty()
        .push("deployments");
    let failed = |error: reqwest::Error| {
        if error.is_timeout() && !error.is_connect() {
            ClientError::AdminTimeout(timeout)
        } else {
            ClientError::AdminTransport(transport_text(error))
        }
    };
    let http = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .build()
        .map_err(failed)?;
    let secrets = credentials(&url, authorization);
    let request = http
        .post(url)
        .json(&serde_json::json!({"uri": deployment, "force": true}))
        .timeout(timeout);
    let response = authorized(request, authorization)
        .send()
        .await
        .map_err(failed)?;
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    Err(ClientError::AdminHttp {
        status: status.as_u16(),
        body: refusal(response, &secrets).await,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stand_ins::{closed_address, endless_server, silent_server};

    /// A registration that cannot reach the admin API says so, not that the ingress is down.
    #[tokio::test]
    async fn an_unreachable_admin_api_is_named_as_such() {
        let address = closed_address();
        let registered =
            register_deployment(&format!("http://{address}"), "http://127.0.0.1:9080").await;
        let said = registered
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(said.contains("admin API could not be reached"), "{said}");
        assert!(!said.contains("ingress"), "{said}");
    }

    /// A query in the admin URL (a gateway's `?token=…`) is a credential too: the error
    /// reaching the admin API does not repeat it.
    #[tokio::test]
    async fn an_unreachable_admin_api_is_named_without_the_query_of_its_url() {
        let address = closed_address();
        let admin = format!("http://{address}/?token=q-secret-55");
        let error = register_deployment(&admin, "http://127.0.0.1:9080")
            .await
            .err();
        let said = format!(
            "{error:?} {}",
            error.as_ref().map(ToString::to_string).unwrap_or_default()
        );
        assert!(said.contains("admin API could not be reached"), "{said}");
        assert!(!said.contains("q-secret-55"), "{said}");
    }

    /// An admin address whose scheme was left out is refused at once, as the admin API's,
    /// without repeating its password; credentials in an http one stay out of errors too.
    #[tokio::test]
    async fn an_admin_address_is_refused_or_unreachable_without_repeating_its_password() {
        let registered =
            register_deployment("ops:hunter2@restate.internal:9070", "http://127.0.0.1:9080").await;
        let said = registered
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(said.contains("admin API URL"), "{said}");
        assert!(said.contains("http://"), "{said}");
        assert!(!said.contains("hunter2"), "{said}");
        let address = closed_address();
        let registered =
            register_deployment(&format!("http://ops:hunter2@{address}"), "http://w:9080").await;
        let said = registered.err().map(|error| error.to_string());
        let said = said.unwrap_or_default();
        assert!(said.contains("could not be reached"), "{said}");
        assert!(!said.contains("hunter2"), "{said}");
    }

    /// An admin API that takes the connection and never answers ends the registration at
    /// its timeout, with an error naming it, instead of holding the caller.
    #[tokio::test]
    async fn a_silent_admin_api_ends_the_registration_at_its_timeout() {
        let (address, held) = silent_server().await;
        let admin = format!("http://{address}");
        let registered = register(
            &admin,
            "http://127.0.0.1:9080",
            None,
            Duration::from_millis(200),
        )
        .await;
        assert!(
            matches!(registered, Err(ClientError::AdminTimeout(_))),
            "{registered:?}"
        );
        held.abort();
    }

    /// An address that is no admin API (a proxy answering with its error page, endless
    /// here) refuses the registration with a short excerpt of what it sent, its escape
    /// sequences shown as text: not the whole page, and not after the registration's timeout.
    #[tokio::test]
    async fn a_refusal_is_quoted_as_a_short_excerpt_not_read_whole() {
        let head = "HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/html\r\n\
                    connection: close\r\n\r\n<html>\n<title>\x1b[2J502 Bad Gateway</title>\n";
        let block = "<p>the upstream is down</p>\n".repeat(2048);
        let (address, proxy) = endless_server(head, block.as_bytes()).await;
        let registered =
            register_deployment(&format!("http://{address}"), "http://127.0.0.1:9080").await;
        let said = match registered {
            Err(error @ ClientError::AdminHttp { status: 502, .. }) => error.to_string(),
            other => panic!("expected the admin API's refusal, got {other:?}"),
        };
        assert!(
            said.contains("HTTP 502: <html> <title>\\u001b[2J502 Bad Gateway</title> <p>"),
            "{said}"
        );
        assert!(said.ends_with('…'), "{said}");
        assert!(said.len() < 500, "{said}");
        assert!(!said.chars().any(char::is_control), "{said}");
        proxy.abort();
    }
}
