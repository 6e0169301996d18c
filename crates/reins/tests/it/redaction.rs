//! Redaction of literal secrets in tool results as JSON writers render them.

use reins::agent::AgentBuilder;
use reins::hooks::redaction::Redaction;
use reins::message::Message;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use serde_json::{Value, json};

/// A secret with non-ASCII characters, in a tool's answer written by a JSON writer that keeps
/// its output ASCII (Python's `json.dumps` by default): the model never sees it.
#[tokio::test]
async fn a_non_ascii_secret_escaped_by_an_ascii_only_json_writer_is_masked() {
    let secret = "pässwörd-😀-42";
    let answers = [
        // Python: `json.dumps({"password": secret})`.
        (
            r#"{"password": "p\u00e4ssw\u00f6rd-\ud83d\ude00-42"}"#,
            r#"{"password": "[REDACTED:secret]"}"#,
        ),
        // Upper-case hex, as other writers escape.
        (
            r#"{"password":"p\u00E4ssw\u00F6rd-\uD83D\uDE00-42"}"#,
            r#"{"password":"[REDACTED:secret]"}"#,
        ),
    ];
    for (answer, masked) in answers {
        let model = ScriptedModel::new([Turn::tool_call("login", json!({})), Turn::text("ok")]);
        let login = tool_fn("login", "Logs in.", move |_: Value| async move {
            Ok::<_, std::convert::Infallible>(answer.to_owned())
        });
        let agent = AgentBuilder::new(model.clone())
            .tool(login)
            .add_hook(Redaction::new().secret(secret))
            .build();
        agent.prompt("log in").await.unwrap();
        let requests = model.requests();
        let seen = requests[1]
            .history
            .iter()
            .find(|message| matches!(message, Message::Tool(_)))
            .map(Message::text)
            .expect("the tool's answer");
        assert_eq!(seen, masked);
    }
}
