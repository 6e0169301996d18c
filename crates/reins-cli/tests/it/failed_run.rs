//! A failed run says why: `reins runs show` prints the error it ended with (its model's
//! server was unreachable here), and never the model's key.

use crate::common::{AgentDir, events, model_table, outcome};
use serde_json::Value;

#[test]
fn runs_show_says_why_a_run_failed_without_its_key() {
    // Nothing listens on the model's port.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let dead_url = format!("http://{}/v1", closed.local_addr().expect("its address"));
    drop(closed);
    let agent = AgentDir::new(&model_table(&dead_url));
    let key = "sk-test-d0-not-print-7f3a";

    let (code, stdout, stderr) = outcome(
        agent
            .reins(&["run", "AGENT", "Hello.", "--json"])
            .env("REINS_TEST_KEY", key),
    );
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let failed = events(&stdout).pop().expect("events");
    assert_eq!(failed["event"], "error", "{stdout}");
    let run = failed["run"].as_str().expect("a run id").to_owned();

    let (code, stdout, stderr) = outcome(agent.reins(&["runs", "show", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    let reason = stdout
        .lines()
        .find_map(|line| line.strip_prefix("failed: "))
        .unwrap_or_else(|| panic!("no line says why the run failed:\n{stdout}"));
    assert!(
        reason.starts_with("the model call failed: "),
        "the reason names the model call: {reason}"
    );
    assert_eq!(
        Some(reason),
        failed["message"].as_str(),
        "the reason is the error the run ended with"
    );
    assert!(!stdout.contains(key), "{stdout}");

    let (code, stdout, stderr) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    assert_eq!(code, 0, "{stderr}");
    let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
    assert_eq!(shown["status"], "failed");
    assert_eq!(shown["failure"].as_str(), Some(reason));
    assert!(!stdout.contains(key), "{stdout}");
}
