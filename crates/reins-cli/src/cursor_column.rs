//! Where the terminal's cursor is, asked of the terminal itself: after another program (the
//! editor) had the terminal, reins cannot know from what it wrote whether a line was left
//! open. A full-screen editor (vi, nano) restores the screen and leaves the cursor at the
//! start of a line; a line-mode one (ed) or a script may leave it anywhere.
//!
//! The question is the terminal's cursor position report (`ESC [ 6 n`, answered
//! `ESC [ row ; column R`), asked on `/dev/tty` with its echo and line editing off for the
//! while, and restored after. A terminal that does not answer within [`ANSWER_WAIT`] is
//! taken not to know: the caller then plays safe. Nor is it asked while keys typed ahead
//! wait to be read (they would be read with the answer); only keys typed in the short while
//! the answer takes are read with it and dropped.

use std::io::{Read, Write};
use std::time::Duration;

/// How long the terminal may take to answer; terminals answer at once.
const ANSWER_WAIT: Duration = Duration::from_secs(1);

/// Whether the cursor stands at the start of a line (column 1); `None` when the terminal
/// could not be asked or did not answer.
pub fn at_line_start() -> Option<bool> {
    column().map(|column| column == 1)
}

/// The cursor's column (1 is the first), as the terminal reports it.
#[cfg(unix)]
fn column() -> Option<u16> {
    use rustix::termios::{LocalModes, OptionalActions, SpecialCodeIndex, tcgetattr, tcsetattr};
    let mut tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .ok()?;
    let before = tcgetattr(&tty).ok()?;
    let mut asking = before.clone();
    asking.local_modes &= !(LocalModes::ICANON | LocalModes::ECHO);
    // A read returns what has come, or nothing after VTIME tenths of a second.
    asking.special_codes[SpecialCodeIndex::VMIN] = 0;
    asking.special_codes[SpecialCodeIndex::VTIME] =
        u8::try_from(ANSWER_WAIT.as_millis() / 100).unwrap_or(u8::MAX);
    tcsetattr(&tty, OptionalActions::Now, &asking).ok()?;
    // Keys typed ahead (a chat's next message) belong to who reads the terminal next: the
    // answer would be read with them, and they lost. Not asked then.
    let typed_ahead = rustix::io::ioctl_fionread(&tty).map_or(true, |waiting| waiting > 0);
    let answer = if typed_ahead { None } else { ask(&mut tty) };
    // Echo and line editing back as they were, whatever the answer.
    let _ = tcsetattr(&tty, OptionalActions::Now, &before);
    answer
}

#[cfg(not(unix))]
fn column() -> Option<u16> {
    None
}

/// Asks `tty` for the cursor's position and reads the answer's column.
fn ask(tty: &mut (impl Read + Write)) -> Option<u16> {
    tty.write_all(b"\x1b[6n").ok()?;
    tty.flush().ok()?;
    let mut received = Vec::new();
    let mut chunk = [0u8; 64];
    // Bounded: a terminal that keeps sending other bytes is not answering.
    while received.len() < 1024 {
        let read = tty.read(&mut chunk).ok()?;
        if read == 0 {
            // No byte within the wait: no answer.
            return None;
        }
        received.extend_from_slice(&chunk[..read]);
        if let Some(column) = reported_column(&received) {
            return Some(column);
        }
    }
    None
}

/// The column of the last complete cursor position report (`ESC [ row ; column R`) in
/// `received`; other bytes (keys typed meanwhile) are passed over.
fn reported_column(received: &[u8]) -> Option<u16> {
    let text = String::from_utf8_lossy(received);
    let (before, _) = text.rsplit_once('R')?;
    let (_, report) = before.rsplit_once("\x1b[")?;
    let (row, column) = report.split_once(';')?;
    row.parse::<u16>().ok()?;
    column.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::reported_column;

    #[test]
    fn a_report_gives_its_column() {
        assert_eq!(reported_column(b"\x1b[12;1R"), Some(1));
        assert_eq!(reported_column(b"\x1b[3;27R"), Some(27));
    }

    #[test]
    fn keys_typed_before_the_report_are_passed_over() {
        assert_eq!(reported_column(b"ab\x1b[A\x1b[5;9R"), Some(9));
    }

    #[test]
    fn an_unfinished_or_foreign_answer_is_no_report() {
        assert_eq!(reported_column(b"\x1b[12;1"), None);
        assert_eq!(reported_column(b"Right"), None);
        assert_eq!(reported_column(b"\x1b[x;1R"), None);
    }
}
