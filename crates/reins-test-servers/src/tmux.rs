//! A terminal for tests that type as a person would: tmux runs a command in a pseudo-terminal
//! of its own, the test reads the screen and types lines.

use crate::ScratchDir;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of its own, killed when dropped. Its socket is in a [`ScratchDir`] of its own
/// (tmux leaves the socket file behind when its server is killed), removed on drop; the same
/// directory is the `TMPDIR` of the command it runs.
pub struct Tmux {
    socket: PathBuf,
    /// Removed after the server is killed (fields drop after `drop` runs).
    _dir: ScratchDir,
}

impl Tmux {
    /// Runs `command` (a shell command line) in a new 200×50 terminal.
    pub fn start(command: &str) -> Tmux {
        let dir = ScratchDir::new("tmux");
        // A short name: a socket's whole path must fit in about a hundred bytes.
        let socket = dir.path().join("s");
        let status = Command::new("tmux")
            .env("TMPDIR", dir.path())
            .arg("-S")
            .arg(&socket)
            .args(["new-session", "-d", "-x", "200", "-y", "50", command])
            .status()
            .unwrap_or_else(|error| panic!("cannot start tmux ({error}): apt-get install tmux"));
        assert!(status.success(), "tmux new-session failed");
        Tmux { socket, _dir: dir }
    }

    /// `tmux` talking to this terminal's server.
    fn tmux(&self) -> Command {
        let mut command = Command::new("tmux");
        command.arg("-S").arg(&self.socket);
        command
    }

    /// What the terminal shows, with up to 200 lines of its scrollback.
    pub fn screen(&self) -> String {
        let output = self
            .tmux()
            .args(["capture-pane", "-p", "-J", "-S", "-200"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Waits until the screen shows `text` (failing after five minutes: a hang, not a slow
    /// machine); the screen then.
    pub fn wait_for(&self, text: &str) -> String {
        self.wait_for_count(text, 1)
    }

    /// Waits until the screen shows `text` at least `times` times (a question asked again);
    /// the screen then.
    pub fn wait_for_count(&self, text: &str, times: usize) -> String {
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            let screen = self.screen();
            if screen.matches(text).count() >= times {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "`{text}` never appeared {times} times:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Presses `key`, named as tmux names keys (`C-c` for Ctrl-C).
    pub fn press(&self, key: &str) {
        let status = self
            .tmux()
            .args(["send-keys", "-t", "0", key])
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }

    /// Types `line` and Enter.
    pub fn type_line(&self, line: &str) {
        let status = self
            .tmux()
            .args(["send-keys", "-t", "0", "-l", line])
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
        let status = self
            .tmux()
            .args(["send-keys", "-t", "0", "Enter"])
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux().args(["kill-server"]).status();
    }
}
