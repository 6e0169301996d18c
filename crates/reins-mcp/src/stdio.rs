//! The stdio transport: a server's process, its standard input written one JSON-RPC message
//! a line, and its standard output read one line at a time, each line weighed before rmcp
//! parses it (`weighed.rs`).
//!
//! rmcp's own child-process transport parses every line within its 16 MiB limit, whatever
//! that costs, drops a longer one without telling the request it answered, and kills only
//! the process it started. This one refuses a line too long or too heavy to parse with an
//! error answering its request, and ends the server's whole process group
//! (`process.rs`). A line holding a batch is read as its messages (`batch.rs`); an answer
//! that is no message rmcp reads fails its request at once (`unreadable.rs`).
//!
//! A refused line whose `id` cannot be read (a batch's is inside it) answers no request, and
//! is dropped; but while the handshake's `initialize` is the one request waiting, such a line
//! can only be its answer, and fails it at once, saying why, rather than leaving the
//! handshake to its connect timeout.

use crate::batch::batch_messages;
use crate::handshake::is_initialize;
use crate::hidden::Credentials;
use crate::lines::{LineBuffer, ReadLine};
use crate::process::ServerProcess;
use crate::unreadable::unreadable_answering;
use crate::weighed::{Unread, is_light, refusal_answering};
use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout, Command};
use tokio_util::sync::CancellationToken;

/// A server's process spoken to over its standard input and output.
pub(crate) struct StdioTransport {
    process: ServerProcess,
    stdout: BufReader<ChildStdout>,
    line: LineBuffer,
    /// The messages of a batch read and not yet given to rmcp.
    batched: VecDeque<RxJsonRpcMessage<RoleClient>>,
    /// Shared with the sends in flight (rmcp sends from tasks of its own); `None` once
    /// closed.
    stdin: Arc<tokio::sync::Mutex<Option<ChildStdin>>>,
    server: Arc<str>,
    /// The server's credentials, which what is logged or answered of a line refused or
    /// unreadable must not quote.
    credentials: Credentials,
    /// The id of the `initialize` sent, until it is answered.
    initializing: Option<RequestId>,
    /// How long the server may read nothing of a message being written.
    write_timeout: Duration,
    /// Cancelled when it read nothing for that long: the connection is over.
    stall: CancellationToken,
}

impl StdioTransport {
    /// Starts `command` with its standard input, output and error piped, giving the
    /// transport and the standard error to follow. `credentials` are the server's.
    pub(crate) fn spawn(
        mut command: Command,
        server: &str,
        credentials: Credentials,
        write_timeout: Duration,
    ) -> std::io::Result<(StdioTransport, Option<ChildStderr>)> {
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = command.spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(std::io::Error::other(
                "the process's stdin or stdout is not piped",
            ));
        };
        let stderr = child.stderr.take();
        let transport = StdioTransport {
            process: ServerProcess::new(child),
            stdout: BufReader::new(stdout),
            line: LineBuffer::default(),
            batched: VecDeque::new(),
            stdin: Arc::new(tokio::sync::Mutex::new(Some(stdin))),
            server: Arc::from(server),
            credentials,
            initializing: None,
            write_timeout,
            stall: CancellationToken::new(),
        };
        Ok((transport, stderr))
    }

    /// What is cancelled when the server stops reading its input (then the connection is
    /// over).
    pub(crate) fn stall(&self) -> CancellationToken {
        self.stall.clone()
    }

    /// The process's id, while it runs.
    pub(crate) fn id(&self) -> Option<u32> {
        self.process.id()
    }

    /// The messages `text`, a line read (its start when too long, of `length` bytes in
    /// all), holds (those of a batch, in order), or its refusal; none for a line that is
    /// blank, not JSON-RPC, or refused without a request to answer.
    fn messages(
        &self,
        read: &ReadLine,
        text: &[u8],
        length: usize,
    ) -> Vec<RxJsonRpcMessage<RoleClient>> {
        let refusal = |why| {
            let asked = self.initializing.as_ref();
            refusal_answering(text, why, &self.server, &self.credentials, asked)
                .into_iter()
                .collect()
        };
        if let ReadLine::TooLong = read {
            return refusal(Unread::TooLong { bytes: length });
        }
        if text.iter().all(u8::is_ascii_whitespace) {
            return Vec::new();
        }
        if !is_light(text) {
            return refusal(Unread::TooHeavy { bytes: text.len() });
        }
        match serde_json::from_slice(text) {
            Ok(message) => vec![message],
            // An answer rmcp cannot read fails its request now; any other line that is not a
            // message is passed over, as rmcp does (answering it could start an exchange of
            // errors with a server that echoes them).
            Err(error) => batch_messages(text, &self.server).unwrap_or_else(|| {
                let asked = self.initializing.as_ref();
                unreadable_answering(text, &error, &self.server, &self.credentials, asked)
                    .into_iter()
                    .collect()
            }),
        }
    }
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(request) = &item
            && is_initialize(&item)
        {
            self.initializing = Some(request.id.clone());
        }
        let stdin = self.stdin.clone();
        let line = crate::lines::json_line(&item);
        let (write_timeout, stall) = (self.write_timeout, self.stall.clone());
        let server = self.server.clone();
        async move {
            let line = line?;
            let mut guard = stdin.lock().await;
            let Some(stdin) = guard.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the server's standard input is closed",
                ));
            };
            // Each write returns once the server read some of the line: one that reads
            // nothing for the write timeout stopped reading (`receive` then ends the
            // connection, and its input is closed).
            let mut written = 0;
            while written < line.len() {
                match tokio::time::timeout(write_timeout, stdin.write(&line[written..])).await {
                    Ok(Ok(0)) => return Err(std::io::ErrorKind::WriteZero.into()),
                    Ok(Ok(wrote)) => written += wrote,
                    Ok(Err(error)) => return Err(error),
                    Err(_) => {
                        guard.take();
                        stall.cancel();
                        tracing::warn!(target: "reins_mcp", server = %server, "the MCP server read nothing of its input for {} ms; the connection is ended", write_timeout.as_millis());
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::TimedOut,
                            "the server stopped reading its standard input",
                        ));
                    }
                }
            }
            stdin.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            if let Some(message) = self.batched.pop_front() {
                return Some(message);
            }
            let read = tokio::select! {
                read = self.line.read_from(&mut self.stdout) => read,
                // The server stopped reading its input: the connection is over.
                () = self.stall.cancelled() => return None,
            };
            if let ReadLine::End = read {
                return None;
            }
            let (text, length) = self.line.take();
            let messages = self.messages(&read, &text, length);
            let answers_initialize = |message: &RxJsonRpcMessage<RoleClient>| {
                let answered = match message {
                    JsonRpcMessage::Response(response) => Some(&response.id),
                    JsonRpcMessage::Error(error) => error.id.as_ref(),
                    _ => None,
                };
                answered.is_some() && answered == self.initializing.as_ref()
            };
            if messages.iter().any(answers_initialize) {
                self.initializing = None;
            }
            self.batched.extend(messages);
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing its input asks the server to exit. A send stuck on a server that stopped
        // reading holds the input: the process is ended regardless.
        if let Ok(mut stdin) = self.stdin.try_lock() {
            stdin.take();
        }
        self.process.end().await;
        Ok(())
    }
}
