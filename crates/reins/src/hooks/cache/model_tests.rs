//! Models told apart by what they are, not only by their label: a shared cache and a recording
//! never answer one model's call with another's response, and recordings of before keys named
//! the model (or its endpoint) are not served to a model that says it.

use super::{CacheError, CacheMiss, OutdatedRecording, ResponseCache};
use crate::agent::{AgentBuilder, AgentHook, HookContext, ModelSelectEvent, ModelSelectionAction};
use crate::testing::{ScriptedModel, Turn};

fn named(name: &str, answer: &str) -> ScriptedModel {
    ScriptedModel::new([Turn::text(answer)])
        .with_provider_name("openai")
        .with_model_name(name)
}

#[tokio::test]
async fn agents_sharing_a_cache_get_only_their_own_models_answers() {
    let cache = ResponseCache::in_memory();
    let gpt = named("gpt-4o", "from gpt-4o");
    let first = AgentBuilder::new(gpt.clone())
        .add_hook(cache.clone())
        .build();
    assert_eq!(first.prompt("hi").await.unwrap(), "from gpt-4o");

    // Another model under the same label ("default") with the same request: it is called.
    let mini = named("gpt-4o-mini", "from mini");
    let second = AgentBuilder::new(mini.clone())
        .add_hook(cache.clone())
        .build();
    assert_eq!(second.prompt("hi").await.unwrap(), "from mini");
    assert_eq!(mini.requests().len(), 1);
    assert_eq!(cache.len(), 2);

    // The same model (by provider and name) shares: a third agent on gpt-4o is served.
    let again = named("gpt-4o", "never asked");
    let third = AgentBuilder::new(again.clone())
        .add_hook(cache.clone())
        .build();
    assert_eq!(third.prompt("hi").await.unwrap(), "from gpt-4o");
    assert!(again.requests().is_empty());
}

/// Sends every call to the model under `smart`.
struct Smart;

impl AgentHook for Smart {
    fn on_model_select(&self, _: &HookContext, _: ModelSelectEvent<'_>) -> ModelSelectionAction {
        ModelSelectionAction::select("smart")
    }
}

#[tokio::test]
async fn the_model_a_turn_is_routed_to_keys_it() {
    let cache = ResponseCache::in_memory();
    let agent = |smart: ScriptedModel| {
        // The default models name nothing: only the routed-to model tells the agents apart.
        AgentBuilder::new(ScriptedModel::new([]))
            .named_model("smart", smart)
            .add_hook(Smart)
            .add_hook(cache.clone())
            .build()
    };
    assert_eq!(
        agent(named("gpt-4o", "from gpt-4o"))
            .prompt("hi")
            .await
            .unwrap(),
        "from gpt-4o"
    );
    let claude = ScriptedModel::new([Turn::text("from claude")])
        .with_provider_name("anthropic")
        .with_model_name("claude-sonnet-4");
    assert_eq!(agent(claude).prompt("hi").await.unwrap(), "from claude");
}

#[tokio::test]
async fn a_replay_with_another_model_misses_instead_of_serving_the_recorded_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let recorder = AgentBuilder::new(named("gpt-4o", "from gpt-4o"))
        .add_hook(ResponseCache::record_to(&path).unwrap())
        .build();
    recorder.prompt("hi").await.unwrap();

    let replay = |model: ScriptedModel| {
        AgentBuilder::new(model)
            .add_hook(ResponseCache::replay(&path).unwrap())
            .build()
    };
    let claude = ScriptedModel::new([])
        .with_provider_name("anthropic")
        .with_model_name("claude-sonnet-4");
    let error = replay(claude.clone()).prompt("hi").await.unwrap_err();
    let miss = CacheMiss::from_error(&error).expect("a typed cache miss");
    assert_eq!((miss.model.as_str(), miss.turn), ("default", 1));
    assert!(claude.requests().is_empty());

    let same = ScriptedModel::new([])
        .with_provider_name("openai")
        .with_model_name("gpt-4o");
    assert_eq!(replay(same).prompt("hi").await.unwrap(), "from gpt-4o");
}

/// A recording as a reins of before `key_version` wrote it: recorded with a model that names
/// nothing (whose key did not change), each line's `key_version` taken out.
async fn an_older_recording(path: &std::path::Path) {
    let recorder = AgentBuilder::new(ScriptedModel::new([Turn::text("recorded long ago")]))
        .add_hook(ResponseCache::record_to(path).unwrap())
        .build();
    recorder.prompt("hi").await.unwrap();
    let lines = std::fs::read_to_string(path).unwrap();
    assert!(lines.contains(r#""key_version":3,"#), "{lines}");
    std::fs::write(path, lines.replace(r#""key_version":3,"#, "")).unwrap();
}

#[tokio::test]
async fn an_older_recording_serves_unnamed_models_and_stops_a_named_ones_replay_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.jsonl");
    an_older_recording(&path).await;

    let unnamed = AgentBuilder::new(ScriptedModel::new([]))
        .add_hook(ResponseCache::replay(&path).unwrap())
        .build();
    assert_eq!(unnamed.prompt("hi").await.unwrap(), "recorded long ago");

    let gpt = ScriptedModel::new([])
        .with_provider_name("openai")
        .with_model_name("gpt-4o");
    let replay = AgentBuilder::new(gpt.clone())
        .add_hook(ResponseCache::replay(&path).unwrap())
        .build();
    let error = replay.prompt("hi").await.unwrap_err();
    let outdated = OutdatedRecording::from_error(&error).expect("a typed outdated recording");
    assert_eq!(
        outdated,
        OutdatedRecording {
            model: "default".into(),
            provider: Some("openai".into()),
            model_name: Some("gpt-4o".into()),
            endpoint: None,
            turn: 1,
        }
    );
    let reason = error.stop_reason().expect("a stopped run");
    assert!(
        reason
            .as_str()
            .contains("recorded before responses were keyed by model")
            && reason.as_str().contains("record it again"),
        "{reason}"
    );
    assert!(gpt.requests().is_empty());

    // A request the old recording does not hold is a plain miss.
    let error = replay.prompt("something else").await.unwrap_err();
    assert!(CacheMiss::from_error(&error).is_some(), "{error:?}");
}

#[tokio::test]
async fn extending_an_older_recording_with_a_named_model_records_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.jsonl");
    an_older_recording(&path).await;

    let gpt = named("gpt-4o", "from gpt-4o");
    let recorder = AgentBuilder::new(gpt.clone())
        .add_hook(ResponseCache::record_to(&path).unwrap())
        .build();
    assert_eq!(recorder.prompt("hi").await.unwrap(), "from gpt-4o");
    assert_eq!(gpt.requests().len(), 1);

    let replay = AgentBuilder::new(named("gpt-4o", "never asked"))
        .add_hook(ResponseCache::replay(&path).unwrap())
        .build();
    assert_eq!(replay.prompt("hi").await.unwrap(), "from gpt-4o");
}

#[test]
fn a_recording_of_a_newer_key_version_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.jsonl");
    let line = format!(
        r#"{{"key":"{}","key_version":4,"response":{{"content":[{{"type":"text","text":"x"}}]}}}}"#,
        "ab".repeat(32)
    );
    std::fs::write(&path, format!("{line}\n")).unwrap();
    match ResponseCache::replay(&path) {
        Err(CacheError::Malformed { line, message, .. }) => {
            assert_eq!(line, 1);
            assert!(message.contains("`key_version` 4 is newer"), "{message}");
        }
        other => panic!("expected a malformed line, got {other:?}"),
    }
}

#[tokio::test]
async fn one_model_name_at_two_endpoints_gets_only_its_own_answers() {
    let cache = ResponseCache::in_memory();
    let at = |endpoint: &str, answer: &str| named("local", answer).with_endpoint(endpoint);
    let first = at("http://10.0.0.7:8000/v1", "from the first server");
    let agent = AgentBuilder::new(first).add_hook(cache.clone()).build();
    assert_eq!(agent.prompt("hi").await.unwrap(), "from the first server");

    // Same label, provider and model name, same request, another server: it is called.
    let second = at("http://10.0.0.8:8000/v1", "from the second server");
    let agent = AgentBuilder::new(second.clone())
        .add_hook(cache.clone())
        .build();
    assert_eq!(agent.prompt("hi").await.unwrap(), "from the second server");
    assert_eq!(second.requests().len(), 1);

    let again = at("http://10.0.0.7:8000/v1", "never asked");
    let agent = AgentBuilder::new(again.clone())
        .add_hook(cache.clone())
        .build();
    assert_eq!(agent.prompt("hi").await.unwrap(), "from the first server");
    assert!(again.requests().is_empty());
}

#[tokio::test]
async fn a_recording_of_before_endpoints_were_keyed_stops_a_replay_with_an_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.jsonl");
    // Recorded by a named model that says no endpoint, then written as version 2 was.
    let recorder = AgentBuilder::new(named("gpt-4o", "recorded by version 2"))
        .add_hook(ResponseCache::record_to(&path).unwrap())
        .build();
    recorder.prompt("hi").await.unwrap();
    let lines = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        lines.replace(r#""key_version":3,"#, r#""key_version":2,"#),
    )
    .unwrap();

    // A model that says no endpoint has the same key in both versions: served.
    let same = AgentBuilder::new(named("gpt-4o", "never asked"))
        .add_hook(ResponseCache::replay(&path).unwrap())
        .build();
    assert_eq!(same.prompt("hi").await.unwrap(), "recorded by version 2");

    // One that says where it is served: which server answered is unknown.
    let served = named("gpt-4o", "never asked").with_endpoint("https://api.openai.com/v1");
    let replay = AgentBuilder::new(served.clone())
        .add_hook(ResponseCache::replay(&path).unwrap())
        .build();
    let error = replay.prompt("hi").await.unwrap_err();
    let outdated = OutdatedRecording::from_error(&error).expect("a typed outdated recording");
    assert_eq!(
        outdated.endpoint.as_deref(),
        Some("https://api.openai.com/v1")
    );
    assert!(
        outdated
            .to_string()
            .contains("(openai/gpt-4o at https://api.openai.com/v1)"),
        "{outdated}"
    );
    assert!(served.requests().is_empty());

    // Extended by that model, the recording holds its answer under its own key.
    let recorder = AgentBuilder::new(served.clone())
        .add_hook(ResponseCache::record_to(&path).unwrap())
        .build();
    assert_eq!(recorder.prompt("hi").await.unwrap(), "never asked");
    let replay = AgentBuilder::new(named("gpt-4o", "x").with_endpoint("https://api.openai.com/v1"))
        .add_hook(ResponseCache::replay(&path).unwrap())
        .build();
    assert_eq!(replay.prompt("hi").await.unwrap(), "never asked");
}
