//! `reins run` and `reins runs resume` killed with SIGKILL at many points, then resumed by
//! fresh processes: the run ends with the answer an uninterrupted run gives, no booking is
//! made twice (the tool appends each to a file), a call cut off mid-way is reported in doubt
//! (and answered with `runs supply`), never run again on its own, and the store stays
//! readable. Kill points are counted in `--json` event lines, or are the moment the tool
//! holds, never in time. A killed process's lease does not keep the run busy: the next
//! resume on this machine (in its pid namespace, since its boot) takes the run over from the
//! dead process at once, and only one of two resumes racing to do so gets it. A lease held by
//! a live process, or one of another machine, pid namespace or boot, still refuses a resume
//! as busy.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, events, model_table, outcome};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// The model books Oslo, then Rome, then says so.
const RULES: &str = r#"version: 1
rules:
  - name: done
    when:
      tool_result_contains: "booked rome"
    respond:
      content: "Booked Oslo and Rome."
  - name: rome
    when:
      tool_result_contains: "booked oslo"
    respond:
      tool_calls:
        - name: book
          arguments: { city: "rome" }
  - name: oslo
    when:
      messages_contain: "Book"
    respond:
      tool_calls:
        - name: book
          arguments: { city: "oslo" }
"#;

/// The answer of an uninterrupted run.
const ANSWER: &str = "Booked Oslo and Rome.";

/// Books a city: its side effect is a line in `effects`. While a file `hold-<city>` exists,
/// it holds after its effect (its pid in `held`, the test's cue to kill reins there).
const BOOK_TOOL: &str = r#"[[tools.shell]]
name = "book"
description = "Books a trip."
command = ["sh", "-c", "echo \"$1\" >> effects; if test -e \"hold-$1\"; then echo $$ > held.tmp; mv held.tmp held; exec sleep 600; fi; echo \"booked $1\"", "sh", "{city}"]
schema = { type = "object", properties = { city = { type = "string" } }, required = ["city"] }
"#;

/// Where the first process is killed.
#[derive(Debug, Clone, Copy)]
enum KillAt {
    /// Once it printed this many `--json` event lines.
    Line(usize),
    /// Once the booking of this city had its effect and holds.
    Holding(&'static str),
}

/// One scenario's agent directory, its prompt (fakellm tells conversations by it) and run.
struct Scenario {
    agent: AgentDir,
    prompt: String,
}

impl Scenario {
    fn new(llm: &FakeLlm, name: &str) -> Self {
        Scenario::with(llm, name, "")
    }

    /// A scenario whose agent file ends with `extra`.
    fn with(llm: &FakeLlm, name: &str, extra: &str) -> Self {
        Scenario {
            agent: AgentDir::new(&format!(
                "{model}\n{BOOK_TOOL}{extra}",
                model = model_table(&llm.openai_url())
            )),
            prompt: format!("Book Oslo and Rome ({name})."),
        }
    }

    /// `reins ARGS --json` in the background, its events piped.
    fn spawn(&self, args: &[&str]) -> Child {
        let mut command = Command::new(assert_cmd::cargo::cargo_bin("reins"));
        command
            .args(args.iter().map(|arg| match *arg {
                "AGENT" => self.agent.file.to_string_lossy().into_owned(),
                other => other.to_owned(),
            }))
            .arg("--json")
            .current_dir(self.agent.dir.path())
            .env("REINS_TEST_KEY", "k")
            .env_remove("OPENAI_API_KEY")
            .env_remove("REINS_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command.spawn().expect("start reins")
    }

    /// Starts the run and SIGKILLs it at `at`; the run's id and the killed process's id.
    fn start_and_kill(&self, at: KillAt) -> (String, u32) {
        let child = self.spawn(&["run", "AGENT", &self.prompt]);
        let pid = child.id();
        let (run, _) = kill_at(child, at, self.agent.dir.path());
        let run = run.unwrap_or_else(|| panic!("killed at {at:?} before the run was named"));
        (run, pid)
    }

    /// How many times each city was booked: (Oslo, Rome).
    fn bookings(&self) -> (usize, usize) {
        let text =
            std::fs::read_to_string(self.agent.dir.path().join("effects")).unwrap_or_default();
        let count = |city| text.lines().filter(|line| *line == city).count();
        (count("oslo"), count("rome"))
    }

    /// The store of the scenario's agent, opened behind reins's back.
    fn store(&self) -> rusqlite::Connection {
        let store = self.agent.dir.path().join(".reins/runs.sqlite");
        rusqlite::Connection::open(store).expect("open the store")
    }

    /// Who holds the lease on `run`, as stored.
    fn holder(&self, run: &str) -> String {
        self.store()
            .query_row(
                "SELECT lease_owner FROM reins_runs WHERE run_id = ?1",
                [run],
                |row| row.get(0),
            )
            .expect("a holder")
    }

    /// Names `holder` as the lease's holder of `run` (its lease running on).
    fn set_holder(&self, run: &str, holder: &str) {
        self.store()
            .execute(
                "UPDATE reins_runs SET lease_owner = ?2 WHERE run_id = ?1",
                [run, holder],
            )
            .expect("name the holder");
    }

    /// Resumes `run` until it answers, supplying the result of each call in doubt; the
    /// answer, the cities whose calls were in doubt, and what the first resume said on
    /// stderr.
    fn finish(&self, run: &str, at: KillAt) -> (String, Vec<String>, String) {
        let mut in_doubt = Vec::new();
        let mut first_said = None;
        for _ in 0..3 {
            let (code, stdout, stderr) = outcome(
                self.agent
                    .keyed(&["runs", "resume", "AGENT", run, "--json"]),
            );
            let first_said = first_said.get_or_insert_with(|| stderr.clone()).clone();
            let last = events(&stdout).pop().unwrap_or(Value::Null);
            match code {
                0 => {
                    assert_eq!(last["event"], "done", "killed at {at:?}: {stdout}");
                    let answer = last["answer"].as_str().unwrap_or("").to_owned();
                    return (answer, in_doubt, first_said);
                }
                3 => {
                    assert_eq!(last["event"], "suspended", "killed at {at:?}: {stdout}");
                    let pending = last["pending"].as_array().expect("pending calls");
                    assert_eq!(pending.len(), 1, "killed at {at:?}: {stdout}");
                    let call = &pending[0];
                    assert_eq!(call["in_doubt"], true, "killed at {at:?}: {stdout}");
                    assert_eq!(call["tool"], "book", "killed at {at:?}: {stdout}");
                    let city = call["args"]["city"].as_str().expect("a city").to_owned();
                    let (code, _, stderr) = outcome(self.agent.reins(&[
                        "runs",
                        "supply",
                        "AGENT",
                        run,
                        call["call"].as_str().expect("the call's id"),
                        "--result",
                        &format!("booked {city}"),
                    ]));
                    assert_eq!(code, 0, "killed at {at:?}: {stderr}");
                    in_doubt.push(city);
                }
                _ => panic!("killed at {at:?}: resume ended {code}\n{stdout}\n{stderr}"),
            }
        }
        panic!("killed at {at:?}: the run never answered");
    }

    /// Checks what every scenario ends with: the answer, each booking made once (a call in
    /// doubt cut off before its effect made none), and a store every run of which reads.
    fn check_end(&self, at: KillAt, answer: &str, in_doubt: &[String]) {
        assert_eq!(answer, ANSWER, "killed at {at:?}");
        let (oslo, rome) = self.bookings();
        for (city, made) in [("oslo", oslo), ("rome", rome)] {
            if in_doubt.iter().any(|c| c == city) {
                assert!(made <= 1, "killed at {at:?}: {city} booked {made} times");
            } else {
                assert_eq!(made, 1, "killed at {at:?}: {city} booked {made} times");
            }
        }
        let (code, stdout, stderr) =
            outcome(self.agent.reins(&["runs", "list", "AGENT", "--json"]));
        assert_eq!(code, 0, "killed at {at:?}: {stderr}");
        for run in events(&stdout) {
            assert_eq!(run["status"], "completed", "killed at {at:?}: {stdout}");
        }
    }
}

/// Reads `child`'s events until `at`, then SIGKILLs it (and a tool it left holding); the run
/// its `started` event named, and the events it printed.
fn kill_at(mut child: Child, at: KillAt, dir: &std::path::Path) -> (Option<String>, Vec<Value>) {
    let stdout = child.stdout.take().expect("piped");
    let mut lines = BufReader::new(stdout).lines();
    let mut printed = Vec::new();
    let mut run = None;
    let mut read_one = |printed: &mut Vec<Value>| -> bool {
        match lines.next() {
            Some(Ok(line)) => {
                let event: Value = serde_json::from_str(&line).expect("a JSON event");
                if event["event"] == "started" {
                    run = event["run"].as_str().map(str::to_owned);
                }
                printed.push(event);
                true
            }
            _ => false,
        }
    };
    match at {
        KillAt::Line(count) => {
            while printed.len() < count {
                assert!(
                    read_one(&mut printed),
                    "ended before line {count}: {printed:?}"
                );
            }
        }
        KillAt::Holding(city) => {
            let _ = std::fs::write(dir.join(format!("hold-{city}")), "");
            assert!(read_one(&mut printed), "no event");
            let held = dir.join("held");
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while !held.exists() {
                assert!(child.try_wait().expect("poll").is_none(), "reins ended");
                assert!(std::time::Instant::now() < deadline, "the tool never held");
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }
    // SIGKILL: no destructor, no lease given back.
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    if let KillAt::Holding(city) = at {
        // The tool's program, in a process group of its own, does not outlive reins: its
        // supervisor ends it once reins is gone.
        let pid = std::fs::read_to_string(dir.join("held")).expect("the tool's pid");
        assert!(
            ends_within_a_minute(pid.trim()),
            "killed at {at:?}: the tool's program {} outlived reins",
            pid.trim()
        );
        let _ = std::fs::remove_file(dir.join(format!("hold-{city}")));
        let _ = std::fs::remove_file(dir.join("held"));
    }
    (run, printed)
}

/// Whether the process `pid` ended (is gone, or a zombie nobody reaped) within a minute (a
/// guard: it holds for ten).
fn ends_within_a_minute(pid: &str) -> bool {
    let stat = std::path::Path::new("/proc").join(pid).join("stat");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        match std::fs::read_to_string(&stat) {
            // The state follows the command's name in parentheses.
            Ok(stat)
                if stat
                    .rsplit_once(") ")
                    .is_some_and(|(_, rest)| !rest.starts_with('Z')) =>
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            _ => return true,
        }
    }
    false
}

#[test]
fn a_run_killed_at_any_event_resumes_at_once_with_each_booking_made_once() {
    let llm = FakeLlm::start(RULES);
    // An uninterrupted run prints: started, tool_call, tool_result, tool_call, tool_result,
    // text..., done.
    let points = [
        KillAt::Line(1),
        KillAt::Line(2),
        KillAt::Holding("oslo"),
        KillAt::Line(3),
        KillAt::Line(4),
        KillAt::Holding("rome"),
        KillAt::Line(5),
        KillAt::Line(6),
    ];
    for (index, at) in points.into_iter().enumerate() {
        let scenario = Scenario::new(&llm, &format!("kill {index}"));
        let (run, pid) = scenario.start_and_kill(at);
        // The dead process's lease is live, and the first resume takes the run over from it.
        let (answer, in_doubt, said) = scenario.finish(&run, at);
        assert!(
            said.contains(&format!(
                "took over run {run} from reins run, pid {pid} on "
            )) && said.contains("which is no longer running"),
            "killed at {at:?}: {said}"
        );
        if let KillAt::Holding(city) = at {
            assert_eq!(in_doubt, [city], "killed while {city} held");
        }
        scenario.check_end(at, &answer, &in_doubt);
    }
}

#[test]
fn a_resume_killed_at_any_event_is_resumed_again_with_each_booking_made_once() {
    let llm = FakeLlm::start(RULES);
    for lines in 1..=5 {
        let at = KillAt::Line(lines);
        let scenario = Scenario::new(&llm, &format!("resume kill {lines}"));
        let (run, _) = scenario.start_and_kill(KillAt::Line(1));
        let resumer = scenario.spawn(&["runs", "resume", "AGENT", &run]);
        kill_at(resumer, at, scenario.agent.dir.path());
        let (answer, in_doubt, _) = scenario.finish(&run, at);
        scenario.check_end(at, &answer, &in_doubt);
    }
}

#[test]
fn two_resumers_racing_after_a_kill_book_each_city_once() {
    let llm = FakeLlm::start(RULES);
    let scenario = Scenario::new(&llm, "race");
    let (run, _) = scenario.start_and_kill(KillAt::Holding("oslo"));
    let first = scenario.spawn(&["runs", "resume", "AGENT", &run]);
    let second = scenario.spawn(&["runs", "resume", "AGENT", &run]);
    let mut codes = Vec::new();
    for child in [first, second] {
        let output = child.wait_with_output().expect("reins ends");
        codes.push((
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        ));
    }
    // Oslo is in doubt: whoever takes the run over first stops there (exit 3); the other is
    // refused as busy (exit 1) or finds it waiting too (exit 3). Neither books Oslo again,
    // and only one took the run over from the dead process.
    for (code, stdout, stderr) in &codes {
        assert!(matches!(code, Some(1 | 3)), "{code:?}\n{stdout}\n{stderr}");
    }
    let took_over = codes
        .iter()
        .filter(|(_, _, stderr)| stderr.contains("took over run"))
        .count();
    assert_eq!(took_over, 1, "{codes:?}");
    assert_eq!(scenario.bookings(), (1, 0), "{codes:?}");
    let (answer, in_doubt, _) = scenario.finish(&run, KillAt::Holding("oslo"));
    assert_eq!(in_doubt, ["oslo"]);
    scenario.check_end(KillAt::Holding("oslo"), &answer, &in_doubt);
}

/// A lease whose holder runs, or ran on another machine, in another pid namespace (a
/// container given this host's name) or boot, or whose name does not say its namespace and
/// boot (an earlier reins's), refuses a resume as busy, naming it, and writes nothing; once
/// it names the dead process again, the resume takes over, long before the hour-long lease
/// `[store] lease_secs` gave it would run out.
#[test]
fn a_live_or_distant_holder_keeps_the_run() {
    let llm = FakeLlm::start(RULES);
    let scenario = Scenario::with(&llm, "live holder", "\n[store]\nlease_secs = 3600\n");
    let (run, pid) = scenario.start_and_kill(KillAt::Line(2));
    // Renewals move the lease's end, never the record's last write.
    let (until, written): (i64, i64) = scenario
        .store()
        .query_row(
            "SELECT lease_until, updated_at FROM reins_runs WHERE run_id = ?1",
            [&run],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .expect("the lease");
    assert!(
        until - written >= 3_600_000,
        "leased for {} ms",
        until - written
    );
    let dead = scenario.holder(&run);
    // `HOST (pid ns N, boot B)`: where the pid names the process.
    let (host, namespace, boot) = dead
        .strip_prefix(&format!("reins run, pid {pid} on "))
        .and_then(|place| place.rsplit_once(" (pid ns "))
        .and_then(|(host, space)| {
            let (namespace, boot) = space.strip_suffix(')')?.split_once(", boot ")?;
            Some((
                host.to_owned(),
                namespace.parse::<u64>().ok()?,
                boot.to_owned(),
            ))
        })
        .unwrap_or_else(|| panic!("a worker's name, with its pid space: {dead}"));
    // Its first hex digit changed.
    let other_boot = match boot.split_at(1) {
        ("0", rest) => format!("1{rest}"),
        (_, rest) => format!("0{rest}"),
    };
    for holder in [
        // This test's process runs.
        format!(
            "reins run, pid {} on {host} (pid ns {namespace}, boot {boot})",
            std::process::id()
        ),
        format!("reins run, pid {pid} on not-{host} (pid ns {namespace}, boot {boot})"),
        // A container given this host's name, where that pid may run.
        format!(
            "reins run, pid {pid} on {host} (pid ns {}, boot {boot})",
            namespace + 1
        ),
        // Another machine of this name, or this one before it restarted.
        format!("reins run, pid {pid} on {host} (pid ns {namespace}, boot {other_boot})"),
        // An earlier reins's name says neither.
        format!("reins run, pid {pid} on {host}"),
        format!("worker {pid}"),
    ] {
        scenario.set_holder(&run, &holder);
        let (code, _, stderr) = outcome(scenario.agent.keyed(&["runs", "resume", "AGENT", &run]));
        assert_eq!(code, 1, "{holder}: {stderr}");
        assert!(
            stderr.contains(&holder) && !stderr.contains("took over"),
            "{holder}: {stderr}"
        );
        assert_eq!(scenario.holder(&run), holder, "nothing written");
    }
    scenario.set_holder(&run, &dead);
    let (answer, in_doubt, said) = scenario.finish(&run, KillAt::Line(2));
    assert!(
        said.contains(&format!("took over run {run} from {dead}")),
        "{said}"
    );
    scenario.check_end(KillAt::Line(2), &answer, &in_doubt);
}
