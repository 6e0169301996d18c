//! What a person sees in Phoenix of a run that suspends for an approval and is resumed in
//! another process, content recorded: Phoenix lists a trace by its root span's input and
//! output, and the root is the half that suspended.

use super::server::{Phoenix, attr, demo, named};
use serde_json::Value;

const PROMPT: &str = "Check Lisbon's weather and book the Alfama hotel.";
const ANSWER: &str = "Sunny in Lisbon; the Alfama room is booked.";

#[tokio::test]
async fn a_suspended_run_shows_what_it_waits_for_in_phoenix_and_its_resumed_half_the_answer() {
    let client = reqwest::Client::new();
    let mut phoenix = Phoenix::start();
    phoenix.wait_ready(&client).await;
    let db = phoenix.dir.join("runs.sqlite");

    assert_eq!(
        demo(&phoenix, "start", &db, "trip-2", true),
        "suspended: the booking awaits approval"
    );
    // The first half: its run, chat, and two tool calls.
    let spans = phoenix.spans_when(&client, "default", 4).await;
    let runs = named(&spans, "invoke_agent travel-agent");
    assert_eq!(runs.len(), 1, "{spans:#?}\n{}", phoenix.log());
    let trace_id = runs[0]["context"]["trace_id"]
        .as_str()
        .expect("a trace id")
        .to_owned();

    // The trace's row: the run's prompt, and what it waits for (not an empty output).
    let listed = phoenix.listed_root(&client, &trace_id).await;
    assert_eq!(listed["input"]["value"], PROMPT, "{listed}");
    let waiting = listed["output"]["value"].as_str().unwrap_or_default();
    assert!(
        waiting.contains("book (t1c1) waits for a decision")
            && waiting.contains("bookings need approval"),
        "the suspended run's output says which call waits, and why: {listed}"
    );
    // Waiting is not a failure.
    assert_eq!(listed["statusCode"], "UNSET", "{listed}");

    // The call that waits says so, as its output, without an error.
    let asked = named(&spans, "execute_tool book");
    assert_eq!(asked.len(), 1, "{spans:#?}");
    let asked = asked[0];
    assert_eq!(asked["status_code"], "UNSET", "{asked:#}");
    assert_eq!(attr(asked, "reins.tool.outcome"), "suspended", "{asked:#}");
    assert_eq!(
        attr(asked, "output.value"),
        "waits for a decision: bookings need approval",
        "{asked:#}"
    );
    assert_eq!(attr(asked, "output.mime_type"), "text/plain");

    assert_eq!(demo(&phoenix, "resume", &db, "trip-2", true), ANSWER);
    let spans = phoenix.spans_when(&client, "default", 7).await;
    let runs = named(&spans, "invoke_agent travel-agent");
    assert_eq!(runs.len(), 2, "{spans:#?}\n{}", phoenix.log());
    let resumed: Vec<&Value> = runs
        .into_iter()
        .filter(|run| !run["parent_id"].is_null())
        .collect();
    // One trace still; its resumed half carries the run's prompt and its final answer.
    assert_eq!(resumed.len(), 1, "{spans:#?}");
    assert_eq!(resumed[0]["context"]["trace_id"], trace_id.as_str());
    assert_eq!(attr(resumed[0], "input.value"), PROMPT, "{:#}", resumed[0]);
    assert_eq!(attr(resumed[0], "output.value"), ANSWER, "{:#}", resumed[0]);
    let approved = named(&spans, "execute_tool book")
        .into_iter()
        .find(|call| call["parent_id"] == resumed[0]["context"]["span_id"])
        .unwrap_or_else(|| panic!("no approved call under the resumed run: {spans:#?}"));
    assert_eq!(attr(approved, "reins.tool.outcome"), "success");
}
