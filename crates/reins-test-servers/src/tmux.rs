//! A terminal for tests that type as a person would: tmux runs a command in a pseudo-terminal
//! of its own, the test reads the screen and types lines.

use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of its own (its own socket), killed when dropped.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Runs `command` (a shell command line) in a new 200×50 terminal.
    pub fn start(command: &str) -> Tmux {
        let socket = format!("reins-test-{}-{}", std::process::id(), rand_suffix());
        let status = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "new-session",
                "-d",
                "-x",
                "200",
                "-y",
                "50",
                command,
            ])
            .status()
            .unwrap_or_else(|error| panic!("cannot start tmux ({error}): apt-get install tmux"));
        assert!(status.success(), "tmux new-session failed");
        Tmux { socket }
    }

    /// What the terminal shows, with up to 200 lines of its scrollback.
    pub fn screen(&self) -> String {
        let output = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-J", "-S", "-200"])
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
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", "0", key])
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }

    /// Types `line` and Enter.
    pub fn type_line(&self, line: &str) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", "0", "-l", line])
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", "0", "Enter"])
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}
