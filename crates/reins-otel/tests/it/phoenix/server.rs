//! A Phoenix server for a test (started on loopback, stopped when dropped), its REST and
//! GraphQL APIs, and the `reins-otel-demo` binary exporting to it.

use reins_test_servers::ScratchDir;
use serde_json::Value;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The `phoenix` executable: `REINS_PHOENIX`, or the venv the install script makes.
fn phoenix_executable() -> PathBuf {
    if let Some(path) = std::env::var_os("REINS_PHOENIX") {
        return PathBuf::from(path);
    }
    let installed =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.tools/phoenix/bin/phoenix");
    assert!(
        installed.exists(),
        "Arize Phoenix is not installed at {}: run scripts/install/phoenix.sh (or set \
         REINS_PHOENIX to a `phoenix` executable)",
        installed.display()
    );
    installed
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free loopback port");
    listener.local_addr().expect("its address").port()
}

/// A Phoenix server on loopback with its own working directory, which is also its `TMPDIR`
/// (Phoenix keeps a pid file under `TMPDIR/.arize-phoenix`, left behind when it is killed);
/// stopped when dropped and the directory removed, when the test fails too.
pub(super) struct Phoenix {
    child: Child,
    pub(super) base: String,
    pub(super) dir: PathBuf,
    /// Removed after the server is stopped (fields drop after `drop` runs).
    _scratch: ScratchDir,
}

impl Phoenix {
    pub(super) fn start() -> Phoenix {
        let port = free_port();
        // Its own directory (database included), whichever other test runs a Phoenix too.
        let scratch = ScratchDir::new("otel-phoenix");
        let dir = scratch.path().to_owned();
        let log = std::fs::File::create(dir.join("phoenix.log")).expect("a log file");
        let child = Command::new(phoenix_executable())
            .arg("serve")
            .env("PHOENIX_WORKING_DIR", &dir)
            .env("TMPDIR", &dir)
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", free_port().to_string())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("Phoenix starts");
        Phoenix {
            child,
            base: format!("http://127.0.0.1:{port}"),
            dir,
            _scratch: scratch,
        }
    }

    pub(super) fn log(&self) -> String {
        let log = std::fs::read_to_string(self.dir.join("phoenix.log")).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(30).collect();
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    }

    /// Waits (bounded) until Phoenix answers its health check.
    pub(super) async fn wait_ready(&mut self, client: &reqwest::Client) {
        let deadline = Instant::now() + Duration::from_secs(240);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "Phoenix exited ({status}) before it was ready:\n{}",
                    self.log()
                );
            }
            let health = client.get(format!("{}/healthz", self.base)).send().await;
            if health.is_ok_and(|response| response.status().is_success()) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        panic!("Phoenix was not ready in time:\n{}", self.log());
    }

    /// The spans of `project`.
    pub(super) async fn spans(&self, client: &reqwest::Client, project: &str) -> Vec<Value> {
        let url = format!("{}/v1/projects/{project}/spans?limit=1000", self.base);
        let response = client.get(url).send().await.expect("Phoenix answers");
        // A project is made by its first span: until then, a 404 and no spans.
        if !response.status().is_success() {
            return Vec::new();
        }
        let body: Value = response.json().await.expect("a JSON span list");
        body["data"].as_array().cloned().unwrap_or_default()
    }
}

impl Phoenix {
    /// The spans of `project` once there are `count` (Phoenix ingests asynchronously), or
    /// those it has after a minute.
    pub(super) async fn spans_when(
        &self,
        client: &reqwest::Client,
        project: &str,
        count: usize,
    ) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let spans = self.spans(client, project).await;
            if spans.len() >= count || Instant::now() > deadline {
                return spans;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// What Phoenix's trace list shows for the trace `trace_id` of the default project: its
    /// root span's name, status, input and output (the `rootSpan` its UI reads).
    pub(super) async fn listed_root(&self, client: &reqwest::Client, trace_id: &str) -> Value {
        let query = format!(
            r#"{{ projects(first: 10) {{ edges {{ node {{ name trace(traceId: "{trace_id}") {{
                rootSpan {{ name statusCode input {{ value }} output {{ value }} }} }} }} }} }} }}"#
        );
        let response = client
            .post(format!("{}/graphql", self.base))
            .json(&serde_json::json!({ "query": query }))
            .send()
            .await
            .expect("Phoenix answers");
        let body: Value = response.json().await.expect("a GraphQL answer");
        let projects = body["data"]["projects"]["edges"]
            .as_array()
            .unwrap_or_else(|| panic!("no projects in {body}"));
        projects
            .iter()
            .find(|project| project["node"]["name"] == "default")
            .map(|project| project["node"]["trace"]["rootSpan"].clone())
            .unwrap_or_else(|| panic!("no default project in {body}"))
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs one half of the demo run, exporting to Phoenix; returns its answer. `content`: the
/// run records its messages (as `reins_otel::init` does when the GenAI switch asks).
pub(super) fn demo(
    phoenix: &Phoenix,
    mode: &str,
    db: &Path,
    run_id: &str,
    content: bool,
) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_reins-otel-demo"));
    command
        .args([mode, &db.to_string_lossy(), run_id])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &phoenix.base)
        .env("OTEL_METRICS_EXPORTER", "none")
        .env("OTEL_SERVICE_NAME", "reins-otel-test")
        .env_remove("RUST_LOG");
    if content {
        command.env(reins_otel::CAPTURE_CONTENT_VAR, "true");
    } else {
        command.env_remove(reins_otel::CAPTURE_CONTENT_VAR);
    }
    let output = command.output().expect("the demo runs");
    let stdout = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    assert!(
        output.status.success(),
        "demo {mode} failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

pub(super) fn attr<'a>(span: &'a Value, key: &str) -> &'a Value {
    &span["attributes"][key]
}

pub(super) fn named<'a>(spans: &'a [Value], name: &str) -> Vec<&'a Value> {
    spans.iter().filter(|s| s["name"] == name).collect()
}
