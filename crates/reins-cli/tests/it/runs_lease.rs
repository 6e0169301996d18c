//! `reins runs list|show` say who drives a running run — the `reins run` process holding its
//! lease, named by its pid and machine, and until when — and which running run was left
//! (Ctrl-C gave its lease back), so a person knows which one `runs resume` takes at once;
//! and `[store] lease_secs`, the length of those leases, is checked at its line.

use crate::check::{VALID, assert_error_at};
use crate::common::check_file as check;
use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, events, outcome};
use crate::interrupt::{RULES, interrupt, run_waiting_in_its_tool};
use serde_json::Value;

/// The only run `runs list --json` lists, and the line of `runs list` about it.
fn listed(agent: &AgentDir) -> (Value, String) {
    let (code, stdout, stderr) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    assert_eq!(code, 0, "{stderr}");
    let mut runs = events(&stdout);
    assert_eq!(runs.len(), 1, "{stdout}");
    let run = runs.remove(0);
    let id = run["run"].as_str().expect("its id").to_owned();
    let (code, table, stderr) = outcome(agent.reins(&["runs", "list", "AGENT"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        table.starts_with("RUN ") && table.contains(" LEASE"),
        "{table}"
    );
    let line = table
        .lines()
        .find(|line| line.starts_with(&id))
        .unwrap_or_else(|| panic!("{id} is not in the table: {table}"))
        .to_owned();
    (run, line)
}

/// `runs show` of `run`, as text and as JSON.
fn shown(agent: &AgentDir, run: &str) -> (String, Value) {
    let (code, text, stderr) = outcome(agent.reins(&["runs", "show", "AGENT", run]));
    assert_eq!(code, 0, "{stderr}");
    let (code, json, stderr) = outcome(agent.reins(&["runs", "show", "AGENT", run, "--json"]));
    assert_eq!(code, 0, "{stderr}");
    (text, serde_json::from_str(json.trim()).expect("json"))
}

#[test]
fn runs_list_and_show_tell_a_driven_run_from_a_left_one() {
    let llm = FakeLlm::start(RULES);
    let (agent, child) = run_waiting_in_its_tool(&llm);
    let pid = child.id().to_string();
    let driver = format!("reins run, pid {pid} on ");

    let (run, line) = listed(&agent);
    let id = run["run"].as_str().expect("its id").to_owned();
    assert_eq!(run["status"], "running");
    let owner = run["lease"]["owner"].as_str().unwrap_or_default();
    assert!(owner.starts_with(&driver), "{run}");
    assert_eq!(run["lease"]["owner_gone"], false, "{run}");
    let until = run["lease"]["expires_at"].as_str().unwrap_or_default();
    assert!(until.ends_with(" UTC"), "{run}");
    assert!(
        run["lease"]["expires_at_ms"].as_i64().unwrap_or_default() > 0,
        "{run}"
    );
    assert!(
        line.contains(&format!("driven by {owner} until {until}")),
        "{line}"
    );
    let (text, json) = shown(&agent, &id);
    assert_eq!(json["lease"], run["lease"]);
    assert!(
        text.contains(&format!(
            "driven by {owner} until {until}: a resume before then is refused as busy"
        )),
        "{text}"
    );

    // Ctrl-C gives the lease back: nobody drives the run, which waits to be resumed.
    interrupt(child, &pid);
    let (run, line) = listed(&agent);
    assert_eq!(run["status"], "running");
    assert!(run["lease"].is_null(), "{run}");
    assert!(line.contains("left (resumable)"), "{line}");
    let (text, json) = shown(&agent, &id);
    assert!(json["lease"].is_null(), "{json}");
    assert!(
        text.contains("left: no process drives it")
            && text.contains(&format!("reins runs resume {}", agent.file.display())),
        "{text}"
    );
}

/// A `reins run` killed with SIGKILL keeps its lease (nothing gives it back), naming a process
/// of this machine that no longer runs: `runs list` says so, and that `runs resume` takes the
/// run over at once rather than waiting the lease out.
#[test]
fn runs_list_says_a_holder_died_and_a_resume_takes_its_run_over() {
    let llm = FakeLlm::start(RULES);
    let (agent, mut child) = run_waiting_in_its_tool(&llm);
    let pid = child.id();
    // The tool reins started outlives it: ended too, once reins is.
    let tools =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    for tool in tools.split_whitespace() {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", tool])
            .status();
    }

    let (run, line) = listed(&agent);
    let id = run["run"].as_str().expect("its id").to_owned();
    assert_eq!(run["status"], "running");
    let owner = run["lease"]["owner"].as_str().unwrap_or_default();
    assert!(
        owner.starts_with(&format!("reins run, pid {pid} on ")),
        "{run}"
    );
    assert_eq!(run["lease"]["owner_gone"], true, "{run}");
    assert!(
        line.contains(&format!(
            ", whose process died: `reins runs resume {} {id}` takes the run over",
            agent.file.display()
        )),
        "{line}"
    );
}

/// A lease of no time would leave every run to any process at once; one of years would keep
/// a run whose process died busy for years.
#[test]
fn a_lease_of_no_time_or_of_years_is_refused_at_its_line() {
    for secs in ["0", "86401", "9223372036854775807"] {
        assert_error_at(
            &format!("{VALID}\n[store]\nlease_secs = {secs}\n"),
            22,
            "`lease_secs` must be from 1 to 86400",
        );
    }
    for secs in ["1", "86400"] {
        let (code, stderr) = check(&format!("{VALID}\n[store]\nlease_secs = {secs}\n"));
        assert_eq!(code, 0, "{secs}: {stderr}");
    }
}
