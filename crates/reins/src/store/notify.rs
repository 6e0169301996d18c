//! Waiting for decisions without polling: the signal every store sends when it records one.

use super::StoreError;
use std::sync::Arc;
use tokio::sync::broadcast;

/// How many signals a [`DecisionWatch`] may fall behind before it is told to look at the store
/// again ([`DecisionSignal::Recheck`]) instead.
const BACKLOG: usize = 1024;

/// What a [`DecisionWatch`] saw.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecisionSignal {
    /// A decision about a call of this run was recorded.
    Recorded {
        /// The run.
        run_id: String,
    },
    /// Decisions may have been recorded that the watch could not be told about one by one (it
    /// fell more than a thousand signals behind, or `PostgresStore`'s listener was
    /// reconnected after losing its connection): look at the store again
    /// ([`RunStore::pending_approvals`](super::RunStore::pending_approvals),
    /// [`RunStore::list_runs`](super::RunStore::list_runs)).
    Recheck,
}

/// Decisions recorded from the moment it was made
/// ([`RunStore::watch_decisions`](super::RunStore::watch_decisions)), as they are recorded:
/// a worker awaits it instead of polling, and resumes a run as soon as a person decides.
///
/// Make the watch *before* looking at the store for work, so a decision recorded in between
/// is not missed. A signal is a hint to look at the store: one decision may be signalled more
/// than once, and a signalled run may already have been resumed by another worker (its claim
/// then fails with [`StoreError::Busy`] or [`StoreError::Finished`]).
///
/// ```
/// use reins::store::{MemoryStore, RunStore};
///
/// # async fn example(store: MemoryStore, run_id: &str) -> Result<(), reins::store::StoreError> {
/// let mut watch = store.watch_decisions().await?;
/// // … check whether the run is decided already; if not:
/// watch.for_run(run_id).await?;
/// // … resume it: agent.resume_stored(store.clone(), run_id).await
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct DecisionWatch {
    receiver: broadcast::Receiver<DecisionSignal>,
    /// Keeps what feeds the signals from outside this process (a PostgreSQL listener, a
    /// SQLite file check) running while the watch lives.
    _feed: Option<Arc<Feed>>,
}

impl DecisionWatch {
    pub(crate) fn new(signals: &DecisionSignals, feed: Option<Arc<Feed>>) -> Self {
        DecisionWatch {
            receiver: signals.0.subscribe(),
            _feed: feed,
        }
    }

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    /// The watch, keeping `feed` running while it lives.
    pub(crate) fn with_feed(mut self, feed: Arc<Feed>) -> Self {
        self._feed = Some(feed);
        self
    }

    /// Waits for the next decision of any run.
    pub async fn next(&mut self) -> Result<DecisionSignal, StoreError> {
        match self.receiver.recv().await {
            Ok(signal) => Ok(signal),
            Err(broadcast::error::RecvError::Lagged(_)) => Ok(DecisionSignal::Recheck),
            Err(broadcast::error::RecvError::Closed) => Err(StoreError::Backend(
                "the store stopped signalling decisions".to_owned(),
            )),
        }
    }

    /// Waits until a decision about a call of `run_id` is recorded (or the watch must
    /// [recheck](DecisionSignal::Recheck): then look at the run's state).
    pub async fn for_run(&mut self, run_id: &str) -> Result<(), StoreError> {
        loop {
            match self.next().await? {
                DecisionSignal::Recorded { run_id: decided } if decided != run_id => {}
                _ => return Ok(()),
            }
        }
    }
}

/// Where a store sends the id of every run a decision was recorded for; shared by the store's
/// clones (and, for SQLite, by every handle on the same file in this process).
#[derive(Debug, Clone)]
pub(crate) struct DecisionSignals(broadcast::Sender<DecisionSignal>);

impl DecisionSignals {
    pub(crate) fn new() -> Self {
        DecisionSignals(broadcast::channel(BACKLOG).0)
    }

    /// Tells every watch that a decision was recorded for `run_id`.
    pub(crate) fn recorded(&self, run_id: &str) {
        self.send(DecisionSignal::Recorded {
            run_id: run_id.to_owned(),
        });
    }

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    /// Tells every watch to look at the store again.
    pub(crate) fn recheck(&self) {
        self.send(DecisionSignal::Recheck);
    }

    fn send(&self, signal: DecisionSignal) {
        // No watch listening is not an error: nobody waits.
        let _ = self.0.send(signal);
    }
}

impl Default for DecisionSignals {
    fn default() -> Self {
        DecisionSignals::new()
    }
}

/// A background task that feeds a store's [`DecisionSignals`] from outside this process; it
/// stops when the last [`DecisionWatch`] holding it is dropped.
#[derive(Debug)]
pub(crate) struct Feed(tokio::task::AbortHandle);

impl Feed {
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn new(task: tokio::task::AbortHandle) -> Self {
        Feed(task)
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use feed_slot::FeedSlot;

/// The feed slot, for the stores that feed signals from outside the process.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod feed_slot {
    use super::{Feed, StoreError};
    use std::future::Future;
    use std::sync::{Arc, Weak};
    use tokio::sync::Mutex;

    /// The one [`Feed`] of a store and its clones, started by the first watch that needs it.
    #[derive(Debug, Clone, Default)]
    pub(crate) struct FeedSlot(Arc<Mutex<Weak<Feed>>>);

    impl FeedSlot {
        /// The running feed, or a new one from `start`.
        pub(crate) async fn get_or_start<Start>(
            &self,
            start: Start,
        ) -> Result<Arc<Feed>, StoreError>
        where
            Start: Future<Output = Result<Feed, StoreError>>,
        {
            let mut slot = self.0.lock().await;
            if let Some(feed) = slot.upgrade() {
                return Ok(feed);
            }
            let feed = Arc::new(start.await?);
            *slot = Arc::downgrade(&feed);
            Ok(feed)
        }
    }
}
