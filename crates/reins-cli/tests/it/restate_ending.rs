//! A run on Restate that journals its last steps and ends between two reads of whoever
//! follows it: `reins runs resume` still prints every step before the answer (or the error),
//! and `reins runs show` lists them all. A stand-in ingress answers the reads in that order,
//! so the ending always falls between them.

use crate::common::stand_in_ingress::stand_in_ingress;
use crate::common::{AgentDir, events, model_table, outcome};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};

const RUN: &str = "run-ending";

/// The steps of the run once it has ended; the first read of its status sees only the first.
fn all_steps() -> Vec<String> {
    ["model/1", "t1c0", "model/2"]
        .iter()
        .map(|step| format!("{RUN}/{step}"))
        .collect()
}

/// An ingress whose first read of the run's status comes before the run's last steps, and
/// every later read after them; the run's output is `output` (status and JSON body) from the
/// first read on. Its URL.
fn ingress_ending_between_reads(output: (u16, Value)) -> String {
    let status_reads = AtomicUsize::new(0);
    stand_in_ingress(move |head| {
        if head.starts_with(&format!("POST /ReinsAgent/{RUN}/status ")) {
            let steps = if status_reads.fetch_add(1, Ordering::SeqCst) == 0 {
                all_steps()[..1].to_vec()
            } else {
                all_steps()
            };
            (200, json!({"steps": steps, "pending": []}))
        } else if head.starts_with(&format!("GET /restate/workflow/ReinsAgent/{RUN}/output ")) {
            output.clone()
        } else {
            (404, json!({"message": "not here"}))
        }
    })
}

fn agent_on(ingress: &str) -> AgentDir {
    // Nothing listens on the model's URL: only the worker would call the model.
    AgentDir::new(&format!(
        "{}\n[store]\nrestate = \"{ingress}\"\n",
        model_table("http://127.0.0.1:9/v1")
    ))
}

fn printed_steps(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter_map(|line| line.strip_prefix("[step] "))
        .collect()
}

#[test]
fn a_run_that_ends_between_two_reads_is_followed_to_its_last_step() {
    let answered = json!({
        "run_id": RUN,
        "answer": "The time server answered.",
        "turns": 2,
        "usage": {"input_tokens": 30, "output_tokens": 10, "total_tokens": 40},
    });
    let agent = agent_on(&ingress_ending_between_reads((200, answered.clone())));
    let (code, stdout, stderr) = outcome(agent.reins(&["runs", "resume", "AGENT", RUN]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(stdout.trim(), "The time server answered.", "{stderr}");
    assert_eq!(printed_steps(&stderr), all_steps(), "{stderr}");

    let agent = agent_on(&ingress_ending_between_reads((200, answered)));
    let (code, stdout, stderr) = outcome(agent.reins(&["runs", "show", "AGENT", RUN, "--json"]));
    assert_eq!(code, 0, "{stderr}");
    let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
    assert_eq!(shown["status"], "completed", "{stdout}");
    assert_eq!(shown["steps"], json!(all_steps()), "{stdout}");
}

#[test]
fn a_run_that_fails_between_two_reads_is_followed_to_its_last_step() {
    let failed = json!({"message": "the run failed: the model refused"});
    let agent = agent_on(&ingress_ending_between_reads((500, failed)));
    let (code, stdout, _) = outcome(agent.reins(&["runs", "resume", "AGENT", RUN, "--json"]));
    assert_eq!(code, 1, "{stdout}");
    let events = events(&stdout);
    let steps: Vec<&Value> = events
        .iter()
        .filter(|event| event["event"] == "step")
        .map(|event| &event["step"])
        .collect();
    assert_eq!(steps, all_steps().iter().collect::<Vec<_>>(), "{stdout}");
    let last = events.last().expect("an ending");
    assert_eq!(last["event"], "error", "{stdout}");
    assert_eq!(
        last["message"], "the run failed: the model refused",
        "{stdout}"
    );
}
