use super::ModelFallback;
use crate::agent::{
    AgentBuilder, AgentHook, DispatchAction, DispatchEvent, FailedCall, HookContext, OutcomeAction,
    OutcomeEvent, PromptError, StepEventKind, StreamItem,
};
use crate::completion::CompletionError;
use crate::testing::{ScriptedModel, Turn};
use futures::StreamExt;
use std::sync::{Arc, Mutex};

fn timeout() -> Turn {
    Turn::error(CompletionError::Timeout("no first byte".into()))
}

/// Records the label of every model call dispatched, and of every failed outcome.
#[derive(Clone, Default)]
struct CallLog(Arc<Mutex<Vec<String>>>);

impl AgentHook for CallLog {
    fn observes(&self, kind: StepEventKind) -> bool {
        matches!(
            kind,
            StepEventKind::CompletionDispatch | StepEventKind::CompletionOutcome
        )
    }
    async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if let Some(model) = event.model() {
            self.0.lock().unwrap().push(format!("call {model}"));
        }
        DispatchAction::proceed()
    }
    async fn on_outcome(&self, _: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let (Some(model), Some(_)) = (event.model(), event.completion_error()) {
            self.0.lock().unwrap().push(format!("failed {model}"));
        }
        OutcomeAction::proceed()
    }
}

#[tokio::test]
async fn a_failed_call_is_served_by_the_next_model_and_every_call_is_observed() {
    let log = CallLog::default();
    let agent = AgentBuilder::new(ScriptedModel::new([timeout()]))
        .named_model("second", ScriptedModel::new([timeout()]))
        .named_model("third", ScriptedModel::new([Turn::text("third answered")]))
        .add_hook(log.clone())
        .add_hook(ModelFallback::new(["default", "second", "third"]))
        .build();
    assert_eq!(agent.prompt("hi").await.unwrap(), "third answered");
    assert_eq!(
        *log.0.lock().unwrap(),
        [
            "call default",
            "failed default",
            "call second",
            "failed second",
            "call third"
        ]
    );
}

#[tokio::test]
async fn when_every_model_fails_the_error_names_each_models_failure() {
    let overloaded = CompletionError::Http {
        status: 503,
        body: "backup overloaded".into(),
    };
    let agent = AgentBuilder::new(ScriptedModel::new([timeout()]))
        .named_model(
            "backup",
            ScriptedModel::new([Turn::error(overloaded.clone())]),
        )
        .add_hook(ModelFallback::new(["default", "backup"]))
        .build();
    let error = agent.prompt("hi").await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "the model call failed on every model tried (default, backup):\n  \
         default: the model call timed out: no first byte\n  \
         backup: the provider answered HTTP 503: backup overloaded"
    );
    match error {
        PromptError::Completion {
            source,
            failed_calls,
            ..
        } => {
            // The last model's error is the run's, as without a fallback.
            assert_eq!(source, overloaded);
            assert_eq!(
                failed_calls,
                [
                    FailedCall::new("default", CompletionError::Timeout("no first byte".into())),
                    FailedCall::new("backup", overloaded),
                ]
            );
        }
        other => panic!("expected the models' errors, got {other:?}"),
    }
}

#[tokio::test]
async fn errors_the_predicate_refuses_do_not_fall_back() {
    let backup = ScriptedModel::new([Turn::text("unused")]);
    let agent = AgentBuilder::new(ScriptedModel::new([Turn::error(CompletionError::Decode(
        "bad".into(),
    ))]))
    .named_model("backup", backup.clone())
    .add_hook(
        ModelFallback::new(["default", "backup"])
            .when(|error| matches!(error, CompletionError::Timeout(_))),
    )
    .build();
    assert!(matches!(
        agent.prompt("hi").await,
        Err(PromptError::Completion { .. })
    ));
    assert_eq!(backup.remaining(), 1, "the backup was not called");
}

#[tokio::test]
async fn an_empty_answer_falls_back_unless_kept() {
    let empty = || ScriptedModel::new([Turn::text("")]);
    let backup = ScriptedModel::new([Turn::text("backup")]);
    let agent = AgentBuilder::new(empty())
        .named_model("backup", backup)
        .add_hook(ModelFallback::new(["default", "backup"]))
        .build();
    assert_eq!(agent.prompt("hi").await.unwrap(), "backup");

    let backup = ScriptedModel::new([Turn::text("backup")]);
    let agent = AgentBuilder::new(empty())
        .named_model("backup", backup.clone())
        .add_hook(ModelFallback::new(["default", "backup"]).keep_empty_responses())
        .build();
    assert_eq!(agent.prompt("hi").await.unwrap(), "");
    assert_eq!(backup.remaining(), 1);
}

#[tokio::test]
async fn the_next_turn_starts_on_the_primary_again() {
    let primary_fails_first = ScriptedModel::new([timeout()]);
    primary_fails_first.push([Turn::text("primary answered turn 2")]);
    let backup = ScriptedModel::new([Turn::tool_call("echo", serde_json::json!({"x": 1}))]);
    let echo = crate::tool::tool_fn("echo", "Echoes.", |v: serde_json::Value| async move {
        Ok::<_, std::io::Error>(v.to_string())
    });
    let agent = AgentBuilder::new(primary_fails_first.clone())
        .named_model("backup", backup.clone())
        .tool(echo)
        .add_hook(ModelFallback::new(["default", "backup"]))
        .build();
    assert_eq!(agent.prompt("hi").await.unwrap(), "primary answered turn 2");
    assert_eq!(
        (primary_fails_first.remaining(), backup.remaining()),
        (0, 0)
    );
}

#[tokio::test]
async fn a_streamed_run_withdraws_the_failed_calls_text() {
    let primary = ScriptedModel::new([
        Turn::text("partial").then_fail(CompletionError::Transport("reset".into()))
    ]);
    let agent = AgentBuilder::new(primary)
        .named_model("backup", ScriptedModel::new([Turn::text("whole answer")]))
        .add_hook(ModelFallback::new(["default", "backup"]))
        .build();
    let mut stream = agent.prompt("hi").stream();
    let mut items = Vec::new();
    while let Some(item) = stream.next().await {
        items.push(item);
    }
    let texts: String = items
        .iter()
        .filter_map(|item| match item {
            Ok(StreamItem::Text(text)) => Some(text.as_str()),
            Ok(StreamItem::TurnDiscarded { .. }) => Some("|discarded|"),
            _ => None,
        })
        .collect();
    assert_eq!(texts, "partial|discarded|whole answer");
}

/// A hook that always asks for the same failing model again.
struct RetryForever;

impl AgentHook for RetryForever {
    async fn on_outcome(&self, _: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        match event.completion_error() {
            Some(_) => OutcomeAction::retry_on("default"),
            None => OutcomeAction::proceed(),
        }
    }
}

#[tokio::test]
async fn retries_are_bounded_per_turn() {
    let failures = (0..20).map(|_| timeout());
    let model = ScriptedModel::new(failures);
    let agent = AgentBuilder::new(model.clone())
        .add_hook(RetryForever)
        .build();
    match agent.prompt("hi").await {
        Err(PromptError::Completion {
            failed_calls,
            call_limit_reached,
            ..
        }) => {
            assert_eq!(failed_calls.len(), crate::agent::MAX_MODEL_CALLS_PER_TURN);
            assert!(call_limit_reached);
        }
        other => panic!("expected the turn's failed calls, got {other:?}"),
    }
    assert_eq!(
        model.remaining(),
        20 - crate::agent::MAX_MODEL_CALLS_PER_TURN
    );
}

#[tokio::test]
async fn a_stack_holding_fallback_and_cache_answers_as_its_members_would() {
    use crate::agent::HookStack;
    use crate::hooks::cache::ResponseCache;
    let cache = ResponseCache::in_memory();
    let stack = HookStack::new()
        .with(ModelFallback::new(["default", "backup"]))
        .with(cache.clone());
    let backup = ScriptedModel::new([Turn::text("from backup")]);
    let agent = AgentBuilder::new(ScriptedModel::new([timeout()]))
        .named_model("backup", backup.clone())
        .add_hook(stack)
        .build();
    assert_eq!(agent.prompt("hi").await.unwrap(), "from backup");
    // The second run: the primary fails again, and the backup's turn is served by the
    // cache inside the stack.
    assert_eq!(agent.prompt("hi").await.unwrap(), "from backup");
    assert_eq!((backup.requests().len(), cache.len()), (1, 1));
}

#[tokio::test]
async fn a_label_given_twice_is_tried_once_so_the_chain_cannot_loop() {
    let primary = ScriptedModel::new((0..10).map(|_| timeout()));
    let backup = ScriptedModel::new((0..10).map(|_| timeout()));
    let result = AgentBuilder::new(primary.clone())
        .named_model("backup", backup.clone())
        .add_hook(ModelFallback::new(["default", "backup", "default"]))
        .build()
        .prompt("hi")
        .await;
    assert_eq!((10 - primary.remaining(), 10 - backup.remaining()), (1, 1));
    assert!(
        matches!(result, Err(PromptError::Completion { .. })),
        "{result:?}"
    );
}

#[tokio::test]
async fn an_unregistered_label_is_skipped_and_the_failure_is_the_runs_own_error() {
    // The only backup is misspelt: the provider's error is the run's.
    let result = AgentBuilder::new(ScriptedModel::new([timeout()]))
        .add_hook(ModelFallback::new(["default", "bakup"]))
        .build()
        .prompt("hi")
        .await;
    match result {
        Err(PromptError::Completion { source, .. }) => {
            assert!(source.to_string().contains("no first byte"), "{source}")
        }
        other => panic!("expected the provider's error, got {other:?}"),
    }

    // A registered label after it still serves the turn.
    let log = CallLog::default();
    let agent = AgentBuilder::new(ScriptedModel::new([timeout()]))
        .named_model("third", ScriptedModel::new([Turn::text("third answered")]))
        .add_hook(log.clone())
        .add_hook(ModelFallback::new(["default", "bakup", "third"]))
        .build();
    assert_eq!(agent.prompt("hi").await.unwrap(), "third answered");
    assert_eq!(
        *log.0.lock().unwrap(),
        ["call default", "failed default", "call third"]
    );

    // So with another fallback in the run, whose chain is another: each reads its own.
    let agent = AgentBuilder::new(ScriptedModel::new([timeout()]))
        .named_model("third", ScriptedModel::new([Turn::text("third answered")]))
        .add_hook(ModelFallback::new(["default", "third"]).when(|_| false))
        .add_hook(ModelFallback::new(["default", "bakup", "third"]))
        .build();
    assert_eq!(agent.prompt("hi").await.unwrap(), "third answered");
}

#[tokio::test]
async fn when_every_model_answers_empty_the_last_empty_answer_is_the_turns() {
    let primary = ScriptedModel::new([Turn::text("   ")]);
    let backup = ScriptedModel::new([Turn::reasoning("thinking only")]);
    let answer = AgentBuilder::new(primary)
        .named_model("backup", backup.clone())
        .add_hook(ModelFallback::new(["default", "backup"]))
        .build()
        .prompt("hi")
        .await;
    assert_eq!(answer.unwrap(), "");
    assert_eq!(backup.remaining(), 0);
}
