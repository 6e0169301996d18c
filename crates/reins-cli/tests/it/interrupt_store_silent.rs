//! Ctrl-C during `reins run` while the run store does not answer (here a SQLite file another
//! process keeps locked; a PostgreSQL server gone silent is the same to reins): giving the
//! lease back cannot finish, so reins stops waiting for it after a short while instead of
//! never exiting, says the lease was left to expire and when, and exits 130 all the same.

use crate::common::fakellm::FakeLlm;
use crate::common::{events, outcome};
use crate::interrupt::{interrupt, interrupted_run, run_waiting_in_its_tool};

#[test]
fn ctrl_c_while_the_store_does_not_answer_leaves_the_lease_to_expire_and_exits() {
    let llm = FakeLlm::start(crate::interrupt::RULES);
    let (agent, child) = run_waiting_in_its_tool(&llm);

    // Another process takes the store's write lock and keeps it (longer than the store's
    // own wait for a lock), as a long write or a stuck one does.
    let store = agent.dir.path().join(".reins").join("runs.sqlite");
    let locker = rusqlite::Connection::open(&store).expect("open the store");
    locker
        .execute_batch("BEGIN EXCLUSIVE")
        .expect("lock the store");

    let pid = child.id().to_string();
    let stderr = interrupt(child, &pid);
    let (line, run) = interrupted_run(&stderr);
    assert!(
        line.contains("left to expire at ") && line.contains(" UTC"),
        "the line says the lease was left to expire, and when: {stderr}"
    );
    locker.execute_batch("ROLLBACK").expect("unlock the store");

    // The run keeps the lease of the reins that ended, until it expires: not before the time
    // the line said.
    let (code, listed, stderr) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    assert_eq!(code, 0, "{stderr}");
    let runs = events(&listed);
    let shown = runs
        .iter()
        .find(|shown| shown["run"] == run.as_str())
        .unwrap_or_else(|| panic!("run {run} is listed: {listed}"));
    let until = shown["lease"]["expires_at"].as_str().unwrap_or_default();
    let said = line
        .split_once("left to expire at ")
        .map(|(_, rest)| rest.get(..23).unwrap_or(rest))
        .unwrap_or_default();
    // `YYYY-MM-DD HH:MM:SS UTC` sorts as the times it names.
    assert!(
        !until.is_empty() && said.ends_with(" UTC") && said <= until,
        "the line names when the lease expires at the earliest ({until}): {line}"
    );
}
