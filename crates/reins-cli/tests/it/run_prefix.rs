//! A run named by the start of its id (`reins runs show agent.toml run-41a`, or `41a`), as
//! people type what they see in `reins runs list`: one run starting so is that run; several
//! are listed and none is acted on; none says how to list the runs.

use crate::common::{AgentDir, events, model_table, outcome};

/// An agent whose runs fail at their first model call (nothing listens), with `count` runs.
fn failed_runs(count: usize) -> (AgentDir, Vec<String>) {
    let agent = AgentDir::new(&format!(
        "default_prompt = \"hi\"\n{}",
        model_table("http://127.0.0.1:9")
    ));
    let mut runs = Vec::new();
    for _ in 0..count {
        let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "--json"]));
        assert_eq!(code, 1, "{stdout}\n{stderr}");
        let failed = events(&stdout).pop().expect("events");
        runs.push(failed["run"].as_str().expect("a run id").to_owned());
    }
    (agent, runs)
}

/// The shortest start of `run` no other of `runs` shares.
fn unique_start<'a>(run: &'a str, runs: &[String]) -> &'a str {
    (1..=run.len())
        .map(|end| &run[..end])
        .find(|start| {
            runs.iter()
                .filter(|other| other.as_str() != run)
                .all(|other| !other.starts_with(start))
        })
        .expect("ids differ")
}

#[test]
fn the_start_of_one_runs_id_names_that_run() {
    let (agent, runs) = failed_runs(2);
    let run = &runs[0];
    let start = unique_start(run, &runs);
    let without_prefix = start.strip_prefix("run-").unwrap_or(start);
    for given in [start, without_prefix] {
        let (code, stdout, stderr) =
            outcome(agent.reins(&["runs", "show", "AGENT", given, "--json"]));
        assert_eq!(code, 0, "{given}: {stderr}");
        let shown = events(&stdout).pop().expect("the run");
        assert_eq!(shown["run"], run.as_str(), "{given}: {stdout}");

        let (code, stdout, stderr) =
            outcome(agent.reins(&["runs", "checkpoints", "AGENT", given, "--json"]));
        assert_eq!(code, 0, "{given}: {stderr}");
        assert!(!events(&stdout).is_empty(), "{given}: {stdout}");
    }
}

#[test]
fn a_start_several_runs_share_lists_them_and_acts_on_none() {
    let (agent, runs) = failed_runs(2);
    let (code, stdout, stderr) = outcome(agent.reins(&["runs", "show", "AGENT", "run-"]));
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("`run-` is the start of more than one run's id"),
        "{stderr}"
    );
    for run in &runs {
        assert!(
            stderr.contains(run.as_str()),
            "{run} is not named: {stderr}"
        );
    }
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn a_run_that_is_not_stored_says_how_to_list_the_runs() {
    let (agent, _) = failed_runs(1);
    for command in [
        &["runs", "show", "AGENT", "run-nope"][..],
        &["runs", "resume", "AGENT", "run-nope"],
        &["chat", "AGENT", "--resume", "run-nope"],
    ] {
        let (code, _, stderr) = outcome(agent.keyed(command));
        assert_eq!(code, 1, "{command:?}: {stderr}");
        assert!(
            stderr.contains("no run `run-nope` is stored")
                && stderr.contains("`reins runs list ")
                && stderr.contains("` lists the runs"),
            "{command:?}: {stderr}"
        );
    }
}

/// Before any run, a run named is not stored because there are none yet: said, with how to
/// start one (as `runs list` says it), rather than sending the person to an empty list.
#[test]
fn a_run_named_before_any_run_says_there_are_none_yet_and_how_to_start_one() {
    let (agent, _) = failed_runs(0);
    let file = agent.file.display().to_string();
    for command in [
        &["runs", "show", "AGENT", "run-nope"][..],
        &["runs", "approve", "AGENT", "run-nope"],
        &["runs", "resume", "AGENT", "run-nope"],
        &["chat", "AGENT", "--resume", "run-nope"],
    ] {
        let (code, _, stderr) = outcome(agent.keyed(command));
        assert_eq!(code, 1, "{command:?}: {stderr}");
        assert!(
            stderr.contains("no run `run-nope` is stored: there are no runs yet")
                && stderr.contains(&format!("`reins run {file} \"PROMPT\"` starts one")),
            "{command:?}: {stderr}"
        );
        assert!(!stderr.contains("lists the runs"), "{command:?}: {stderr}");
    }
}
