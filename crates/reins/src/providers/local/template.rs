//! A request as chat messages for the model's own chat template.
//!
//! Tools are described in the system message, calls are written as
//! `<tool_call>{"name": .., "arguments": ..}</tool_call>` and results come back as
//! `<tool_response>..</tool_response>` in a user message: the Hermes/Qwen convention that
//! ChatML-style models (SmolLM2 among them) follow, and that needs no template support.

use crate::completion::CompletionRequest;
use crate::message::{AssistantContent, Message, OneOrMany, ToolChoice};
use serde_json::{Value, json};

/// Opens a tool call in the model's output.
pub(super) const CALL_OPEN: &str = "<tool_call>";
/// Closes a tool call.
pub(super) const CALL_CLOSE: &str = "</tool_call>";
/// Opens a tool's result in the prompt: the model writing it would fake a tool's answer.
pub(super) const RESPONSE_OPEN: &str = "<tool_response>";

/// One chat message: a role the template knows (`system`, `user`, `assistant`) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ChatMessage {
    pub role: &'static str,
    pub content: String,
}

impl ChatMessage {
    fn new(role: &'static str, content: impl Into<String>) -> Self {
        ChatMessage {
            role,
            content: content.into(),
        }
    }
}

/// Whether the request's tools are described to the model.
pub(super) fn advertises_tools(request: &CompletionRequest) -> bool {
    !request.tools.is_empty() && request.tool_choice != Some(ToolChoice::None)
}

/// The stop sequences a request's turn adds to the caller's: with tools advertised or tool
/// results in the history, `<tool_response>`, so the model cannot write a tool's result
/// itself (a small model echoes the last one back as its answer).
pub(super) fn implied_stops(request: &CompletionRequest) -> Option<&'static str> {
    let results = request
        .history
        .iter()
        .any(|message| matches!(message, Message::Tool(_)));
    (results || !request.tools.is_empty()).then_some(RESPONSE_OPEN)
}

/// The request as chat messages, ready for the chat template.
pub(super) fn chat_messages(request: &CompletionRequest) -> Vec<ChatMessage> {
    let mut messages = Vec::with_capacity(request.history.len() + 2);
    let mut system = request.preamble.clone().unwrap_or_default();
    if advertises_tools(request) {
        if !system.is_empty() {
            system.push_str("\n\n");
        }
        system.push_str(&tools_prompt(request));
    }
    if !system.is_empty() {
        messages.push(ChatMessage::new("system", system));
    }
    if !request.documents.is_empty() {
        messages.push(ChatMessage::new(
            "user",
            crate::providers::render_documents(request),
        ));
    }
    for message in &request.history {
        match message {
            Message::System { content } => messages.push(ChatMessage::new("system", content)),
            Message::User { content } => messages.push(ChatMessage::new("user", content)),
            Message::Assistant { content } => {
                messages.push(ChatMessage::new("assistant", assistant_text(content)));
            }
            Message::Tool(result) => {
                let block = format!("{RESPONSE_OPEN}\n{}\n</tool_response>", result.content);
                // Results of one turn's calls go together in one user message.
                match messages.last_mut() {
                    Some(last)
                        if last.role == "user" && last.content.ends_with("</tool_response>") =>
                    {
                        last.content.push('\n');
                        last.content.push_str(&block);
                    }
                    _ => messages.push(ChatMessage::new("user", block)),
                }
            }
        }
    }
    for message in &mut messages {
        // llama.cpp takes C strings.
        message.content.retain(|c| c != '\0');
    }
    messages
}

/// The system-prompt section that describes the tools and the call format.
fn tools_prompt(request: &CompletionRequest) -> String {
    let mut text = String::from(
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n\
         You are provided with function signatures within <tools></tools> XML tags:\n<tools>",
    );
    for tool in request.tools.iter() {
        // Written by hand: the name first, as models were trained (a `Map` sorts its keys).
        let signature = format!(
            "{{\"type\": \"function\", \"function\": {{\"name\": {}, \"description\": {}, \"parameters\": {}}}}}",
            json!(tool.name),
            json!(tool.description),
            tool.parameters
        );
        text.push('\n');
        text.push_str(&signature);
    }
    text.push_str(
        "\n</tools>\n\nFor each function call, return a json object with function name and \
         arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n\
         {\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>",
    );
    text
}

/// An assistant turn as the model would have written it.
fn assistant_text(content: &OneOrMany<AssistantContent>) -> String {
    let mut text = String::new();
    for part in content.iter() {
        match part {
            AssistantContent::Text(part) => text.push_str(&part.text),
            AssistantContent::ToolCall(call) => {
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&render_call(&call.name, &call.arguments));
            }
            AssistantContent::Reasoning(_) => {}
        }
    }
    text
}

/// One call in the model's output format.
pub(super) fn render_call(name: &str, arguments: &Value) -> String {
    // Arguments kept as text because they were not JSON go back as the model wrote them.
    let arguments = crate::message::arguments_text(arguments);
    format!(
        "{CALL_OPEN}\n{{\"name\": {}, \"arguments\": {arguments}}}\n{CALL_CLOSE}",
        json!(name)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ToolDefinition;
    use std::sync::Arc;

    fn request() -> CompletionRequest {
        let mut request = CompletionRequest::new(vec![
            Message::user("2+2?"),
            Message::Assistant {
                content: OneOrMany::one(AssistantContent::tool_call(
                    "c1",
                    "calc",
                    json!({"expression": "2+2"}),
                )),
            },
            Message::tool_result("c1", "calc", "4"),
            Message::tool_result("c2", "calc", "5"),
        ]);
        request.preamble = Some("Be brief.".into());
        request.tools = Arc::from(vec![ToolDefinition {
            name: "calc".into(),
            description: "Arithmetic.".into(),
            parameters: json!({"type": "object"}),
        }]);
        request
    }

    #[test]
    fn tools_go_into_the_system_message_and_calls_round_trip() {
        let messages = chat_messages(&request());
        assert_eq!(messages[0].role, "system");
        assert!(messages[0].content.starts_with("Be brief.\n\n# Tools"));
        assert!(messages[0].content.contains(
            "{\"type\": \"function\", \"function\": {\"name\": \"calc\", \"description\""
        ));
        assert_eq!(
            messages[2].content,
            "<tool_call>\n{\"name\": \"calc\", \"arguments\": {\"expression\":\"2+2\"}}\n</tool_call>"
        );
        assert_eq!(messages[3].role, "user");
        assert_eq!(
            messages[3].content,
            "<tool_response>\n4\n</tool_response>\n<tool_response>\n5\n</tool_response>"
        );
        assert_eq!(messages.len(), 4);
    }

    #[test]
    fn tool_choice_none_hides_the_tools() {
        let mut request = request();
        request.tool_choice = Some(ToolChoice::None);
        assert_eq!(chat_messages(&request)[0].content, "Be brief.");
    }

    #[test]
    fn tool_results_or_tools_stop_the_answer_at_a_faked_result() {
        let mut request = request();
        request.tool_choice = Some(ToolChoice::None);
        assert_eq!(implied_stops(&request), Some(RESPONSE_OPEN));
        request.tools = Arc::from(Vec::new());
        assert_eq!(implied_stops(&request), Some(RESPONSE_OPEN));
        let plain = CompletionRequest::new(vec![Message::user("hi")]);
        assert_eq!(implied_stops(&plain), None);
    }
}
