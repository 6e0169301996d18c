use super::{CacheError, CacheMiss, ResponseCache};
use crate::agent::{AgentBuilder, AgentHook, HookContext, OutcomeAction, OutcomeEvent};
use crate::testing::{ScriptedModel, Turn};
use crate::tool::tool_fn;
use serde_json::json;
use std::sync::{Arc, Mutex};

fn add_tool() -> impl crate::tool::Tool {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Add {
        a: i64,
        b: i64,
    }
    tool_fn("add", "Adds two numbers.", |args: Add| async move {
        Ok::<_, std::io::Error>((args.a + args.b).to_string())
    })
}

fn two_turn_script() -> ScriptedModel {
    ScriptedModel::new([
        Turn::tool_call("add", json!({"a": 2, "b": 3})),
        Turn::text("2 + 3 = 5"),
    ])
}

#[tokio::test]
async fn a_recorded_run_replays_without_the_model_and_a_changed_prompt_misses() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");

    let recorder = ResponseCache::record_to(&path).unwrap();
    let agent = AgentBuilder::new(two_turn_script())
        .tool(add_tool())
        .add_hook(recorder)
        .build();
    assert_eq!(agent.prompt("add 2 and 3").await.unwrap(), "2 + 3 = 5");
    let lines = std::fs::read_to_string(&path).unwrap();
    assert_eq!(lines.lines().count(), 2, "{lines}");

    // A model with nothing scripted would fail any call: the replay never calls it.
    let silent = ScriptedModel::new([]);
    let replay = ResponseCache::replay(&path).unwrap();
    let agent = AgentBuilder::new(silent.clone())
        .tool(add_tool())
        .add_hook(replay.clone())
        .build();
    assert_eq!(agent.prompt("add 2 and 3").await.unwrap(), "2 + 3 = 5");
    assert!(silent.requests().is_empty());

    let error = agent.prompt("add 4 and 5").await.unwrap_err();
    let miss = CacheMiss::from_error(&error).expect("a typed cache miss");
    assert_eq!(
        miss,
        CacheMiss {
            model: "default".into(),
            turn: 1
        }
    );
    assert!(silent.requests().is_empty());
}

#[tokio::test]
async fn a_recording_is_extended_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let first = AgentBuilder::new(ScriptedModel::new([Turn::text("one")]))
        .add_hook(ResponseCache::record_to(&path).unwrap())
        .build();
    first.prompt("first").await.unwrap();

    let model = ScriptedModel::new([Turn::text("two")]);
    let cache = ResponseCache::record_to(&path).unwrap();
    let second = AgentBuilder::new(model.clone())
        .add_hook(cache.clone())
        .build();
    assert_eq!(second.prompt("first").await.unwrap(), "one");
    assert_eq!(second.prompt("second").await.unwrap(), "two");
    assert_eq!(model.requests().len(), 1);
    assert_eq!(cache.len(), 2);
    assert_eq!(ResponseCache::replay(&path).unwrap().len(), 2);
}

/// Sums the input tokens every outcome reports.
#[derive(Clone, Default)]
struct Tokens(Arc<Mutex<u64>>);

impl AgentHook for Tokens {
    async fn on_outcome(&self, _: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(response) = event.completion() {
            *self.0.lock().unwrap() += response.usage.input_tokens;
        }
        OutcomeAction::proceed()
    }
}

#[tokio::test]
async fn a_served_turn_costs_nothing_and_outcome_hooks_see_it() {
    let usage = crate::completion::Usage {
        input_tokens: 100,
        ..Default::default()
    };
    let model = ScriptedModel::new([Turn::text("hello").usage(usage)]);
    let tokens = Tokens::default();
    let agent = AgentBuilder::new(model)
        .add_hook(ResponseCache::in_memory())
        .add_hook(tokens.clone())
        .build();
    agent.prompt("hi").await.unwrap();
    agent.prompt("hi").await.unwrap();
    assert_eq!(
        *tokens.0.lock().unwrap(),
        100,
        "only the real call used tokens"
    );
}

#[tokio::test]
async fn a_failed_call_is_not_cached() {
    let model = ScriptedModel::new([
        Turn::error(crate::completion::CompletionError::Timeout("slow".into())),
        Turn::text("second try"),
    ]);
    let cache = ResponseCache::in_memory();
    let agent = AgentBuilder::new(model).add_hook(cache.clone()).build();
    assert!(agent.prompt("hi").await.is_err());
    assert!(cache.is_empty());
    assert_eq!(agent.prompt("hi").await.unwrap(), "second try");
    assert_eq!(cache.len(), 1);
}

#[tokio::test]
async fn a_streamed_run_streams_a_served_turn() {
    use futures::StreamExt;
    let cache = ResponseCache::in_memory();
    let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("cached answer")]))
        .add_hook(cache)
        .build();
    agent.prompt("hi").await.unwrap();
    let mut stream = agent.prompt("hi").stream();
    let mut text = String::new();
    while let Some(item) = stream.next().await {
        if let crate::agent::StreamItem::Text(delta) = item.unwrap() {
            text.push_str(&delta);
        }
    }
    assert_eq!(text, "cached answer");
}

#[test]
fn a_malformed_recording_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.jsonl");
    std::fs::write(
        &path,
        "\n{\"key\": \"00\", \"response\": {\"content\": []}}\n",
    )
    .unwrap();
    match ResponseCache::replay(&path) {
        Err(CacheError::Malformed { line, .. }) => assert_eq!(line, 2),
        other => panic!("expected a malformed line, got {other:?}"),
    }
    assert!(matches!(
        ResponseCache::replay(dir.path().join("missing.jsonl")),
        Err(CacheError::Io { .. })
    ));
}

#[tokio::test]
async fn a_recording_whose_last_line_has_no_newline_is_extended_on_a_line_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let first = AgentBuilder::new(ScriptedModel::new([Turn::text("one")]))
        .add_hook(ResponseCache::record_to(&path).unwrap())
        .build();
    first.prompt("first").await.unwrap();
    // As an editor or another tool may save it: no newline after the last line.
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.trim_end()).unwrap();

    let second = AgentBuilder::new(ScriptedModel::new([Turn::text("two")]))
        .add_hook(ResponseCache::record_to(&path).unwrap())
        .build();
    second.prompt("second").await.unwrap();
    let replay = ResponseCache::replay(&path).expect("every line still reads");
    assert_eq!(replay.len(), 2);
    assert!(ResponseCache::record_to(&path).is_ok());
}

/// Rejects the first answer of a run and asks again with the same request.
struct RepeatTheFirstAnswer;

impl AgentHook for RepeatTheFirstAnswer {
    async fn on_model_turn_finished(
        &self,
        ctx: &HookContext,
        _: crate::agent::ModelTurnFinished<'_>,
    ) -> crate::agent::ModelTurnAction {
        if ctx.turn() == 1 {
            crate::agent::ModelTurnAction::repeat()
        } else {
            crate::agent::ModelTurnAction::continue_run()
        }
    }
}

#[tokio::test]
async fn a_repeated_request_gets_a_new_answer_and_replays_as_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let model = ScriptedModel::new([Turn::text("rejected"), Turn::text("accepted")]);
    let cache = ResponseCache::record_to(&path).unwrap();
    let agent = AgentBuilder::new(model.clone())
        .add_hook(cache.clone())
        .add_hook(RepeatTheFirstAnswer)
        .build();
    // The repeat is the same request: served the rejected answer, it would gain nothing.
    assert_eq!(agent.prompt("hi").await.unwrap(), "accepted");
    assert_eq!(model.requests().len(), 2);
    // Another run with the same cache is served both answers, in order.
    assert_eq!(agent.prompt("hi").await.unwrap(), "accepted");
    assert_eq!(model.requests().len(), 2);

    let silent = ScriptedModel::new([]);
    let replayed = AgentBuilder::new(silent.clone())
        .add_hook(ResponseCache::replay(&path).unwrap())
        .add_hook(RepeatTheFirstAnswer)
        .build();
    assert_eq!(replayed.prompt("hi").await.unwrap(), "accepted");
    assert!(silent.requests().is_empty());
}

#[test]
fn requests_that_differ_in_anything_sent_never_share_a_key() {
    use crate::completion::CompletionRequest;
    use crate::message::{Message, ToolChoice};
    use crate::tool::ToolDefinition;
    let tool = |name: &str, parameters| ToolDefinition {
        name: name.into(),
        description: "Adds.".into(),
        parameters,
    };
    let base = CompletionRequest {
        preamble: Some("Be brief.".into()),
        tools: vec![tool("add", json!({"type": "object"}))].into(),
        ..CompletionRequest::new(vec![Message::user("2 + 3?")])
    };
    let variants = [
        CompletionRequest {
            preamble: Some("Be thorough.".into()),
            ..base.clone()
        },
        CompletionRequest {
            history: vec![Message::user("2 + 4?")],
            ..base.clone()
        },
        CompletionRequest {
            tools: vec![tool("sub", json!({"type": "object"}))].into(),
            ..base.clone()
        },
        CompletionRequest {
            tools: vec![tool("add", json!({"type": "object", "required": ["a"]}))].into(),
            ..base.clone()
        },
        CompletionRequest {
            tools: Vec::new().into(),
            ..base.clone()
        },
        CompletionRequest {
            tool_choice: Some(ToolChoice::Required),
            ..base.clone()
        },
        CompletionRequest {
            temperature: Some(0.0),
            ..base.clone()
        },
        CompletionRequest {
            max_tokens: Some(10),
            ..base.clone()
        },
        CompletionRequest {
            additional_params: Some(json!({"top_p": 0.5})),
            ..base.clone()
        },
        CompletionRequest {
            output_schema: Some(json!({"type": "object"})),
            ..base.clone()
        },
        CompletionRequest {
            documents: vec![crate::message::Document::new("d1", "Numbers add.")],
            ..base.clone()
        },
    ];
    use super::key::{ModelKey, key};
    let named = |provider, name| ModelKey {
        provider: Some(provider),
        name: Some(name),
        ..ModelKey::by_label("default")
    };
    let models = [
        ModelKey::by_label("default"),
        ModelKey::by_label("cheap"),
        named("openai", "gpt-4o"),
        named("openai", "gpt-4o-mini"),
        named("anthropic", "gpt-4o"),
        ModelKey {
            provider: Some("openai"),
            ..ModelKey::by_label("default")
        },
        ModelKey {
            name: Some("gpt-4o"),
            ..ModelKey::by_label("default")
        },
        // The parts' bounds are kept: text moved from one part to the next is another model.
        named("openaigpt", "-4o"),
        // One provider and model name at two endpoints: two models.
        ModelKey {
            endpoint: Some("http://10.0.0.7:8000/v1"),
            ..named("openai", "gpt-4o")
        },
        ModelKey {
            endpoint: Some("http://10.0.0.8:8000/v1"),
            ..named("openai", "gpt-4o")
        },
        ModelKey {
            endpoint: Some("http://10.0.0.7:8000/v1"),
            ..ModelKey::by_label("default")
        },
        ModelKey {
            name: Some("http://10.0.0.7:8000/v1"),
            ..ModelKey::by_label("default")
        },
    ];
    let mut keys: Vec<_> = models.iter().map(|m| key(*m, &base).unwrap()).collect();
    keys.extend(
        variants
            .iter()
            .map(|request| key(ModelKey::by_label("default"), request).unwrap()),
    );
    let distinct: std::collections::HashSet<_> = keys.iter().collect();
    assert_eq!(distinct.len(), keys.len());
    assert_eq!(
        keys[0],
        key(ModelKey::by_label("default"), &base.clone()).unwrap()
    );
}
