//! The history a conversation goes on from, as the next message's run is given it.

use reins::message::Message;

/// What a tool call the run ended without answering is answered with: whether it ran is not
/// known here (it may have failed, or never started), only that it has no result.
const NO_RESULT: &str = "no result: the run ended before this call was answered";

/// `history` as the conversation's next run starts from it: without its system messages (the
/// agent gives its own), and with every tool call left without a result answered as such,
/// right after the call. A run that used its last model call on tool calls (`max_turns`), or
/// failed among them, ends with calls nobody answered, and a model refuses a history that
/// holds one: every later message of the chat would fail.
pub fn carried_on(history: &[Message]) -> Vec<Message> {
    let mut carried = Vec::with_capacity(history.len());
    // The calls of the last assistant message that no tool message has answered yet.
    let mut unanswered: Vec<(&str, &str)> = Vec::new();
    for message in history {
        match message {
            Message::System { .. } => continue,
            Message::Tool(result) => {
                unanswered.retain(|(id, _)| *id != result.tool_call_id);
            }
            Message::User { .. } | Message::Assistant { .. } => {
                answer_unanswered(&mut carried, &mut unanswered);
                unanswered = message
                    .tool_calls()
                    .map(|call| (call.id.as_str(), call.name.as_str()))
                    .collect();
            }
        }
        carried.push(message.clone());
    }
    answer_unanswered(&mut carried, &mut unanswered);
    carried
}

/// Answers each of `unanswered` in `carried` with [`NO_RESULT`].
fn answer_unanswered(carried: &mut Vec<Message>, unanswered: &mut Vec<(&str, &str)>) {
    for (id, name) in unanswered.drain(..) {
        carried.push(Message::tool_result(id, name, NO_RESULT));
    }
}

#[cfg(test)]
mod tests {
    use super::{NO_RESULT, carried_on};
    use reins::message::{AssistantContent, Message, OneOrMany};
    use serde_json::json;

    fn calls(ids: &[&str]) -> Message {
        let parts = ids
            .iter()
            .map(|id| AssistantContent::tool_call(*id, "save_note", json!({})));
        Message::Assistant {
            content: OneOrMany::many(parts).expect("calls"),
        }
    }

    #[test]
    fn a_call_without_a_result_is_answered_right_after_its_message() {
        let history = vec![
            Message::system("be brief"),
            Message::user("save two notes"),
            calls(&["a", "b"]),
            Message::tool_result("a", "save_note", "saved"),
            Message::user("and then?"),
            calls(&["c"]),
        ];
        assert_eq!(
            carried_on(&history),
            vec![
                Message::user("save two notes"),
                calls(&["a", "b"]),
                Message::tool_result("a", "save_note", "saved"),
                Message::tool_result("b", "save_note", NO_RESULT),
                Message::user("and then?"),
                calls(&["c"]),
                Message::tool_result("c", "save_note", NO_RESULT),
            ]
        );
    }

    #[test]
    fn an_answered_history_is_carried_on_as_it_is() {
        let history = vec![
            Message::user("save a note"),
            calls(&["a"]),
            Message::tool_result("a", "save_note", "saved"),
            Message::assistant("Saved."),
        ];
        assert_eq!(carried_on(&history), history);
    }
}
