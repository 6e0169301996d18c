//! A deadline for writing each answer of a connection. The framework writes an answer until
//! the client has taken it, with no deadline of its own: a client that never reads (or reads
//! a few bytes now and then) would hold its connection, one of the inbox's few, as long as it
//! likes once the system's buffers are full. Since any client may do so before its token is
//! read, each answer must be written within the deadline, from its first byte to the flush
//! that follows its last; past it, the write fails and the connection is closed.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// `io` whose writes fail once an answer has taken longer than `timeout` to be written.
pub(super) struct WriteDeadline<S> {
    io: S,
    timeout: Duration,
    /// When the answer being written must be written by: set at its first write, cleared
    /// when a flush completes (the framework flushes after each answer).
    deadline: Option<Pin<Box<Sleep>>>,
}

impl<S> WriteDeadline<S> {
    pub(super) fn new(io: S, timeout: Duration) -> Self {
        WriteDeadline {
            io,
            timeout,
            deadline: None,
        }
    }
}

impl<S: AsyncWrite + Unpin> WriteDeadline<S> {
    /// `write`'s outcome on the connection, or a timeout when it has to wait past the
    /// deadline of the answer being written.
    fn written(
        &mut self,
        cx: &mut Context<'_>,
        write: impl FnOnce(Pin<&mut S>, &mut Context<'_>) -> Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        let timeout = self.timeout;
        let deadline = self
            .deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match write(Pin::new(&mut self.io), cx) {
            // Waiting for the client to take what was written: no longer than the deadline
            // (polled, so that its timer wakes the connection).
            Poll::Pending if deadline.as_mut().poll(cx).is_ready() => {
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the client did not take the inbox's answer in time",
                )))
            }
            written => written,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().written(cx, |io, cx| io.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.get_mut()
            .written(cx, |io, cx| io.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let flushed = Pin::new(&mut this.io).poll_flush(cx);
        if let Poll::Ready(Ok(())) = flushed {
            // The answer is written whole: the next one has a deadline of its own.
            this.deadline = None;
        }
        flushed
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteDeadline<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}
