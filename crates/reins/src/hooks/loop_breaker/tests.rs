use super::*;
use crate::agent::{
    Agent, AgentBuilder, RunStartAction, RunStartEvent, StopReason, SuspendedRun, ToolDecision,
};
use crate::hooks::budget::Budget;
use crate::message::Message;
use crate::testing::{ScriptedModel, Turn};
use crate::tool::tool_fn;
use serde_json::json;
use std::sync::{Arc, Mutex};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {
    q: String,
}

/// An agent builder whose `search` and `pay` tools log the query of every execution.
fn builder(model: &ScriptedModel, log: &Arc<Mutex<Vec<String>>>) -> AgentBuilder {
    let tool = |name: &str| {
        let log = Arc::clone(log);
        tool_fn(name, "Looks something up.", move |args: Args| {
            log.lock().unwrap().push(args.q.clone());
            async move { Ok::<_, std::convert::Infallible>(format!("nothing on {}", args.q)) }
        })
    };
    AgentBuilder::new(model.clone())
        .tool(tool("search"))
        .tool(tool("pay"))
}

pub(super) fn agent(
    model: &ScriptedModel,
    log: &Arc<Mutex<Vec<String>>>,
    breaker: LoopBreaker,
) -> Agent {
    builder(model, log).add_hook(breaker).build()
}

fn search(q: &str) -> Turn {
    Turn::tool_call("search", json!({ "q": q }))
}

/// The tool results the model saw, in order.
pub(super) fn tool_results(model: &ScriptedModel) -> Vec<String> {
    let requests = model.requests();
    let Some(last) = requests.last() else {
        return Vec::new();
    };
    last.history
        .iter()
        .filter_map(|message| match message {
            Message::Tool(result) => Some(result.content.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn repeats_get_feedback_then_stop_the_run() {
    let model = ScriptedModel::new([
        search("x"),
        search("x"),
        search("x"),
        search("x"),
        search("x"),
    ]);
    let log = Arc::new(Mutex::new(Vec::new()));
    let error = agent(&model, &log, LoopBreaker::new())
        .prompt("go")
        .await
        .unwrap_err();
    assert_eq!(
        LoopDetected::from_error(&error),
        Some(LoopDetected {
            tool: "search".into(),
            repeats: 5
        })
    );
    assert_eq!(
        *log.lock().unwrap(),
        vec!["x", "x"],
        "the 3rd and later did not run"
    );
    let results = tool_results(&model);
    assert_eq!(results.len(), 4);
    assert_eq!(results[..2], ["nothing on x", "nothing on x"]);
    for feedback in &results[2..] {
        assert!(feedback.contains("repeating yourself"), "{feedback}");
        assert!(feedback.contains("change your approach"), "{feedback}");
    }
}

#[tokio::test]
async fn a_different_call_in_between_resets_the_count() {
    let model = ScriptedModel::new([
        search("x"),
        search("x"),
        Turn::tool_call("pay", json!({"q": "x"})), // same arguments, another tool
        search("x"),
        search("x"),
        search("y"), // same tool, other arguments
        search("x"),
        search("x"),
        Turn::text("done"),
    ]);
    let log = Arc::new(Mutex::new(Vec::new()));
    let answer = agent(&model, &log, LoopBreaker::new())
        .prompt("go")
        .max_turns(9)
        .await;
    assert_eq!(answer.unwrap(), "done");
    assert_eq!(log.lock().unwrap().len(), 8, "no call was a third repeat");
}

#[tokio::test]
async fn thresholds_and_the_message_are_configurable() {
    let model = ScriptedModel::new([search("x"), search("x"), search("x")]);
    let log = Arc::new(Mutex::new(Vec::new()));
    let breaker = LoopBreaker::new()
        .feedback_after(2)
        .stop_after(3)
        .feedback_message("Try something else.");
    let error = agent(&model, &log, breaker).prompt("go").await.unwrap_err();
    assert_eq!(
        LoopDetected::from_error(&error).map(|stop| stop.repeats),
        Some(3)
    );
    assert_eq!(log.lock().unwrap().len(), 1);
    assert_eq!(
        tool_results(&model),
        ["nothing on x", "Try something else."]
    );
    // A threshold of 1 would refuse every first call: it is raised to 2.
    let model = ScriptedModel::new([search("x"), Turn::text("done")]);
    let breaker = LoopBreaker::new().feedback_after(1).stop_after(0);
    assert!(agent(&model, &log, breaker).prompt("go").await.is_ok());
}

fn identical_searches(n: usize) -> Turn {
    Turn::tool_calls((0..n).map(|_| ("search", json!({"q": "x"}))))
}

#[tokio::test]
async fn identical_parallel_calls_of_one_turn_get_feedback_not_a_stop() {
    let model = ScriptedModel::new([identical_searches(5), Turn::text("done")]);
    let log = Arc::new(Mutex::new(Vec::new()));
    let answer = agent(&model, &log, LoopBreaker::new())
        .prompt("go")
        .tool_concurrency(5)
        .await;
    assert_eq!(answer.unwrap(), "done");
    assert_eq!(log.lock().unwrap().len(), 2);
    let results = tool_results(&model);
    assert_eq!(results.len(), 5);
    assert!(
        results[2..]
            .iter()
            .all(|r| r.contains("repeating yourself"))
    );
}

#[tokio::test]
async fn a_streak_stops_the_run_once_its_feedback_was_read_in_an_earlier_turn() {
    let model = ScriptedModel::new([identical_searches(5), search("x"), Turn::text("done")]);
    let log = Arc::new(Mutex::new(Vec::new()));
    let error = agent(&model, &log, LoopBreaker::new())
        .prompt("go")
        .await
        .unwrap_err();
    assert_eq!(
        LoopDetected::from_error(&error).map(|stop| stop.repeats),
        Some(6)
    );
    assert_eq!(log.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn with_stop_at_or_below_feedback_a_stop_needs_a_result_read_in_an_earlier_turn() {
    // Two identical parallel calls: the model has read nothing of the streak yet.
    let model = ScriptedModel::new([identical_searches(2), search("x"), Turn::text("done")]);
    let log = Arc::new(Mutex::new(Vec::new()));
    let breaker = LoopBreaker::new().stop_after(2);
    let error = agent(&model, &log, breaker).prompt("go").await.unwrap_err();
    assert_eq!(
        LoopDetected::from_error(&error).map(|stop| stop.repeats),
        Some(3)
    );
    assert_eq!(log.lock().unwrap().len(), 1);
    assert!(tool_results(&model)[1].contains("repeating yourself"));

    // One call a turn: the second stops, as configured.
    let model = ScriptedModel::new([search("x"), search("x"), Turn::text("done")]);
    let breaker = LoopBreaker::new().stop_after(2);
    let error = agent(&model, &log, breaker).prompt("go").await.unwrap_err();
    assert_eq!(
        LoopDetected::from_error(&error).map(|stop| stop.repeats),
        Some(2)
    );
}

/// The fingerprint of arguments given as text, as the hook reads them: parsed when JSON.
fn fingerprint_of_text(tool: &str, text: &str) -> u64 {
    match serde_json::from_str::<Value>(text) {
        Ok(value) => fingerprint(tool, Ok(&value)),
        Err(_) => fingerprint(tool, Err(text)),
    }
}

#[test]
fn the_fingerprint_is_fnv_1a_of_the_canonical_arguments_so_stored_streaks_stay_valid() {
    // FNV-1a of `t`, a zero byte, then `{"a":1,"b":"x"}` (keys sorted, no whitespace).
    let args = json!({"b": "x", "a": 1});
    assert_eq!(fingerprint("t", Ok(&args)), 0x38f5_707e_dcc5_bf19);
    // Text that is not JSON: a zero byte marks it, then the text as it is.
    assert_eq!(fingerprint("t", Err("not json")), 0x583f_c223_e2a7_6886);
}

#[test]
fn arguments_compare_as_parsed_json() {
    let same = [
        r#"{"a":1,"b":[1,{"c":2,"d":"x"}]}"#,
        r#"{ "b": [1, {"d": "x", "c": 2}],
             "a": 1 }"#,
    ];
    assert_eq!(
        fingerprint_of_text("t", same[0]),
        fingerprint_of_text("t", same[1])
    );
    assert_ne!(
        fingerprint_of_text("t", same[0]),
        fingerprint_of_text("u", same[0])
    );
    for other in [
        r#"{"a":2,"b":[1,{"c":2,"d":"x"}]}"#,
        r#"{"a":1,"b":[{"c":2,"d":"x"},1]}"#,
    ] {
        assert_ne!(
            fingerprint_of_text("t", same[0]),
            fingerprint_of_text("t", other),
            "{other}"
        );
    }
    // Text that is not JSON is compared as it is.
    assert_eq!(
        fingerprint_of_text("t", "not json"),
        fingerprint_of_text("t", "not json")
    );
    assert_ne!(
        fingerprint_of_text("t", "not json"),
        fingerprint_of_text("t", "not  json")
    );
}

#[test]
fn the_stop_reason_carries_the_value() {
    let cancelled = |reason: StopReason| PromptError::Cancelled {
        reason,
        history: Vec::new(),
        run_id: "r".into(),
    };
    for tool in ["search", "odd` was called 2 times", ""] {
        let stop = LoopDetected {
            tool: tool.into(),
            repeats: 7,
        };
        let error = cancelled(StopReason::because(stop.clone()));
        assert_eq!(LoopDetected::from_error(&error), Some(stop.clone()));
        // The same text from another hook is not taken for a loop stop.
        assert_eq!(
            LoopDetected::from_error(&cancelled(stop.to_string().into())),
            None
        );
    }
    assert_eq!(
        LoopDetected {
            tool: "search".into(),
            repeats: 5
        }
        .to_string(),
        "loop detected: `search` was called 5 times in a row with the same arguments"
    );
    assert_eq!(
        LoopDetected::from_error(&PromptError::InvalidConfiguration("x".into())),
        None
    );
}

#[tokio::test]
async fn two_breakers_in_one_run_count_each_call_once() {
    let model = ScriptedModel::new([search("x"), search("x"), search("x"), Turn::text("done")]);
    let log = Arc::new(Mutex::new(Vec::new()));
    let answer = agent(&model, &log, LoopBreaker::new())
        .prompt("go")
        .add_hook(LoopBreaker::new().stop_after(4))
        .await;
    assert_eq!(answer.unwrap(), "done");
    assert_eq!(
        log.lock().unwrap().len(),
        2,
        "the third call was the first repeat refused"
    );
}

#[tokio::test]
async fn skipped_repeats_never_reach_later_hooks_or_a_budget() {
    let model = ScriptedModel::new([search("x"), search("x"), search("x"), Turn::text("done")]);
    let log = Arc::new(Mutex::new(Vec::new()));
    let budget = Budget::new();
    let response = agent(&model, &log, LoopBreaker::new())
        .prompt("go")
        .add_hook(budget.clone())
        .extended_details()
        .await
        .unwrap();
    let used = budget.usage_in(&response.state).unwrap();
    assert_eq!(used.tool_calls, 2, "the refused repeat is not a tool call");
}

#[tokio::test]
async fn an_unreadable_record_stops_the_run() {
    struct Corrupt;
    impl AgentHook for Corrupt {
        async fn on_run_start(&self, ctx: &HookContext, _: RunStartEvent<'_>) -> RunStartAction {
            ctx.append_entry(ENTRY_KIND, &42).unwrap();
            RunStartAction::continue_run()
        }
    }
    let model = ScriptedModel::new([search("x"), Turn::text("done")]);
    let log = Arc::new(Mutex::new(Vec::new()));
    let error = agent(&model, &log, LoopBreaker::new())
        .prompt("go")
        .add_hook(Corrupt)
        .await
        .unwrap_err();
    let PromptError::Cancelled { reason, .. } = &error else {
        panic!("expected a stop, got {error:?}");
    };
    assert!(reason.contains("could not be read"), "{reason}");
    assert_eq!(LoopDetected::from_error(&error), None);
    assert!(log.lock().unwrap().is_empty());
}

use crate::hooks::test_support::NeedsApproval;

#[tokio::test]
async fn a_resumed_run_keeps_its_streak_in_a_fresh_breaker() {
    let turns = [
        search("x"),
        search("x"),
        Turn::tool_call("pay", json!({"q": "bob"})),
        search("x"),
        Turn::text("done"),
    ];
    // The approval hook comes first, so the breaker never sees the payment: the streak of
    // searches goes on across it.
    let agent = |model: &ScriptedModel, log: &Arc<Mutex<Vec<String>>>| {
        builder(model, log)
            .add_hook(NeedsApproval)
            .add_hook(LoopBreaker::new())
            .build()
    };
    let model = ScriptedModel::resumable(turns);
    let log = Arc::new(Mutex::new(Vec::new()));
    let error = agent(&model, &log).prompt("go").await.unwrap_err();
    let PromptError::Suspended { run } = error else {
        panic!("expected a suspended run, got {error:?}");
    };
    // One record of the streak, however many calls it counted.
    let records = run.state.entries.iter();
    assert_eq!(
        records.filter(|e| e.kind == "reins.loop_breaker").count(),
        1
    );
    // Through JSON, as if resumed by another process with a new breaker.
    let run: SuspendedRun = serde_json::from_str(&serde_json::to_string(&run).unwrap()).unwrap();
    let answer = agent(&model, &log)
        .resume(run)
        .decide("t3c0", ToolDecision::approve())
        .await;
    assert_eq!(answer.unwrap(), "done");
    // A breaker counting from zero would have run the third search.
    assert_eq!(*log.lock().unwrap(), vec!["x", "x", "bob"]);
    let last = tool_results(&model).pop().unwrap_or_default();
    assert!(last.contains("3 times in a row"), "{last}");
}
