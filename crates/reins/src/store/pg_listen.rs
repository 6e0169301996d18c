//! The PostgreSQL store's decision listener: `LISTEN` on a dedicated connection that is
//! opened again when it drops (with a bounded backoff); after every reconnection every watch
//! is told to look at the store again, so no decision made while it was away is missed.
//!
//! A connection can also die without closing (the server's host gone, a network path or a
//! NAT entry dropped): a listener only reads, and TCP would notice after its keepalive (two
//! hours idle by default). So the listener sends a query at every liveness check, and a
//! connection that has not answered by the next one is taken for dead and replaced.

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
/// is missed. `tls` is the store's (its pool's) TLS; the connection is checked every `check`.
pub(crate) async fn start<T>(
    mut config: Config,
    tls: T,
    signals: DecisionSignals,
    check: Duration,
) -> Result<Feed, StoreError>
where
    T: MakeTlsConnect<Socket> + Clone + Send + Sync + 'static,
    T::Stream: Send + 'static,
    T::TlsConnect: Send,
    <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
{
    config.application_name(APPLICATION_NAME);
    // `interval` refuses a zero period.
    let check = check.max(Duration::from_millis(1));
    let mut listening = listen(&config, &tls).await.map_err(|error| {
        StoreError::Backend(format!(
            "listening for decisions: {}",
            super::error::describe_postgres(&error)
        ))
    })?;
    let task = tokio::spawn(async move {
        loop {
            relay(&mut listening, &signals, check).await;
            tracing::warn!("the PostgreSQL decision listener lost its connection; reconnecting");
            // Closes the old connection, if it is still open.
            drop(listening);
            listening = reconnect(&config, &tls, check).await;
            // Decisions committed while no connection listened were not notified. Which they
            // are cannot be told from the log without trusting the deciding workers' clocks,
            // so every watch looks at the store again, once.
            signals.recheck();
        }
    });
    Ok(Feed::new(task.abort_handle()))
}

/// Signals every notification of `listening` until its connection ends or fails a liveness
/// check: a query every `check` that must be answered within `check`.
async fn relay(listening: &mut Listening, signals: &DecisionSignals, check: Duration) {
    let mut checks = tokio::time::interval(check);
    checks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The first tick is at once: the connection has just answered `LISTEN`.
    checks.tick().await;
    loop {
        tokio::select! {
            notified = listening.notifications.recv() => match notified {
                Some(run_id) => signals.recorded(&run_id),
                None => return,
            },
            _ = checks.tick() => {
                // Notifications arriving meanwhile wait in the channel.
                let answered = tokio::time::timeout(check, listening.client.simple_query("")).await;
                match answered {
                    Ok(Ok(_)) => {}
                    Ok(Err(error)) => {
                        let error = super::error::describe_postgres(&error);
                        tracing::warn!(%error, "the PostgreSQL decision listener's liveness check failed");
                        return;
                    }
                    Err(_) => {
                        tracing::warn!(
                            waited_ms = check.as_millis(),
                            "the PostgreSQL decision listener's connection did not answer"
                        );
                        return;
                    }
                }
            }
        }
    }
}

/// A connection that listens, and the payloads of its notifications; the receiver ends when
/// the connection does. Dropping it closes the connection.
struct Listening {
    client: Client,
    notifications: mpsc::UnboundedReceiver<String>,
    /// The task reading the connection: it would otherwise wait forever on a dead one.
    reader: tokio::task::AbortHandle,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.reader.abort();
    }
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
    let reader = tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(notification) = message
                && sender.send(notification.payload().to_owned()).is_err()
            {
                return;
            }
        }
    });
    let listening = Listening {
        client,
        notifications,
        reader: reader.abort_handle(),
    };
    listening
        .client
        .batch_execute(&format!("LISTEN {CHANNEL}"))
        .await?;
    Ok(listening)
}

/// Connects and listens again, waiting longer after each failure (up to [`MAX_BACKOFF`]); an
/// attempt that takes longer than `check` fails.
async fn reconnect<T>(config: &Config, tls: &T, check: Duration) -> Listening
where
    T: MakeTlsConnect<Socket> + Clone + Send + Sync + 'static,
    T::Stream: Send + 'static,
    T::TlsConnect: Send,
    <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
{
    let mut backoff = Duration::from_millis(100);
    loop {
        let error = match tokio::time::timeout(check, listen(config, tls)).await {
            Ok(Ok(listening)) => return listening,
            Ok(Err(error)) => super::error::describe_postgres(&error),
            Err(_) => format!("no answer within {} ms", check.as_millis()),
        };
        tracing::warn!(%error, "reconnecting the PostgreSQL decision listener failed");
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}
