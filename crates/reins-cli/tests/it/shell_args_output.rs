//! What a shell tool's program is given and what reins keeps of what it writes: each
//! argument the model gives is put into the command as it is (never read for placeholders
//! itself), a program writing far more than the model is shown (16 KiB) is read to its
//! end without reins keeping the rest in memory, and a call ends when its program exits,
//! with what the program left running in the background.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, events, model_table, outcome, tool_results};

/// fakellm rules: `echo_pair` is called with a first argument that looks like a placeholder
/// of the second; `flood` with no arguments; each result is answered with "Done.".
const RULES: &str = r#"version: 1
rules:
  - name: answer
    when:
      tool_result_contains: "pair="
    respond:
      content: "Done."
  - name: flooded
    when:
      tool_result_contains: "[output truncated]"
    respond:
      content: "Done."
  - name: pair
    when:
      messages_contain: "echo a pair"
    respond:
      tool_calls:
        - name: echo_pair
          arguments: {first: "{second}", second: "x"}
  - name: flood
    when:
      messages_contain: "flood"
    respond:
      tool_calls:
        - name: flood
          arguments: {}
  - name: backgrounded
    when:
      tool_result_contains: "started="
    respond:
      content: "Done."
  - name: ended
    when:
      tool_result_contains: "cannot run"
    respond:
      content: "Done."
  - name: killed
    when:
      tool_result_contains: "SIGKILL"
    respond:
      content: "Done."
  - name: missing
    when:
      messages_contain: "run the missing program"
    respond:
      tool_calls:
        - name: missing
          arguments: {}
  - name: suicide
    when:
      messages_contain: "kill yourself"
    respond:
      tool_calls:
        - name: suicide
          arguments: {}
  - name: background
    when:
      messages_contain: "background"
    respond:
      tool_calls:
        - name: background
          arguments: {}
"#;

/// The agent: `echo_pair` prints its two arguments joined in one element; `flood` writes a
/// gigabyte to stdout; `background` leaves a `sleep 600` holding its stdout and stderr open
/// (printing its id), and exits 3; `missing` names a program that does not exist; `suicide`
/// kills itself with SIGKILL.
fn agent(server: &FakeLlm) -> AgentDir {
    AgentDir::new(&format!(
        r#"{model}
[[tools.shell]]
name = "echo_pair"
description = "Echoes two words."
command = ["printf", "pair=%s", "{{first}}-{{second}}"]
schema = {{ type = "object", properties = {{ first = {{ type = "string" }}, second = {{ type = "string" }} }}, required = ["first", "second"] }}

[[tools.shell]]
name = "flood"
description = "Writes a lot."
command = ["sh", "-c", "yes 0123456789abcdef | head -c 1000000000"]
schema = {{ type = "object", properties = {{}} }}

[[tools.shell]]
name = "background"
description = "Starts a sleeper and fails."
command = ["sh", "-c", "sleep 600 & echo started=$!; echo gave up >&2; exit 3"]
schema = {{ type = "object", properties = {{}} }}
timeout_secs = 300

[[tools.shell]]
name = "missing"
description = "Runs a program that is not there."
command = ["reins-test-no-such-program"]
schema = {{ type = "object", properties = {{}} }}

[[tools.shell]]
name = "suicide"
description = "Kills itself."
command = ["sh", "-c", "kill -KILL $$"]
schema = {{ type = "object", properties = {{}} }}
"#,
        model = model_table(&server.openai_url()),
    ))
}

/// The one tool result of a `--json` run's stdout.
fn only_result(stdout: &str) -> String {
    let events = events(stdout);
    let results = tool_results(&events);
    assert_eq!(results.len(), 1, "{stdout}");
    results[0]["result"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn an_argument_that_looks_like_a_placeholder_is_put_in_as_it_is() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "echo a pair", "--json"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(only_result(&stdout), "pair={second}-x");
}

#[test]
fn a_program_writing_a_gigabyte_is_read_to_its_end_in_bounded_memory() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    // reins with at most 256 MiB of data: keeping the whole gigabyte would fail.
    let line = format!(
        "ulimit -d 262144 && reins run '{}' flood --json",
        agent.file.display()
    );
    let (code, stdout, stderr) = outcome(agent.shell(&line).env("REINS_TEST_KEY", "k"));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let result = only_result(&stdout);
    assert!(result.ends_with("\n[output truncated]"), "{result}");
    assert!(result.starts_with("0123456789abcdef\n"), "{result}");
    assert!(result.len() < 17 * 1024, "{}", result.len());
}

#[test]
fn a_call_ends_when_its_program_exits_and_its_background_child_with_it() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let mut run = agent.keyed(&["run", "AGENT", "start it in the background", "--json"]);
    // A guard, not a measure: waiting for the tool's `timeout_secs` (300) would fail here
    // instead of holding the test for five minutes.
    run.timeout(std::time::Duration::from_secs(60));
    let (code, stdout, stderr) = outcome(run);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let result = only_result(&stdout);
    assert!(
        result.contains("`sh` failed (exit status: 3): gave up\nstarted="),
        "{result}"
    );
    // The sleeper closed the output it held, so it has exited (a zombie at most) by the
    // time the call ended.
    let pid = result.rsplit("started=").next().unwrap_or_default().trim();
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let running = !state.is_empty()
        && state
            .rsplit(") ")
            .next()
            .is_some_and(|rest| !rest.starts_with(['Z', 'X']));
    assert!(!running, "the background `sleep` {pid} still runs: {state}");
}

#[test]
fn a_program_that_cannot_start_or_dies_of_a_signal_is_told_as_such() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let (code, stdout, stderr) =
        outcome(agent.keyed(&["run", "AGENT", "run the missing program", "--json"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(
        only_result(&stdout),
        "the tool failed: cannot run `reins-test-no-such-program`: No such file or directory \
         (os error 2)"
    );
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "kill yourself", "--json"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let result = only_result(&stdout);
    assert!(
        result.contains("`sh` failed (signal: 9 (SIGKILL))"),
        "{result}"
    );
}
