//! The standard input and output a tool set is served on (`McpService::serve_stdio`), read
//! only while the client reads its answers.
//!
//! rmcp writes each answer from a task of its own, and an answer waits as long as the client
//! does not read its standard output: a client sending requests (`ping`, `tools/list`)
//! without reading the answers grew the server's memory without bound (some 3.6 KiB an
//! answer, 370 MB for 100 000 pings). Here no more of the input is read while
//! [`MAX_UNWRITTEN_ANSWERS`] messages wait to be written, so such a client's writes block
//! on its full pipe instead, as a pipe's writer does. Nothing is dropped: every request is
//! answered once the client reads.

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Notify;

/// How many of the server's messages may wait to be written before no more of the client's
/// input is read.
pub(crate) const MAX_UNWRITTEN_ANSWERS: usize = 64;

/// A transport reading its input only while fewer than [`MAX_UNWRITTEN_ANSWERS`] of its
/// messages wait to be written (see the module's documentation).
pub(crate) struct ReadWhileAnswersDrain<T> {
    inner: T,
    unwritten: Arc<Unwritten>,
}

/// The messages being written, shared with their sends (which run in tasks of rmcp's own).
#[derive(Default)]
struct Unwritten {
    count: AtomicUsize,
    fewer: Notify,
}

/// One message being written: counted until its send ends, or is dropped.
struct Writing(Arc<Unwritten>);

impl Writing {
    fn start(unwritten: &Arc<Unwritten>) -> Writing {
        unwritten.count.fetch_add(1, Ordering::AcqRel);
        Writing(unwritten.clone())
    }
}

impl Drop for Writing {
    fn drop(&mut self) {
        self.0.count.fetch_sub(1, Ordering::AcqRel);
        self.0.fewer.notify_waiters();
    }
}

impl<T> ReadWhileAnswersDrain<T> {
    pub(crate) fn new(inner: T) -> Self {
        ReadWhileAnswersDrain {
            inner,
            unwritten: Arc::default(),
        }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for ReadWhileAnswersDrain<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writing = Writing::start(&self.unwritten);
        let send = self.inner.send(item);
        async move {
            let sent = send.await;
            drop(writing);
            sent
        }
    }

    /// Cancellation-safe as the inner transport's is: rmcp polls it in a `select!` and
    /// drops it whenever it has something to send, and waiting here holds nothing.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // Made before the count is read, so that a send ending in between wakes it.
            let fewer = self.unwritten.fewer.notified();
            if self.unwritten.count.load(Ordering::Acquire) < MAX_UNWRITTEN_ANSWERS {
                break;
            }
            fewer.await;
        }
        self.inner.receive().await
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
