//! What the CLI prints on stdout, through `out!` and `outln!` rather than `print!` and
//! `println!`, which panic when stdout cannot be written: Rust ignores `SIGPIPE`, so a reader
//! that went away (`reins runs list agent.toml | head -1`) makes every later write fail with a
//! broken pipe. Such a write is dropped, and the command goes on to its end (a run finishes
//! and is stored; nothing is cut short because its reader stopped reading). Any other failure
//! (a full disk) is said once on stderr.

use std::fmt;
use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a failure to write stdout was already reported.
static REPORTED: AtomicBool = AtomicBool::new(false);

/// Writes `text` (and a line feed, with `end_line`) on stdout, telling
/// [`crate::terminal_lines`] where it leaves the line.
pub fn write(text: fmt::Arguments<'_>, end_line: bool) {
    let mut text = text.to_string();
    if end_line {
        text.push('\n');
    }
    let written = crate::terminal_lines::on_stdout(&text, |text| {
        std::io::stdout().lock().write_all(text.as_bytes())
    });
    // Said once the write's record is done (stderr's line is tracked by the same lock).
    if let Err(error) = written
        && error.kind() != ErrorKind::BrokenPipe
        && !REPORTED.swap(true, Ordering::Relaxed)
    {
        errln!("reins: cannot write to stdout: {error}");
    }
}

/// `print!` on stdout, never panicking (see the [module](self)).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write(format_args!($($arg)*), false)
    };
}

/// `println!` on stdout, never panicking (see the [module](self)).
macro_rules! outln {
    () => {
        $crate::output::write(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::output::write(format_args!($($arg)*), true)
    };
}
