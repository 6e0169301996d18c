//! The ready-made hooks of `reins::hooks` composed in an order that loses something, and
//! what they tell the user about it.

use crate::common::echo_tool;
use crate::common::warnings::warnings_during;
use reins::agent::AgentBuilder;
use reins::completion::CompletionError;
use reins::hooks::cache::{CacheMiss, ResponseCache};
use reins::hooks::fallback::ModelFallback;
use reins::testing::{ScriptedModel, Turn};
use std::future::IntoFuture;

fn fallback_then(cache: ResponseCache, primary: Turn, backup: Turn) -> reins::agent::Agent {
    AgentBuilder::new(ScriptedModel::new([primary]))
        .named_model("backup", ScriptedModel::new([backup]))
        .add_hook(ModelFallback::new(["default", "backup"]))
        .add_hook(cache)
        .build()
}

#[tokio::test]
async fn a_recording_cache_after_a_fallback_warns_that_its_replay_will_miss() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let failed = Turn::error(CompletionError::Timeout("no answer".into()));
    let recording = fallback_then(
        ResponseCache::record_to(&path).unwrap(),
        failed,
        Turn::text("from backup"),
    );
    let (answer, warned) = warnings_during(recording.prompt("hi").into_future()).await;
    assert_eq!(answer.unwrap(), "from backup");
    assert!(
        warned.iter().any(
            |w| w.contains("replay will stop on it") && w.contains("register the cache before")
        ),
        "{warned:?}"
    );

    // What the warning is about: the recording lacks the failed call.
    let replay = fallback_then(
        ResponseCache::replay(&path).unwrap(),
        Turn::text("not called"),
        Turn::text("not called"),
    );
    let error = replay.prompt("hi").await.unwrap_err();
    assert_eq!(CacheMiss::from_error(&error).unwrap().model, "default");
}

/// Two model turns (a call to `echo`, then an answer), with `usage` each.
fn two_turns(usage: Option<reins::completion::Usage>) -> ScriptedModel {
    let turns = [
        Turn::tool_call("echo", serde_json::json!({"text": "x"})),
        Turn::text("done"),
    ];
    ScriptedModel::new(turns.map(|turn| match usage {
        Some(usage) => turn.usage(usage),
        None => turn,
    }))
}

/// A provider that reports no usage (many local servers) leaves a token limit counting
/// zero: the budget says so once a run, naming the model, rather than guarding nothing in
/// silence.
#[tokio::test]
async fn a_token_limit_on_a_model_that_reports_no_usage_is_warned_about_once() {
    use reins::hooks::budget::Budget;
    let agent = |model, budget| {
        AgentBuilder::new(model)
            .tool(echo_tool("echo", Default::default()))
            .add_hook(budget)
            .build()
    };
    let silent = agent(two_turns(None), Budget::new().max_output_tokens(1_000));
    let (answer, warned) = warnings_during(silent.prompt("hi").into_future()).await;
    assert_eq!(answer.unwrap(), "done");
    let about_usage: Vec<&String> = warned.iter().filter(|w| w.contains("no usage")).collect();
    assert_eq!(about_usage.len(), 1, "once a run: {warned:?}");
    assert!(about_usage[0].contains("`default`"), "{warned:?}");

    // Counted usage, or no limit that needs it: nothing to say.
    let counted = agent(
        two_turns(Some(reins::completion::Usage::new(10, 5))),
        Budget::new().max_output_tokens(1_000),
    );
    let calls_only = agent(two_turns(None), Budget::new().max_model_calls(5));
    for quiet in [counted, calls_only] {
        let (answer, warned) = warnings_during(quiet.prompt("hi").into_future()).await;
        assert_eq!(answer.unwrap(), "done");
        assert!(warned.is_empty(), "{warned:?}");
    }
}
