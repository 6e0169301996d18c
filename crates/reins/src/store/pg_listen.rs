//! The PostgreSQL store's decision listener: `LISTEN` on a dedicated connection that is
//! opened again when it drops (with a bounded backoff); after every reconnection every watch
//! is told to look at the store again, so no decision made while it was away is missed.

use super::StoreError;
use super::notify::{DecisionSignals, Feed};
use futures::StreamExt;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_postgres::{AsyncMessage, Client, Config, NoTls};

/// The channel `decide` notifies, with the run's id as payload.
pub(crate) const CHANNEL: &str = "reins_decisions";

/// The longest wait between two attempts to reconnect.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// What the listener's connection is called in `pg_stat_activity`.
pub(crate) const APPLICATION_NAME: &str = "reins-decision-listener";

/// Starts listening; returns once `LISTEN` is in effect, so no decision committed after that
/// is missed.
pub(crate) async fn start(
    mut config: Config,
    signals: DecisionSignals,
) -> Result<Feed, StoreError> {
    config.application_name(APPLICATION_NAME);
    let mut listening = listen(&config).await.map_err(|error| {
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
            listening = reconnect(&config).await;
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

async fn listen(config: &Config) -> Result<Listening, tokio_postgres::Error> {
    let (client, mut connection) = config.connect(NoTls).await?;
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
async fn reconnect(config: &Config) -> Listening {
    let mut backoff = Duration::from_millis(100);
    loop {
        match listen(config).await {
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
