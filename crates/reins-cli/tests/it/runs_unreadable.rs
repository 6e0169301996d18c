//! `reins runs list` on a store holding a record this release cannot read (a newer release's
//! status): every other run is still listed, and the unreadable one is a row with its reason,
//! in the table and in `--json`, instead of one bad record failing the whole listing. The web
//! inbox names it under its runs too.

use crate::common::inbox::{Inbox, RunCopies, copy_run_records};
use crate::common::{AgentDir, events, model_table, outcome};

/// An agent whose runs fail at their first model call (no model answers): two of them stored.
fn two_failed_runs() -> (AgentDir, Vec<String>) {
    let agent = AgentDir::new(&format!(
        "default_prompt = \"hi\"\n{}",
        model_table("http://127.0.0.1:9")
    ));
    for _ in 0..2 {
        let (code, _, stderr) = outcome(agent.keyed(&["run", "AGENT"]));
        assert_eq!(code, 1, "{stderr}");
    }
    let (code, stdout, stderr) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    assert_eq!(code, 0, "{stderr}");
    let runs: Vec<String> = events(&stdout)
        .iter()
        .map(|run| run["run"].as_str().expect("its id").to_owned())
        .collect();
    assert_eq!(runs.len(), 2, "{stdout}");
    (agent, runs)
}

/// Stores `run` with a status this release does not know, as a newer release might.
fn give_an_unknown_status(agent: &AgentDir, run: &str) {
    let store = agent.dir.path().join(".reins").join("runs.sqlite");
    let connection = rusqlite::Connection::open(&store).expect("the store");
    let changed = connection
        .execute(
            "UPDATE reins_runs SET status = 'paused' WHERE run_id = ?1",
            [run],
        )
        .expect("update");
    assert_eq!(changed, 1);
}

#[test]
fn an_unreadable_record_is_listed_with_its_reason_and_hides_no_other_run() {
    let (agent, runs) = two_failed_runs();
    let (readable, unreadable) = (&runs[0], &runs[1]);
    give_an_unknown_status(&agent, unreadable);
    let reason = "its stored status `paused` is not one this release knows";

    let (code, table, stderr) = outcome(agent.reins(&["runs", "list", "AGENT"]));
    assert_eq!(code, 0, "{stderr}");
    let row = |id: &str| {
        table
            .lines()
            .find(|line| line.starts_with(id))
            .unwrap_or_else(|| panic!("{id} is not in the table:\n{table}"))
            .to_owned()
    };
    assert!(row(readable).contains(" failed "), "{table}");
    let bad = row(unreadable);
    assert!(
        bad.contains(" unreadable ") && bad.contains(reason),
        "{bad}"
    );

    let (code, stdout, stderr) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    assert_eq!(code, 0, "{stderr}");
    let lines = events(&stdout);
    assert_eq!(lines.len(), 2, "{stdout}");
    let good = lines.iter().find(|line| line["run"] == readable.as_str());
    assert_eq!(good.map(|line| &line["status"]), Some(&"failed".into()));
    assert!(
        good.is_some_and(|line| line.get("unreadable").is_none()),
        "{stdout}"
    );
    let bad = lines
        .iter()
        .find(|line| line["run"] == unreadable.as_str())
        .unwrap_or_else(|| panic!("{unreadable} is not listed: {stdout}"));
    let said = bad["unreadable"].as_str().unwrap_or_default();
    assert!(said.contains(reason), "{bad}");
}

#[test]
fn the_inbox_lists_its_runs_and_names_an_unreadable_one_with_its_reason() {
    let (agent, runs) = two_failed_runs();
    let (readable, unreadable) = (&runs[0], &runs[1]);
    give_an_unknown_status(&agent, unreadable);

    let inbox = Inbox::start(&agent, &[]);
    let response = inbox
        .http()
        .get(format!("{}/", inbox.url))
        .send()
        .expect("runs page");
    assert_eq!(response.status(), 200);
    let page = response.text().expect("its text");
    assert!(page.contains(&format!(">{readable}</a>")), "{page}");
    let named = page
        .split("id=\"unreadable\"")
        .nth(1)
        .unwrap_or_else(|| panic!("no unreadable runs named: {page}"));
    assert!(
        named.contains(&format!("<code>{unreadable}</code>: "))
            && named.contains("its stored status `paused` is not one this release knows"),
        "{named}"
    );
}

/// The most unreadable runs the inbox names (`ui::html::MOST_UNREADABLE_LISTED`).
const MOST_UNREADABLE_LISTED: usize = 50;

/// A store of many unreadable runs makes no huge page, built again every two seconds: the
/// inbox names some and says how many more there are, and which command lists them all.
#[test]
fn the_inbox_names_some_of_many_unreadable_runs_and_says_how_many_more() {
    let (agent, runs) = two_failed_runs();
    let copies = MOST_UNREADABLE_LISTED + 30;
    copy_run_records(&agent, &runs[0], copies, RunCopies::Unreadable);

    let inbox = Inbox::start(&agent, &[]);
    let page = inbox.runs_page();
    assert!(page.contains(&format!(">{}</a>", runs[1])), "{page}");
    let named = page
        .split("id=\"unreadable\"")
        .nth(1)
        .unwrap_or_else(|| panic!("no unreadable runs named: {page}"));
    assert_eq!(
        named.matches("<li><code>").count(),
        MOST_UNREADABLE_LISTED,
        "{named}"
    );
    assert!(
        named.contains(&format!(
            "{} more are not named here",
            copies - MOST_UNREADABLE_LISTED
        )),
        "{named}"
    );
    assert!(named.contains("reins runs list"), "{named}");
}
