//! A body labelled an event stream that is JSON (see the parent module's documentation).

use super::parser::EventParser;
use rmcp::model::{ErrorData, JsonRpcMessage, ServerJsonRpcMessage};
use sse_stream::Sse;
use std::collections::VecDeque;

impl EventParser {
    /// the POST sent goes to `ready`.
    pub(super) fn starts_json(&mut self, chunk: &[u8], ready: &mut VecDeque<Sse>) -> bool {
        if self.body_started {
            return false;
        }
        let Some(first) = chunk
            .iter()
            .find(|byte| !b" \t\r\n\xEF\xBB\xBF".contains(byte))
        else {
            return false;
        };
        self.body_started = true;
        if !matches!(first, b'{' | b'[') {
            return false;
        }
        self.json_body = true;
        let kind = self.content_type.as_deref().unwrap_or("text/event-stream");
        let why = format!(
            "the server answered with Content-Type `{kind}`, but its body is JSON, not an \
             event stream"
        );
        let Some(asked) = self.asked.clone() else {
            tracing::warn!(target: "reins_mcp", server = %self.server, "an event stream whose body is JSON is passed over");
            return true;
        };
        tracing::warn!(target: "reins_mcp", server = %self.server, id = %asked, "an answer labelled an event stream is JSON");
        let error = JsonRpcMessage::error(ErrorData::internal_error(why, None), Some(asked));
        let error: ServerJsonRpcMessage = error;
        ready.extend(serde_json::to_string(&error).ok().map(|data| Sse {
            data: Some(data),
            ..Sse::default()
        }));
        true
    }
}
