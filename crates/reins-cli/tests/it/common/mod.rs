//! What the CLI's tests share: an agent file in a fresh directory, the `reins` command, and
//! the fakellm mock server.

pub mod approval_service;
pub mod fakellm;
pub mod inbox;
pub mod sse_server;
pub mod stand_in_ingress;
pub mod strict_model;
pub mod webdriver;

use assert_cmd::Command;
use serde_json::Value;
use std::path::PathBuf;
use tempfile::TempDir;

/// An agent file written into its own temporary directory (its store lands there too).
pub struct AgentDir {
    pub dir: TempDir,
    pub file: PathBuf,
}

impl AgentDir {
    pub fn new(toml: &str) -> AgentDir {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let file = dir.path().join("agent.toml");
        std::fs::write(&file, toml).expect("write the agent file");
        AgentDir { dir, file }
    }

    /// `reins ARGS...` with the agent file's path substituted for `AGENT`, no terminal, no
    /// provider keys from the environment.
    pub fn reins(&self, args: &[&str]) -> Command {
        let mut command = Command::cargo_bin("reins").expect("the reins binary");
        command.args(args.iter().map(|arg| {
            if *arg == "AGENT" {
                self.file.to_string_lossy().into_owned()
            } else {
                (*arg).to_owned()
            }
        }));
        self.scrubbed(command)
    }

    /// [`reins`](AgentDir::reins) with the model's key set (`REINS_TEST_KEY`, which the
    /// agent files of these tests name): for the commands that call the model.
    pub fn keyed(&self, args: &[&str]) -> Command {
        let mut command = self.reins(args);
        command.env("REINS_TEST_KEY", "k");
        command
    }

    /// `line` as a person pastes it into a shell (`sh -c`), `reins` meaning the binary under
    /// test, with the environment of [`reins`](AgentDir::reins).
    pub fn shell(&self, line: &str) -> Command {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(format!("reins() {{ \"$REINS_BINARY\" \"$@\"; }}; {line}"))
            .env("REINS_BINARY", assert_cmd::cargo::cargo_bin("reins"));
        self.scrubbed(command)
    }

    /// `command` in the agent's directory, no terminal, no provider keys from the environment.
    fn scrubbed(&self, mut command: Command) -> Command {
        command
            .current_dir(self.dir.path())
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("GEMINI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("ANTHROPIC_BASE_URL")
            .env_remove("GEMINI_BASE_URL")
            .env_remove("REINS_UI_TOKEN")
            // Library warnings shown as by default, whatever the machine running the tests says.
            .env_remove("REINS_LOG")
            .write_stdin("");
        command
    }
}

/// The `[model]` table of an agent on an OpenAI-compatible server at `url` (fakellm's
/// `openai_url()`), its key read from `REINS_TEST_KEY`.
pub fn model_table(url: &str) -> String {
    format!(
        "[model]\nprovider = \"openai\"\nname = \"gpt-5-mini\"\nbase_url = \"{url}\"\n\
         api_key_env = \"REINS_TEST_KEY\"\n"
    )
}

/// The `save_note` shell tool the fakellm rules of several tests call.
pub const SAVE_NOTE_TOOL: &str = r#"[[tools.shell]]
name = "save_note"
description = "Saves a note."
command = ["printf", "note: %s", "{text}"]
schema = { type = "object", properties = { text = { type = "string" } }, required = ["text"] }
"#;

/// The `show_key` shell tool: prints the model's key (`REINS_TEST_KEY`) as `key=…`, given it
/// only if `passthrough` (its one `env_passthrough` name) names it.
pub fn show_key_tool(passthrough: &str) -> String {
    format!(
        r#"[[tools.shell]]
name = "show_key"
description = "Prints the key it is given."
command = ["sh", "-c", "echo \"key=$REINS_TEST_KEY\""]
schema = {{ type = "object", properties = {{}} }}
env_passthrough = ["{passthrough}"]
"#
    )
}

/// The "notes" agent of the save-note flow on the OpenAI-compatible server at `url`, with
/// the `save_note` tool; `extra` is appended (hooks, limits, `[ui]`).
pub fn notes_agent(url: &str, extra: &str) -> AgentDir {
    AgentDir::new(&format!(
        "name = \"notes\"\ndefault_prompt = \"Save a note.\"\n\n{model}\n{SAVE_NOTE_TOOL}{extra}",
        model = model_table(url)
    ))
}

/// fakellm rules for the save-note flow: the model calls `save_note` with `{text: "draft"}`
/// when asked for a note, answers "Done: the note is saved." once a note is saved and "I did
/// not save it." when the call was denied. `before` and `after` are a test's own rules (YAML
/// list items), tried before those two answers and after them (the call itself is tried last).
pub fn save_note_rules(before: &str, after: &str) -> String {
    format!(
        r#"version: 1
rules:
{before}  - name: answer
    when:
      tool_result_contains: "note:"
    respond:
      content: "Done: the note is saved."
  - name: refused
    when:
      tool_result_contains: "denied"
    respond:
      content: "I did not save it."
{after}  - name: save
    when:
      messages_contain: "note"
    respond:
      tool_calls:
        - name: save_note
          arguments: {{text: "draft"}}
"#
    )
}

/// `mcp-server-time` as the agent's `time` server, its `get_current_time` tool called
/// `time_get_current_time` (what [`TIME_RULES`] calls).
pub const TIME_SERVER_TOOLS: &str = r#"[[tools.mcp]]
name = "time"
command = "python3"
args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]
include = ["get_current_time"]
prefix = "time_"
"#;

/// An agent on the model server at `openai_url` with [`TIME_SERVER_TOOLS`], whose approval
/// policy asks a person about every `time_get_current_time` call.
pub fn asking_time_agent(openai_url: &str) -> AgentDir {
    AgentDir::new(&format!(
        "{model}\n{TIME_SERVER_TOOLS}\n[hooks.approval]\n\
         rules = [{{ tool = \"time_get_current_time\", action = \"ask\" }}]\n",
        model = model_table(openai_url)
    ))
}

/// `reins runs approve AGENT <run> --args <args>`: its exit code, stdout and stderr.
pub fn approve_with_args(agent: &AgentDir, run: &str, args: &str) -> (i32, String, String) {
    outcome(agent.reins(&["runs", "approve", "AGENT", run, "--args", args]))
}

/// The run `[suspended]` names in `stderr`.
pub fn suspended_run_named(stderr: &str) -> String {
    let line = stderr
        .lines()
        .find(|line| line.starts_with("[suspended] run "))
        .unwrap_or_else(|| panic!("no [suspended] line: {stderr}"));
    line["[suspended] run ".len()..]
        .split_whitespace()
        .next()
        .expect("a run id")
        .to_owned()
}

/// Exit code, stdout and stderr of a finished command.
pub fn outcome(mut command: impl std::borrow::BorrowMut<Command>) -> (i32, String, String) {
    let output = command.borrow_mut().output().expect("run reins");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The JSON events a `--json` command printed, one per line.
pub fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// The `tool_result` events of `events` (a `--json` command's, from [`events`]), in order:
/// each call's result as the model was given it, and its `outcome`.
pub fn tool_results(events: &[Value]) -> Vec<&Value> {
    events
        .iter()
        .filter(|event| event["event"] == "tool_result")
        .collect()
}

/// A stdio MCP server in Python (no SDK: newline-delimited JSON-RPC), for `python3` to run
/// from a file: it lists `tools` (a Python list of MCP tools), and answers a call with `call`,
/// the indented body of a Python function `call(name, arguments)` (`os` imported) that returns
/// the result's text and whether the call failed.
pub fn python_mcp_server(tools: &str, call: &str) -> String {
    format!(
        r#"import json, os, sys
TOOLS = {tools}
def call(name, arguments):
{call}
for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue
    method, params = request["method"], request.get("params") or {{}}
    if method == "initialize":
        result = {{"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                  "capabilities": {{"tools": {{}}}}, "serverInfo": {{"name": "test", "version": "1"}}}}
    elif method == "tools/list":
        result = {{"tools": TOOLS}}
    elif method == "tools/call":
        text, failed = call(params["name"], params.get("arguments") or {{}})
        result = {{"content": [{{"type": "text", "text": text}}], "isError": failed}}
    else:
        result = {{}}
    print(json.dumps({{"jsonrpc": "2.0", "id": request["id"], "result": result}}), flush=True)
"#
    )
}

/// What `reins run --json` printed (with its exit `code`) when the save-note flow's call
/// waits for a person: it exited 3 and its last event lists the `save_note` call with the
/// model's arguments. Returns the run's id and the waiting call.
pub fn waiting_save_note(code: i32, stdout: &str, stderr: &str) -> (String, Value) {
    assert_eq!(
        code, 3,
        "a call waiting for a person exits 3\n{stdout}\n{stderr}"
    );
    let suspended = events(stdout).pop().expect("events");
    assert_eq!(suspended["event"], "suspended", "{stdout}");
    assert_eq!(suspended["pending"][0]["tool"], "save_note");
    assert_eq!(suspended["pending"][0]["args"]["text"], "draft");
    (
        suspended["run"].as_str().expect("run id").to_owned(),
        suspended["pending"][0].clone(),
    )
}

/// fakellm rules for an agent with `mcp-server-time` as its `time` server: a prompt that
/// mentions the time calls `time_get_current_time`, and the server's answer ends the run.
pub const TIME_RULES: &str = r#"
version: 1
rules:
  - name: answer
    when:
      tool_result_contains: "datetime"
    respond:
      content: "The time server answered."
  - name: ask_the_time
    when:
      messages_contain: "time"
    respond:
      tool_calls:
        - name: time_get_current_time
          arguments: {timezone: "Europe/Paris"}
"#;

/// `reins check` on an agent file holding `toml` (with REINS_TEST_KEY set): exit code and
/// stderr.
pub fn check_file(toml: &str) -> (i32, String) {
    let agent = AgentDir::new(toml);
    let (code, _, stderr) = outcome(agent.reins(&["check", "AGENT"]).env("REINS_TEST_KEY", "k"));
    (code, stderr)
}

/// `reins serve` of `agent` on `listen` with `args` (and the model's key; `env` set or, for
/// `None`, removed), until it prints a line starting with `until`; its stderr so far. Panics
/// with it when the worker exits first. The worker keeps running: kill the child.
pub fn serve_until(
    agent: &AgentDir,
    listen: &str,
    args: &[&str],
    env: &[(&str, Option<&str>)],
    until: &str,
) -> (std::process::Child, Vec<String>) {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_reins"));
    command
        .arg("serve")
        .arg(&agent.file)
        .args(["--listen", listen])
        .args(args)
        .current_dir(agent.dir.path())
        .env("REINS_TEST_KEY", "k")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    for (name, value) in env {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    let mut child = command.spawn().expect("reins serve starts");
    let stderr = child.stderr.take().expect("the worker's stderr");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    let mut printed = Vec::new();
    loop {
        match lines.next() {
            Some(Ok(line)) => {
                let done = line.starts_with(until);
                printed.push(line);
                if done {
                    break;
                }
            }
            _ => {
                let _ = child.wait();
                panic!(
                    "reins serve never printed `{until}`:\n{}",
                    printed.join("\n")
                );
            }
        }
    }
    // Keep reading, so that the worker never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (child, printed)
}

/// The record (`runs show --json`) of the last run `runs list` lists for `agent` (its only
/// one, in the tests that use this).
pub fn last_run_shown(agent: &AgentDir) -> Value {
    let (_, listed, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    let listed = events(&listed).pop().expect("the run");
    let run = listed["run"].as_str().expect("its id").to_owned();
    let (code, shown, stderr) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str(&shown).expect("one JSON object")
}
