//! The model's keys stay with reins: the programs a shell tool or a stdio MCP server starts
//! inherit none of the variables the agent's models read their keys from (nor any provider's
//! default key variable, nor any other secret's the file names, nor the web inbox's token),
//! unless the tool's
//! `env_passthrough` names one; and a key a tool
//! prints anyway is masked as `<redacted>` in its result, on the terminal, in the store and
//! in `runs show`, as `[hooks.redaction]` masks its secrets and patterns: in what a tool
//! fails with too, whatever its kind.

use crate::common::fakellm::FakeLlm;
use crate::common::{
    AgentDir, events, model_table, outcome, python_mcp_server, show_key_tool, tool_results,
};

/// The key of the agent's own model (its `api_key_env` is `REINS_TEST_KEY`).
const KEY: &str = "sk-test-SUPERSECRET-abcdef123456";
/// Keys set for the providers' default variables, which the agent's model does not read.
const OPENAI_KEY: &str = "sk-openai-default-0123456789";
const ANTHROPIC_KEY: &str = "sk-ant-default-0123456789";
/// A secret the agent file names a variable for other than a model key (its redaction's).
const VAULT_PASSWORD: &str = "vault-pass-9876543210";
/// The web inbox's token (`reins ui --token`'s variable), which would let a tool approve its
/// own calls there: set for every run, withheld like a key.
const UI_TOKEN: &str = "inbox-token-0123456789abcdef";

/// The `env` MCP server's tools ([`python_mcp_server`]): `names` lists the names of its
/// environment variables, `getenv` answers one's value, `fail` fails saying
/// `OPENAI_API_KEY`'s, `VAULT_PASSWORD`'s and an email address.
const ENV_TOOLS: &str = r#"[
    {"name": "names", "description": "Lists the environment's names.",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "getenv", "description": "Gives a variable's value.",
     "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                     "required": ["name"]}},
    {"name": "fail", "description": "Fails, saying the key it is given.",
     "inputSchema": {"type": "object", "properties": {}}},
]"#;

/// What the `env` server's tools answer: the body of [`python_mcp_server`]'s `call`.
const ENV_CALLS: &str = r#"    if name == "names":
        return "names: " + ",".join(sorted(os.environ)), False
    if name == "fail":
        return ("bad key " + os.environ.get("OPENAI_API_KEY", "unset") + " vault "
                + os.environ.get("VAULT_PASSWORD", "unset") + " mail ada@example.com"), True
    return "value: " + os.environ.get(arguments["name"], "unset"), False
"#;

/// fakellm rules: a prompt naming a tool calls it with no arguments, or `getenv` of
/// `OPENAI_API_KEY`; each tool's result (known by how it starts) is answered with "Seen.".
const RULES: &str = r#"version: 1
rules:
  - name: env_seen
    when:
      tool_result_contains: "PATH="
    respond:
      content: "Seen."
  - name: key_seen
    when:
      tool_result_contains: "key="
    respond:
      content: "Seen."
  - name: failure_seen
    when:
      tool_result_contains: "bad key"
    respond:
      content: "Seen."
  - name: names_seen
    when:
      tool_result_contains: "names:"
    respond:
      content: "Seen."
  - name: value_seen
    when:
      tool_result_contains: "value:"
    respond:
      content: "Seen."
  - name: shell_env
    when:
      messages_contain: "use show_env"
    respond:
      tool_calls:
        - name: show_env
          arguments: {}
  - name: shell_key
    when:
      messages_contain: "use show_key"
    respond:
      tool_calls:
        - name: show_key
          arguments: {}
  - name: shell_fail
    when:
      messages_contain: "use fail_key"
    respond:
      tool_calls:
        - name: fail_key
          arguments: {}
  - name: server_names
    when:
      messages_contain: "use env_names"
    respond:
      tool_calls:
        - name: env_names
          arguments: {}
  - name: server_fail
    when:
      messages_contain: "use env_fail"
    respond:
      tool_calls:
        - name: env_fail
          arguments: {}
  - name: server_getenv
    when:
      messages_contain: "use env_getenv"
    respond:
      tool_calls:
        - name: env_getenv
          arguments: {name: "OPENAI_API_KEY"}
"#;

/// The agent: `show_env` prints the program's environment; `show_key` and `fail_key` are
/// given the model's key (`env_passthrough`) and print it, the one on stdout, the other on
/// stderr as it fails (with the redaction's secret and an email address); the `env` server is
/// given `OPENAI_API_KEY` and the redaction's secret only.
fn agent(server: &FakeLlm) -> AgentDir {
    let agent = AgentDir::new(&format!(
        r#"name = "keys"
{model}
[[tools.shell]]
name = "show_env"
description = "Prints the environment."
command = ["env"]
schema = {{ type = "object", properties = {{}} }}

{show_key}
[[tools.shell]]
name = "fail_key"
description = "Fails, saying the key it is given."
command = ["sh", "-c", "echo \"bad key $REINS_TEST_KEY vault $VAULT_PASSWORD mail ada@example.com\" >&2; exit 3"]
schema = {{ type = "object", properties = {{}} }}
env_passthrough = ["REINS_TEST_KEY", "VAULT_PASSWORD"]

[[tools.mcp]]
name = "env"
command = "python3"
args = ["server.py"]
prefix = "env_"
env_passthrough = ["OPENAI_API_KEY", "VAULT_PASSWORD"]

[hooks.redaction]
secrets_from_env = ["VAULT_PASSWORD"]
"#,
        model = model_table(&server.openai_url()),
        show_key = show_key_tool("REINS_TEST_KEY"),
    ));
    let server = python_mcp_server(ENV_TOOLS, ENV_CALLS);
    std::fs::write(agent.dir.path().join("server.py"), server).expect("the MCP server");
    agent
}

/// `reins run AGENT PROMPT --json` with every key set: exit code, events' stdout, stderr.
fn run(agent: &AgentDir, prompt: &str) -> (i32, String, String) {
    outcome(
        agent
            .reins(&["run", "AGENT", prompt, "--json"])
            .env("REINS_TEST_KEY", KEY)
            .env("OPENAI_API_KEY", OPENAI_KEY)
            .env("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
            .env("VAULT_PASSWORD", VAULT_PASSWORD)
            .env("REINS_UI_TOKEN", UI_TOKEN),
    )
}

/// The result the model was given for the run's one tool call.
fn tool_result(stdout: &str) -> String {
    let events = events(stdout);
    let result = tool_results(&events)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("a tool result\n{stdout}"));
    result["result"].as_str().unwrap_or_default().to_owned()
}

/// The run's id, from its `started` event.
fn run_id(stdout: &str) -> String {
    events(stdout)[0]["run"]
        .as_str()
        .expect("the run's id")
        .to_owned()
}

/// Asserts that no key is in `text` (`what` says where it was read).
fn holds_no_key(text: &str, what: &str) {
    for key in [KEY, OPENAI_KEY, ANTHROPIC_KEY, VAULT_PASSWORD, UI_TOKEN] {
        assert!(!text.contains(key), "{what} holds a key:\n{text}");
    }
}

/// What the failing tools say, masked: the model key and the redaction's secret (a secret
/// the file names, withheld and masked as the keys are) by the keys' masking, the email
/// address by `[hooks.redaction]`'s pattern.
const MASKED_FAILURE: &str = "bad key <redacted> vault <redacted> mail [REDACTED:email]";

/// Asserts that the run's one tool call failed with [`MASKED_FAILURE`], as the model was told
/// and as the `--json` `tool_result`'s `outcome` says, and that `runs show` says it so too.
fn failed_masked(agent: &AgentDir, stdout: &str) {
    assert!(tool_result(stdout).contains(MASKED_FAILURE), "{stdout}");
    let events = events(stdout);
    let result = tool_results(&events)
        .into_iter()
        .next()
        .expect("the tool's result");
    assert_eq!(result["outcome"]["status"], "failed", "{stdout}");
    assert!(
        result["outcome"]["message"]
            .as_str()
            .is_some_and(|message| message.contains(MASKED_FAILURE)),
        "the failure as scripts read it\n{stdout}"
    );
    let (code, shown, stderr) =
        outcome(agent.reins(&["runs", "show", "AGENT", &run_id(stdout), "--json"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(shown.contains(MASKED_FAILURE), "`runs show`\n{shown}");
    assert!(!shown.contains("ada@example.com"), "`runs show`\n{shown}");
}

/// Asserts that neither `runs show` (text and JSON) nor the store's file holds a key.
fn stored_without_keys(agent: &AgentDir, run: &str) {
    for args in [
        &["runs", "show", "AGENT", run][..],
        &["runs", "show", "AGENT", run, "--json"][..],
    ] {
        let (code, stdout, stderr) = outcome(agent.reins(args));
        assert_eq!(code, 0, "{stderr}");
        holds_no_key(&stdout, "`runs show`");
    }
    // The database and its write-ahead log, which may hold the latest writes.
    for file in ["runs.sqlite", "runs.sqlite-wal"] {
        if let Ok(bytes) = std::fs::read(agent.dir.path().join(".reins").join(file)) {
            holds_no_key(&String::from_utf8_lossy(&bytes), file);
        }
    }
}

#[test]
fn a_shell_tool_that_prints_its_environment_shows_no_model_key() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let (code, stdout, stderr) = run(&agent, "use show_env");
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let printed = tool_result(&stdout);
    assert!(printed.contains("PATH="), "the environment\n{printed}");
    for variable in [
        "REINS_TEST_KEY=",
        "OPENAI_API_KEY=",
        "ANTHROPIC_API_KEY=",
        "VAULT_PASSWORD=",
        "REINS_UI_TOKEN=",
    ] {
        assert!(
            !printed.contains(variable),
            "{variable} reached the tool\n{printed}"
        );
    }
    holds_no_key(&stdout, "the run's events");
    holds_no_key(&stderr, "the run's stderr");
    stored_without_keys(&agent, &run_id(&stdout));
}

#[test]
fn an_mcp_server_inherits_no_model_key_but_those_passed_through() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let (code, stdout, stderr) = run(&agent, "use env_names");
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let names = tool_result(&stdout);
    assert!(names.contains("PATH"), "{names}");
    assert!(!names.contains("REINS_TEST_KEY"), "{names}");
    assert!(!names.contains("ANTHROPIC_API_KEY"), "{names}");
    assert!(names.contains("OPENAI_API_KEY"), "passed through\n{names}");

    // The key passed through reaches the server, and is masked in what it answers.
    let (code, stdout, stderr) = run(&agent, "use env_getenv");
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(tool_result(&stdout), "value: <redacted>");
    holds_no_key(&stdout, "the run's events");
    stored_without_keys(&agent, &run_id(&stdout));
}

#[test]
fn a_key_passed_to_a_shell_tool_is_masked_in_its_output_and_its_failure_as_redactions_are() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let (code, stdout, stderr) = run(&agent, "use show_key");
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(tool_result(&stdout).trim(), "key=<redacted>");
    holds_no_key(&stdout, "the run's events");
    stored_without_keys(&agent, &run_id(&stdout));

    let (code, stdout, stderr) = run(&agent, "use fail_key");
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    failed_masked(&agent, &stdout);
    holds_no_key(&stdout, "the run's events");
    holds_no_key(&stderr, "the run's stderr");
    stored_without_keys(&agent, &run_id(&stdout));
}

#[test]
fn a_key_and_a_redacted_secret_an_mcp_tool_fails_with_are_masked_wherever_its_failure_goes() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let audit = "\n[hooks.audit]\npath = \"audit.jsonl\"\n";
    let text = std::fs::read_to_string(&agent.file).expect("the agent file");
    std::fs::write(&agent.file, text + audit).expect("the agent file, audited");
    let (code, stdout, stderr) = run(&agent, "use env_fail");
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    // The model is told the failure, the key masked; so is everyone else.
    failed_masked(&agent, &stdout);
    holds_no_key(&stdout, "the run's events");
    holds_no_key(&stderr, "the run's stderr");
    stored_without_keys(&agent, &run_id(&stdout));
    let audited = std::fs::read_to_string(agent.dir.path().join("audit.jsonl")).expect("audit");
    assert!(audited.contains(MASKED_FAILURE), "{audited}");
    holds_no_key(&audited, "the audit log");
}
