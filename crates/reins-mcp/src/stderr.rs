//! The end of a stdio server's standard error, kept for error messages and sent to `tracing`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::ChildStderr;

/// How many of the server's last standard-error lines are kept for error messages.
const STDERR_LINES: usize = 20;

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
    pub(crate) fn follow(&self, server: String, stderr: ChildStderr) {
        let state = self.state.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(target: "reins_mcp::stderr", server = %server, "{line}");
                let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
                if state.lines.len() == STDERR_LINES {
                    state.lines.pop_front();
                }
                state.lines.push_back(line);
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
