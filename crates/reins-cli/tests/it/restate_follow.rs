//! A run on Restate followed while it goes on (`reins runs resume`, as `reins run` follows
//! the run it starts): a step the run journals while the follower is between its reads is
//! printed as soon as the follower has read it, before it asks the ingress anything more.
//! A stand-in ingress makes the step readable in the middle of the follower's first poll
//! and, once it has answered a read with the step, looks at what the follower printed when
//! the next request comes.

use crate::common::stand_in_ingress::stand_in_ingress;
use crate::common::{AgentDir, model_table};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const RUN: &str = "run-going-on";
const STEP: &str = "run-going-on/model/1";

/// What the stand-in ingress saw, shared with the test.
#[derive(Default)]
struct Seen {
    /// What the follower printed on stderr so far.
    printed: Mutex<String>,
    /// Whether the step is journaled (readable) yet.
    journaled: AtomicBool,
    /// Whether a read was answered with the step.
    served: AtomicBool,
    /// Whether, at the first request after the step was served, it was printed.
    printed_before_asking_again: Mutex<Option<bool>>,
}

impl Seen {
    /// Whether the step line shows in what was printed, waiting a while for the pipe to
    /// carry it (not a measure of speed: the follower printed it or did not).
    fn step_printed(&self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let printed = self.printed.lock().expect("printed").contains(STEP);
            if printed || Instant::now() > deadline {
                return printed;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The answer to the request whose head is `head`.
fn answer(seen: &Seen, head: &str) -> (u16, Value) {
    if seen.served.load(Ordering::SeqCst) {
        let mut checked = seen.printed_before_asking_again.lock().expect("checked");
        if checked.is_none() {
            *checked = Some(seen.step_printed());
        }
    }
    let ended = seen
        .printed_before_asking_again
        .lock()
        .expect("checked")
        .is_some();
    if head.starts_with(&format!("POST /ReinsAgent/{RUN}/status ")) {
        let steps: Vec<&str> = if seen.journaled.load(Ordering::SeqCst) {
            seen.served.store(true, Ordering::SeqCst);
            vec![STEP]
        } else {
            Vec::new()
        };
        (200, json!({"steps": steps, "pending": []}))
    } else if head.starts_with(&format!("GET /restate/workflow/ReinsAgent/{RUN}/output ")) {
        if ended {
            let output = json!({
                "run_id": RUN,
                "answer": "Done.",
                "turns": 1,
                "usage": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4},
            });
            return (200, output);
        }
        // The run journals its step while the follower is between its reads.
        seen.journaled.store(true, Ordering::SeqCst);
        (470, json!({"message": "not completed yet"}))
    } else {
        (404, json!({"message": "not here"}))
    }
}

/// The stand-in ingress; its URL.
fn ingress(seen: Arc<Seen>) -> String {
    stand_in_ingress(move |head| answer(&seen, head))
}

#[test]
fn a_step_journaled_between_two_reads_is_printed_before_the_next_read() {
    let seen = Arc::new(Seen::default());
    let url = ingress(seen.clone());
    // Nothing listens on the model's URL: only the worker would call the model.
    let agent = AgentDir::new(&format!(
        "{}\n[store]\nrestate = \"{url}\"\n",
        model_table("http://127.0.0.1:9/v1")
    ));
    let mut follower = std::process::Command::new(env!("CARGO_BIN_EXE_reins"))
        .args(["runs", "resume"])
        .arg(&agent.file)
        .arg(RUN)
        .current_dir(agent.dir.path())
        .env_remove("REINS_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("reins runs resume");
    let stderr = follower.stderr.take().expect("its stderr");
    for line in BufReader::new(stderr)
        .lines()
        .map_while(Result::<String, _>::ok)
    {
        let mut printed = seen.printed.lock().expect("printed");
        printed.push_str(&line);
        printed.push('\n');
    }
    let status = follower.wait().expect("it ends");
    let printed = seen.printed.lock().expect("printed").clone();
    assert!(status.success(), "{printed}");
    assert_eq!(
        *seen.printed_before_asking_again.lock().expect("checked"),
        Some(true),
        "the step was read but printed only after the next read:\n{printed}"
    );
    assert_eq!(printed.matches(STEP).count(), 1, "{printed}");
}
