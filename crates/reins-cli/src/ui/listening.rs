//! Serving the inbox's requests until Ctrl-C or SIGTERM, and no longer than
//! [`STOP_GRACE`] after it. A stop lets the requests being answered finish; but a client that
//! sends half a request and then nothing — any process on the machine can, without the token,
//! since a request is read before it is checked — would otherwise keep the inbox from ever
//! stopping: the server waits for every open connection.

use crate::interrupt::StopSignal;
use axum::Router;
use std::time::Duration;

/// How long, after a stop, the requests still open may take to finish.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Serves `router` on `listener` until `stop`; then waits for the requests being answered, at
/// most [`STOP_GRACE`], and drops the rest.
pub(super) async fn serve_until_stopped(
    listener: tokio::net::TcpListener,
    router: Router,
    stop: &StopSignal,
) -> Result<(), String> {
    let serving = axum::serve(listener, router).with_graceful_shutdown({
        let stop = stop.clone();
        async move { stop.stopped().await }
    });
    let given_up = async {
        stop.stopped().await;
        tokio::time::sleep(STOP_GRACE).await;
    };
    tokio::select! {
        served = serving => served.map_err(|error| error.to_string()),
        () = given_up => Ok(()),
    }
}
