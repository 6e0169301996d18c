//! A tool's schema that does not compile (a `$ref` to another document, an unknown
//! `$schema` dialect) checks no arguments. A shell tool's is the agent file's: `reins check`
//! refuses it at its line. An MCP tool's is its server's: its calls are not refused for it,
//! but the person is told once, on stderr, that the tool's arguments are not checked and why.

use crate::common::fakellm::FakeLlm;
use crate::common::{
    AgentDir, SAVE_NOTE_TOOL, check_file, events, model_table, outcome, python_mcp_server,
    tool_results,
};

#[test]
fn reins_check_refuses_a_shell_tools_schema_that_does_not_compile() {
    for (schema, reason) in [
        (
            r#"{ type = "object", properties = { text = { type = "string", "$ref" = "https://schemas.example/text.json" } } }"#,
            "schemas.example",
        ),
        (
            r#"{ "$schema" = "https://schemas.example/unknown-dialect", type = "object", properties = { text = { type = "string" } } }"#,
            "unknown-dialect",
        ),
    ] {
        let tool = SAVE_NOTE_TOOL.replace(
            r#"schema = { type = "object", properties = { text = { type = "string" } }, required = ["text"] }"#,
            &format!("schema = {schema}"),
        );
        assert_ne!(tool, SAVE_NOTE_TOOL);
        let (code, stderr) =
            check_file(&format!("{}\n{tool}", model_table("http://127.0.0.1:9/v1")));
        assert_eq!(code, 2, "{schema}\n{stderr}");
        // The schema is on the file's 11th line: the model table's 5, a blank, the tool's 5th.
        assert!(
            stderr.contains("agent.toml:11:")
                && stderr.contains("`schema` cannot be compiled")
                && stderr.contains(reason),
            "{schema}\n{stderr}"
        );
    }
}

/// The `dict` MCP server's one tool, `lookup`, whose input schema refers its `word` to a
/// schema in another document (which is not fetched: the schema cannot be compiled).
const DICT_TOOLS: &str = r#"[
    {"name": "lookup", "description": "Looks a word up.",
     "inputSchema": {"type": "object",
                     "properties": {"word": {"$ref": "https://schemas.example/word.json"}}}},
]"#;

/// What `lookup` answers: the word's meaning.
const DICT_CALLS: &str = r#"    return "meaning of " + str(arguments.get("word")), False
"#;

/// fakellm rules: asked to look up words, the model looks up `one`, then `two`, then answers.
const DICT_RULES: &str = r#"version: 1
rules:
  - name: answer
    when:
      tool_result_contains: "meaning of two"
    respond:
      content: "Looked up."
  - name: second
    when:
      tool_result_contains: "meaning of one"
    respond:
      tool_calls:
        - name: dict_lookup
          arguments: {word: "two"}
  - name: first
    when:
      messages_contain: "Look up"
    respond:
      tool_calls:
        - name: dict_lookup
          arguments: {word: "one"}
"#;

#[test]
fn an_mcp_tool_whose_schema_does_not_compile_is_called_and_the_person_told_once() {
    let server = FakeLlm::start(DICT_RULES);
    let agent = AgentDir::new(&format!(
        "{}\n[[tools.mcp]]\nname = \"dict\"\ncommand = \"python3\"\nargs = [\"server.py\"]\n\
         prefix = \"dict_\"\n",
        model_table(&server.openai_url())
    ));
    std::fs::write(
        agent.dir.path().join("server.py"),
        python_mcp_server(DICT_TOOLS, DICT_CALLS),
    )
    .expect("the MCP server");
    let (code, stdout, stderr) =
        outcome(agent.keyed(&["run", "AGENT", "Look up two words.", "--json"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let events = events(&stdout);
    let results = tool_results(&events);
    let answered: Vec<_> = results
        .iter()
        .map(|result| {
            (
                result["result"].as_str(),
                result["outcome"]["status"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        answered,
        [
            (Some("meaning of one"), Some("success")),
            (Some("meaning of two"), Some("success"))
        ],
        "{stdout}"
    );
    let told = "reins: the arguments of `dict_lookup` are not checked: its schema cannot be \
                compiled";
    assert_eq!(stderr.matches(told).count(), 1, "{stderr}");
    let line = stderr
        .lines()
        .find(|line| line.starts_with(told))
        .unwrap_or_default();
    assert!(line.contains("schemas.example/word.json"), "why: {line}");
}
