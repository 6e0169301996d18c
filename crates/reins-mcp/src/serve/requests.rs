//! The rules of a client's requests that rmcp does not hold it to, kept for one session
//! (a stdio connection, an HTTP session) on the way in, before rmcp reads a request.
//!
//! - `initialize` once: rmcp hands a second `initialize`, in a session that already made
//!   its handshake, to the handler, which answered it as a fresh success. It is refused.
//! - One request an id: MCP requires a request's id to be unused by its sender in the
//!   session. rmcp keys the requests it runs by id, so a request sent under the id of one
//!   still running took its place, and one of the two was never answered. A request under
//!   an id in flight is refused; an id is free again once its request is answered or the
//!   client cancels it (`notifications/cancelled`: rmcp then drops the answer). Ids of
//!   requests answered are not kept, so the set grows only with the requests rmcp holds.
//!
//! Either refusal is an invalid-request error (`-32600`) by the request's id; the session
//! goes on.

use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorData, JsonRpcMessage, RequestId,
    ServerJsonRpcMessage,
};
use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

/// One session's requests: whether it made its handshake, and the ids of its requests in
/// flight.
#[derive(Debug, Default)]
pub(crate) struct ClientRequests(Mutex<State>);

#[derive(Debug, Default)]
struct State {
    initialized: bool,
    in_flight: HashSet<RequestId>,
}

/// A request refused: its id and the error answering it.
pub(crate) type Refused = (RequestId, ErrorData);

impl ClientRequests {
    /// Records `message`, from the client, on its way to rmcp; a request the client may not
    /// send is not recorded, and comes back with the error to answer it with.
    pub(crate) fn admit(&self, message: &ClientJsonRpcMessage) -> Result<(), Refused> {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match message {
            JsonRpcMessage::Request(request) => {
                let id = &request.id;
                // A request whose params rmcp cannot read is a custom request of that method.
                if state.initialized && request.request.method() == "initialize" {
                    let refusal = "already initialized: `initialize` is sent once a session";
                    return Err((id.clone(), ErrorData::invalid_request(refusal, None)));
                }
                if state.in_flight.contains(id) {
                    let refusal = format!(
                        "request id {id} already in use by a request of this session still \
                         running"
                    );
                    return Err((id.clone(), ErrorData::invalid_request(refusal, None)));
                }
                state.in_flight.insert(id.clone());
                if let ClientRequest::InitializeRequest(_) = request.request {
                    state.initialized = true;
                }
            }
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    state.in_flight.remove(id);
                }
            }
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
        }
        Ok(())
    }

    /// Frees the id of the request `message`, from the server, answers (if it answers one).
    pub(crate) fn answered(&self, message: &ServerJsonRpcMessage) {
        let id = match message {
            JsonRpcMessage::Response(response) => &response.id,
            JsonRpcMessage::Error(error) => match &error.id {
                Some(id) => id,
                None => return,
            },
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => return,
        };
        self.forget(id);
    }

    /// Frees `id`: its request, admitted, never reached rmcp.
    pub(crate) fn forget(&self, id: &RequestId) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        state.in_flight.remove(id);
    }
}
