//! A shell tool's argument cannot become an option of its program: a value starting with `-`
//! that begins an element of the command (where the program's option parser looks) is
//! refused and the model told why, before an approval rule asks a person about the call (a
//! person's edited value is refused so too), while the forms where it is only a value run it:
//! a `sh -c` script's positional parameters (`env` running the shell or not), elements after
//! a `--` element, and elements where the value follows other text (`--name={x}`).
//! `allow_option_values = true` lets a tool take options from the model.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, approve_with_args, events, model_table, outcome, tool_results};

/// fakellm rules: each prompt naming a tool calls it with `x` = `-x` (`ref` = `--version`
/// for the `show_ref` tools and `asked_ref`); "show main" calls `asked_ref` with `main`; any
/// result or refusal is answered with "Done.".
const RULES: &str = r#"version: 1
rules:
  - name: answer
    when:
      tool_result_contains: "out:"
    respond:
      content: "Done."
  - name: refused
    when:
      tool_result_contains: "invalid arguments"
    respond:
      content: "Done."
  - name: show_ref_allowing
    when:
      messages_contain: "call show_ref_allowing"
    respond:
      tool_calls:
        - name: show_ref_allowing
          arguments: {ref: "--version"}
  - name: asked_main
    when:
      messages_contain: "show main"
    respond:
      tool_calls:
        - name: asked_ref
          arguments: {ref: "main"}
  - name: asked_ref
    when:
      messages_contain: "call asked_ref"
    respond:
      tool_calls:
        - name: asked_ref
          arguments: {ref: "--version"}
  - name: show_ref
    when:
      messages_contain: "call show_ref"
    respond:
      tool_calls:
        - name: show_ref
          arguments: {ref: "--version"}
  - name: script
    when:
      messages_contain: "call script"
    respond:
      tool_calls:
        - name: script
          arguments: {x: "-x"}
  - name: after_dashes
    when:
      messages_contain: "call after_dashes"
    respond:
      tool_calls:
        - name: after_dashes
          arguments: {x: "-x"}
  - name: env_script
    when:
      messages_contain: "call env_script"
    respond:
      tool_calls:
        - name: env_script
          arguments: {x: "-x"}
  - name: option_form
    when:
      messages_contain: "call option_form"
    respond:
      tool_calls:
        - name: option_form
          arguments: {x: "-x"}
"#;

/// The agent: `show_ref` puts `ref` first in an element of `printf` (a read-only tool an
/// approval rule allows); `show_ref_allowing` too, allowing option values; `asked_ref` too,
/// an approval rule asking a person about its calls; the others put `x` where it is only a
/// value.
fn agent(server: &FakeLlm) -> AgentDir {
    let ref_schema =
        r#"{ type = "object", properties = { ref = { type = "string" } }, required = ["ref"] }"#;
    let x_schema =
        r#"{ type = "object", properties = { x = { type = "string" } }, required = ["x"] }"#;
    AgentDir::new(&format!(
        r#"{model}
[[tools.shell]]
name = "show_ref"
description = "Shows a ref."
command = ["printf", "out:%s", "{{ref}}"]
schema = {ref_schema}
read_only = true

[[tools.shell]]
name = "show_ref_allowing"
description = "Shows a ref, or an option."
command = ["printf", "out:%s", "{{ref}}"]
schema = {ref_schema}
allow_option_values = true

[[tools.shell]]
name = "asked_ref"
description = "Shows a ref, once a person approves."
command = ["printf", "out:%s", "{{ref}}"]
schema = {ref_schema}

[[tools.shell]]
name = "script"
description = "Hands x to a script."
command = ["sh", "-c", "printf 'out:%s' \"$1\"", "sh", "{{x}}"]
schema = {x_schema}

[[tools.shell]]
name = "after_dashes"
description = "Shows x after the end of options."
command = ["printf", "out:%s %s", "--", "{{x}}"]
schema = {x_schema}

[[tools.shell]]
name = "env_script"
description = "Hands x to a script run by env."
command = ["env", "LC_ALL=C", "sh", "-c", "printf 'out:%s' \"$1\"", "sh", "{{x}}"]
schema = {x_schema}

[[tools.shell]]
name = "option_form"
description = "Shows x as an option's value."
command = ["printf", "out:%s", "--name={{x}}"]
schema = {x_schema}

[hooks.approval]
rules = [
  {{ tool = "asked_ref", action = "ask" }},
  {{ tool = "*", action = "allow", when = "read_only" }},
]
default = "allow"
"#,
        model = model_table(&server.openai_url()),
    ))
}

/// The one tool result of running `agent` with `prompt`: what the model was given, and the
/// outcome's status.
fn result_of(agent: &AgentDir, prompt: &str) -> (String, String) {
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", prompt, "--json"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let events = events(&stdout);
    let results = tool_results(&events);
    assert_eq!(results.len(), 1, "{stdout}");
    (
        results[0]["result"].as_str().unwrap_or_default().to_owned(),
        results[0]["outcome"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

#[test]
fn a_value_that_would_be_an_option_is_refused_and_the_program_not_run() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let (result, status) = result_of(&agent, "call show_ref");
    assert_eq!(status, "denied", "{result}");
    assert!(
        result.contains("invalid arguments: `ref` starts with `-`")
            && result.contains("the tool did not run")
            && !result.contains("out:"),
        "{result}"
    );
    // A tool allowing option values runs it.
    let (result, status) = result_of(&agent, "call show_ref_allowing");
    assert_eq!(
        (result.as_str(), status.as_str()),
        ("out:--version", "success")
    );
}

#[test]
fn a_value_is_run_where_it_cannot_be_an_option() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    for (prompt, expected) in [
        ("call script", "out:-x"),
        ("call env_script", "out:-x"),
        ("call after_dashes", "out:-- -x"),
        ("call option_form", "out:--name=-x"),
    ] {
        let (result, status) = result_of(&agent, prompt);
        assert_eq!((result.as_str(), status.as_str()), (expected, "success"));
    }
    // Nor does `reins check` say anything of these forms.
    let (code, stdout, stderr) = outcome(agent.keyed(&["check", "AGENT"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn a_value_that_would_be_an_option_is_refused_before_a_person_is_asked() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    // No terminal: a call the `ask` rule matched would wait in the store (exit 3).
    let (code, stdout, stderr) =
        outcome(agent.keyed(&["run", "AGENT", "call asked_ref", "--json"]));
    assert_eq!(code, 0, "a person was asked\n{stdout}\n{stderr}");
    let events = events(&stdout);
    assert!(
        !events.iter().any(|event| event["event"] == "suspended"),
        "{stdout}"
    );
    let refused = tool_results(&events);
    assert_eq!(refused.len(), 1, "{stdout}");
    assert_eq!(refused[0]["outcome"]["status"], "denied", "{stdout}");
    let told = refused[0]["result"].as_str().unwrap_or_default();
    assert!(
        told.contains("invalid arguments: `ref` starts with `-`")
            && told.contains("the tool did not run")
            && told.contains("allow_option_values = true"),
        "{told}"
    );
}

#[test]
fn an_edited_value_that_would_be_an_option_is_refused_and_the_call_waits() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "show main", "--json"]));
    assert_eq!(code, 3, "the call waits for a person\n{stdout}\n{stderr}");
    let suspended = events(&stdout).pop().expect("events");
    let run = suspended["run"].as_str().expect("run id");
    // The edit would only fail the tool after resuming.
    let (code, _, stderr) = approve_with_args(&agent, run, r#"{"ref": "--output=x"}"#);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("invalid arguments: `ref` starts with `-`"),
        "{stderr}"
    );
    // Nothing was decided: the call still waits, and a value that is no option is taken.
    let (code, _, stderr) = approve_with_args(&agent, run, r#"{"ref": "v1"}"#);
    assert_eq!(code, 0, "{stderr}");
}
