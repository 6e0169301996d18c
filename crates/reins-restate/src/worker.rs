//! Serving an [`AgentService`] over HTTP for the Restate server to call.

use crate::claims::DecisionClaims;
use crate::service::AgentService;
use restate_sdk::prelude::*;
use std::net::SocketAddr;

/// Serves `service` on `addr` until the process ends.
///
/// The listening socket is opened with `SO_REUSEPORT`, so several worker processes on one
/// machine can serve the same address: the kernel spreads Restate's connections over them,
/// and when one dies the others receive its new connections. Workers on other machines sit
/// behind any HTTP/2 load balancer instead.
pub async fn serve(addr: SocketAddr, service: AgentService) -> std::io::Result<()> {
    serve_on(listener(addr)?, service).await;
    Ok(())
}

/// Serves `service` on an open listener (e.g. one from [`listener`]) until the process ends,
/// on an endpoint made by [`bind`].
///
/// It takes every request that reaches it: whoever can connect to the listener — another
/// Restate server it is registered with included — drives the agent, its tools and its
/// decisions. Where anything but your Restate server can reach the workers' port, serve with
/// [`serve_verified`] instead.
pub async fn serve_on(listener: tokio::net::TcpListener, service: AgentService) {
    let endpoint = bind(Endpoint::builder(), service).build();
    HttpServer::new(endpoint).serve(listener).await;
}

/// A request identity key that cannot be used: not `publickeyv1_` followed by an Ed25519
/// public key in base58.
#[derive(Debug, thiserror::Error)]
#[error("`{key}` is not a Restate request identity key (publickeyv1_…): {reason}")]
pub struct IdentityKeyError {
    /// The key as given (a public key: nothing secret).
    pub key: String,
    /// Why it cannot be used.
    pub reason: String,
}

/// Serves `service` on `listener` as [`serve_on`] does, taking only the requests a Restate
/// server signed with the private key of one of `identity_keys` (its public keys,
/// `publickeyv1_…`): discovery and every invocation. Anything else — a request sent straight
/// to the port, another Restate server the workers were registered with — is refused with
/// HTTP 401 before the agent sees it.
///
/// Why: an invocation carries its journal, so whoever can send one to a worker chooses the
/// "recorded" model answers, tool results and decisions the run replays: it can run any of
/// the agent's tools with arguments of its own (the approval a policy asks for included), on
/// the agent's credentials. Restate signs its requests when its `[worker.invoker]
/// request-identity-private-key-pem-file` names an Ed25519 key (see Restate's docs on
/// securing services).
///
/// Refused at once, before anything listens, when a key is unusable.
pub async fn serve_verified(
    listener: tokio::net::TcpListener,
    service: AgentService,
    identity_keys: &[String],
) -> Result<(), IdentityKeyError> {
    let endpoint = verified(bind(Endpoint::builder(), service), identity_keys)?.build();
    HttpServer::new(endpoint).serve(listener).await;
    Ok(())
}

/// Whether `key` is a request identity key [`serve_verified`] can take (`publickeyv1_` and
/// an Ed25519 public key in base58), for checking a configuration before serving.
pub fn check_identity_key(key: &str) -> Result<(), IdentityKeyError> {
    verified(Endpoint::builder(), &[key.to_owned()]).map(|_| ())
}

/// `endpoint` taking only requests signed with one of `identity_keys`.
fn verified(
    mut endpoint: restate_sdk::endpoint::Builder,
    identity_keys: &[String],
) -> Result<restate_sdk::endpoint::Builder, IdentityKeyError> {
    if identity_keys.is_empty() {
        // No key would verify nothing: say so rather than serve everyone.
        return Err(IdentityKeyError {
            key: String::new(),
            reason: "no key was given".to_owned(),
        });
    }
    for key in identity_keys {
        endpoint = endpoint
            .identity_key(key)
            .map_err(|error| IdentityKeyError {
                key: key.clone(),
                reason: error.to_string(),
            })?;
    }
    Ok(endpoint)
}

/// Binds `service` to `endpoint`, with what it needs beside it: `ReinsAgentDecisions`, a
/// virtual object private to the ingress through which `decide` makes the first decision
/// about a call the only one. Use it for an endpoint of your own (other services beside the
/// agent, another transport); binding the `AgentService` alone would leave `decide` failing.
/// Give the endpoint your Restate server's identity key
/// ([`identity_key`](restate_sdk::endpoint::Builder::identity_key)) where others can reach
/// it (see [`serve_verified`]).
///
/// ```no_run
/// use reins::agent::AgentBuilder;
/// use reins::testing::{ScriptedModel, Turn};
/// use reins_restate::AgentService;
/// use restate_sdk::prelude::*;
///
/// let service = AgentService::new(|steps| {
///     AgentBuilder::new(steps.model(ScriptedModel::resumable([Turn::text("Hello.")]))).build()
/// });
/// let endpoint = reins_restate::bind(Endpoint::builder(), service).build();
/// # let _ = endpoint;
/// ```
pub fn bind(
    endpoint: restate_sdk::endpoint::Builder,
    service: AgentService,
) -> restate_sdk::endpoint::Builder {
    let claims = DecisionClaims
        .into_service_definition()
        .options(ServiceOptions::new().ingress_private(true));
    endpoint.bind(service).bind(claims)
}

/// A listener on `addr` that other workers may share.
pub fn listener(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    #[cfg(unix)]
    socket.set_reuseport(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unusable_identity_key_or_none_is_refused() {
        let builder = || Endpoint::builder();
        let refused = verified(builder(), &["publickeyv1_nope".to_owned()])
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(refused.contains("publickeyv1_nope"), "{refused}");
        let refused = verified(builder(), &[]).err().map(|error| error.reason);
        assert_eq!(refused.as_deref(), Some("no key was given"));
        let key = "publickeyv1_ChjENKeMvCtRnqG2mrBK1HmPKufgFUc98K8B3ononQvp".to_owned();
        assert!(verified(builder(), &[key]).is_ok());
    }
}
