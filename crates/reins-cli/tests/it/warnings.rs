//! What reins's libraries warn about reaches the person, on stderr, as the CLI's own lines:
//! here a tool an MCP server lists that is left out because its `outputSchema` does not
//! compile, and the server's own warning (a log notification), whose text the server wrote
//! and which must not act on the terminal. `--json` keeps stdout to its JSON lines. On a
//! terminal, a warning logged while the "thinking" spinner turns is a line of its own.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, events, model_table, outcome, python_mcp_server};
use reins_test_servers::Tmux;

/// The `dict` server's tools: `lookup`, and `define`, whose output schema refers to a schema
/// in another document (not fetched: it cannot be compiled).
const DICT_TOOLS: &str = r#"[
    {"name": "lookup", "description": "Looks a word up.",
     "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}}}},
    {"name": "define", "description": "Defines a word.",
     "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}}},
     "outputSchema": {"type": "object",
                      "properties": {"text": {"$ref": "https://schemas.example/definition.json"}}}},
]"#;

/// A warning the server logs as it lists its tools: two lines, the second clearing the
/// screen and posing as one of reins's, then text reversed by a bidirectional override.
const SERVER_LOG: &str = r#"{"jsonrpc": "2.0", "method": "notifications/message",
       "params": {"level": "warning", "logger": "cache",
                  "data": "cache stale\n\u001b[2Jreins: approved \u202eevil"}}"#;

/// fakellm: the model answers at once.
const RULES: &str = r#"version: 1
rules:
  - name: answer
    when:
      messages_contain: "Define"
    respond:
      content: "Defined."
"#;

/// The line the left-out tool is announced with, up to its error: reins's own words, without
/// their target unless `REINS_LOG` asks for more than the default.
const LEFT_OUT: &str = "reins: warning: the tool's outputSchema does not compile; the tool is \
                        left out (server=dict, tool=define, error=";

/// The server's warning as it is shown.
const SERVER_WARNING: &str = "reins: warning: cache stale\\n\\u001b[2Jreins: approved \
                              \\u202eevil (reins_mcp::server_log: server=dict, logger=cache)";

/// An agent on fakellm with the `dict` server, and fakellm.
fn dict_agent() -> (AgentDir, FakeLlm) {
    let model = FakeLlm::start(RULES);
    let agent = AgentDir::new(&format!(
        "{}\n[[tools.mcp]]\nname = \"dict\"\ncommand = \"python3\"\nargs = [\"server.py\"]\n\
         prefix = \"dict_\"\n",
        model_table(&model.openai_url())
    ));
    let listing = "    elif method == \"tools/list\":\n";
    let server = python_mcp_server(DICT_TOOLS, "    return \"\", False\n");
    let logging = server.replace(
        listing,
        &format!("{listing}        print(json.dumps({SERVER_LOG}), flush=True)\n"),
    );
    assert_ne!(logging, server);
    std::fs::write(agent.dir.path().join("server.py"), logging).expect("the MCP server");
    (agent, model)
}

#[test]
fn a_library_warning_is_shown_once_on_stderr_escaped_and_stdout_stays_json() {
    let (agent, _model) = dict_agent();
    let (code, stdout, stderr) =
        outcome(agent.keyed(&["run", "AGENT", "Define a word.", "--json"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let events = events(&stdout);
    assert_eq!(
        events.last().map(|done| &done["answer"]),
        Some(&serde_json::json!("Defined.")),
        "{stdout}"
    );
    assert_eq!(stderr.matches(LEFT_OUT).count(), 1, "{stderr}");
    let left_out = stderr
        .lines()
        .find(|line| line.starts_with(LEFT_OUT))
        .unwrap_or_default();
    assert!(
        left_out.contains("schemas.example/definition.json"),
        "why: {left_out}"
    );
    assert_eq!(stderr.matches(SERVER_WARNING).count(), 1, "{stderr}");
    assert!(
        !stderr.contains(['\u{1b}', '\u{202e}'])
            && !stderr
                .lines()
                .any(|line| line.starts_with("reins: approved")),
        "the server's text acts on the terminal: {stderr:?}"
    );
}

#[test]
fn reins_log_asking_for_more_shows_where_a_warning_comes_from() {
    let (agent, _model) = dict_agent();
    let (code, stdout, stderr) = outcome(
        agent
            .keyed(&["run", "AGENT", "Define a word.", "--json"])
            .env("REINS_LOG", "warn,reins_mcp=info"),
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let in_detail = "reins: warning: the tool's outputSchema does not compile; the tool is left \
                     out (reins_mcp: server=dict, tool=define, error=";
    assert_eq!(stderr.matches(in_detail).count(), 1, "{stderr}");
}

#[test]
fn reins_log_off_shows_no_library_warning() {
    let (agent, _model) = dict_agent();
    let (code, stdout, stderr) = outcome(
        agent
            .keyed(&["run", "AGENT", "Define a word.", "--json"])
            .env("REINS_LOG", "off"),
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(!stderr.contains("reins: warning"), "{stderr}");
}

/// A model server that cannot be reached: each failed attempt is retried, with a warning,
/// while the spinner turns. Each warning is a whole line on the screen: the spinner's line
/// is cleared for it and drawn again after it, not left before it or drawn over it. It says
/// in words what failed and what comes next, not the event's target and fields.
#[test]
fn a_warning_while_the_spinner_turns_is_a_line_of_its_own() {
    let agent = AgentDir::new(&model_table("http://127.0.0.1:9/v1"));
    let tmux = Tmux::start(&format!(
        "cd '{dir}' && env -u REINS_LOG REINS_TEST_KEY=k '{reins}' run '{file}' 'Hello.'; \
         echo EXIT=$?; sleep 600",
        dir = agent.dir.path().display(),
        reins = env!("CARGO_BIN_EXE_reins"),
        file = agent.file.display(),
    ));
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=1"), "{screen}");
    let retried: Vec<&str> = screen
        .lines()
        .filter(|line| line.contains("trying again"))
        .collect();
    assert!(!retried.is_empty(), "{screen}");
    for (at, line) in retried.iter().enumerate() {
        assert!(
            line.starts_with(
                "reins: warning: the model call failed (could not reach the server); trying \
                 again in "
            ) && line.ends_with(&format!(" s (attempt {} of 4)", at + 2)),
            "{screen}"
        );
    }
}

/// With the trace exported over OTLP, the warnings are still shown: the exporter and the
/// warnings share one subscriber (only one can be installed).
#[test]
fn warnings_are_shown_while_the_trace_is_exported() {
    let (agent, _model) = dict_agent();
    let (port, received) = crate::otlp::collector();
    let (code, stdout, stderr) = outcome(
        agent
            .keyed(&["run", "AGENT", "Define a word.", "--json"])
            .env(
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                format!("http://127.0.0.1:{port}"),
            ),
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let events = events(&stdout);
    assert_eq!(
        events.last().map(|done| &done["event"]),
        Some(&serde_json::json!("done"))
    );
    assert_eq!(stderr.matches(LEFT_OUT).count(), 1, "{stderr}");
    assert_eq!(stderr.matches(SERVER_WARNING).count(), 1, "{stderr}");
    // The command has exited: whatever it flushed has arrived.
    let received = received.lock().expect("the collector's records");
    assert!(
        received.iter().any(|(path, body)| path == "/v1/traces"
            && String::from_utf8_lossy(body).contains("invoke_agent")),
        "no invoke_agent span exported"
    );
}

/// The agent's model streams the start of an answer and its stream breaks off; the
/// fallback answers. With stdout piped, `assistant: ` leaves stderr's line open: the CLI's
/// next lines (`[turn 1 discarded]`, `[done]`) start lines of their own rather than after it.
#[test]
fn the_clis_lines_after_an_answer_label_start_lines_of_their_own() {
    let server = FakeLlm::start(&crate::common::save_note_rules("", ""));
    let chunk = serde_json::json!({"id": "c", "object": "chat.completion.chunk", "created": 0,
        "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}}]});
    let (broken, _) = crate::common::sse_server::sse_server(&[chunk]);
    let agent = crate::common::notes_agent(
        &format!("{broken}/v1"),
        &format!(
            "[[hooks.fallback.models]]\nprovider = \"openai\"\nname = \"gpt-5-nano\"\n\
             base_url = \"{}\"\napi_key_env = \"REINS_TEST_KEY\"\n",
            server.openai_url()
        ),
    );
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "Hello?"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    for line in ["[turn 1 discarded]", "[done] run "] {
        assert!(
            stderr.lines().any(|shown| shown.starts_with(line)),
            "{line}: {stderr}"
        );
    }
}
