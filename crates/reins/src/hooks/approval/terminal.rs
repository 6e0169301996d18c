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
use tokio::sync::{Mutex, MutexGuard, mpsc};

/// The next line typed on stdin, without its line ending, its bytes that are not UTF-8 read
/// as U+FFFD; `None` at end of input (or when stdin cannot be read). Read on a thread of its
/// own, as a blocking read must be.
///
/// Cancel-safe: a read whose future is dropped is taken over by the next call. On a terminal
/// (on Unix) it stops as soon as nobody waits for it, so a question abandoned on a timeout
/// takes nothing typed while nobody asks; elsewhere a read once started finishes, and its
/// line goes to the next call.
pub async fn read_line() -> Option<String> {
    input().lock().await.next().await
}

/// The next line typed after now, as [`read_line`], with what was typed before now and not
/// read yet discarded first (on a terminal, on Unix): the answer to a question just shown,
/// never a line typed before it was.
pub async fn read_answer() -> Option<String> {
    let mut input = input().lock().await;
    input.forget_typed_ahead();
    input.next().await
}

/// Held while a question is on the terminal, from the moment it is shown until its answer
/// is read: the questions of concurrent calls, or of different deciders in one process
/// ([`TerminalDecider`](super::TerminalDecider)'s and a program's own), never interleave.
pub async fn question() -> MutexGuard<'static, ()> {
    static ASKING: Mutex<()> = Mutex::const_new(());
    ASKING.lock().await
}

/// What the reading thread answers a request with (end of input closes the channel).
enum Reply {
    Line(String),
    /// Nobody wanted the line any more before one was typed: nothing was read.
    Abandoned,
}

/// The requesting side: one reader at a time, behind [`input`]'s lock.
struct Input {
    /// Each request asks the reading thread for one line, while its flag is set.
    requests: std::sync::mpsc::Sender<Arc<AtomicBool>>,
    replies: mpsc::UnboundedReceiver<Reply>,
    /// The request sent and not answered yet: a reader that went away left it, and the next
    /// one takes it over rather than asking for a second line (nothing reads ahead).
    outstanding: Option<Arc<AtomicBool>>,
}

impl Input {
    async fn next(&mut self) -> Option<String> {
        loop {
            let wanted = match &self.outstanding {
                Some(wanted) => {
                    wanted.store(true, Ordering::Relaxed);
                    Arc::clone(wanted)
                }
                None => {
                    let wanted = Arc::new(AtomicBool::new(true));
                    self.requests.send(Arc::clone(&wanted)).ok()?;
                    self.outstanding = Some(Arc::clone(&wanted));
                    wanted
                }
            };
            let _unwanted_when_dropped = Unwanted(wanted);
            let reply = self.replies.recv().await;
            self.outstanding = None;
            match reply? {
                Reply::Line(line) => return Some(line),
                // Given up just before this reader took it over: ask again.
                Reply::Abandoned => {}
            }
        }
    }

    /// Discards what was typed before now: a line read and not taken, and what a terminal
    /// holds that nobody has read yet.
    fn forget_typed_ahead(&mut self) {
        while self.replies.try_recv().is_ok() {
            self.outstanding = None;
        }
        #[cfg(unix)]
        {
            use std::io::IsTerminal;
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                // Nothing to do about a failure: the lines typed ahead are then read as
                // answers.
                let _ = rustix::termios::tcflush(&stdin, rustix::termios::QueueSelector::IFlush);
            }
        }
    }
}

/// Clears its request's flag when dropped (answered or not: an answered one is over anyway).
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
        let (requests, asked) = std::sync::mpsc::channel::<Arc<AtomicBool>>();
        let (sender, replies) = mpsc::unbounded_channel();
        let spawned = std::thread::Builder::new()
            .name("reins-terminal-input".to_owned())
            .spawn(move || {
                while let Ok(wanted) = asked.recv() {
                    let more = match read_for(&wanted) {
                        Some(Read::Line(line)) => sender.send(Reply::Line(line)).is_ok(),
                        Some(Read::End) => false,
                        None => sender.send(Reply::Abandoned).is_ok(),
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
            replies,
            outstanding: None,
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
    let mut bytes = Vec::new();
    match std::io::stdin().lock().read_until(b'\n', &mut bytes) {
        Ok(0) | Err(_) => return Some(Read::End),
        Ok(_) => {}
    }
    // A line that is not UTF-8 (typed in another encoding, a stray byte) is still a line:
    // taken for end of input, it would end a chat, or a question, without a word.
    let mut line = String::from_utf8_lossy(&bytes).into_owned();
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
