//! A headless Chromium driven through chromedriver (Debian's `chromium` and `chromium-driver`,
//! installed by scripts/install/chromium.sh) over the W3C WebDriver protocol. chromedriver is
//! started on a free loopback port and stopped when dropped. The browser's profile and every
//! temporary file of the driver and the browser (their `TMPDIR`) are in a directory of the
//! browser's own, removed when it is dropped: Chromium leaves its `org.chromium.Chromium.*`
//! directories in the temporary directory when it is stopped.

use reins_test_servers::ScratchDir;
use serde_json::{Value, json};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

pub struct Browser {
    driver: Child,
    base: String,
    session: String,
    http: reqwest::blocking::Client,
    /// Removed after the driver is stopped (fields drop after `drop` runs).
    dir: ScratchDir,
}

impl Browser {
    pub fn start() -> Browser {
        let chromedriver =
            std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".to_owned());
        let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let dir = ScratchDir::new("chromium");
        let driver = Command::new(&chromedriver)
            .arg(format!("--port={port}"))
            .env("TMPDIR", dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "cannot start `{chromedriver}` ({error}): run scripts/install/chromium.sh \
                     (Debian's chromium and chromium-driver)"
                )
            });
        let http = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .expect("an HTTP client");
        let base = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(30);
        while http.get(format!("{base}/status")).send().is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut browser = Browser {
            driver,
            base,
            session: String::new(),
            http,
            dir,
        };
        let profile = format!(
            "--user-data-dir={}",
            browser.dir.path().join("profile").display()
        );
        let created = browser.call(
            "POST",
            "/session",
            json!({"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {
                    "binary": chromium,
                    "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                             "--disable-dev-shm-usage", "--window-size=1200,900", profile]
                }
            }}}),
        );
        browser.session = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {created}"))
            .to_owned();
        browser
    }

    fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let url = format!("{}{path}", self.base);
        let request = match method {
            "GET" => self.http.get(url),
            "DELETE" => self.http.delete(url),
            _ => self.http.post(url).json(&body),
        };
        let response: Value = request
            .send()
            .and_then(|r| r.json())
            .unwrap_or_else(|error| panic!("WebDriver {method} {path}: {error}"));
        if response["value"]["error"].is_string() {
            panic!("WebDriver {method} {path}: {}", response["value"]);
        }
        response["value"].clone()
    }

    fn session_path(&self, rest: &str) -> String {
        format!("/session/{}{rest}", self.session)
    }

    pub fn goto(&self, url: &str) {
        self.call("POST", &self.session_path("/url"), json!({"url": url}));
    }

    /// The first element matching `css`, waiting up to a minute for it to appear.
    pub fn find(&self, css: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let found = self.script(
                "return document.querySelector(arguments[0]) !== null;",
                json!([css]),
            );
            if found == Value::Bool(true) {
                let element = self.call(
                    "POST",
                    &self.session_path("/element"),
                    json!({"using": "css selector", "value": css}),
                );
                return element[ELEMENT_KEY]
                    .as_str()
                    .unwrap_or_else(|| panic!("no element id in {element}"))
                    .to_owned();
            }
            assert!(Instant::now() < deadline, "no `{css}` on the page");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    pub fn text(&self, element: &str) -> String {
        self.call(
            "GET",
            &self.session_path(&format!("/element/{element}/text")),
            Value::Null,
        )
        .as_str()
        .unwrap_or_default()
        .to_owned()
    }

    pub fn clear(&self, element: &str) {
        self.call(
            "POST",
            &self.session_path(&format!("/element/{element}/clear")),
            json!({}),
        );
    }

    pub fn type_text(&self, element: &str, text: &str) {
        self.call(
            "POST",
            &self.session_path(&format!("/element/{element}/value")),
            json!({"text": text}),
        );
    }

    pub fn click(&self, element: &str) {
        self.call(
            "POST",
            &self.session_path(&format!("/element/{element}/click")),
            json!({}),
        );
    }

    /// Moves the mouse pointer onto `element`, as a person about to click it does.
    pub fn hover(&self, element: &str) {
        self.call(
            "POST",
            &self.session_path("/actions"),
            json!({"actions": [{
                "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
                "actions": [{"type": "pointerMove", "duration": 0, "x": 0, "y": 0,
                             "origin": {ELEMENT_KEY: element}}]
            }]}),
        );
    }

    pub fn script(&self, script: &str, args: Value) -> Value {
        self.call(
            "POST",
            &self.session_path("/execute/sync"),
            json!({"script": script, "args": args}),
        )
    }

    /// Waits (up to a minute) until the text of `css` is `expected`.
    pub fn wait_for_text(&self, css: &str, expected: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let text = self.script(
                "const e = document.querySelector(arguments[0]); return e ? e.textContent : null;",
                json!([css]),
            );
            if text.as_str() == Some(expected) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "`{css}` never read `{expected}` (last: {text})"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// A PNG of the page.
    pub fn screenshot(&self) -> Vec<u8> {
        use std::io::Read;
        let encoded = self.call("GET", &self.session_path("/screenshot"), Value::Null);
        let text = encoded.as_str().unwrap_or_default();
        let mut decoder = base64_reader(text);
        let mut png = Vec::new();
        let _ = decoder.read_to_end(&mut png);
        png
    }
}

/// A minimal base64 decoder (standard alphabet), to keep the test's dependencies small.
fn base64_reader(text: &str) -> std::io::Cursor<Vec<u8>> {
    let mut bits: u32 = 0;
    let mut count = 0;
    let mut out = Vec::new();
    for byte in text.bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => continue,
        };
        bits = (bits << 6) | u32::from(value);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    std::io::Cursor::new(out)
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = self
                .http
                .delete(format!("{}/session/{}", self.base, self.session))
                .send();
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        wait_until_no_process_names(self.dir.path());
    }
}

/// Waits (at most ten seconds) until no process has `dir` on its command line. Chromium's
/// helper processes, all given the profile's path, outlive the session a moment; one still
/// running when the directory is removed makes the profile again.
fn wait_until_no_process_names(dir: &Path) {
    let marker = dir.to_string_lossy().into_owned();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline && any_process_names(&marker) {
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn any_process_names(marker: &str) -> bool {
    let Ok(processes) = std::fs::read_dir("/proc") else {
        return false;
    };
    processes.filter_map(Result::ok).any(|process| {
        std::fs::read(process.path().join("cmdline"))
            .is_ok_and(|line| String::from_utf8_lossy(&line).contains(marker))
    })
}
