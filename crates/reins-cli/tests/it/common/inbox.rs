//! `reins ui` started on a free loopback port, and HTTP clients to drive it: one that opened
//! the address it printed (with the token it made), as the person running it does, and a
//! plain one.

use crate::common::AgentDir;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// `reins ui` on a free loopback port; killed when dropped.
pub struct Inbox {
    child: Child,
    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub url: String,
    /// The address it printed: with `?token=…` when it made the token.
    pub printed: String,
    /// The cookie (`name=value`) opening `printed` gave, when it made a token.
    cookie: Option<String>,
    /// What it wrote on stderr after the line that gives its address.
    stderr: Arc<Mutex<String>>,
    drain: Option<JoinHandle<()>>,
}

impl Inbox {
    /// The inbox of `agent`'s file, with `extra` arguments.
    pub fn start(agent: &AgentDir, extra: &[&str]) -> Inbox {
        Inbox::start_file(&agent.file, extra)
    }

    /// A client that opened the printed address, as the person running the inbox does: it
    /// carries the token's cookie (when the inbox made a token) and follows no redirect.
    pub fn http(&self) -> reqwest::blocking::Client {
        let mut headers = reqwest::header::HeaderMap::new();
        if let Some(cookie) = &self.cookie {
            headers.insert("cookie", cookie.parse().expect("a cookie"));
        }
        reqwest::blocking::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .default_headers(headers)
            .build()
            .expect("client")
    }

    /// The runs page (the inbox's front page), as the person's browser gets it.
    pub fn runs_page(&self) -> String {
        self.http()
            .get(format!("{}/", self.url))
            .send()
            .and_then(|r| r.text())
            .expect("the runs page")
    }

    /// The page of `run`, as the person's browser gets it.
    pub fn run_page(&self, run: &str) -> String {
        self.http()
            .get(format!("{}/runs/{run}", self.url))
            .send()
            .and_then(|r| r.text())
            .expect("page")
    }

    /// Submits the form of `page` that decides the call `call` of `run`: `verdict` is
    /// `approve` or `deny`, `fields` the form's own (`args=…`, `message=…`), sent with the
    /// page's anti-forgery token and binding.
    pub fn decide(
        &self,
        page: &str,
        run: &str,
        call: &str,
        verdict: &str,
        fields: &str,
    ) -> reqwest::blocking::Response {
        self.http()
            .post(format!("{}/runs/{run}/calls/{call}/{verdict}", self.url))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(format!(
                "csrf={}&binding={}&{fields}",
                form_field(page, "csrf"),
                form_field(page, "binding")
            ))
            .send()
            .expect("post")
    }

    /// The inbox of the agent file `file`, with `extra` arguments.
    pub fn start_file(file: &std::path::Path, extra: &[&str]) -> Inbox {
        Inbox::start_bound(file, "127.0.0.1:0", extra)
    }

    /// The inbox of the agent file `file` listening on `bind` (a loopback address or name
    /// with port 0), with `extra` arguments.
    pub fn start_bound(file: &std::path::Path, bind: &str, extra: &[&str]) -> Inbox {
        Inbox::start_limited(file, bind, extra, &[], None)
    }

    /// The inbox of the agent file `file` listening on `bind`, with `extra` arguments, the
    /// variables `env` set, and at most `open_files` file descriptors when given.
    pub fn start_limited(
        file: &std::path::Path,
        bind: &str,
        extra: &[&str],
        env: &[(&str, &str)],
        open_files: Option<u32>,
    ) -> Inbox {
        Inbox::launch(file, bind, extra, env, open_files, true)
    }

    /// The inbox of `agent`'s file started without the model's key (`REINS_TEST_KEY`), as a
    /// colleague who only approves calls starts it.
    pub fn start_without_key(agent: &AgentDir) -> Inbox {
        Inbox::launch(&agent.file, "127.0.0.1:0", &[], &[], None, false)
    }

    /// [`start_limited`](Inbox::start_limited), with the model's key set when `keyed`.
    fn launch(
        file: &std::path::Path,
        bind: &str,
        extra: &[&str],
        env: &[(&str, &str)],
        open_files: Option<u32>,
        keyed: bool,
    ) -> Inbox {
        let reins = env!("CARGO_BIN_EXE_reins");
        let mut command = match open_files {
            None => Command::new(reins),
            Some(limit) => {
                let mut shell = Command::new("sh");
                shell.args([
                    "-c",
                    &format!("ulimit -n {limit} && exec \"$0\" \"$@\""),
                    reins,
                ]);
                shell
            }
        };
        if keyed {
            command.env("REINS_TEST_KEY", "k");
        } else {
            command.env_remove("REINS_TEST_KEY");
        }
        let mut child = command
            // The machine's own is not the test's; a test's `env` may set one.
            .env_remove("REINS_UI_TOKEN")
            .envs(env.iter().copied())
            .args(["ui"])
            .arg(file)
            .args(["--bind", bind])
            .args(extra)
            .current_dir(file.parent().unwrap_or(std::path::Path::new(".")))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start reins ui");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        let printed = loop {
            let line = lines
                .next()
                .and_then(Result::ok)
                .expect("reins ui ended before it listened");
            if let Some(printed) = line.strip_prefix("reins: inbox on ") {
                break printed.to_owned();
            }
        };
        let url = printed
            .split('?')
            .next()
            .unwrap_or_default()
            .trim_end_matches('/')
            .to_owned();
        let cookie = printed.contains("?token=").then(|| {
            let opened = http()
                .get(&printed)
                .send()
                .expect("open the printed address");
            assert_eq!(opened.status(), 303, "{printed}");
            opened.headers()["set-cookie"]
                .to_str()
                .expect("a cookie")
                .split(';')
                .next()
                .unwrap_or_default()
                .to_owned()
        });
        // Keep draining its stderr so that it never blocks on a full pipe.
        let written = Arc::new(Mutex::new(String::new()));
        let drain = {
            let written = written.clone();
            std::thread::spawn(move || {
                for line in lines.map_while(Result::ok) {
                    let mut written = written.lock().expect("stderr");
                    written.push_str(&line);
                    written.push('\n');
                }
            })
        };
        Inbox {
            child,
            url,
            printed,
            cookie,
            stderr: written,
            drain: Some(drain),
        }
    }

    /// Sends the inbox `signal` (`INT`, `TERM`) and waits for it to end: how it exited and
    /// what it wrote on stderr.
    pub fn stop(mut self, signal: &str) -> (ExitStatus, String) {
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(sent.success());
        // An inbox that never stops fails the test rather than hanging it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("reins ui's status") {
                break status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "reins ui did not stop on SIG{signal}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        };
        if let Some(drain) = self.drain.take() {
            let _ = drain.join();
        }
        let stderr = self.stderr.lock().expect("stderr").clone();
        (status, stderr)
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP client that does not follow redirects (a decision answers 303).
pub fn http() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

/// The value of the first form field `name` on `page` (its anti-forgery token: `csrf`).
pub fn form_field(page: &str, name: &str) -> String {
    page.split(&format!("name=\"{name}\" value=\""))
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("the page has no field {name}\n{page}"))
        .to_owned()
}

/// What the copies [`copy_run_records`] writes are.
pub enum RunCopies {
    /// Runs of their own: each copy's state names its own id.
    Readable,
    /// Records that cannot be read as the runs they are filed as (`paused`, their state still
    /// naming the original run).
    Unreadable,
}

/// Writes `copies` copies of `run`'s record in `agent`'s store, under the ids `copy-0000`, …,
/// each written a millisecond after the one before, in one transaction.
pub fn copy_run_records(agent: &AgentDir, run: &str, copies: usize, kind: RunCopies) {
    let columns = match kind {
        RunCopies::Readable => "status, REPLACE(state, ?1, ?2)",
        RunCopies::Unreadable => "'paused', state",
    };
    let insert = format!(
        "INSERT INTO reins_runs (run_id, version, format, status, state, updated_at)
         SELECT ?2, version, format, {columns}, updated_at + ?3
         FROM reins_runs WHERE run_id = ?1"
    );
    let store = agent.dir.path().join(".reins").join("runs.sqlite");
    let mut connection = rusqlite::Connection::open(&store).expect("the store");
    let copying = connection.transaction().expect("a transaction");
    for copy in 0..copies {
        let id = format!("copy-{copy:04}");
        let copied = copying
            .execute(&insert, rusqlite::params![run, id, copy + 1])
            .expect("copy");
        assert_eq!(copied, 1);
    }
    copying.commit().expect("commit");
}
