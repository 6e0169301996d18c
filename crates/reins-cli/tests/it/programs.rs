//! Programs an agent file names by a path (`./save.sh`): found beside the agent file, so the
//! agent runs the same from any directory, as every other path in the file does; and a shell
//! tool runs its program only with arguments that fit its schema.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, events, model_table, outcome, save_note_rules, tool_results};
use std::os::unix::fs::PermissionsExt;

#[test]
fn a_shell_tool_named_by_a_relative_path_runs_from_any_directory() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let agent = AgentDir::new(&format!(
        "{}\n[[tools.shell]]\nname = \"save_note\"\ndescription = \"Saves a note.\"\n\
         command = [\"./save.sh\", \"{{text}}\"]\n\
         schema = {{ type = \"object\", properties = {{ text = {{ type = \"string\" }} }}, \
         required = [\"text\"] }}\n",
        model_table(&server.openai_url())
    ));
    let script = agent.dir.path().join("save.sh");
    std::fs::write(&script, "#!/bin/sh\nprintf 'note: %s' \"$1\"\n").expect("the script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");

    let elsewhere = tempfile::tempdir().expect("a temporary directory");
    let (code, stdout, stderr) = outcome(
        agent
            .keyed(&["run", "AGENT", "Save a note."])
            .current_dir(elsewhere.path()),
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(stdout.trim(), "Done: the note is saved.", "{stderr}");
}

/// fakellm rules: `count` is first called with arguments its schema refuses (a flag for its
/// integer, an unknown property; or an object), then, told why, with `n = 3`.
const COUNT_RULES: &str = r#"version: 1
rules:
  - name: answer
    when:
      tool_result_contains: "argv=3"
    respond:
      content: "Counted."
  - name: retry
    when:
      tool_result_contains: "do not fit"
    respond:
      tool_calls:
        - name: count
          arguments: {n: 3}
  - name: flag
    when:
      messages_contain: "a flag"
    respond:
      tool_calls:
        - name: count
          arguments: {n: "--version", extra: "x"}
  - name: object
    when:
      messages_contain: "an object"
    respond:
      tool_calls:
        - name: count
          arguments: {n: {a: [1, 2]}}
"#;

#[test]
fn a_shell_tool_runs_nothing_on_arguments_its_schema_refuses_and_the_model_is_told_why() {
    let server = FakeLlm::start(COUNT_RULES);
    let agent = AgentDir::new(&format!(
        "{}\n[[tools.shell]]\nname = \"count\"\ndescription = \"Counts to n.\"\n\
         command = [\"sh\", \"-c\", \"echo \\\"$1\\\" >> ran.txt; echo \\\"argv=$1\\\"\", \
         \"sh\", \"{{n}}\"]\n\
         schema = {{ type = \"object\", properties = {{ n = {{ type = \"integer\" }} }}, \
         required = [\"n\"], additionalProperties = false }}\n",
        model_table(&server.openai_url())
    ));
    for (prompt, mismatch) in [
        (
            "Count with a flag.",
            [
                r#""--version" is not of type "integer" (at /n)"#,
                "'extra' was unexpected",
            ],
        ),
        (
            "Count with an object.",
            [
                r#"is not of type "integer" (at /n)"#,
                "the tool did not run",
            ],
        ),
    ] {
        let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", prompt, "--json"]));
        assert_eq!(code, 0, "{stdout}\n{stderr}");
        let events = events(&stdout);
        let results = tool_results(&events);
        assert_eq!(results.len(), 2, "{stdout}");
        let refused = results[0]["result"].as_str().unwrap_or_default();
        assert!(
            refused.contains("the arguments do not fit the schema of `count`"),
            "{refused}"
        );
        for part in mismatch {
            assert!(refused.contains(part), "{part}\n{refused}");
        }
        // Refused as it was dispatched (before any approval rule could ask about it).
        assert_eq!(results[0]["outcome"]["status"], "denied", "{stdout}");
        assert_eq!(results[1]["result"].as_str().map(str::trim), Some("argv=3"));
        assert_eq!(
            events.last().map(|e| e["answer"].clone()),
            Some("Counted.".into())
        );
    }
    // The program ran for the arguments that fit only.
    let ran = std::fs::read_to_string(agent.dir.path().join("ran.txt")).expect("ran.txt");
    assert_eq!(ran, "3\n3\n");
}
