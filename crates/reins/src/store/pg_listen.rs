//! The PostgreSQL store's decision listener: `LISTEN` on a dedicated connection that is
//! opened again when it drops (with a bounded backoff); after every reconnection every watch
//! is told to look at the store again, so no decision made while it was away is missed.

use super::StoreError;
use super::notify::{DecisionSignals, Feed};
use futures::StreamExt;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_postgres::tls::{MakeTlsConnect, TlsConnect};
use tokio_postgres::{AsyncMessage, Client, Config, Socket};

/// The channel `decide` notifies, with the run's id as payload.
pub(crate) const CHANNEL: &str = "reins_decisions";

/// The longest wait between two attempts to reconnect.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// What the listener's connection is called in `pg_stat_activity`.
pub(crate) const APPLICATION_NAME: &str = "reins-decision-listener";

/// Starts listening; returns once `LISTEN` is in effect, so no decision committed after that
/// is missed. `tls` is the store's (its pool's) TLS.
pub(crate) async fn start<T>(
    mut config: Config,
    tls: T,
    signals: DecisionSignals,
) -> Result<Feed, StoreError>
where
    T: MakeTlsConnect<Socket> + Clone + Send + Sync + 'static,
    T::Stream: Send + 'static,
    T::TlsConnect: Send,
    <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
{
    config.application_name(APPLICATION_NAME);
    let mut listening = listen(&config, &tls).await.map_err(|error| {
        StoreError::Backend(format!(
            "listening for decisions: {}",
            super::error::describe_postgres(&error)
        ))
    })?;
    let task = tokio::spawn(async move {
        loop {
            while let Some(run_id) = listening.notifications.recv().await {
                signals.recorded(&run_id);
            }
            tracing::warn!("the PostgreSQL decision listener lost its connection; reconnecting");
            listening = reconnect(&config, &tls).await;
            // Decisions committed while no connection listened were not notified. Which they
            // are cannot be told from the log without trusting the deciding workers' clocks,
            // so every watch looks at the store again, once.
            signals.recheck();
        }
    });
    Ok(Feed::new(task.abort_handle()))
}

/// A connection that listens, and the payloads of its notifications; the receiver ends when
/// the connection does.
struct Listening {
    /// Held, never read: dropping it would close the connection.
    _client: Client,
    notifications: mpsc::UnboundedReceiver<String>,
}

async fn listen<T>(config: &Config, tls: &T) -> Result<Listening, tokio_postgres::Error>
where
    T: MakeTlsConnect<Socket> + Clone + Send + Sync + 'static,
    T::Stream: Send + 'static,
    T::TlsConnect: Send,
    <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
{
    let (client, mut connection) = config.connect(tls.clone()).await?;
    let (sender, notifications) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(notification) = message
                && sender.send(notification.payload().to_owned()).is_err()
            {
                return;
            }
        }
    });
    client.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
    Ok(Listening {
        _client: client,
        notifications,
    })
}

/// Connects and listens again, waiting longer after each failure (up to [`MAX_BACKOFF`]).
async fn reconnect<T>(config: &Config, tls: &T) -> Listening
where
    T: MakeTlsConnect<Socket> + Clone + Send + Sync + 'static,
    T::Stream: Send + 'static,
    T::TlsConnect: Send,
    <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
{
    let mut backoff = Duration::from_millis(100);
    loop {
        match listen(config, tls).await {
            Ok(listening) => return listening,
            Err(error) => {
                let error = super::error::describe_postgres(&error);
                tracing::warn!(%error, "reconnecting the PostgreSQL decision listener failed");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}
