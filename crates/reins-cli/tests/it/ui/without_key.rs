//! An inbox started without the model's key, by a colleague who only approves calls: it
//! starts, records their decisions, and leaves the run to `reins runs resume`, saying so at
//! start-up and on the run's page, and naming the variable only.

use super::{RULES, agent, finished, suspended_run};
use crate::common::fakellm::FakeLlm;
use crate::common::inbox::{Inbox, form_field};
use crate::common::outcome;
use crate::common::webdriver::Browser;
use serde_json::Value;

#[test]
fn an_inbox_without_the_models_key_records_decisions_and_leaves_the_run_to_runs_resume() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let inbox = Inbox::start_without_key(&agent);

    // The run's page says before the decision that the run is not resumed here, and why.
    let page = inbox.run_page(&run);
    assert!(
        page.contains("id=\"not-resumed-here\"") && page.contains("REINS_TEST_KEY"),
        "{page}"
    );
    let decided = inbox.decide(&page, &run, "t1c0", "approve", "args=");
    assert_eq!(decided.status(), 303, "the decision is recorded");

    // After it: decided, not resumed, and the command that resumes it.
    let page = inbox.run_page(&run);
    let file = agent.file.to_string_lossy();
    assert!(
        page.contains(&format!("reins runs resume {file} {run}")),
        "the page says how the run goes on\n{page}"
    );
    assert!(!page.contains("id=\"resumed-here\""), "{page}");
    if let Ok(dir) = std::env::var("REINS_SCREENSHOTS") {
        let browser = Browser::start();
        browser.goto(&inbox.printed);
        browser.goto(&format!("{}/runs/{run}", inbox.url));
        std::fs::write(format!("{dir}/not-resumed-here.png"), browser.screenshot())
            .expect("screenshot");
    }
    let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
    assert_eq!(shown["status"], "suspended", "{stdout}");
    assert_eq!(
        shown["pending"].as_array().map(Vec::len),
        Some(0),
        "{stdout}"
    );
    assert_eq!(
        shown["decisions"].as_array().map(Vec::len),
        Some(1),
        "{stdout}"
    );

    // Its resume button is not offered, and a resume sent all the same is refused, saying why.
    assert!(!page.contains("name=\"resume\""), "{page}");
    let resumed = inbox
        .http()
        .post(format!("{}/runs/{run}/resume", inbox.url))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!("csrf={}", form_field(&page, "csrf")))
        .send()
        .expect("post");
    assert_eq!(resumed.status(), 409);
    let refusal = resumed.text().expect("page");
    assert!(
        refusal.contains("REINS_TEST_KEY") && refusal.contains("reins runs resume"),
        "{refusal}"
    );

    // Where the key is set, the run goes on with the inbox's decision.
    let (code, stdout, stderr) = outcome(agent.keyed(&["runs", "resume", "AGENT", &run]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let done = finished(&agent, &run);
    assert_eq!(done["status"], "completed");

    // At start-up, one line said why runs are not resumed here, naming the variable only.
    let (status, stderr) = inbox.stop("INT");
    assert!(status.success(), "{stderr}");
    let said: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("not resumed here"))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(
        said[0].contains("because REINS_TEST_KEY is not set")
            && said[0].contains("reins runs resume"),
        "{stderr}"
    );
}

/// With its key, the inbox says nothing of the kind and resumes the run itself.
#[test]
fn an_inbox_with_the_models_key_resumes_the_run_itself() {
    let server = FakeLlm::start(RULES);
    let agent = agent(&server);
    let run = suspended_run(&agent);
    let inbox = Inbox::start(&agent, &[]);
    let page = inbox.run_page(&run);
    assert!(!page.contains("not-resumed-here"), "{page}");
    let decided = inbox.decide(&page, &run, "t1c0", "approve", "args=");
    assert_eq!(decided.status(), 303);
    assert_eq!(finished(&agent, &run)["status"], "completed");
    let (_, stderr) = inbox.stop("INT");
    assert!(!stderr.contains("not resumed here"), "{stderr}");
}
