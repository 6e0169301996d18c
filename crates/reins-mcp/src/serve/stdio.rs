//! The standard input and output a tool set is served on (`McpService::serve_stdio`): the
//! client's messages read a line at a time and weighed before rmcp parses them, and read
//! only while the client reads its answers.
//!
//! rmcp's own transport parses every line within 16 MiB whatever that costs (15 MiB of
//! `{"a":0},` took 2.6 GB) and drops a longer line without a word, leaving its request
//! unanswered until the client's timeout. Here a line too long (`lines.rs`) or too heavy to
//! parse (`weighed.rs`) is never parsed: its request, when its `id` is read, is answered
//! with an invalid-request error saying why.
//!
//! rmcp writes each answer from a task of its own, and an answer waits as long as the client
//! does not read its standard output: a client sending requests (`ping`, `tools/list`)
//! without reading the answers grew the server's memory without bound (370 MB for 100 000
//! pings). Here no more of the input is read while [`MAX_UNWRITTEN_ANSWERS`] messages wait
//! to be written, so such a client's writes block on its full pipe instead, as a pipe's
//! writer does. Nothing is dropped: every request is answered once the client reads. The
//! bound is not strict: rmcp spawns a task for each request it is handed, and those handed
//! before the first answers wait (thousands, on a loaded machine) are held until answered.
//!
//! A request the client may not send (`initialize` again, or under the id of a request of
//! its still running: `requests.rs`) is answered here with an error, and never reaches rmcp.

use super::requests::ClientRequests;
use crate::lines::{LineBuffer, ReadLine};
use crate::weighed::{Unread, is_light, request_id};
use rmcp::RoleServer;
use rmcp::model::{ErrorData, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, Notify};

/// How many of the server's messages may wait to be written before no more of the client's
/// input is read.
pub(crate) const MAX_UNWRITTEN_ANSWERS: usize = 64;

/// A client's input and output, read and written one message a line (see the module's
/// documentation).
pub(crate) struct StdioServerTransport<R, W> {
    input: BufReader<R>,
    line: LineBuffer,
    /// Shared with the sends in flight (rmcp sends from tasks of its own).
    output: Arc<Mutex<W>>,
    unwritten: Arc<Unwritten>,
    requests: ClientRequests,
}

/// The messages being written, shared with their sends.
#[derive(Default)]
struct Unwritten {
    count: AtomicUsize,
    fewer: Notify,
}

/// One message being written: counted until its write ends, or is dropped.
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

impl<R, W> StdioServerTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub(crate) fn new(input: R, output: W) -> Self {
        StdioServerTransport {
            input: BufReader::new(input),
            line: LineBuffer::default(),
            output: Arc::new(Mutex::new(output)),
            unwritten: Arc::default(),
            requests: ClientRequests::default(),
        }
    }

    /// Writes `message` as a line, counted among the unwritten until it is written.
    fn write(
        &self,
        message: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = std::io::Result<()>> + Send + 'static {
        let writing = Writing::start(&self.unwritten);
        let output = self.output.clone();
        let line = crate::lines::json_line(&message);
        async move {
            let line = line?;
            let mut output = output.lock().await;
            output.write_all(&line).await?;
            output.flush().await?;
            drop(writing);
            Ok(())
        }
    }

    /// The message `text` (a line, or its start when it is too long: `length` bytes in
    /// all) holds; `None` for a line that is blank, not a message, or refused.
    fn message(&self, read: &ReadLine, text: &[u8], length: usize) -> Option<RxClientMessage> {
        let why = match read {
            ReadLine::TooLong => Unread::TooLong { bytes: length },
            _ if text.iter().all(u8::is_ascii_whitespace) => return None,
            _ if !is_light(text) => Unread::TooHeavy { bytes: length },
            _ => {
                return match serde_json::from_slice(text) {
                    Ok(message) => Some(message),
                    Err(error) => {
                        self.refuse_unreadable(text, &error);
                        None
                    }
                };
            }
        };
        let id = request_id(text);
        tracing::warn!(target: "reins_mcp::serve", id = ?id, "{}", why.of_request());
        if let Some(id) = id {
            let refusal = ErrorData::invalid_request(why.of_request(), None);
            self.answer_unawaited(JsonRpcMessage::error(refusal, Some(id)));
        }
        None
    }

    /// As rmcp does: a line that is not JSON is passed over (answering it could start an
    /// exchange of errors with a client that echoes them), and so is a notification (never
    /// answered); other JSON that is not a message rmcp reads (a batch, an id of the wrong
    /// type) is answered "Invalid request".
    fn refuse_unreadable(&self, text: &[u8], error: &serde_json::Error) {
        tracing::debug!(target: "reins_mcp::serve", %error, "a line of the client's is not a message");
        // Weighed already: parsing it again costs little.
        let is_notification = serde_json::from_slice::<serde_json::Value>(text)
            .is_ok_and(|value| value.get("method").is_some() && value.get("id").is_none());
        if error.is_data() && !is_notification {
            let id = request_id(text);
            let refusal = ErrorData::invalid_request("Invalid request", None);
            self.answer_unawaited(JsonRpcMessage::error(refusal, id));
        }
    }

    /// Writes an answer of the transport's own, in a task (a `receive` rmcp drops must not
    /// leave half a line written), counted among the unwritten.
    fn answer_unawaited(&self, answer: TxJsonRpcMessage<RoleServer>) {
        let write = self.write(answer);
        tokio::spawn(async move {
            if let Err(error) = write.await {
                tracing::debug!(target: "reins_mcp::serve", %error, "an answer could not be written");
            }
        });
    }
}

/// A message from the client.
type RxClientMessage = RxJsonRpcMessage<RoleServer>;

impl<R, W> Transport<RoleServer> for StdioServerTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.requests.answered(&item);
        self.write(item)
    }

    /// Cancellation-safe: rmcp polls it in a `select!` and drops it whenever it has something
    /// to send; waiting holds nothing, and what was read of a line stays in the buffer.
    async fn receive(&mut self) -> Option<RxClientMessage> {
        loop {
            // Made before the count is read, so that a write ending in between wakes it.
            let fewer = self.unwritten.fewer.notified();
            if self.unwritten.count.load(Ordering::Acquire) >= MAX_UNWRITTEN_ANSWERS {
                fewer.await;
                continue;
            }
            let read = self.line.read_from(&mut self.input).await;
            if let ReadLine::End = read {
                return None;
            }
            let (text, length) = self.line.take();
            let Some(message) = self.message(&read, &text, length) else {
                continue;
            };
            match self.requests.admit(&message) {
                Ok(()) => return Some(message),
                Err((id, refusal)) => {
                    tracing::warn!(target: "reins_mcp::serve", %id, "{}", refusal.message);
                    self.answer_unawaited(JsonRpcMessage::error(refusal, Some(id)));
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.output.lock().await.flush().await
    }
}
