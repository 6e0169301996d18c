//! Answers rmcp's types refuse, read as far as they go: [`Lenient`] sits between rmcp's
//! service and the stdio or HTTP transport and rewrites the answer to a `tools/call` or
//! `tools/list` that rmcp could not type, before rmcp looks at it.
//!
//! rmcp types each answer as one of its result kinds, and an answer with one part it cannot
//! read is of no kind (`CustomResult`, raw JSON): one content block of a type it does not
//! know (MCP adds types; a newer server sends them) or one tool it cannot read (an icon of a
//! new theme, say) would fail the whole call or the whole listing, and the model would never
//! see the rest. Here such a block is read again without what reins does not use, or else
//! becomes a text block saying what was left out (carrying its type under
//! [`UNREAD_CONTENT_META_KEY`], for `content.rs`); such a tool is read again with only the
//! fields reins uses, or else left out with a warning. An answer still unreadable after that
//! is passed on unchanged, and fails as before.
//!
//! It also reads the answer to `initialize` before rmcp does (`handshake.rs`): one without
//! `capabilities` is read as declaring `tools` alone, and one offering a revision reins does not speak
//! ends the connection there, noted in [`RefusedRevision`], so that rmcp never confirms it
//! with `notifications/initialized` (it sees the connection end instead, and the caller turns
//! that into the refusal).
//!
//! It also bounds the server's own requests: at most [`MAX_UNANSWERED_SERVER_REQUESTS`]
//! wait for their answer to be written; more are dropped unanswered, so that a server
//! sending requests (`ping`) without reading the answers cannot grow the client's memory.

use crate::content::{McpContent, UNREAD_CONTENT_META_KEY};
use crate::handshake::{unsupported_revision, with_capabilities};
use crate::hidden::{Credentials, LOGGED_ERROR_BYTES};
use crate::server::shown_message;
use rmcp::RoleClient;
use rmcp::model::{
    CallToolResult, ClientNotification, ClientRequest, ContentBlock, CustomResult, JsonRpcMessage,
    ListToolsResult, RequestId, ServerNotification, ServerResult, Tool,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// The fields of a tool reins reads; a tool rmcp cannot read is read again with only these.
const TOOL_FIELDS: [&str; 6] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
];

/// The fields of a content block reins does not read; a block rmcp cannot read is read
/// again without them.
const BLOCK_FIELDS_UNUSED: [&str; 2] = ["annotations", "_meta"];

/// How many of the server's requests (`ping`, `roots/list`) may wait for their answer at
/// once. rmcp answers each in a task of its own, and an answer waits as long as the server
/// does not read it: a server sending requests without reading would otherwise grow the
/// client's memory without bound. Past this, its requests are dropped unanswered (with a
/// warning) until answers go through again.
pub(crate) const MAX_UNANSWERED_SERVER_REQUESTS: usize = 64;

/// A transport whose `tools/call` and `tools/list` answers are read leniently (see the
/// module's documentation).
pub(crate) struct Lenient<T> {
    inner: T,
    server: Arc<str>,
    /// What warnings of the tools it lists must not quote.
    credentials: Credentials,
    /// The requests sent and not yet answered whose answers are read leniently. Only these:
    /// an answer is rewritten as what its request asked for, never guessed from its shape.
    pending: HashMap<RequestId, Asked>,
    /// The server's requests let through and not yet answered (shared with the sends of
    /// their answers, which may finish after this is dropped).
    unanswered: Arc<Mutex<Unanswered>>,
    /// The revision the server answered `initialize` with, when reins does not speak it: the
    /// connection ended there.
    refused: RefusedRevision,
}

/// The revision a server answered `initialize` with, noted when reins does not speak it and
/// the connection was ended before `notifications/initialized` (shared with whoever opened
/// the connection, which says so in its error).
#[derive(Clone, Default)]
pub(crate) struct RefusedRevision(Arc<Mutex<Option<String>>>);

impl RefusedRevision {
    /// The revision refused, if one was.
    pub(crate) fn offered(&self) -> Option<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn note(&self, offered: String) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(offered);
    }

    fn is_noted(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }
}

/// The server's requests waiting for their answer to be written.
#[derive(Default)]
struct Unanswered {
    /// Each request, and whether its answer is being sent.
    requests: HashMap<RequestId, bool>,
    /// Whether requests are being dropped (warned once each time it starts).
    dropping: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asked {
    Initialize,
    CallTool,
    ListTools,
}

impl<T> Lenient<T> {
    pub(crate) fn new(inner: T, server: &str, credentials: Credentials) -> Self {
        Lenient {
            inner,
            server: Arc::from(server),
            credentials,
            pending: HashMap::new(),
            unanswered: Arc::default(),
            refused: RefusedRevision::default(),
        }
    }

    /// Where a revision refused at the handshake is noted.
    pub(crate) fn refused_revision(&self) -> RefusedRevision {
        self.refused.clone()
    }

    fn unanswered(&self) -> std::sync::MutexGuard<'_, Unanswered> {
        self.unanswered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the server's request `id` may go on to be answered: not when
    /// [`MAX_UNANSWERED_SERVER_REQUESTS`] already wait.
    fn admits(&self, id: &RequestId) -> bool {
        let server = self.server.clone();
        let mut unanswered = self.unanswered();
        if unanswered.requests.len() >= MAX_UNANSWERED_SERVER_REQUESTS {
            if !unanswered.dropping {
                unanswered.dropping = true;
                tracing::warn!(
                    target: "reins_mcp",
                    server = %server,
                    waiting = MAX_UNANSWERED_SERVER_REQUESTS,
                    "the server sends requests faster than it reads their answers; its \
                     requests are dropped unanswered until it reads them"
                );
            }
            return false;
        }
        unanswered.dropping = false;
        unanswered.requests.insert(id.clone(), false);
        true
    }

    /// Notes what an outgoing message asks, or that a request will not be answered.
    fn sending(&mut self, message: &TxJsonRpcMessage<RoleClient>) {
        match message {
            JsonRpcMessage::Request(request) => {
                let asked = match &request.request {
                    ClientRequest::InitializeRequest(_) => Asked::Initialize,
                    ClientRequest::CallToolRequest(_) => Asked::CallTool,
                    ClientRequest::ListToolsRequest(_) => Asked::ListTools,
                    _ => return,
                };
                self.pending.insert(request.id.clone(), asked);
            }
            // A request given up (its timeout, its caller gone) may never be answered: it is
            // forgotten now, so that a server that stays silent does not grow the map.
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.pending.remove(id);
                }
            }
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
        }
    }

    /// The server's request an outgoing answer answers, noted as being sent.
    fn answering(&self, message: &TxJsonRpcMessage<RoleClient>) -> Option<RequestId> {
        let id = match message {
            JsonRpcMessage::Response(response) => &response.id,
            JsonRpcMessage::Error(error) => error.id.as_ref()?,
            _ => return None,
        };
        let mut unanswered = self.unanswered();
        let sending = unanswered.requests.get_mut(id)?;
        *sending = true;
        Some(id.clone())
    }

    /// An incoming message, with the answer to a request noted by `sending` read leniently;
    /// `None` for a request of the server's dropped unanswered, and for an answer to
    /// `initialize` refused (the connection ends there).
    fn received(
        &mut self,
        message: RxJsonRpcMessage<RoleClient>,
    ) -> Option<RxJsonRpcMessage<RoleClient>> {
        match message {
            JsonRpcMessage::Response(mut response) => {
                if let Some(asked) = self.pending.remove(&response.id) {
                    response.result =
                        read_leniently(asked, response.result, &self.server, &self.credentials);
                    if asked == Asked::Initialize
                        && let Some(offered) = unsupported_revision(&response.result)
                    {
                        self.refused.note(offered);
                        return None;
                    }
                }
                Some(JsonRpcMessage::Response(response))
            }
            JsonRpcMessage::Error(error) => {
                if let Some(id) = &error.id {
                    self.pending.remove(id);
                }
                Some(JsonRpcMessage::Error(error))
            }
            JsonRpcMessage::Request(request) => self
                .admits(&request.id)
                .then_some(JsonRpcMessage::Request(request)),
            JsonRpcMessage::Notification(notification) => {
                // A request the server gave up is not answered (rmcp drops its answer),
                // unless its answer is on its way already.
                if let ServerNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    let mut unanswered = self.unanswered();
                    if unanswered.requests.get(id) == Some(&false) {
                        unanswered.requests.remove(id);
                    }
                }
                Some(JsonRpcMessage::Notification(notification))
            }
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Lenient<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // Noted before it is sent, so that its answer cannot arrive first.
        self.sending(&item);
        let answered = self.answering(&item);
        let unanswered = self.unanswered.clone();
        let send = self.inner.send(item);
        async move {
            let sent = send.await;
            if let Some(id) = answered {
                let mut unanswered = unanswered.lock().unwrap_or_else(PoisonError::into_inner);
                unanswered.requests.remove(&id);
            }
            sent
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            // A refused handshake ends the connection: rmcp sees its end, not the answer.
            if self.refused.is_noted() {
                return None;
            }
            let message = self.inner.receive().await?;
            if let Some(message) = self.received(message) {
                return Some(message);
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// `result` as the answer to what was `asked`: an answer rmcp typed is kept as it is; an
/// untyped one is read leniently, and passed on as it was when even that fails.
/// Warnings name the tools they leave out as `credentials` says.
fn read_leniently(
    asked: Asked,
    result: ServerResult,
    server: &str,
    credentials: &Credentials,
) -> ServerResult {
    let ServerResult::CustomResult(CustomResult(value)) = result else {
        return result;
    };
    let read = match asked {
        Asked::Initialize => {
            return with_capabilities(ServerResult::CustomResult(CustomResult(value)));
        }
        Asked::CallTool => call_tool_result(value).map(ServerResult::CallToolResult),
        Asked::ListTools => {
            list_tools_result(value, server, credentials).map(ServerResult::ListToolsResult)
        }
    };
    read.unwrap_or_else(|value| ServerResult::CustomResult(CustomResult(value)))
}

/// A `tools/call` result whose unreadable content blocks are text stand-ins; `Err` with the
/// value when it is still not a result.
fn call_tool_result(mut value: Value) -> Result<CallToolResult, Value> {
    if let Some(Value::Array(blocks)) = value.get_mut("content") {
        for block in blocks.iter_mut() {
            if ContentBlock::deserialize(&*block).is_ok() {
                continue;
            }
            // What reins does not use may be what is new (an audience role MCP added, say):
            // the block is read again without it before it is given up.
            if let Value::Object(fields) = block {
                fields.retain(|key, _| !BLOCK_FIELDS_UNUSED.contains(&key.as_str()));
            }
            if ContentBlock::deserialize(&*block).is_err() {
                *block = stand_in(block);
            }
        }
    }
    match CallToolResult::deserialize(&value) {
        Ok(result) => Ok(result),
        Err(_) => Err(value),
    }
}

/// The text block standing in for a block that cannot be read: what the model is shown of
/// it, and its type (cut) for `content.rs` to give back as [`McpContent::Other`].
fn stand_in(block: &Value) -> Value {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    let unread = McpContent::unread(kind);
    let kind = match &unread {
        McpContent::Other { kind } => kind.clone(),
        _ => String::new(),
    };
    json!({
        "type": "text",
        "text": unread.render(),
        "_meta": {UNREAD_CONTENT_META_KEY: kind},
    })
}

/// A `tools/list` page without the tools that cannot be read; `Err` with the value when the
/// page itself is still not a result.
fn list_tools_result(
    mut value: Value,
    server: &str,
    credentials: &Credentials,
) -> Result<ListToolsResult, Value> {
    let listed = match value.get_mut("tools") {
        Some(Value::Array(listed)) => std::mem::take(listed),
        _ => return Err(value),
    };
    let mut page = match ListToolsResult::deserialize(&value) {
        Ok(page) => page,
        Err(_) => {
            if let Some(tools) = value.get_mut("tools") {
                *tools = Value::Array(listed);
            }
            return Err(value);
        }
    };
    page.tools = listed
        .into_iter()
        .filter_map(|tool| readable_tool(tool, server, credentials))
        .collect();
    Ok(page)
}

/// `tool` as rmcp reads it, else read with only the fields reins uses (what a newer server
/// added is not needed), else `None` with a warning.
fn readable_tool(tool: Value, server: &str, credentials: &Credentials) -> Option<Tool> {
    if let Ok(read) = Tool::deserialize(&tool) {
        return Some(read);
    }
    let name = tool
        .get("name")
        .and_then(Value::as_str)
        .map(|name| credentials.tool_name(name))
        .unwrap_or_default();
    let fields: Map<String, Value> = match tool {
        Value::Object(fields) => fields
            .into_iter()
            .filter(|(key, _)| TOOL_FIELDS.contains(&key.as_str()))
            .collect(),
        _ => Map::new(),
    };
    match Tool::deserialize(&Value::Object(fields)) {
        Ok(read) => Some(read),
        Err(error) => {
            tracing::warn!(
                target: "reins_mcp",
                server,
                tool = %name,
                // The error may quote what the server sent, whole.
                error = %shown_message(&error.to_string(), &credentials.secrets, LOGGED_ERROR_BYTES),
                "a tool the server listed cannot be read; it is left out"
            );
            None
        }
    }
}

#[cfg(test)]
mod tests;
