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
pub async fn serve_on(listener: tokio::net::TcpListener, service: AgentService) {
    let endpoint = bind(Endpoint::builder(), service).build();
    HttpServer::new(endpoint).serve(listener).await;
}

/// Binds `service` to `endpoint`, with what it needs beside it: `ReinsAgentDecisions`, a
/// virtual object private to the ingress through which `decide` makes the first decision
/// about a call the only one. Use it for an endpoint of your own (other services beside the
/// agent, another transport); binding the `AgentService` alone would leave `decide` failing.
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
