//! A process a shell tool's program starts in a session of its own (`setsid prog &`, a
//! daemon's double fork), out of the reach of the program group's kill, still ends with the
//! call: when reins is killed mid-call, when the call is cut off, and when the program exits
//! leaving it behind, the call then not waiting for the output it held.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, events, model_table, outcome, tool_results};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const RULES: &str = r#"version: 1
rules:
  - name: answer
    when:
      tool_result_contains: "daemon="
    respond:
      content: "Done."
  - name: hold
    when:
      messages_contain: "escape and hold"
    respond:
      tool_calls:
        - name: escape_and_hold
          arguments: {}
  - name: leave
    when:
      messages_contain: "escape and leave"
    respond:
      tool_calls:
        - name: escape_and_leave
          arguments: {}
"#;

/// Starts two sleepers in sessions of their own, each writing its pid (once it left the
/// program's group) to a file of its name: `held`, a child of the program holding its
/// output, and `daemon`, orphaned at once by a double fork, its output elsewhere. (A TOML
/// literal string: the shell reads the backslashes.)
const ESCAPE: &str = concat!(
    r#"setsid sh -c "echo \$\$ > held.tmp; mv held.tmp held; exec sleep 600" & "#,
    r#"(setsid sh -c "echo \$\$ > daemon.tmp; mv daemon.tmp daemon; exec sleep 600" "#,
    r#"> /dev/null 2>&1 &); "#,
    r#"while ! test -e held || ! test -e daemon; do sleep 0.05; done"#,
);

/// The agent: `escape_and_hold` starts the sleepers ([`ESCAPE`]) and holds;
/// `escape_and_leave` starts them, prints their pids (`held=`, `daemon=`) and exits.
fn agent(llm: &FakeLlm) -> AgentDir {
    AgentDir::new(&format!(
        r#"{model}
[[tools.shell]]
name = "escape_and_hold"
description = "Starts sleepers and holds."
command = ["sh", "-c", '{ESCAPE}; exec sleep 600']
schema = {{ type = "object", properties = {{}} }}

[[tools.shell]]
name = "escape_and_leave"
description = "Starts sleepers and exits."
command = ["sh", "-c", '{ESCAPE}; echo held=$(cat held); echo daemon=$(cat daemon)']
schema = {{ type = "object", properties = {{}} }}
timeout_secs = 300
"#,
        model = model_table(&llm.openai_url()),
    ))
}

/// The state letter in `/proc/<pid>/stat` (after the name in parentheses), `None` once the
/// process is gone.
fn state(pid: &str) -> Option<char> {
    let stat = std::fs::read_to_string(Path::new("/proc").join(pid).join("stat")).ok()?;
    stat.rsplit_once(") ")?.1.chars().next()
}

/// Whether the process `pid` runs (is neither gone nor a zombie).
fn runs(pid: &str) -> bool {
    state(pid).is_some_and(|state| state != 'Z' && state != 'X')
}

/// Kills `pid`, so that a failing test leaves nothing behind.
fn kill(pid: &str) {
    let _ = Command::new("kill").args(["-KILL", pid]).status();
}

/// Whether the process `pid` is gone or a zombie within a minute (a guard: it sleeps for
/// ten); if not, it is killed.
fn ends_within_a_minute(pid: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if !runs(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    kill(pid);
    false
}

/// `reins run` of the agent asked to escape and hold, started, once both sleepers escaped
/// (its stdout and stderr piped).
fn holding(agent: &AgentDir) -> Child {
    let mut reins = Command::new(assert_cmd::cargo::cargo_bin("reins"))
        .args(["run", &agent.file.to_string_lossy(), "escape and hold"])
        .current_dir(agent.dir.path())
        .env("REINS_TEST_KEY", "k")
        .env_remove("OPENAI_API_KEY")
        .env_remove("REINS_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start reins");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !["held", "daemon"]
        .iter()
        .all(|file| agent.dir.path().join(file).exists())
    {
        assert!(reins.try_wait().expect("poll").is_none(), "reins ended");
        assert!(Instant::now() < deadline, "the tool never held");
        std::thread::sleep(Duration::from_millis(20));
    }
    reins
}

/// The sleepers of `agent`'s tool that still run a minute on (each then killed).
fn outliving(agent: &AgentDir) -> Vec<String> {
    ["held", "daemon"]
        .iter()
        .map(|file| std::fs::read_to_string(agent.dir.path().join(file)).expect("a pid"))
        .map(|pid| pid.trim().to_owned())
        .filter(|pid| !ends_within_a_minute(pid))
        .collect()
}

#[test]
fn an_escaped_process_ends_when_reins_is_killed_mid_call() {
    let llm = FakeLlm::start(RULES);
    let agent = agent(&llm);
    let mut reins = holding(&agent);
    // SIGKILL: no destructor runs in reins.
    reins.kill().expect("SIGKILL");
    reins.wait().expect("reap");
    let outlived = outliving(&agent);
    assert!(outlived.is_empty(), "{outlived:?} outlived reins");
}

/// A call cut off (Ctrl-C here; a timeout cuts it off the same way) is ended by the
/// supervisor, which reins therefore does not kill first.
#[test]
fn an_escaped_process_ends_when_its_call_is_cut_off() {
    let llm = FakeLlm::start(RULES);
    let agent = agent(&llm);
    let reins = holding(&agent);
    let pid = reins.id().to_string();
    crate::interrupt::interrupt(reins, &pid);
    let outlived = outliving(&agent);
    assert!(outlived.is_empty(), "{outlived:?} outlived the call");
}

#[test]
fn an_escaped_process_ends_with_the_call_its_program_left_it_in() {
    let llm = FakeLlm::start(RULES);
    let agent = agent(&llm);
    let mut run = agent.keyed(&["run", "AGENT", "escape and leave", "--json"]);
    // A guard, not a measure: waiting for the tool's `timeout_secs` (300) on the output the
    // held sleeper kept open would fail here instead of holding the test for five minutes.
    run.timeout(Duration::from_secs(60));
    let (code, stdout, stderr) = outcome(run);
    let pids: Vec<String> = ["held", "daemon"]
        .iter()
        .map(|file| std::fs::read_to_string(agent.dir.path().join(file)).unwrap_or_default())
        .map(|pid| pid.trim().to_owned())
        .collect();
    let running: Vec<&String> = pids.iter().filter(|pid| runs(pid)).collect();
    running.iter().for_each(|pid| kill(pid));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let events = events(&stdout);
    let results = tool_results(&events);
    assert_eq!(
        results[0]["result"],
        format!("held={}\ndaemon={}\n", pids[0], pids[1]),
        "{stdout}"
    );
    // Ended by the time the call did (the held one closed the output the call read to its
    // end): a zombie at most.
    assert!(running.is_empty(), "{running:?} outlived the call");
}
