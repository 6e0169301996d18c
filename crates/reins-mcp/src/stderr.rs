//! The end of a stdio server's standard error, kept for error messages and sent to `tracing`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::ChildStderr;

/// How many of the server's last standard-error lines are kept for error messages.
const STDERR_LINES: usize = 20;

/// How much of one standard-error line is kept; the rest of a longer line is dropped.
const STDERR_LINE_BYTES: usize = 2048;

/// The last lines the server wrote to its standard error; each line also goes to `tracing`
/// (debug level, target `reins_mcp::stderr`).
#[derive(Clone, Default)]
pub(crate) struct StderrTail {
    state: Arc<Mutex<TailState>>,
}

#[derive(Default)]
pub(crate) struct TailState {
    pub(crate) lines: VecDeque<String>,
    pub(crate) closed: bool,
}

impl StderrTail {
    /// Reads the server's standard error to its end, keeping the last lines. The pipe is
    /// read to the end whatever it holds — bytes that are not UTF-8, a line with no end — so
    /// the server never blocks on a full pipe nor loses it; each line is kept (and logged)
    /// up to [`STDERR_LINE_BYTES`], so a server writing without newlines holds no more than
    /// that of this process's memory. Each line has `secrets` replaced before it is logged
    /// or kept.
    pub(crate) fn follow(
        &self,
        server: String,
        stderr: ChildStderr,
        secrets: Vec<(String, String)>,
    ) {
        let state = self.state.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stderr);
            let mut line = LineBuffer::default();
            loop {
                let chunk = match reader.fill_buf().await {
                    Ok(chunk) if !chunk.is_empty() => chunk,
                    _ => break,
                };
                let newline = chunk.iter().position(|byte| *byte == b'\n');
                let content = &chunk[..newline.unwrap_or(chunk.len())];
                line.append(content);
                let consumed = newline.map_or(chunk.len(), |at| at + 1);
                reader.consume(consumed);
                if newline.is_some() {
                    keep_line(&state, &server, &secrets, line.take());
                }
            }
            if !line.is_empty() {
                keep_line(&state, &server, &secrets, line.take());
            }
            state.lock().unwrap_or_else(PoisonError::into_inner).closed = true;
        });
    }

    /// The kept lines, once the stream has ended (or after a short wait: a server that is
    /// still running may never close it).
    pub(crate) async fn settled(&self) -> String {
        for _ in 0..50 {
            if self.lock().closed {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let state = self.lock();
        state.lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, TailState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One standard-error line being read, kept up to [`STDERR_LINE_BYTES`].
#[derive(Default)]
struct LineBuffer {
    bytes: Vec<u8>,
    /// How many bytes of the line were dropped past the limit.
    dropped: usize,
}

impl LineBuffer {
    fn append(&mut self, content: &[u8]) {
        let room = STDERR_LINE_BYTES.saturating_sub(self.bytes.len());
        let kept = content.len().min(room);
        self.bytes.extend_from_slice(&content[..kept]);
        self.dropped += content.len() - kept;
    }

    fn is_empty(&self) -> bool {
        self.bytes.is_empty() && self.dropped == 0
    }

    /// The line as text (bytes that are not UTF-8 replaced), saying how much was dropped.
    fn take(&mut self) -> String {
        let text = String::from_utf8_lossy(&self.bytes);
        let text = text.strip_suffix('\r').unwrap_or(&text);
        let line = match self.dropped {
            0 => text.to_owned(),
            dropped => format!("{text} [… {dropped} more bytes of this line not shown]"),
        };
        self.bytes.clear();
        self.dropped = 0;
        line
    }
}

fn keep_line(state: &Mutex<TailState>, server: &str, secrets: &[(String, String)], line: String) {
    // A credential the server prints goes no further: not to the log, not to errors.
    let line = crate::hidden::scrub(&line, secrets);
    // Kept for error messages a person reads: a control sequence is shown, not acted on.
    let line = match reins::text::printable(&line) {
        std::borrow::Cow::Borrowed(_) => line,
        std::borrow::Cow::Owned(shown) => shown,
    };
    tracing::debug!(target: "reins_mcp::stderr", server = %server, "{line}");
    let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
    if state.lines.len() == STDERR_LINES {
        state.lines.pop_front();
    }
    state.lines.push_back(line);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A subscriber keeping the message of every event.
    #[derive(Default)]
    struct Logged(Arc<Mutex<Vec<String>>>);

    struct Message<'a>(&'a mut String);

    impl tracing::field::Visit for Message<'_> {
        fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
            if field.name() == "message" {
                *self.0 = format!("{value:?}");
            }
        }
    }

    impl tracing::Subscriber for Logged {
        fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, event: &tracing::Event<'_>) {
            let mut message = String::new();
            event.record(&mut Message(&mut message));
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(message);
        }
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }

    #[test]
    fn a_credential_on_stderr_is_neither_logged_nor_kept() {
        let logged = Logged::default();
        let lines = logged.0.clone();
        let state = Mutex::new(TailState::default());
        let secrets = vec![("tok-0123456789".to_owned(), "[redacted]".to_owned())];
        reins_test_servers::ask_every_subscriber();
        tracing::subscriber::with_default(logged, || {
            keep_line(
                &state,
                "s",
                &secrets,
                "login refused for tok-0123456789".to_owned(),
            );
        });
        let lines = lines.lock().unwrap_or_else(PoisonError::into_inner);
        assert_eq!(*lines, ["login refused for [redacted]"]);
        let kept = state.lock().unwrap_or_else(PoisonError::into_inner);
        assert_eq!(kept.lines, ["login refused for [redacted]"]);
    }
}
