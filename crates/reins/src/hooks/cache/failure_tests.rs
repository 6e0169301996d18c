//! Failed model calls: recorded, replayed as failures (so a fallback takes the turn again),
//! and never served outside a replay.

use super::{CacheError, ResponseCache};
use crate::agent::{AgentBuilder, AgentHook, HookContext};
use crate::completion::CompletionError;
use crate::hooks::fallback::ModelFallback;
use crate::testing::{ScriptedModel, Turn};

fn overloaded() -> CompletionError {
    CompletionError::Http {
        status: 503,
        body: "overloaded".into(),
    }
}

#[tokio::test]
async fn a_run_that_fell_back_replays_its_failure_and_its_fallback() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let recorder = ResponseCache::record_to(&path).unwrap();
    let agent = AgentBuilder::new(ScriptedModel::new([Turn::error(overloaded())]))
        .named_model("backup", ScriptedModel::new([Turn::text("from backup")]))
        .add_hook(recorder)
        .add_hook(ModelFallback::new(["default", "backup"]))
        .build();
    assert_eq!(agent.prompt("hi").await.unwrap(), "from backup");
    let lines = std::fs::read_to_string(&path).unwrap();
    assert_eq!(lines.lines().count(), 2, "{lines}");
    assert!(lines.contains(r#""failure":{"http":{"status":503,"body":"overloaded"}}"#));

    // Neither model is called: the failure is replayed, and the fallback serves the turn from
    // the recorded backup response.
    let (primary, backup) = (ScriptedModel::new([]), ScriptedModel::new([]));
    let seen = FailureLog::default();
    let agent = AgentBuilder::new(primary.clone())
        .named_model("backup", backup.clone())
        .add_hook(ResponseCache::replay(&path).unwrap())
        // Before the fallback, whose retry ends the chain for a failure.
        .add_hook(seen.clone())
        .add_hook(ModelFallback::new(["default", "backup"]))
        .build();
    assert_eq!(agent.prompt("hi").await.unwrap(), "from backup");
    assert!(primary.requests().is_empty() && backup.requests().is_empty());
    assert_eq!(*seen.0.lock().unwrap(), [overloaded()]);
}

#[tokio::test]
async fn a_recorded_failure_is_not_served_while_recording_and_a_later_answer_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let flaky = ScriptedModel::new([Turn::error(overloaded()), Turn::text("recovered")]);
    let agent = AgentBuilder::new(flaky.clone())
        .add_hook(ResponseCache::record_to(&path).unwrap())
        .build();
    assert!(agent.prompt("hi").await.is_err());

    // Recording again: the model is asked again, and its answer is the line a replay reads.
    let agent = AgentBuilder::new(flaky.clone())
        .add_hook(ResponseCache::record_to(&path).unwrap())
        .build();
    assert_eq!(agent.prompt("hi").await.unwrap(), "recovered");
    assert_eq!(flaky.requests().len(), 2);
    let replay = AgentBuilder::new(ScriptedModel::new([]))
        .add_hook(ResponseCache::replay(&path).unwrap())
        .build();
    assert_eq!(replay.prompt("hi").await.unwrap(), "recovered");
}

#[test]
fn a_line_with_both_or_neither_answer_is_malformed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.jsonl");
    let key = "ab".repeat(32);
    for body in [
        format!(r#"{{"key":"{key}"}}"#),
        format!(
            r#"{{"key":"{key}","response":{{"content":[{{"type":"text","text":"x"}}]}},"failure":{{"timeout":"t"}}}}"#
        ),
    ] {
        std::fs::write(&path, format!("{body}\n")).unwrap();
        match ResponseCache::replay(&path) {
            Err(CacheError::Malformed { line, message, .. }) => {
                assert_eq!(line, 1);
                assert!(message.contains("`response` or a `failure`"), "{message}");
            }
            other => panic!("expected a malformed line, got {other:?}"),
        }
    }
}

/// Records the failures the outcome hooks are shown.
#[derive(Clone, Default)]
struct FailureLog(std::sync::Arc<std::sync::Mutex<Vec<CompletionError>>>);

impl AgentHook for FailureLog {
    async fn on_outcome(
        &self,
        _: &HookContext,
        event: crate::agent::OutcomeEvent<'_>,
    ) -> crate::agent::OutcomeAction {
        if let Some(error) = event.completion_error() {
            self.0.lock().unwrap().push(error.clone());
        }
        crate::agent::OutcomeAction::proceed()
    }
}
