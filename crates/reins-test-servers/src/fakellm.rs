//! The `fakellm` mock server: an independent OpenAI/Anthropic-compatible server from PyPI.

use crate::{ScratchDir, free_port};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// fakellm on a free loopback port with a rules file, stopped on drop; the file, its log and
/// its temporary files (its `TMPDIR`) are in a [`ScratchDir`] removed then.
pub struct FakeLlm {
    child: Child,
    /// Held for its removal on drop, after the server is stopped.
    _dir: ScratchDir,
    /// The port it listens on.
    pub port: u16,
}

impl FakeLlm {
    /// Starts fakellm with `yaml` as its rules; fails the test with the install command when
    /// the `fakellm` command (or `$FAKELLM`) is missing.
    ///
    /// A port picked free can be taken by another test's connection before fakellm binds it,
    /// and a loaded machine can take many seconds to start Python: a server that exits before
    /// it is ready is started again on another port (three attempts), and the panic quotes
    /// what it printed.
    pub fn start(yaml: &str) -> FakeLlm {
        let mut failures = Vec::new();
        for _attempt in 0..3 {
            match Self::try_start(yaml) {
                Ok(server) => return server,
                Err(failure) => failures.push(failure),
            }
        }
        panic!("fakellm did not start:\n{}", failures.join("\n"));
    }

    fn try_start(yaml: &str) -> Result<FakeLlm, String> {
        let port = free_port();
        let dir = ScratchDir::new("fakellm");
        let config = dir.path().join("rules.yaml");
        let log = dir.path().join("fakellm.log");
        std::fs::write(&config, yaml).expect("write the fakellm config");
        let log_file = std::fs::File::create(&log).expect("create the fakellm log");
        let command = std::env::var("FAKELLM").unwrap_or_else(|_| "fakellm".to_owned());
        let child = Command::new(&command)
            .args([
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "--config",
            ])
            .arg(&config)
            .env("TMPDIR", dir.path())
            .stdout(Stdio::null())
            .stderr(log_file)
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "could not start `{command}` ({error}); install it with \
                     `python3 -m pip install fakellm` (scripts/test.sh does)"
                )
            });
        let mut server = FakeLlm {
            child,
            _dir: dir,
            port,
        };
        let outcome = server.wait_until_ready();
        let printed = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_file(&log);
        match outcome {
            Ok(()) => Ok(server),
            Err(why) => Err(format!("port {port}: {why}; it printed:\n{printed}")),
        }
    }

    /// Its root URL (an Anthropic client's base URL).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The base URL an OpenAI client is pointed at.
    pub fn openai_url(&self) -> String {
        format!("{}/v1", self.base_url())
    }

    /// Waits for its stats endpoint to answer (at most 60 s): listening is not enough, the
    /// rules must be loaded. Fails early when the server exits.
    fn wait_until_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("exited ({status}) before it was ready"));
            }
            if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) {
                let request =
                    "GET /_fakellm/stats HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
                if stream.write_all(request.as_bytes()).is_ok() {
                    let mut response = String::new();
                    let _ = stream.read_to_string(&mut response);
                    if response.starts_with("HTTP/1.1 200") {
                        return Ok(());
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err("not ready within 60 s".to_owned())
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
