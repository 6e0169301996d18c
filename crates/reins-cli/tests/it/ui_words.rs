//! What a person reads about a call that waits for them: in the inbox, what to do there (not
//! a command to open the inbox they are in).

use crate::common::fakellm::FakeLlm;
use crate::common::inbox::{Inbox, http};
use crate::common::{AgentDir, notes_agent, outcome, save_note_rules, waiting_save_note};

/// The notes agent whose `save_note` calls wait for a person, and the run that waits.
fn waiting_run(server: &FakeLlm) -> (AgentDir, String) {
    let agent = notes_agent(
        &server.openai_url(),
        "\n[hooks.approval]\nrules = [{ tool = \"save_note\", action = \"ask\" }]\n",
    );
    let (code, stdout, stderr) = outcome(
        agent
            .reins(&["run", "AGENT", "--json"])
            .env("REINS_TEST_KEY", "k"),
    );
    let (run, _) = waiting_save_note(code, &stdout, &stderr);
    (agent, run)
}

#[test]
fn in_the_inbox_a_waiting_call_says_to_decide_it_on_the_page() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let (agent, run) = waiting_run(&server);
    let inbox = Inbox::start(&agent, &[]);
    let page = http()
        .get(format!("{}/runs/{run}", inbox.url))
        .send()
        .and_then(|r| r.text())
        .expect("page");
    assert!(
        page.contains("<b>save_note</b> waits for your decision: approve or deny it below</p>"),
        "{page}"
    );
    assert!(
        !page.contains("reins ui"),
        "the person is in the inbox\n{page}"
    );

    // In the terminal the stored reason still says where to decide it.
    let (_, shown, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run]));
    assert!(shown.contains("`reins ui`"), "{shown}");
}
