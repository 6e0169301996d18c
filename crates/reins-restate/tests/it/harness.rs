//! A Restate server on loopback (temporary data directory, free ports), and demo workers, each
//! started by a test and stopped when dropped.

use reins_restate::RestateRuns;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a test waits for something to happen before it reports a hang.
pub const PATIENCE: Duration = Duration::from_secs(90);

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("a free loopback port")
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `restate-server` binary: `$RESTATE_SERVER`, or the one scripts/install/restate.sh put
/// under .tools/npm.
fn server_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("RESTATE_SERVER") {
        return PathBuf::from(path);
    }
    let scope = workspace().join(".tools/npm/node_modules/@restatedev");
    let found = std::fs::read_dir(&scope).ok().and_then(|entries| {
        entries
            .filter_map(Result::ok)
            .map(|entry| entry.path().join("bin/restate-server"))
            .find(|path| path.is_file())
    });
    found.unwrap_or_else(|| {
        panic!(
            "restate-server is not installed (looked in {}): run scripts/install/restate.sh \
             or set RESTATE_SERVER",
            scope.display()
        )
    })
}

fn unique_dir(label: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "reins-restate-{label}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// A Restate server with a fresh data directory, and the address its workers listen on.
pub struct Cluster {
    server: Child,
    dir: PathBuf,
    admin: String,
    /// The ingress, e.g. `http://127.0.0.1:12345`.
    pub ingress: String,
    /// Where the workers listen (they share it).
    pub worker_addr: String,
    /// The file the demo tools append their effects to.
    pub effects: PathBuf,
    workers: Vec<Child>,
}

impl Cluster {
    /// Starts the server and waits until its admin API and ingress answer.
    pub async fn start(label: &str) -> Cluster {
        let dir = unique_dir(label);
        let (node, admin, ingress, worker) = (free_port(), free_port(), free_port(), free_port());
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
bind-address = "127.0.0.1:{admin}"

[ingress]
bind-address = "127.0.0.1:{ingress}"
"#
        );
        let config_path = dir.join("restate.toml");
        std::fs::write(&config_path, config).expect("the server's config file");
        let log = std::fs::File::create(dir.join("server.log")).expect("the server's log file");
        let server = Command::new(server_binary())
            .arg("--config-file")
            .arg(&config_path)
            .arg("--base-dir")
            .arg(dir.join("data"))
            .args(["--listen-mode", "tcp", "--no-logo"])
            .stdout(Stdio::from(log.try_clone().expect("a log handle")))
            .stderr(Stdio::from(log))
            .spawn()
            .expect("restate-server starts");
        let cluster = Cluster {
            server,
            effects: dir.join("effects.log"),
            dir,
            admin: format!("http://127.0.0.1:{admin}"),
            ingress: format!("http://127.0.0.1:{ingress}"),
            worker_addr: format!("127.0.0.1:{worker}"),
            workers: Vec::new(),
        };
        cluster.wait_healthy().await;
        cluster
    }

    async fn wait_healthy(&self) {
        let http = reqwest::Client::new();
        let deadline = Instant::now() + PATIENCE;
        for url in [
            format!("{}/health", self.admin),
            format!("{}/restate/health", self.ingress),
        ] {
            loop {
                let ok = http
                    .get(&url)
                    .send()
                    .await
                    .is_ok_and(|response| response.status().is_success());
                if ok {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "restate-server did not become healthy at {url}; see {}",
                    self.dir.join("server.log").display()
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }

    /// Starts a demo worker on the shared worker address and waits until it listens; returns
    /// its pid.
    pub fn spawn_worker(&mut self) -> u32 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_reins-restate-demo"))
            .arg(&self.worker_addr)
            .arg(&self.effects)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the demo worker starts");
        let stdout = child.stdout.take().expect("the worker's stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the worker's first line");
        assert!(
            line.starts_with("listening on"),
            "the worker did not start: {line:?}"
        );
        let pid = child.id();
        self.workers.push(child);
        pid
    }

    /// Kills the worker `pid` with SIGKILL and reaps it.
    pub fn kill_worker(&mut self, pid: u32) {
        let index = self
            .workers
            .iter()
            .position(|worker| worker.id() == pid)
            .expect("a worker of this cluster");
        let mut worker = self.workers.remove(index);
        worker.kill().expect("SIGKILL reaches the worker");
        let _ = worker.wait();
    }

    /// Kills every worker with SIGKILL.
    pub fn kill_all_workers(&mut self) {
        for pid in self.worker_pids() {
            self.kill_worker(pid);
        }
    }

    /// The pids of the running workers.
    pub fn worker_pids(&self) -> Vec<u32> {
        self.workers.iter().map(Child::id).collect()
    }

    /// Registers the workers' deployment through the admin API.
    pub async fn register(&self) {
        let response = reqwest::Client::new()
            .post(format!("{}/deployments", self.admin))
            .json(&serde_json::json!({"uri": format!("http://{}", self.worker_addr)}))
            .send()
            .await
            .expect("the admin API answers");
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        assert!(
            status.is_success(),
            "registering the deployment failed: {status} {body}"
        );
    }

    /// A client of this cluster's ingress.
    pub fn runs(&self) -> RestateRuns {
        RestateRuns::new(&self.ingress).expect("a valid ingress URL")
    }

    /// Every line the demo tools appended, parsed.
    pub fn effects(&self) -> Vec<Effect> {
        std::fs::read_to_string(&self.effects)
            .unwrap_or_default()
            .lines()
            .map(|line| {
                let fields: Vec<&str> = line.split(' ').collect();
                assert_eq!(fields.len(), 4, "an effect line: {line:?}");
                Effect {
                    tool: fields[0].to_owned(),
                    effect_id: fields[1].to_owned(),
                    argument: fields[2].to_owned(),
                    pid: fields[3].parse().expect("a pid"),
                }
            })
            .collect()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for worker in &mut self.workers {
            let _ = worker.kill();
            let _ = worker.wait();
        }
        let _ = self.server.kill();
        let _ = self.server.wait();
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// One execution of a demo tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    pub tool: String,
    pub effect_id: String,
    pub argument: String,
    pub pid: u32,
}

/// Polls `check` until it returns `Some`, or panics with `what` after [`PATIENCE`].
pub async fn wait_for<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
