//! Keying the streak on chosen arguments, or on the tool alone: a model that changes an
//! argument the tool ignores is still caught.

use super::tests::{agent, tool_results};
use super::*;
use crate::testing::{ScriptedModel, Turn};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// A search for `q` with an argument the tool ignores, different on every call.
fn search_with_nonce(q: &str, nonce: usize) -> Turn {
    Turn::tool_call("search", json!({ "q": q, "nonce": nonce }))
}

fn nonce_script() -> Vec<Turn> {
    (0..5).map(|nonce| search_with_nonce("x", nonce)).collect()
}

#[tokio::test]
async fn by_default_an_ignored_argument_that_changes_makes_each_call_new() {
    let model = ScriptedModel::new(
        nonce_script()
            .into_iter()
            .chain([Turn::text("done")])
            .collect::<Vec<_>>(),
    );
    let log = Arc::new(Mutex::new(Vec::new()));
    let answer = agent(&model, &log, LoopBreaker::new()).prompt("go").await;
    assert_eq!(answer.unwrap(), "done");
    assert_eq!(log.lock().unwrap().len(), 5);
}

#[tokio::test]
async fn keyed_on_chosen_arguments_an_ignored_one_does_not_evade_it() {
    let model = ScriptedModel::new(nonce_script());
    let log = Arc::new(Mutex::new(Vec::new()));
    let breaker = LoopBreaker::new().compare_arguments("search", ["q"]);
    let error = agent(&model, &log, breaker).prompt("go").await.unwrap_err();
    let stop = LoopDetected::from_error(&error).expect("the breaker stopped the run");
    assert_eq!((stop.tool.as_str(), stop.repeats), ("search", 5));
    assert_eq!(
        log.lock().unwrap().len(),
        2,
        "the 3rd and later did not run"
    );
    assert!(tool_results(&model)[2].contains("change your approach"));
}

#[tokio::test]
async fn keyed_on_chosen_arguments_a_change_in_one_of_them_is_a_new_call() {
    let model = ScriptedModel::new([
        search_with_nonce("x", 1),
        search_with_nonce("x", 2),
        search_with_nonce("y", 3), // a chosen argument changed
        search_with_nonce("y", 4),
        // Another tool is compared whole, as by default.
        Turn::tool_call("pay", json!({"q": "y", "nonce": 5})),
        Turn::tool_call("pay", json!({"q": "y", "nonce": 6})),
        Turn::tool_call("pay", json!({"q": "y", "nonce": 7})),
        Turn::text("done"),
    ]);
    let log = Arc::new(Mutex::new(Vec::new()));
    let breaker = LoopBreaker::new().compare_arguments("search", ["q"]);
    let answer = agent(&model, &log, breaker).prompt("go").max_turns(8).await;
    assert_eq!(answer.unwrap(), "done");
    assert_eq!(log.lock().unwrap().len(), 7);
}

#[test]
fn a_missing_chosen_argument_differs_from_a_null_one() {
    let calls = [json!({"q": "x"}), json!({"q": "x", "page": null})];
    let [absent, null] = calls.map(|args| {
        let breaker = LoopBreaker::new().compare_arguments("search", ["q", "page"]);
        breaker.fingerprint_of("search", Ok(&args))
    });
    assert_ne!(absent, null);
}

#[tokio::test]
async fn keyed_on_the_tool_alone_any_arguments_repeat_it() {
    let model = ScriptedModel::new(
        ["a", "b", "c", "d", "e"].map(|q| Turn::tool_call("search", json!({ "q": q }))),
    );
    let log = Arc::new(Mutex::new(Vec::new()));
    let breaker = LoopBreaker::new().compare_tool_names_only();
    let error = agent(&model, &log, breaker).prompt("go").await.unwrap_err();
    assert_eq!(LoopDetected::from_error(&error).map(|s| s.repeats), Some(5));
    assert_eq!(*log.lock().unwrap(), ["a", "b"]);
    // A tool keyed on its arguments keeps that key.
    let breaker = LoopBreaker::new()
        .compare_tool_names_only()
        .compare_arguments("search", ["q"]);
    let model = ScriptedModel::new(
        ["a", "b", "c", "d", "e"]
            .map(|q| Turn::tool_call("search", json!({ "q": q })))
            .into_iter()
            .chain([Turn::text("done")])
            .collect::<Vec<_>>(),
    );
    let answer = agent(&model, &log, breaker).prompt("go").await;
    assert_eq!(answer.unwrap(), "done");
}

#[test]
fn the_default_fingerprint_is_unchanged_so_stored_streaks_stay_valid() {
    let args = json!({"q": "x", "n": 1});
    let breaker = LoopBreaker::new();
    assert_eq!(
        breaker.fingerprint_of("search", Ok(&args)),
        fingerprint("search", Ok(&args))
    );
    // A tool with no key of its own is compared whole, whatever other tools are keyed on.
    let keyed = LoopBreaker::new().compare_arguments("pay", ["amount"]);
    assert_eq!(
        keyed.fingerprint_of("search", Ok(&args)),
        fingerprint("search", Ok(&args))
    );
}
