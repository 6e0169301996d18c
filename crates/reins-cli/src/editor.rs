//! A call's arguments edited in `$VISUAL`/`$EDITOR` (default `vi`): at the approval question,
//! and by `reins runs approve|fork --edit`. The editor runs as a child process awaited on the
//! async runtime, never blocking it: a run's other work, and its Ctrl-C listener, go on while
//! it is open (the question hands that listener's Ctrl-C to the editor,
//! [`crate::question_ctrl_c`]).
//!
//! Once it exits, a line feed on the terminal ends whatever line it left open
//! ([`crate::terminal_lines::end_a_program_s_line`]): a program standing in for an editor may
//! print without one. None is written when the cursor is at the start of a line, where a
//! full-screen editor (vi) leaves it.
//!
//! An editor quit without saving — with Ctrl-C, or exiting with a failure as `:cq` does — is
//! [`Unedited::Quit`]: nothing was edited, and the arguments stay as they were.

use std::io::Write;

/// Why no edited arguments came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unedited {
    /// The person quit the editor (Ctrl-C, or it exited with a failure): the arguments are
    /// unchanged.
    Quit {
        /// How it ended, and that the arguments are unchanged.
        why: String,
        /// Whether a Ctrl-C ended it (the signal reached the whole terminal's group, reins too).
        by_ctrl_c: bool,
    },
    /// The editor could not run, or what was saved is not a JSON object: why.
    Failed(String),
}

impl From<Unedited> for String {
    fn from(unedited: Unedited) -> String {
        match unedited {
            Unedited::Quit { why, .. } | Unedited::Failed(why) => why,
        }
    }
}

impl Unedited {
    /// Whether `edited` is an editor a Ctrl-C quit.
    pub fn quit_with_ctrl_c<T>(edited: &Result<T, Unedited>) -> bool {
        matches!(
            edited,
            Err(Unedited::Quit {
                by_ctrl_c: true,
                ..
            })
        )
    }
}

/// Opens `text` in the editor and reads it back once the editor exits.
pub async fn edit(text: &str) -> Result<String, Unedited> {
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".to_owned());
    let failed = |why: String| Unedited::Failed(why);
    let mut file = tempfile::Builder::new()
        .prefix("reins-args-")
        .suffix(".json")
        .tempfile()
        .map_err(|error| failed(format!("cannot create a file to edit: {error}")))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.flush())
        .map_err(|error| failed(format!("cannot write the arguments: {error}")))?;
    // `$EDITOR` may carry flags (`code --wait`): split on whitespace, no shell.
    let mut words = editor.split_whitespace();
    let program = words
        .next()
        .ok_or_else(|| failed("$EDITOR is empty".to_owned()))?;
    let status = tokio::process::Command::new(program)
        .args(words)
        .arg(file.path())
        .status()
        .await
        .map_err(|error| failed(format!("cannot start the editor `{program}`: {error}")))?;
    // What reins says next starts on a line of its own, whatever line the editor left.
    crate::terminal_lines::end_a_program_s_line();
    if !status.success() {
        let (how, by_ctrl_c) = how_it_ended(status);
        return Err(Unedited::Quit {
            why: format!("the editor {how}: the arguments are unchanged"),
            by_ctrl_c,
        });
    }
    std::fs::read_to_string(file.path())
        .map_err(|error| failed(format!("cannot read the edited arguments: {error}")))
}

/// How an editor that failed ended, as a person reads it (`was quit with Ctrl-C`, `exited
/// with status 1`), and whether a Ctrl-C (SIGINT) ended it.
fn how_it_ended(status: std::process::ExitStatus) -> (String, bool) {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        match status.signal() {
            Some(2) => return ("was quit with Ctrl-C".to_owned(), true),
            Some(signal) => return (format!("was stopped by signal {signal}"), false),
            None => {}
        }
    }
    match status.code() {
        Some(code) => (format!("exited with status {code}"), false),
        None => (format!("exited with {status}"), false),
    }
}
