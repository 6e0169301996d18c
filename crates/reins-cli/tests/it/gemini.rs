//! `provider = "gemini"`: an agent file's model on Google's Gemini API, here a small server
//! speaking its `streamGenerateContent` wire format on loopback.

use crate::common::{AgentDir, outcome};
use axum::Router;
use axum::http::{HeaderMap, Uri};
use std::sync::{Arc, Mutex};

/// What the server saw of each request: its path and its `x-goog-api-key` header.
type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// A Gemini-speaking server answering every request "Bonjour." on a thread of its own, and
/// what it saw.
fn gemini_server() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let recorded = Arc::clone(&seen);
    let answer = move |uri: Uri, headers: HeaderMap| {
        let recorded = Arc::clone(&recorded);
        async move {
            let key = headers
                .get("x-goog-api-key")
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned);
            recorded.lock().unwrap().push((uri.to_string(), key));
            let response = serde_json::json!({
                "candidates": [{
                    "content": {"role": "model", "parts": [{"text": "Bonjour."}]},
                    "finishReason": "STOP"
                }],
                "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2}
            });
            (
                [("content-type", "text/event-stream")],
                format!("data: {response}\n\n"),
            )
        }
    };
    let (address_tx, address_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            address_tx.send(listener.local_addr().unwrap()).unwrap();
            let app = Router::new().fallback(answer);
            axum::serve(listener, app).await.unwrap();
        });
    });
    let address = address_rx.recv().unwrap();
    (format!("http://{address}/v1beta"), seen)
}

#[test]
fn a_gemini_model_answers_with_its_key_in_the_header_not_the_url() {
    let (url, seen) = gemini_server();
    let agent = AgentDir::new(&format!(
        "name = \"greeter\"\n\n[model]\nprovider = \"gemini\"\nname = \"gemini-2.5-flash\"\n\
         base_url = \"{url}\"\n"
    ));
    let (code, stdout, stderr) = outcome(
        agent
            .reins(&["run", "AGENT", "Say hello in French."])
            .env("GEMINI_API_KEY", "gemini-key-123"),
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Bonjour.", "{stderr}");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "{seen:?}");
    let (path, key) = &seen[0];
    assert!(
        path.starts_with("/v1beta/models/gemini-2.5-flash:streamGenerateContent"),
        "{path}"
    );
    assert!(!path.contains("gemini-key-123"), "{path}");
    assert_eq!(key.as_deref(), Some("gemini-key-123"));
}

#[test]
fn a_gemini_agent_without_its_key_is_refused_at_the_provider_line() {
    let agent = AgentDir::new(
        "name = \"greeter\"\n\n[model]\nprovider = \"gemini\"\nname = \"gemini-2.5-flash\"\n",
    );
    let (code, _, stderr) = outcome(
        agent
            .reins(&["check", "AGENT"])
            .env_remove("GEMINI_API_KEY"),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("agent.toml:4:") && stderr.contains("GEMINI_API_KEY is not set"),
        "{stderr}"
    );
}
