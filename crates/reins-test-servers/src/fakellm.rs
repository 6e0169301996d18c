//! The `fakellm` mock server: an independent OpenAI/Anthropic-compatible server from PyPI.

use crate::free_port;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// fakellm on a free loopback port with a rules file, stopped (and the file removed) on drop.
pub struct FakeLlm {
    child: Child,
    config: PathBuf,
    /// The port it listens on.
    pub port: u16,
}

impl FakeLlm {
    /// Starts fakellm with `yaml` as its rules; fails the test with the install command when
    /// the `fakellm` command (or `$FAKELLM`) is missing.
    pub fn start(yaml: &str) -> FakeLlm {
        let port = free_port();
        let config =
            std::env::temp_dir().join(format!("reins-fakellm-{}-{port}.yaml", std::process::id()));
        std::fs::write(&config, yaml).expect("write the fakellm config");
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
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "could not start `{command}` ({error}); install it with \
                     `python3 -m pip install fakellm` (scripts/test.sh does)"
                )
            });
        let server = FakeLlm {
            child,
            config,
            port,
        };
        server.wait_until_ready();
        server
    }

    /// Its root URL (an Anthropic client's base URL).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The base URL an OpenAI client is pointed at.
    pub fn openai_url(&self) -> String {
        format!("{}/v1", self.base_url())
    }

    /// Waits for its stats endpoint to answer (at most 30 s): listening is not enough, the
    /// rules must be loaded.
    fn wait_until_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) {
                let request =
                    "GET /_fakellm/stats HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
                if stream.write_all(request.as_bytes()).is_ok() {
                    let mut response = String::new();
                    let _ = stream.read_to_string(&mut response);
                    if response.starts_with("HTTP/1.1 200") {
                        return;
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("fakellm did not start on port {} within 30 s", self.port);
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.config);
    }
}
