//! `env_passthrough` names variables a tool's program inherits although they are withheld
//! from it (a model's key, another secret the file names). A name that is none of them
//! passes nothing (the program inherits it anyway) and is almost surely misspelt, which
//! would leave the tool without the key it needs: `reins check` and `reins run` refuse it at
//! its line (exit 2), naming the variable meant.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, model_table, outcome, show_key_tool};

/// fakellm rules: the prompt has the model call `show_key`, whose result ends the run.
const RULES: &str = r#"version: 1
rules:
  - name: seen
    when:
      tool_result_contains: "key="
    respond:
      content: "Seen."
  - name: show
    when:
      messages_contain: "use show_key"
    respond:
      tool_calls:
        - name: show_key
          arguments: {}
"#;

/// An agent on `url` whose `show_key` tool prints the model's key (`REINS_TEST_KEY`) and
/// names `shell` in its `env_passthrough`, and whose stdio MCP server names `mcp`; `extra`
/// is appended.
fn agent_file(url: &str, shell: &str, mcp: &str, extra: &str) -> String {
    format!(
        r#"name = "keys"
{model}
{show_key}
[[tools.mcp]]
name = "time"
command = "python3"
args = ["-m", "mcp_server_time"]
env_passthrough = ["{mcp}"]
{extra}"#,
        model = model_table(url),
        show_key = show_key_tool(shell),
    )
}

/// The one-based line of `toml` holding `text`.
fn line_of(toml: &str, text: &str) -> usize {
    toml.lines()
        .position(|line| line.contains(text))
        .unwrap_or_else(|| panic!("`{text}` in\n{toml}"))
        + 1
}

#[test]
fn a_misspelt_passthrough_name_is_an_error_at_its_line_naming_the_variable_meant() {
    let url_server = "\n[[tools.mcp]]\nname = \"remote\"\nurl = \"http://127.0.0.1:9/mcp\"\n\
                      env_passthrough = [\"REINS_TEST_KEY\"]\n";
    let toml = agent_file(
        "http://127.0.0.1:9",
        "REINS_TEST_KEYS",
        "OPENAI_API_KY",
        url_server,
    );
    let agent = AgentDir::new(&toml);
    let (code, stdout, stderr) = outcome(agent.keyed(&["check", "AGENT"]));
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    for (name, meant) in [
        ("REINS_TEST_KEYS", "REINS_TEST_KEY"),
        ("OPENAI_API_KY", "OPENAI_API_KEY"),
    ] {
        let line = line_of(&toml, &format!("[\"{name}\"]"));
        let message = format!(
            "agent.toml:{line}:20: error: `{name}` in `env_passthrough` is not withheld from \
             tools"
        );
        assert!(stderr.contains(&message), "{message}\n{stderr}");
        assert!(
            stderr.contains(&format!("(did you mean `{meant}`?)")),
            "{stderr}"
        );
    }
    // A server reached by URL starts no program: there is nothing to pass a variable to.
    let line = line_of(&toml, "name = \"remote\"");
    assert!(
        stderr.contains(&format!("agent.toml:{}:", line + 2))
            && stderr.contains("`env_passthrough` is for a server started by `command`"),
        "{stderr}"
    );
    assert!(stderr.contains("has 3 error(s)"), "{stderr}");
}

#[test]
fn a_passthrough_name_of_a_withheld_variable_is_accepted() {
    // The model's own key, another provider's default one, a secret the redaction names.
    let toml = agent_file(
        "http://127.0.0.1:9",
        "REINS_TEST_KEY",
        "ANTHROPIC_API_KEY",
        "\n[hooks.redaction]\nsecrets_from_env = [\"VAULT_PASSWORD\"]\n",
    )
    .replace(
        "env_passthrough = [\"ANTHROPIC_API_KEY\"]",
        "env_passthrough = [\"ANTHROPIC_API_KEY\", \"VAULT_PASSWORD\"]",
    );
    let agent = AgentDir::new(&toml);
    let (code, stdout, stderr) = outcome(
        agent
            .keyed(&["check", "AGENT"])
            .env("VAULT_PASSWORD", "vault-pass-9876543210"),
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
}

#[test]
fn a_run_with_a_misspelt_passthrough_name_is_refused_before_the_tool_runs_without_its_key() {
    let server = FakeLlm::start(RULES);
    let toml = agent_file(
        &server.openai_url(),
        "REINS_TEST_KEYS",
        "OPENAI_API_KEY",
        "",
    );
    let agent = AgentDir::new(&toml);
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "use show_key", "--json"]));
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("`REINS_TEST_KEYS` in `env_passthrough` is not withheld from tools")
            && stderr.contains("(did you mean `REINS_TEST_KEY`?)"),
        "{stderr}"
    );
    // Nothing ran: no run started, no tool printed an empty key.
    assert!(!stdout.contains("\"started\""), "{stdout}");
    assert!(!stdout.contains("key="), "{stdout}");
}

#[test]
fn the_inbox_token_cannot_be_passed_to_a_tool() {
    let toml = agent_file("http://127.0.0.1:9", "REINS_UI_TOKEN", "OPENAI_API_KEY", "");
    let agent = AgentDir::new(&toml);
    let (code, stdout, stderr) = outcome(agent.keyed(&["check", "AGENT"]));
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    let line = line_of(&toml, "[\"REINS_UI_TOKEN\"]");
    let message = format!(
        "agent.toml:{line}:20: error: `REINS_UI_TOKEN` is the web inbox's token, with which a \
         tool could approve its own calls: no tool is given it"
    );
    assert!(stderr.contains(&message), "{message}\n{stderr}");
}
