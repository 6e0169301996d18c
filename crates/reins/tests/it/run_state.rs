//! The hook context: ids, turn, scratchpad and entries, and the serializable run state.

use crate::common::add_tool;
use reins::agent::*;
use reins::testing::{ScriptedModel, Turn};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Audit {
    turn: usize,
    tool: String,
}

/// Writes an audit entry per tool call and counts calls in the scratchpad.
struct Auditor;
#[derive(Default)]
struct Calls(usize);
impl AgentHook for Auditor {
    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if let Some(tool) = event.tool_name() {
            ctx.append_entry(
                "audit",
                &Audit {
                    turn: ctx.turn(),
                    tool: tool.to_string(),
                },
            )
            .unwrap();
            ctx.scratchpad().update(|calls: &mut Calls| calls.0 += 1);
        }
        DispatchAction::proceed()
    }
}

/// Reads what the auditor wrote: hooks of one run share the scratchpad and entries.
#[derive(Clone, Default)]
struct Reader(Arc<Mutex<Vec<String>>>);
impl AgentHook for Reader {
    async fn on_outcome(&self, ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if event.tool_outcome().is_some() {
            let calls = ctx.scratchpad().update(|calls: &mut Calls| calls.0);
            let last: Option<Audit> = ctx.last_entry("audit").unwrap();
            self.0.lock().unwrap().push(format!(
                "{} {} calls={calls} last={:?} streaming={} agent={:?}",
                ctx.run_id(),
                ctx.turn(),
                last.map(|a| a.tool),
                ctx.is_streaming(),
                ctx.agent_name()
            ));
        }
        OutcomeAction::proceed()
    }
}

#[tokio::test]
async fn hooks_share_the_scratchpad_and_entries_of_their_run() {
    let reader = Reader::default();
    let model = ScriptedModel::new([
        Turn::tool_call("add", json!({"a": 1, "b": 1})),
        Turn::tool_call("add", json!({"a": 2, "b": 2})),
        Turn::text("done"),
    ]);
    let agent = AgentBuilder::new(model)
        .name("calculator")
        .tool(add_tool())
        .add_hook(Auditor)
        .add_hook(reader.clone())
        .build();
    let response = agent
        .prompt("x")
        .run_id("r1")
        .extended_details()
        .await
        .unwrap();
    assert_eq!(
        *reader.0.lock().unwrap(),
        vec![
            "r1 1 calls=1 last=Some(\"add\") streaming=false agent=Some(\"calculator\")",
            "r1 2 calls=2 last=Some(\"add\") streaming=false agent=Some(\"calculator\")",
        ]
    );
    let entries = response.entries();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[1].kind, "audit");
    assert_eq!(entries[1].value, json!({"turn": 2, "tool": "add"}));
}

#[tokio::test]
async fn the_run_state_round_trips_through_serde() {
    let model = ScriptedModel::new([
        Turn::reasoning("hmm").then_tool_call("add", json!({"a": 1, "b": 1})),
        Turn::text("done"),
    ]);
    let agent = AgentBuilder::new(model)
        .tool(add_tool())
        .add_hook(Auditor)
        .build();
    let response = agent.prompt("x").extended_details().await.unwrap();
    let state = response.state;
    let text = serde_json::to_string(&state).unwrap();
    let back: RunState = serde_json::from_str(&text).unwrap();
    assert_eq!(back, state);
    assert_eq!(back.version, RUN_STATE_VERSION);
    assert_eq!(back.turn, 2);
    assert_eq!(back.entries.len(), 1);
}

/// A typed run's refused answer is part of its state, written only when there is one: a
/// state stored before the state kept it (a typed run out of calls, its last answer refused)
/// reads as having none, and is written back as it was.
#[test]
fn a_refused_answer_is_kept_in_the_state_and_older_states_read_without_one() {
    let stored_before = json!({
        "version": 1, "run_id": "typed", "agent_name": null, "turn": 2,
        "history": [{"role": "user", "content": "Weather?"}],
        "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
        "entries": [], "last_model": "default", "invalid_tool_call_retries": 0,
        "pending_calls": [], "status": "running", "output_tool": "final_output"
    });
    let mut state: RunState = serde_json::from_value(stored_before.clone()).unwrap();
    assert_eq!(state.refused_answer, None);
    assert_eq!(serde_json::to_value(&state).unwrap(), stored_before);

    state.refused_answer = Some("it is text, not a call of the tool".to_owned());
    let written = serde_json::to_value(&state).unwrap();
    assert_eq!(
        written["refused_answer"],
        "it is text, not a call of the tool"
    );
    assert_eq!(serde_json::from_value::<RunState>(written).unwrap(), state);
}

#[tokio::test]
async fn separate_runs_do_not_share_scratchpads() {
    let reader = Reader::default();
    let model = ScriptedModel::new([
        Turn::tool_call("add", json!({"a": 1, "b": 1})),
        Turn::text("a"),
        Turn::tool_call("add", json!({"a": 1, "b": 1})),
        Turn::text("b"),
    ]);
    let agent = AgentBuilder::new(model)
        .tool(add_tool())
        .add_hook(Auditor)
        .add_hook(reader.clone())
        .build();
    agent.prompt("x").run_id("one").await.unwrap();
    agent.prompt("x").run_id("two").await.unwrap();
    let lines = reader.0.lock().unwrap().clone();
    assert!(lines[0].starts_with("one 1 calls=1"));
    assert!(lines[1].starts_with("two 1 calls=1"), "{lines:?}");
}
