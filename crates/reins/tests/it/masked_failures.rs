//! A `Redaction` hook masks what a failing tool's error quotes in the call's outcome itself,
//! not only in the text the model is shown: hooks after it, the stream, a durable run's
//! stored state and journal, and the error of a run that tool errors fail all get the masked
//! outcome, whatever kind of tool failed.

use futures::StreamExt;
use reins::agent::*;
use reins::hooks::redaction::Redaction;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{ToolFailure, ToolOutcome, tool_fn};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

const SECRET: &str = "hunter2-staging";

/// What the failing tool says: the secret and an email address, which `Redaction::new()`
/// masks by its built-in pattern.
fn raw_error() -> String {
    format!("cannot log in as ada@example.com with {SECRET}")
}

const MASKED_ERROR: &str = "cannot log in as [REDACTED:email] with [REDACTED:secret]";

/// Fails with [`raw_error`] whatever it is asked.
fn login() -> impl reins::tool::Tool {
    tool_fn("login", "Logs in.", |_: Value| async {
        Err::<String, _>(raw_error())
    })
}

/// Every outcome a hook registered after the redaction reads.
#[derive(Clone, Default)]
struct Outcomes(Arc<Mutex<Vec<ToolOutcome>>>);

impl AgentHook for Outcomes {
    async fn on_outcome(&self, _: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(result) = event.tool_outcome() {
            self.0.lock().unwrap().push(result.outcome().clone());
        }
        OutcomeAction::proceed()
    }
}

/// Denies `pay` with a report quoting the secret; suspends `approve` for a person.
struct Gate;

impl AgentHook for Gate {
    async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.tool_name() {
            Some("pay") => DispatchAction::deny(format!("{SECRET} may not pay")),
            Some("approve") => DispatchAction::suspend("a person must approve"),
            _ => DispatchAction::proceed(),
        }
    }
}

fn agent(model: ScriptedModel, outcomes: &Outcomes) -> Agent {
    let noop = |name: &'static str| {
        tool_fn(name, "Does nothing.", |_: Value| async {
            Ok::<_, std::convert::Infallible>("done")
        })
    };
    AgentBuilder::new(model)
        .tool(login())
        .tool(noop("pay"))
        .tool(noop("approve"))
        .add_hook(Gate)
        .add_hook(Redaction::new().secret(SECRET))
        .add_hook(outcomes.clone())
        .build()
}

fn failed(message: &str) -> ToolOutcome {
    ToolOutcome::Failed(ToolFailure::Execution {
        message: message.to_owned(),
    })
}

#[tokio::test]
async fn a_failing_tools_error_is_masked_for_later_hooks_and_in_the_stream() {
    let outcomes = Outcomes::default();
    let model = ScriptedModel::new([
        Turn::tool_calls([("login", json!({})), ("pay", json!({}))]),
        Turn::text("Could not log in."),
    ]);
    let items: Vec<_> = agent(model.clone(), &outcomes)
        .prompt("log in and pay")
        .stream()
        .collect()
        .await;

    let masked = [
        failed(MASKED_ERROR),
        ToolOutcome::Denied {
            report: "[REDACTED:secret] may not pay".to_owned(),
        },
    ];
    assert_eq!(
        *outcomes.0.lock().unwrap(),
        masked,
        "what a later hook reads"
    );
    let streamed: Vec<_> = items
        .iter()
        .filter_map(|item| match item {
            Ok(StreamItem::ToolResult {
                result, outcome, ..
            }) => Some((result.clone(), outcome.clone())),
            _ => None,
        })
        .collect();
    let shown = [
        format!("the tool failed: {MASKED_ERROR}"),
        "[REDACTED:secret] may not pay".to_owned(),
    ];
    assert_eq!(
        streamed,
        shown.into_iter().zip(masked).collect::<Vec<_>>(),
        "what the stream yields"
    );
    // The model was shown the same masked text.
    let request = &model.requests()[1];
    assert!(!format!("{:?}", request.history).contains(SECRET));
}

#[tokio::test]
async fn a_failing_tools_error_is_masked_in_a_durable_runs_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.sqlite");
    let store = reins::store::SqliteStore::open(&path).unwrap();
    let outcomes = Outcomes::default();

    // The failed call is recorded while another call of its turn waits for a person.
    let model = ScriptedModel::new([
        Turn::tool_calls([("login", json!({})), ("approve", json!({}))]),
        Turn::text("Done."),
    ]);
    let error = agent(model, &outcomes)
        .prompt("log in")
        .run_id("suspended")
        .durable(store.clone())
        .await
        .unwrap_err();
    assert!(matches!(error, PromptError::Suspended { .. }), "{error:?}");
    let stored = reins::store::RunStore::load(&store, "suspended")
        .await
        .unwrap();
    let record = stored.pending_calls[0].result.as_ref().unwrap();
    assert_eq!(record.outcome, failed(MASKED_ERROR), "the stored outcome");
    assert_eq!(record.output, format!("the tool failed: {MASKED_ERROR}"));
    let journal = reins::store::RunStore::journal(&store, "suspended")
        .await
        .unwrap();
    let call = journal
        .iter()
        .find(|entry| entry.kind == "tool_call")
        .unwrap();
    assert_eq!(
        call.payload["outcome"]["message"], MASKED_ERROR,
        "the journaled outcome"
    );

    // A tool error that fails the run: its error and the stored failure are masked too.
    let model = ScriptedModel::new([Turn::tool_call("login", json!({}))]);
    let error = agent(model, &outcomes)
        .prompt("log in")
        .run_id("failed")
        .tool_errors(ToolErrorPolicy::Fail)
        .durable(store.clone())
        .await
        .unwrap_err();
    let PromptError::Tool { failure, .. } = &error else {
        panic!("expected a tool error, got {error:?}");
    };
    assert_eq!(
        *failure,
        ToolFailure::Execution {
            message: MASKED_ERROR.to_owned()
        }
    );
    let stored = reins::store::RunStore::load(&store, "failed")
        .await
        .unwrap();
    let stored_failure = stored.failure.unwrap();
    assert!(stored_failure.contains(MASKED_ERROR), "{stored_failure}");

    // Nothing the store wrote holds the secret or the address.
    drop(store);
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(SECRET) && !text.contains("ada@example.com"));
    }
}

#[tokio::test]
async fn a_redaction_inside_a_hook_stack_masks_the_outcome_for_the_hooks_after_the_stack() {
    let outcomes = Outcomes::default();
    let model = ScriptedModel::new([Turn::tool_call("login", json!({})), Turn::text("No.")]);
    let stack = HookStack::new().with(Redaction::new().secret(SECRET));
    let agent = AgentBuilder::new(model)
        .tool(login())
        .add_hook(stack)
        .add_hook(outcomes.clone())
        .build();
    let response = agent.prompt("log in").extended_details().await.unwrap();
    assert_eq!(*outcomes.0.lock().unwrap(), [failed(MASKED_ERROR)]);
    let shown: Vec<_> = response.tool_results().map(|r| r.content.clone()).collect();
    assert_eq!(shown, [format!("the tool failed: {MASKED_ERROR}")]);
}
