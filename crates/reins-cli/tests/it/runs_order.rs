//! `reins runs list` lists runs the last written last: in the order their records were last
//! written (created, checkpointed, claimed to resume), as the store keeps it, whatever their
//! ids.

use crate::common::{AgentDir, events, model_table, outcome};

/// The ids `runs list --json` lists, in its order, and the run ids of the table's rows.
fn listed(agent: &AgentDir) -> (Vec<String>, Vec<String>) {
    let (code, stdout, stderr) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    assert_eq!(code, 0, "{stderr}");
    let json = events(&stdout)
        .iter()
        .map(|run| run["run"].as_str().expect("its id").to_owned())
        .collect();
    let (code, table, stderr) = outcome(agent.reins(&["runs", "list", "AGENT"]));
    assert_eq!(code, 0, "{stderr}");
    let rows = table
        .lines()
        .skip(1)
        .filter_map(|row| row.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    (json, rows)
}

#[test]
fn runs_are_listed_the_last_written_last() {
    // Every run fails at its first model call (nothing listens), and is stored as failed.
    let agent = AgentDir::new(&format!(
        "default_prompt = \"hi\"\n{}",
        model_table("http://127.0.0.1:9")
    ));
    let mut written = Vec::new();
    for _ in 0..3 {
        let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "--json"]));
        assert_eq!(code, 1, "{stdout}\n{stderr}");
        let failed = events(&stdout).pop().expect("events");
        written.push(failed["run"].as_str().expect("a run id").to_owned());
    }
    assert_eq!(listed(&agent), (written.clone(), written.clone()));

    // The first run's record is written again (as a worker claiming it to resume it would),
    // after the others': it is listed last now.
    let store = agent.dir.path().join(".reins").join("runs.sqlite");
    let connection = rusqlite::Connection::open(&store).expect("the store");
    let changed = connection
        .execute(
            "UPDATE reins_runs SET updated_at = (SELECT MAX(updated_at) + 1 FROM reins_runs)
                 WHERE run_id = ?1",
            [&written[0]],
        )
        .expect("update");
    assert_eq!(changed, 1);
    written.rotate_left(1);
    assert_eq!(listed(&agent), (written.clone(), written));
}

/// Before any run, listing (or showing) reads nothing and makes nothing: no `.reins`
/// directory appears where a person only looked, and the empty table says how to start one.
#[test]
fn listing_before_any_run_creates_no_store_and_says_how_to_start_one() {
    let agent = AgentDir::new(&model_table("http://127.0.0.1:9"));
    let (code, table, stderr) = outcome(agent.reins(&["runs", "list", "AGENT"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(table.lines().count(), 1, "the header alone: {table}");
    assert!(
        stderr.contains("no runs yet: `reins run") && stderr.contains("starts one"),
        "{stderr}"
    );
    let (code, json, stderr) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    assert_eq!((code, json.as_str()), (0, ""), "{stderr}");
    let (code, _, stderr) = outcome(agent.reins(&["runs", "show", "AGENT", "run-1"]));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        !agent.dir.path().join(".reins").exists(),
        "reading made the store's directory"
    );
}
