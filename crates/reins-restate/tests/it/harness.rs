//! A Restate server on loopback (temporary data directory, free ports), and demo workers, each
//! started by a test and stopped when dropped.

use reins_restate::RestateRuns;
use reins_test_servers::{RestateServer, free_port};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a test waits for something to happen before it reports a hang.
pub const PATIENCE: Duration = Duration::from_secs(90);

/// A Restate server (from reins-test-servers) and the demo workers serving its deployment.
pub struct Cluster {
    server: RestateServer,
    /// The ingress, e.g. `http://127.0.0.1:12345`.
    pub ingress: String,
    /// Where the workers listen (they share it).
    pub worker_addr: String,
    /// The file the demo tools append their effects to.
    pub effects: PathBuf,
    /// The public key the server signs its requests with, when it signs them: the workers
    /// are started with it and take only its requests.
    pub identity_key: Option<String>,
    workers: Vec<Child>,
}

impl Cluster {
    /// Starts the server and waits until its admin API and ingress answer.
    pub async fn start(label: &str) -> Cluster {
        let label = label.to_owned();
        let server = tokio::task::spawn_blocking(move || RestateServer::start(&label))
            .await
            .expect("restate-server starts");
        Cluster::around(server, None)
    }

    /// Starts a server that signs its requests with a fresh Ed25519 key, and whose workers
    /// take only requests signed with it.
    pub async fn start_signing(label: &str) -> Cluster {
        let label = label.to_owned();
        let (server, key) =
            tokio::task::spawn_blocking(move || RestateServer::start_signing(&label))
                .await
                .expect("restate-server starts");
        Cluster::around(server, Some(key))
    }

    fn around(server: RestateServer, identity_key: Option<String>) -> Cluster {
        Cluster {
            ingress: server.ingress_url(),
            worker_addr: format!("127.0.0.1:{}", free_port()),
            effects: server.dir().join("effects.log"),
            identity_key,
            server,
            workers: Vec::new(),
        }
    }

    /// The admin API, e.g. `http://127.0.0.1:12345`.
    pub fn admin_url(&self) -> String {
        self.server.admin_url()
    }

    /// Starts a demo worker on the shared worker address and waits until it listens; returns
    /// its pid.
    pub fn spawn_worker(&mut self) -> u32 {
        let mut command = Command::new(env!("CARGO_BIN_EXE_reins-restate-demo"));
        command.arg(&self.worker_addr).arg(&self.effects);
        if let Some(key) = &self.identity_key {
            command.env("REINS_RESTATE_IDENTITY_KEY", key);
        }
        let mut child = command
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
        let deployment = format!("http://{}", self.worker_addr);
        // A short blocking call: the admin API answers once it has discovered the worker.
        self.server.register(&deployment);
    }

    /// Registers the deployment at `deployment` (any worker's address) with this cluster's
    /// server.
    pub fn register_deployment(&self, deployment: &str) {
        self.server.register(deployment);
    }

    /// The rows `sql` selects through the admin API's SQL introspection (Restate's `state`,
    /// `sys_journal`, `sys_invocation` tables).
    pub async fn query(&self, sql: &str) -> Vec<serde_json::Value> {
        let answer: serde_json::Value = reqwest::Client::new()
            .post(format!("{}/query", self.server.admin_url()))
            .header("accept", "application/json")
            .json(&serde_json::json!({ "query": sql }))
            .send()
            .await
            .expect("the admin API answers")
            .json()
            .await
            .expect("a JSON answer");
        match answer.get("rows") {
            Some(serde_json::Value::Array(rows)) => rows.clone(),
            _ => panic!("the admin API answered no rows: {answer}"),
        }
    }

    /// Cancels the invocation driving the run `run` through the admin API, as
    /// `restate invocations cancel` does.
    pub async fn cancel(&self, run: &str) {
        let rows = self
            .query(&format!(
                "SELECT id FROM sys_invocation WHERE target_service_name = 'ReinsAgent' AND \
                 target_service_key = '{run}' AND target_handler_name = 'run'"
            ))
            .await;
        let id = rows
            .first()
            .and_then(|row| row["id"].as_str())
            .unwrap_or_else(|| panic!("no invocation runs `{run}`: {rows:?}"))
            .to_owned();
        let response = reqwest::Client::new()
            .patch(format!(
                "{}/invocations/{id}/cancel",
                self.server.admin_url()
            ))
            .send()
            .await
            .expect("the admin API answers");
        assert!(
            response.status().is_success(),
            "the cancellation was refused: {response:?}"
        );
    }

    /// Replaces the whole state of the `ReinsAgent` workflow `key` with `entries` (raw values)
    /// through the admin API; Restate applies it asynchronously, after answering.
    pub async fn replace_state(&self, key: &str, entries: &[(&str, Vec<u8>)]) {
        let new_state: serde_json::Map<String, serde_json::Value> = entries
            .iter()
            .map(|(name, value)| ((*name).to_owned(), serde_json::json!(value)))
            .collect();
        let response = reqwest::Client::new()
            .post(format!(
                "{}/services/ReinsAgent/state",
                self.server.admin_url()
            ))
            .json(&serde_json::json!({ "object_key": key, "new_state": new_state }))
            .send()
            .await
            .expect("the admin API answers");
        assert!(
            response.status().is_success(),
            "the state was not replaced: {response:?}"
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
        // The server stops (and its directory goes) when its field drops.
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
