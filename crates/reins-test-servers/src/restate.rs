//! `restate-server`, installed by scripts/install/restate.sh into the workspace's
//! `.tools/npm`, on free loopback ports with a temporary data directory.

use crate::{ScratchDir, free_port, last_lines};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the server may take to answer its health checks, and a registration to succeed.
const PATIENCE: Duration = Duration::from_secs(90);

/// The `restate-server` binary: `$RESTATE_SERVER`, or the one scripts/install/restate.sh put
/// under `.tools/npm`; fails the test with the install command when there is none.
pub fn restate_server_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("RESTATE_SERVER") {
        return PathBuf::from(path);
    }
    let scope = crate::npm_modules().join("@restatedev");
    let found = std::fs::read_dir(&scope).ok().and_then(|entries| {
        entries
            .filter_map(Result::ok)
            .map(|entry| entry.path().join("bin/restate-server"))
            .find(|path| path.is_file())
    });
    found.unwrap_or_else(|| {
        panic!(
            "restate-server is not installed (looked in {}): run scripts/install/restate.sh \
             at the workspace root (scripts/test.sh does) or set RESTATE_SERVER",
            scope.display()
        )
    })
}

/// A `restate-server` on free loopback ports with a directory of its own (configuration, data,
/// log, signing key, and its temporary files: it is the server's `TMPDIR`), killed on drop and
/// its directory removed — when the test fails too, after the end of its log is printed.
pub struct RestateServer {
    child: Child,
    dir: ScratchDir,
    admin_port: u16,
    ingress_port: u16,
}

impl RestateServer {
    /// Starts the server and waits until its admin API and its ingress answer (at most 90 s).
    /// `label` names its cluster and its temporary directory.
    pub fn start(label: &str) -> RestateServer {
        RestateServer::start_with(label, "")
    }

    /// Starts a server that signs its requests to services with a fresh Ed25519 key (made
    /// with `openssl`), and returns it with the key's public half as services take it
    /// (`publickeyv1_…`).
    pub fn start_signing(label: &str) -> (RestateServer, String) {
        let dir = ScratchDir::new(&format!("restate-{label}"));
        let (pem, public_key) = signing_key(dir.path());
        let config = format!(
            "[worker.invoker]\nrequest-identity-private-key-pem-file = \"{}\"\n",
            pem.display()
        );
        (RestateServer::launch(dir, label, &config), public_key)
    }

    /// Starts the server as [`start`](Self::start) does, with `more_config` (TOML, e.g. a
    /// `[worker.invoker]` table) after its own configuration.
    pub fn start_with(label: &str, more_config: &str) -> RestateServer {
        RestateServer::launch(
            ScratchDir::new(&format!("restate-{label}")),
            label,
            more_config,
        )
    }

    fn launch(dir: ScratchDir, label: &str, more_config: &str) -> RestateServer {
        let (node, admin_port, ingress_port) = (free_port(), free_port(), free_port());
        // Quick retries: a test's worker may come up a moment after an invocation is sent.
        let config = format!(
            r#"cluster-name = "reins-{label}"
default-num-partitions = 2
disable-telemetry = true
bind-address = "127.0.0.1:{node}"
advertised-address = "http://127.0.0.1:{node}/"
rocksdb-total-memory-size = "128 MiB"
log-filter = "warn"

[default-retry-policy]
initial-interval = "50ms"
exponentiation-factor = 2.0
max-attempts = 10000
max-interval = "500ms"

[admin]
bind-address = "127.0.0.1:{admin_port}"

[ingress]
bind-address = "127.0.0.1:{ingress_port}"

{more_config}
"#
        );
        let config_path = dir.path().join("restate.toml");
        std::fs::write(&config_path, config).expect("the server's config file");
        let log =
            std::fs::File::create(dir.path().join("server.log")).expect("the server's log file");
        let binary = restate_server_binary();
        let child = Command::new(&binary)
            .arg("--config-file")
            .arg(&config_path)
            .arg("--base-dir")
            .arg(dir.path().join("data"))
            .args(["--listen-mode", "tcp", "--no-logo"])
            // Its invokers make a directory per partition under TMPDIR and leave them.
            .env("TMPDIR", dir.path())
            .stdout(Stdio::from(log.try_clone().expect("a log handle")))
            .stderr(Stdio::from(log))
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "could not start {} ({error}); run scripts/install/restate.sh",
                    binary.display()
                )
            });
        let server = RestateServer {
            child,
            dir,
            admin_port,
            ingress_port,
        };
        server.wait_healthy();
        server
    }

    /// The ingress, e.g. `http://127.0.0.1:12345` (where runs are started and decided).
    pub fn ingress_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.ingress_port)
    }

    /// The admin API, e.g. `http://127.0.0.1:12346` (where deployments are registered).
    pub fn admin_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.admin_port)
    }

    /// The server's directory, removed on drop; tests may keep files there.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("server.log")
    }

    fn wait_healthy(&self) {
        let deadline = Instant::now() + PATIENCE;
        for (port, path) in [
            (self.admin_port, "/health"),
            (self.ingress_port, "/restate/health"),
        ] {
            while !matches!(http(port, "GET", path, None), Ok((200..=299, _))) {
                assert!(
                    Instant::now() < deadline,
                    "restate-server did not become healthy at 127.0.0.1:{port}{path} (the end \
                     of its log is printed as it stops)"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }

    /// Registers the deployment (a worker's endpoint, e.g. `http://127.0.0.1:9080`) through
    /// the admin API; fails the test with the server's answer when it is refused.
    pub fn register(&self, deployment: &str) {
        let body = format!("{{\"uri\": \"{deployment}\"}}");
        match http(self.admin_port, "POST", "/deployments", Some(&body)) {
            Ok((200..=299, _)) => {}
            Ok((status, answer)) => {
                panic!("registering {deployment} failed: HTTP {status} {answer}")
            }
            Err(error) => panic!(
                "the admin API did not answer ({error}); the end of restate-server's log is \
                 printed as it stops"
            ),
        }
    }
}

impl Drop for RestateServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The directory goes with the server: what a failing test needs of its log is shown.
        if std::thread::panicking() {
            eprintln!(
                "restate-server's log ended with:\n{}",
                last_lines(&self.log_path(), 40)
            );
        }
    }
}

/// One HTTP/1.1 request to the loopback `port`: the status and the body (with `Connection:
/// close`, the body is the rest of the stream).
fn http(port: u16, method: &str, path: &str, json: Option<&str>) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(PATIENCE))?;
    let body = json.unwrap_or_default();
    let content_type = if json.is_some() {
        "Content-Type: application/json\r\n"
    } else {
        ""
    };
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{content_type}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let answer = response
        .split_once("\r\n\r\n")
        .map_or("", |(_, rest)| rest)
        .to_owned();
    Ok((status, answer))
}

/// A fresh Ed25519 key (made with `openssl`) in a PEM file in `dir`, and its public key as
/// Restate's workers take it: `publickeyv1_` and the raw 32 bytes in base58.
fn signing_key(dir: &Path) -> (PathBuf, String) {
    let pem = dir.join("identity.pem");
    let made = Command::new("openssl")
        .args(["genpkey", "-algorithm", "ed25519", "-out"])
        .arg(&pem)
        .status()
        .expect("openssl runs");
    assert!(made.success(), "openssl made no key");
    let public = Command::new("openssl")
        .args(["pkey", "-pubout", "-outform", "DER", "-in"])
        .arg(&pem)
        .output()
        .expect("openssl runs");
    assert!(public.status.success(), "openssl gave no public key");
    // The DER of an Ed25519 public key ends with its 32 raw bytes.
    let raw = &public.stdout[public.stdout.len().saturating_sub(32)..];
    (pem, format!("publickeyv1_{}", base58(raw)))
}

/// `bytes` in base58 (the Bitcoin alphabet).
fn base58(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let mut digits: Vec<u8> = Vec::new();
    for &byte in bytes {
        let mut carry = u32::from(byte);
        for digit in &mut digits {
            carry += u32::from(*digit) << 8;
            *digit = (carry % 58) as u8;
            carry /= 58;
        }
        while carry > 0 {
            digits.push((carry % 58) as u8);
            carry /= 58;
        }
    }
    let zeros = bytes.iter().take_while(|&&byte| byte == 0).count();
    std::iter::repeat_n(b'1', zeros)
        .chain(
            digits
                .iter()
                .rev()
                .map(|&digit| ALPHABET[usize::from(digit)]),
        )
        .map(char::from)
        .collect()
}
