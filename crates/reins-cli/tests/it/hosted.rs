//! Hosted providers from an agent file: `provider = "gemini"` (Google's
//! `streamGenerateContent`) and `api = "responses"` (OpenAI's Responses API), each against a
//! server sending that wire format on loopback; and the provider's own base-URL variable
//! (`OPENAI_BASE_URL`, a proxy set for every tool), honoured as its SDKs do.

use crate::common::fakellm::FakeLlm;
use crate::common::sse_server::sse_server;
use crate::common::{AgentDir, SAVE_NOTE_TOOL, outcome, save_note_rules};
use serde_json::json;

#[test]
fn a_gemini_model_answers_with_its_key_in_the_header_not_the_url() {
    let (url, seen) = sse_server(&[json!({
        "candidates": [{
            "content": {"role": "model", "parts": [{"text": "Bonjour."}]},
            "finishReason": "STOP"
        }],
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2}
    })]);
    let agent = AgentDir::new(&format!(
        "name = \"greeter\"\n\n[model]\nprovider = \"gemini\"\nname = \"gemini-2.5-flash\"\n\
         base_url = \"{url}/v1beta\"\n"
    ));
    let (code, stdout, stderr) = outcome(
        agent
            .reins(&["run", "AGENT", "Say hello in French."])
            .env("GEMINI_API_KEY", "gemini-key-123"),
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Bonjour.", "{stderr}");
    assert!(
        stderr.contains(": 1 model call(s), 3 prompt + 2 generated tokens"),
        "{stderr}"
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "{seen:?}");
    let (path, headers) = &seen[0];
    assert!(
        path.starts_with("/v1beta/models/gemini-2.5-flash:streamGenerateContent"),
        "{path}"
    );
    assert!(!path.contains("gemini-key-123"), "{path}");
    assert_eq!(headers["x-goog-api-key"], "gemini-key-123");
}

#[test]
fn a_gemini_agent_without_its_key_is_refused_at_the_provider_line() {
    let agent = AgentDir::new(
        "name = \"greeter\"\n\n[model]\nprovider = \"gemini\"\nname = \"gemini-2.5-flash\"\n",
    );
    let (code, _, stderr) = outcome(agent.reins(&["check", "AGENT"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("agent.toml:4:") && stderr.contains("GEMINI_API_KEY is not set"),
        "{stderr}"
    );
}

#[test]
fn api_responses_speaks_openai_s_responses_api() {
    let message = json!({
        "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "Bonjour.", "annotations": []}]
    });
    let (url, seen) = sse_server(&[
        json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}),
        json!({"type": "response.output_item.added", "output_index": 0,
               "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
               "content_index": 0, "delta": "Bonjour."}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": message}),
        json!({"type": "response.completed", "response": {
            "id": "resp_1", "status": "completed", "output": [message],
            "usage": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}
        }}),
    ]);
    let agent = AgentDir::new(&format!(
        "name = \"greeter\"\n\n[model]\nprovider = \"openai\"\nname = \"gpt-5-mini\"\n\
         api = \"responses\"\nbase_url = \"{url}/v1\"\n"
    ));
    let (code, stdout, stderr) = outcome(
        agent
            .reins(&["run", "AGENT", "Say hello in French."])
            .env("OPENAI_API_KEY", "openai-key-123"),
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Bonjour.", "{stderr}");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].0, "/v1/responses");
    assert_eq!(seen[0].1["authorization"], "Bearer openai-key-123");
}

#[test]
fn api_responses_is_refused_for_a_provider_other_than_openai() {
    let agent = AgentDir::new(
        "name = \"greeter\"\n\n[model]\nprovider = \"anthropic\"\nname = \"claude-sonnet-4-5\"\n\
         api = \"responses\"\n",
    );
    let (code, _, stderr) = outcome(
        agent
            .reins(&["check", "AGENT"])
            .env("ANTHROPIC_API_KEY", "k"),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("agent.toml:6:")
            && stderr.contains("`api = \"responses\"` is for `provider = \"openai\"` only"),
        "{stderr}"
    );
}

#[test]
fn without_base_url_the_run_goes_where_openai_base_url_says() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let agent = AgentDir::new(&format!(
        "name = \"notes\"\n\n[model]\nprovider = \"openai\"\nname = \"gpt-5-mini\"\n\
         api_key_env = \"REINS_TEST_KEY\"\n\n{SAVE_NOTE_TOOL}"
    ));
    let (code, stdout, stderr) = outcome(
        agent
            .keyed(&["run", "AGENT", "Save a note."])
            .env("OPENAI_BASE_URL", server.openai_url()),
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Done: the note is saved.", "{stderr}");
}
