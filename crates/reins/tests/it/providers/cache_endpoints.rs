//! A response cache tells apart two OpenAI-compatible servers that answer under the same
//! provider and model name: a model says where it is served (its base URL without
//! credentials), and the cache keys by it. Credentials in the base URL are no part of it.

use crate::providers::fixtures::Fixture;
use crate::providers::fixtures::chat::Chat;
use crate::providers::support::{answering, json_response};
use reins::agent::AgentBuilder;
use reins::completion::CompletionModel;
use reins::hooks::cache::ResponseCache;
use reins::providers::openai::ChatCompletionsModel;
use reins::providers::openai_compatible::OpenAICompatible;

/// A model named `local` at `base_url`, keyed with `key`.
fn local_model(base_url: &str, key: &str) -> ChatCompletionsModel {
    OpenAICompatible::builder(base_url)
        .api_key(key)
        .build()
        .expect("the client builds")
        .completion("local")
}

#[tokio::test]
async fn two_servers_of_one_model_name_are_cached_apart_and_no_credential_is_kept() {
    let first = answering(json_response(Chat::text_reply("from the first"))).await;
    let second = answering(json_response(Chat::text_reply("from the second"))).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("responses.jsonl");
    let cache = ResponseCache::record_to(&path).unwrap();
    // Credentials in the URL (user info, a query) are not where the model is served.
    let with_credentials = |uri: &str, user: &str| {
        uri.replace("http://", &format!("http://{user}:hunter2-{user}@")) + "/v1?key=sekrit"
    };
    let address = |uri: &str| uri.trim_start_matches("http://").to_owned();

    let at_first = local_model(
        &with_credentials(&first.uri(), "alice"),
        "sk-first-key-0001",
    );
    assert_eq!(
        at_first.endpoint(),
        Some(format!("http://{}/v1", address(&first.uri())).as_str())
    );
    let shown = format!("{at_first:?}");
    assert!(
        !shown.contains("hunter2") && !shown.contains("sekrit"),
        "{shown}"
    );
    let agent = AgentBuilder::new(at_first).add_hook(cache.clone()).build();
    assert_eq!(agent.prompt("hi").await.unwrap(), "from the first");

    // Same provider, model name and label, another server: its own answer.
    let at_second = local_model(&format!("{}/v1", second.uri()), "sk-second-key-0002");
    let agent = AgentBuilder::new(at_second).add_hook(cache.clone()).build();
    assert_eq!(agent.prompt("hi").await.unwrap(), "from the second");
    assert_eq!(second.received_requests().await.unwrap().len(), 1);

    // The first server under other credentials is the same server: served from the cache.
    let again = local_model(&with_credentials(&first.uri(), "bob"), "sk-other-key-0003");
    let agent = AgentBuilder::new(again).add_hook(cache.clone()).build();
    assert_eq!(agent.prompt("hi").await.unwrap(), "from the first");
    assert_eq!(first.received_requests().await.unwrap().len(), 1);

    let recording = std::fs::read_to_string(&path).unwrap();
    assert_eq!(recording.lines().count(), 2, "{recording}");
    for secret in [
        "alice",
        "hunter2",
        "sekrit",
        "sk-first",
        "sk-second",
        "127.0.0.1",
    ] {
        assert!(!recording.contains(secret), "{secret} in {recording}");
    }
}

#[test]
fn a_key_in_the_base_urls_path_is_no_part_of_the_endpoint() {
    let key = "sk-in-the-path-0123456789";
    let model = local_model(&format!("http://gateway.test/{key}/v1"), key);
    let endpoint = model.endpoint().unwrap_or_default().to_owned();
    assert!(!endpoint.contains(key), "{endpoint}");
    assert!(endpoint.starts_with("http://gateway.test/"), "{endpoint}");
    assert!(!format!("{model:?}").contains(key));
}
