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
//! while let Some(line) = terminal::read_line_at_most(terminal::MAX_LINE_BYTES).await {
//!     match line {
//!         terminal::Line::Text(message) => println!("you said: {message}"),
//!         terminal::Line::TooLong { bytes } => eprintln!("{bytes} bytes is too long"),
//!     }
//! }
//! # }
//! ```
//!
//! A line is held in memory only up to a bound (the caller's, or [`MAX_LINE_BYTES`]): the
//! rest of a longer one (a file of one multi-gigabyte line piped in, a paste gone wrong) is
//! read and dropped up to its end, and the line reported as [`Line::TooLong`].

use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use tokio::sync::{Mutex, MutexGuard, mpsc};

/// The bound [`read_line`] and [`read_answer`] hold a line to, in bytes (1 MiB): far more
/// than a message anyone types, far less than the memory a runaway line would take.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// A line read up to a bound ([`read_line_at_most`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// The line, without its line ending, its bytes that are not UTF-8 read as U+FFFD.
    Text(String),
    /// The line had more bytes than the bound (this many, without its line ending): it was
    /// read to its end and dropped, and the next read starts at the next line.
    TooLong {
        /// How long the line was, in bytes.
        bytes: usize,
    },
}

/// The next line typed on stdin, if it has at most `max_bytes` bytes (without its line
/// ending; [`Line::TooLong`] otherwise, never held whole: `max_bytes` and a byte at most);
/// `None` at end of input (or when stdin cannot be read). Read on a thread of its own, as a
/// blocking read must be.
///
/// Cancel-safe: a read whose future is dropped is taken over by the next call. On a terminal
/// (on Unix) it stops as soon as nobody waits for it, so a question abandoned on a timeout
/// takes nothing typed while nobody asks; elsewhere a read once started finishes, and its
/// line goes to the next call (read to the bound that call was made with).
pub async fn read_line_at_most(max_bytes: usize) -> Option<Line> {
    input().lock().await.next(max_bytes).await
}

/// The next line typed after now, as [`read_line_at_most`], with what was typed before now
/// and not read yet discarded first (on a terminal, on Unix): the answer to a question just
/// shown, never a line typed before it was.
pub async fn read_answer_at_most(max_bytes: usize) -> Option<Line> {
    let mut input = input().lock().await;
    input.forget_typed_ahead();
    input.next(max_bytes).await
}

/// The next line typed on stdin of at most [`MAX_LINE_BYTES`], as [`read_line_at_most`]; a
/// longer line is skipped (with a warning logged) and the one after it read instead. Use
/// [`read_line_at_most`] to tell the person their line was not taken.
pub async fn read_line() -> Option<String> {
    let mut input = input().lock().await;
    skipping_too_long(&mut input).await
}

/// The next line typed after now, as [`read_answer_at_most`] with [`MAX_LINE_BYTES`]; a
/// longer line is skipped (with a warning logged) and the one after it read instead. Use
/// [`read_answer_at_most`] to tell the person their answer was not taken.
pub async fn read_answer() -> Option<String> {
    let mut input = input().lock().await;
    input.forget_typed_ahead();
    skipping_too_long(&mut input).await
}

/// The next line of at most [`MAX_LINE_BYTES`], after any longer ones.
async fn skipping_too_long(input: &mut Input) -> Option<String> {
    loop {
        match input.next(MAX_LINE_BYTES).await? {
            Line::Text(line) => return Some(line),
            Line::TooLong { bytes } => {
                tracing::warn!(
                    bytes,
                    max = MAX_LINE_BYTES,
                    "skipped a line of stdin too long to read"
                );
            }
        }
    }
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
    Line(Line),
    /// Nobody wanted the line any more before one was typed: nothing was read.
    Abandoned,
}

/// The requesting side: one reader at a time, behind [`input`]'s lock.
struct Input {
    /// Each request asks the reading thread for one line, while its flag is set.
    requests: std::sync::mpsc::Sender<Request>,
    replies: mpsc::UnboundedReceiver<Reply>,
    /// The request sent and not answered yet: a reader that went away left it, and the next
    /// one takes it over rather than asking for a second line (nothing reads ahead).
    outstanding: Option<Arc<AtomicBool>>,
}

/// A request for one line of at most `max_bytes`, wanted while `wanted` is set.
struct Request {
    wanted: Arc<AtomicBool>,
    max_bytes: usize,
}

impl Input {
    async fn next(&mut self, max_bytes: usize) -> Option<Line> {
        loop {
            let wanted = match &self.outstanding {
                Some(wanted) => {
                    wanted.store(true, Ordering::Relaxed);
                    Arc::clone(wanted)
                }
                None => {
                    let wanted = Arc::new(AtomicBool::new(true));
                    let request = Request {
                        wanted: Arc::clone(&wanted),
                        max_bytes,
                    };
                    self.requests.send(request).ok()?;
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
        let (requests, asked) = std::sync::mpsc::channel::<Request>();
        let (sender, replies) = mpsc::unbounded_channel();
        let spawned = std::thread::Builder::new()
            .name("reins-terminal-input".to_owned())
            .spawn(move || {
                while let Ok(request) = asked.recv() {
                    let more = match read_for(&request) {
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
    Line(Line),
    End,
}

/// One line of stdin, once there is one; `None` when the request's flag was cleared first.
fn read_for(request: &Request) -> Option<Read> {
    if !wait_for_input(&request.wanted) {
        return None;
    }
    match read_bounded(&mut std::io::stdin().lock(), request.max_bytes) {
        Ok(Some(line)) => Some(Read::Line(line)),
        Ok(None) | Err(_) => Some(Read::End),
    }
}

/// The next line of `input` without its line ending ("\n" or "\r\n"), if it has at most
/// `max_bytes` bytes; a longer one is read to its end without keeping more than
/// `max_bytes + 1` bytes of it. `None` at end of input.
pub(super) fn read_bounded(
    input: &mut impl BufRead,
    max_bytes: usize,
) -> std::io::Result<Option<Line>> {
    // One byte over the bound is kept, for the "\r" of a "\r\n" ending.
    let keep = max_bytes.saturating_add(1);
    let mut kept = Vec::new();
    let mut bytes = 0usize;
    // Whether the line read so far ends in "\r": with the "\n" after it, the line ending.
    let mut carriage_return = false;
    let ended = loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            if bytes == 0 {
                return Ok(None);
            }
            break false;
        }
        let newline = available.iter().position(|&byte| byte == b'\n');
        let content = &available[..newline.unwrap_or(available.len())];
        let room = keep.saturating_sub(kept.len());
        kept.extend_from_slice(&content[..content.len().min(room)]);
        bytes = bytes.saturating_add(content.len());
        if let Some(&last) = content.last() {
            carriage_return = last == b'\r';
        }
        let used = newline.map_or(available.len(), |at| at + 1);
        input.consume(used);
        if newline.is_some() {
            break true;
        }
    };
    if ended && carriage_return {
        bytes -= 1;
        // Drops the "\r" when the whole line was kept (a no-op on a longer line's start).
        kept.truncate(bytes);
    }
    if bytes > max_bytes {
        return Ok(Some(Line::TooLong { bytes }));
    }
    // A line that is not UTF-8 (typed in another encoding, a stray byte) is still a line:
    // taken for end of input, it would end a chat, or a question, without a word.
    Ok(Some(Line::Text(
        String::from_utf8_lossy(&kept).into_owned(),
    )))
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

#[cfg(test)]
mod tests {
    use super::{Line, read_bounded};
    use std::io::{BufReader, Read};

    /// Every line of `input` read with `max_bytes`, through a buffer of `buffer` bytes (a
    /// line is cut across reads as a pipe or a terminal cuts it).
    fn lines(input: impl Read, buffer: usize, max_bytes: usize) -> Vec<Line> {
        let mut input = BufReader::with_capacity(buffer, input);
        let mut lines = Vec::new();
        while let Some(line) = read_bounded(&mut input, max_bytes).expect("read") {
            lines.push(line);
        }
        lines
    }

    fn text(line: &str) -> Line {
        Line::Text(line.to_owned())
    }

    #[test]
    fn lines_within_the_bound_are_read_whole_without_their_endings() {
        for buffer in [1, 3, 8192] {
            let read = lines(&b"one\r\n\ntwo\nlast"[..], buffer, 4);
            assert_eq!(read, [text("one"), text(""), text("two"), text("last")]);
        }
    }

    /// The bound is on the line's bytes, not its ending: four bytes and "\r\n" fit in four.
    #[test]
    fn a_line_of_exactly_the_bound_is_text_and_one_byte_more_is_too_long() {
        for buffer in [1, 2, 8192] {
            let read = lines(&b"abcd\nabcd\r\nabcde\nabcd\r\r\nabcd\r"[..], buffer, 4);
            let expected = [
                text("abcd"),
                text("abcd"),
                Line::TooLong { bytes: 5 },
                Line::TooLong { bytes: 5 },
                Line::TooLong { bytes: 5 },
            ];
            assert_eq!(read, expected, "buffer {buffer}");
        }
    }

    /// A line far over the bound (a file of one huge line piped in) is read to its end and
    /// reported with its length; the next line is read from where it ended.
    #[test]
    fn a_line_over_the_bound_is_skipped_to_its_end_and_the_next_line_read() {
        let huge = 3 << 20;
        let input = std::io::repeat(b'x').take(huge).chain(&b"\nnext\n"[..]);
        let read = lines(input, 8192, 1 << 20);
        let bytes = usize::try_from(huge).expect("fits");
        assert_eq!(read, [Line::TooLong { bytes }, text("next")]);
    }

    /// A bound falling inside a character never yields half of it: the line is text whole
    /// or not at all. Bytes that are not UTF-8 read as U+FFFD.
    #[test]
    fn a_multibyte_character_at_the_bound_is_never_cut() {
        let read = lines("éé\naéé\nCaf\u{e9}".as_bytes(), 3, 4);
        let too_long = Line::TooLong { bytes: 5 };
        assert_eq!(read, [text("éé"), too_long.clone(), too_long]);
        let read = lines(&b"Caf\xe9\n"[..], 3, 4);
        assert_eq!(read, [text("Caf\u{fffd}")]);
    }
}
