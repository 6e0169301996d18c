//! Ctrl-C during `reins run`: the process says the run was interrupted and how to resume
//! it, exits 130, and the run can be resumed at once (its lease given back), with the tool
//! call it interrupted in doubt until a person approves running it again.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, events, model_table, outcome};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The model calls `wait`, and answers once it finished.
pub const RULES: &str = r#"version: 1
rules:
  - name: answer
    when:
      tool_result_contains: "finished"
    respond:
      content: "Waited."
  - name: wait
    when:
      messages_contain: "wait"
    respond:
      tool_calls:
        - name: wait
          arguments: {}
"#;

/// A tool that finishes once the file `go` exists, and blocks before (creating `waiting`
/// first; `exec`, so the program reins kills on Ctrl-C is the one that sleeps).
pub const WAIT_TOOL: &str = r#"[[tools.shell]]
name = "wait"
description = "Waits."
command = ["sh", "-c", "test -e go && echo finished || { touch waiting; exec sleep 120; }"]
schema = { type = "object", properties = {} }
"#;

/// A `wait` tool as a shell script that notes a SIGINT it gets (`signalled`) and starts a
/// child of its own (its pid in `sleeper`), as real scripts do.
const TRAPPING_WAIT_TOOL: &str = r#"[[tools.shell]]
name = "wait"
description = "Waits."
command = ["sh", "-c", "test -e go && echo finished || { trap 'touch signalled; exit 1' INT; sleep 120 & echo $! > sleeper; touch waiting; wait; }"]
schema = { type = "object", properties = {} }
"#;

/// An agent of [`WAIT_TOOL`] on `llm`, and `reins run` of it started and waiting in its tool.
pub fn run_waiting_in_its_tool(llm: &FakeLlm) -> (AgentDir, Child) {
    let agent = AgentDir::new(&format!(
        "{model}\n{WAIT_TOOL}",
        model = model_table(&llm.openai_url())
    ));
    let mut child = start_run(&agent);
    wait_for(&agent.dir.path().join("waiting"), &mut child);
    (agent, child)
}

/// `reins run AGENT "Please wait."` started in the background, its output piped.
pub fn start_run(agent: &AgentDir) -> Child {
    reins_run(agent).spawn().expect("start reins run")
}

/// The command of [`start_run`].
fn reins_run(agent: &AgentDir) -> Command {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("reins"));
    command
        .args(["run", &agent.file.to_string_lossy(), "Please wait."])
        .current_dir(agent.dir.path())
        .env("REINS_TEST_KEY", "k")
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Waits until `file` exists (the tool runs), failing if `child` ended first.
pub fn wait_for(file: &Path, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !file.exists() {
        if let Some(status) = child.try_wait().expect("poll reins") {
            panic!("reins ended before its tool ran: {status}");
        }
        assert!(Instant::now() < deadline, "the tool never ran");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends SIGINT to `target` (reins's pid, or `-<group>` for a whole process group, as a
/// terminal's Ctrl-C does) and waits for `child` to end as interrupted (exit 130); its stderr.
pub fn interrupt(child: Child, target: &str) -> String {
    let sent = Command::new("kill")
        .args(["-INT", "--", target])
        .status()
        .expect("kill -INT");
    assert!(sent.success());
    let output = child.wait_with_output().expect("reins ends");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    stderr
}

/// Whether the process `pid` runs (a zombie, dead but not yet reaped, does not).
fn alive(pid: &str) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the command's name, which is in parentheses.
    let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
    !matches!(
        state.and_then(|rest| rest.chars().next()),
        Some('Z' | 'X') | None
    )
}

/// The line of `stderr` saying the run was interrupted, and the run it names.
pub fn interrupted_run(stderr: &str) -> (&str, String) {
    let line = stderr
        .lines()
        .find(|line| line.contains("interrupted"))
        .unwrap_or_else(|| panic!("no line says the run was interrupted: {stderr}"));
    let run = line
        .split_whitespace()
        .find(|word| word.starts_with("run-"))
        .unwrap_or_else(|| panic!("the line names no run: {line}"))
        .trim_end_matches('`')
        .to_owned();
    (line, run)
}

/// A Ctrl-C at a terminal signals the whole foreground process group, the tool's program too
/// if it were in it. It is not: the program never sees the signal (its death could be
/// recorded as the call's failure before reins stopped the run, and the model retry it), the
/// call is left in doubt, and the program is killed with its own children, none of which
/// outlives the run.
#[test]
fn ctrl_c_at_a_terminal_leaves_the_tool_to_reins() {
    use std::os::unix::process::CommandExt;
    let llm = FakeLlm::start(RULES);
    let agent = AgentDir::new(&format!(
        "{model}\n{TRAPPING_WAIT_TOOL}",
        model = model_table(&llm.openai_url())
    ));
    // A foreground group of its own, as a shell gives a command it runs.
    let mut child = reins_run(&agent)
        .process_group(0)
        .spawn()
        .expect("start reins run");
    wait_for(&agent.dir.path().join("waiting"), &mut child);
    let sleeper = std::fs::read_to_string(agent.dir.path().join("sleeper")).expect("sleeper");
    let sleeper = sleeper.trim();
    assert!(alive(sleeper), "the tool's child runs");

    let group = format!("-{}", child.id());
    let stderr = interrupt(child, &group);
    let (_, run) = interrupted_run(&stderr);
    assert!(
        !agent.dir.path().join("signalled").exists(),
        "the tool's program got the terminal's signal"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while alive(sleeper) {
        assert!(
            Instant::now() < deadline,
            "the tool's child outlived the run"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    resumed_at_once_the_cut_off_call_waits_then_runs_once_approved(&agent, &run);
}

#[test]
fn ctrl_c_stops_a_run_that_can_be_resumed_at_once() {
    let llm = FakeLlm::start(RULES);
    let (agent, child) = run_waiting_in_its_tool(&llm);

    let pid = child.id().to_string();
    let stderr = interrupt(child, &pid);
    let (line, run) = interrupted_run(&stderr);
    assert!(
        line.contains(&format!("reins runs resume {}", agent.file.display()))
            && line.ends_with(&format!("{run}`")),
        "the line says how to resume the run: {line}"
    );

    // Its page says nobody drives it any more, and how to continue it.
    let (_, shown, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run]));
    assert!(
        shown.contains("left: no process drives it")
            && shown.contains(&format!("reins runs resume {}", agent.file.display())),
        "{shown}"
    );

    // Resumed at once: no lease is in the way.
    resumed_at_once_the_cut_off_call_waits_then_runs_once_approved(&agent, &run);
}

/// `reins runs resume` of a run whose blocking `wait` call was cut short: the run is taken at
/// once (exit 3, not refused for a lease), the call waits for a person (it may have had its
/// effect, and any approval was used up when it started), and once approved the run finishes.
pub fn resumed_at_once_the_cut_off_call_waits_then_runs_once_approved(agent: &AgentDir, run: &str) {
    let resume = || outcome(agent.keyed(&["runs", "resume", "AGENT", run, "--json"]));
    let (code, stdout, stderr) = resume();
    assert_eq!(code, 3, "the interrupted call waits\n{stdout}\n{stderr}");
    let waiting = events(&stdout).pop().expect("events");
    assert_eq!(waiting["event"], "suspended", "{stdout}");
    assert_eq!(waiting["pending"][0]["tool"], "wait", "{stdout}");

    std::fs::write(agent.dir.path().join("go"), "").expect("let the tool finish");
    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", run]));
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = resume();
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let done = events(&stdout).pop().expect("events");
    assert_eq!(done["answer"], "Waited.", "{stdout}");
}
