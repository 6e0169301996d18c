//! The sessions of a tool set served over streamable HTTP: rmcp's own
//! ([`LocalSessionManager`]), each with its client's requests kept (`requests.rs`) on the
//! way in, so that a request the client may not send in it (`initialize` again, or under
//! the id of one of its requests still running) is answered with an error, on the stream
//! that would have carried its answer, and never reaches rmcp.

use super::requests::ClientRequests;
use futures::Stream;
use futures::future::Either;
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};
use rmcp::transport::streamable_http_server::session::{EventStore, ServerSseMessage, SessionId};
use rmcp::transport::{Transport, WorkerTransport};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// rmcp's sessions, and the requests of each.
#[derive(Debug, Default)]
pub(crate) struct Sessions {
    local: LocalSessionManager,
    requests: Mutex<HashMap<SessionId, Arc<ClientRequests>>>,
}

impl Sessions {
    /// How many sessions are open.
    pub(crate) async fn count(&self) -> usize {
        self.local.sessions.read().await.len()
    }

    /// Whether the session `id` is open.
    pub(crate) async fn is_open(&self, id: &str) -> bool {
        self.local.sessions.read().await.contains_key(id)
    }

    fn requests_of(&self, id: &SessionId) -> Option<Arc<ClientRequests>> {
        let requests = self.requests.lock().unwrap_or_else(PoisonError::into_inner);
        requests.get(id).cloned()
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = Watched<WorkerTransport<LocalSessionWorker>>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.local.create_session().await?;
        let requests = Arc::new(ClientRequests::default());
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), requests.clone());
        Ok((
            id,
            Watched {
                transport,
                requests,
            },
        ))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        // The session's first message: always admitted, and recorded as its handshake.
        if let Some(requests) = self.requests_of(id) {
            let _admitted = requests.admit(&message);
        }
        self.local.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.local.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        self.local.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let requests = self.requests_of(id);
        if let Some(requests) = &requests
            && let Err((request_id, refusal)) = requests.admit(&message)
        {
            tracing::warn!(target: "reins_mcp::serve", id = %request_id, "{}", refusal.message);
            let answer = JsonRpcMessage::error(refusal, Some(request_id));
            let answer = ServerSseMessage::from_message(answer);
            return Ok(Either::Right(futures::stream::iter([answer])));
        }
        let request_id = match &message {
            JsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        match self.local.create_stream(id, message).await {
            Ok(stream) => Ok(Either::Left(stream)),
            Err(error) => {
                if let (Some(requests), Some(request_id)) = (requests, request_id) {
                    requests.forget(&request_id);
                }
                Err(error)
            }
        }
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        // Notifications and answers: never refused, but a cancellation frees its id.
        if let Some(requests) = self.requests_of(id) {
            let _admitted = requests.admit(&message);
        }
        self.local.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.resume(id, last_event_id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.local.event_store()
    }
}

/// A session's transport, the requests it answers freeing their ids.
pub(crate) struct Watched<T> {
    transport: T,
    requests: Arc<ClientRequests>,
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Watched<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.requests.answered(&item);
        self.transport.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.transport.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.transport.close()
    }
}
