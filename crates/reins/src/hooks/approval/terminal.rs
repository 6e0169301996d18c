//! The terminal's input, shared by everything in the process that reads it: the questions of
//! [`TerminalDecider`](super::TerminalDecider) and the program's own reads (a chat's next
//! message). A line is read only while someone waits for one, so nothing reads ahead of them:
//! the program, or an editor it starts between two questions, gets every key typed for it.
//!
//! ```no_run
//! use reins::hooks::approval::terminal;
//!
//! # async fn chat() {
//! // A chat's messages come from the same input as the decider's answers.
//! while let Some(message) = terminal::read_line().await {
//!     println!("you said: {message}");
//! }
//! # }
//! ```

use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use tokio::sync::{Mutex, mpsc};

/// The next line typed on stdin, without its line ending; `None` at end of input (or input
/// that is not text). Read on a thread of its own, as a blocking read must be.
///
/// Cancel-safe on a terminal (on Unix): when the future is dropped, the read stops before
/// taking a line, so a question abandoned on a timeout takes nothing typed afterwards. When
/// stdin is not a terminal, a read once started finishes, and a line it gets after its future
/// was dropped is discarded.
pub async fn read_line() -> Option<String> {
    input().lock().await.next().await
}

/// The next line typed after now, as [`read_line`], with what was typed before now and not
/// read yet discarded first (on a terminal, on Unix): the answer to a question just shown,
/// never a line typed before it was.
pub async fn read_answer() -> Option<String> {
    let mut input = input().lock().await;
    forget_typed_ahead();
    input.next().await
}

/// Discards the input a terminal holds that nobody has read yet.
fn forget_typed_ahead() {
    #[cfg(unix)]
    {
        use std::io::IsTerminal;
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            // Nothing to do about a failure: the lines typed ahead are then read as answers.
            let _ = rustix::termios::tcflush(&stdin, rustix::termios::QueueSelector::IFlush);
        }
    }
}

/// One line asked of the reading thread, numbered so that a line read for a request whose
/// reader went away is told from the line of the current one.
struct Request {
    id: u64,
    /// Cleared when the reader's future is dropped: the thread then stops waiting for input.
    wanted: Arc<AtomicBool>,
}

/// The requesting side: one reader at a time, behind [`input`]'s lock.
struct Input {
    requests: std::sync::mpsc::Sender<Request>,
    lines: mpsc::UnboundedReceiver<(u64, String)>,
    next_id: u64,
}

impl Input {
    async fn next(&mut self) -> Option<String> {
        let id = self.next_id;
        self.next_id += 1;
        let wanted = Arc::new(AtomicBool::new(true));
        let request = Request {
            id,
            wanted: Arc::clone(&wanted),
        };
        self.requests.send(request).ok()?;
        let _unwanted_when_dropped = Unwanted(wanted);
        loop {
            let (for_request, line) = self.lines.recv().await?;
            if for_request == id {
                return Some(line);
            }
            // A line read for an earlier reader that went away before it came.
        }
    }
}

/// Marks its request unwanted when dropped (answered or not: an answered one is over anyway).
struct Unwanted(Arc<AtomicBool>);

impl Drop for Unwanted {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

/// The process's one reader of stdin, started on first use.
fn input() -> &'static Mutex<Input> {
    static INPUT: OnceLock<Mutex<Input>> = OnceLock::new();
    INPUT.get_or_init(|| {
        let (requests, asked) = std::sync::mpsc::channel::<Request>();
        let (sender, lines) = mpsc::unbounded_channel();
        let spawned = std::thread::Builder::new()
            .name("reins-terminal-input".to_owned())
            .spawn(move || {
                while let Ok(request) = asked.recv() {
                    let more = match read_for(&request.wanted) {
                        Some(Read::Line(line)) => sender.send((request.id, line)).is_ok(),
                        Some(Read::End) => false,
                        None => true,
                    };
                    if !more {
                        break;
                    }
                }
            });
        if let Err(error) = spawned {
            // The receiver of requests went with the closure: every read is end of input.
            tracing::warn!(%error, "cannot read stdin: every read is end of input");
        }
        Mutex::new(Input {
            requests,
            lines,
            next_id: 0,
        })
    })
}

/// What a read of stdin gave.
enum Read {
    Line(String),
    End,
}

/// One line of stdin, once there is one; `None` when `wanted` was cleared first.
fn read_for(wanted: &AtomicBool) -> Option<Read> {
    if !wait_for_input(wanted) {
        return None;
    }
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => return Some(Read::End),
        Ok(_) => {}
    }
    if line.ends_with('\n') {
        line.pop();
        if line.ends_with('\r') {
            line.pop();
        }
    }
    Some(Read::Line(line))
}

/// Waits until a terminal has a line to read, looking every tenth of a second whether it is
/// still wanted; `false` once it is not. Elsewhere (not a terminal, not Unix) a read cannot
/// be waited for apart from reading it: `true` at once.
fn wait_for_input(wanted: &AtomicBool) -> bool {
    #[cfg(unix)]
    {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        use std::io::IsTerminal;
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            let tenth = Timespec {
                tv_sec: 0,
                tv_nsec: 100_000_000,
            };
            loop {
                if !wanted.load(Ordering::Relaxed) {
                    return false;
                }
                let mut ready = [PollFd::new(&stdin, PollFlags::IN)];
                match poll(&mut ready, Some(&tenth)) {
                    Ok(0) => {}
                    Err(rustix::io::Errno::INTR) => {}
                    // Readable, hung up, or poll itself failing: the read tells which.
                    Ok(_) | Err(_) => break,
                }
            }
        }
    }
    wanted.load(Ordering::Relaxed)
}
