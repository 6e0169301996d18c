//! Starts the `fakellm` mock server (an independent OpenAI/Anthropic-compatible server from
//! PyPI, installed by scripts/test.sh) on a free loopback port; stops it when dropped.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct FakeLlm {
    child: Child,
    config: PathBuf,
    pub port: u16,
}

impl FakeLlm {
    /// Starts fakellm with `yaml` as its rules; fails the test with instructions when the
    /// `fakellm` command (or `$FAKELLM`) is missing.
    pub fn start(yaml: &str) -> FakeLlm {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free loopback port");
        let config = std::env::temp_dir().join(format!(
            "reins-cli-fakellm-{}-{port}.yaml",
            std::process::id()
        ));
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

    /// The base URL an OpenAI client is pointed at.
    pub fn openai_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

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
