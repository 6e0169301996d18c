//! A server that answers 404 (the usual sign of a base URL without its `/v1`, or of a model
//! name the server does not serve): the error says what to check, beside what it said.

use super::support::{answering, call, prompt};
use reins::providers::openai_compatible::OpenAICompatible;
use wiremock::ResponseTemplate;

#[tokio::test]
async fn a_404_says_to_check_the_base_url_and_the_model_name() {
    let server =
        answering(ResponseTemplate::new(404).set_body_string(r#"{"detail":"Not Found"}"#)).await;
    // The base URL without `/v1`: the server has no `/chat/completions`.
    let model = OpenAICompatible::builder(server.uri())
        .build()
        .unwrap()
        .completion("my-model");
    for stream in [false, true] {
        let error = call(&model, &prompt("Hi"), stream).await.unwrap_err();
        let text = error.to_string();
        assert!(text.contains("HTTP 404"), "{text}");
        assert!(
            text.contains(r#"{"detail":"Not Found"}"#),
            "what the server said: {text}"
        );
        assert!(text.contains("base URL"), "says what to check: {text}");
        assert!(text.contains("`/v1`"), "names the usual cause: {text}");
        assert!(text.contains("model"), "names the other cause: {text}");
    }
}
