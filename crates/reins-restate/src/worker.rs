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

/// Serves `service` on an open listener (e.g. one from [`listener`]) until the process ends.
///
/// Besides `ReinsAgent`, the endpoint holds `ReinsAgentDecisions`, a virtual object private to
/// the ingress through which `decide` makes the first decision about a call the only one.
pub async fn serve_on(listener: tokio::net::TcpListener, service: AgentService) {
    let claims = DecisionClaims
        .into_service_definition()
        .options(ServiceOptions::new().ingress_private(true));
    let endpoint = Endpoint::builder().bind(service).bind(claims).build();
    HttpServer::new(endpoint).serve(listener).await;
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
