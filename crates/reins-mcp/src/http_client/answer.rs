//! What the body of an answer to a POST holds, read bounded and weighed: a message, a
//! batch, a message refused unread or one rmcp cannot read; and what rmcp is given for it.

use super::body::{Body, lossy_start, read_body, read_start, without_bom};
use super::headers::{has_type, status_error};
use super::{HttpError, WeighedHttpClient};
use crate::batch::batch_messages;
use crate::handshake::{events_with_capabilities, message_with_capabilities};
use crate::http_events::message_events;
use crate::id_less::tied_to;
use crate::unreadable::{error_answering, unreadable_answering};
use crate::weighed::{Unread, is_light, refusal_answering};
use futures::StreamExt;
use http::StatusCode;
use rmcp::model::{JsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::JSON_MIME_TYPE;
use rmcp::transport::streamable_http_client::{
    StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use std::borrow::Cow;

/// What a JSON body holds.
enum Answer {
    Message(ServerJsonRpcMessage),
    /// A batch's messages, in order.
    Batch(Vec<ServerJsonRpcMessage>),
    /// Not parsed (see [`Unread`]): the error standing for it, if it answers a request.
    Refused(Option<ServerJsonRpcMessage>, Unread),
    /// Not a message rmcp reads (the body, and why).
    NotJsonRpc(Vec<u8>, serde_json::Error),
}

impl WeighedHttpClient {
    /// The message of a JSON body, weighed first; `asked` is the request the POST sent.
    fn answer(&self, body: Body, asked: Option<&RequestId>) -> Answer {
        let (text, why) = match body {
            Body::Cut { head, read } => (head, Unread::Cut { read }),
            Body::Whole(text) if is_light(without_bom(&text)) => {
                let read = serde_json::from_slice(without_bom(&text));
                return match read {
                    Ok(message) => Answer::Message(message),
                    Err(error) => match batch_messages(without_bom(&text), &self.server) {
                        Some(messages) => Answer::Batch(messages),
                        None => Answer::NotJsonRpc(text, error),
                    },
                };
            }
            Body::Whole(text) => {
                let bytes = text.len();
                (text, Unread::TooHeavy { bytes })
            }
        };
        let text = without_bom(&text);
        let refusal = refusal_answering(text, why, &self.server, &self.credentials, asked);
        Answer::Refused(refusal, why)
    }

    /// The answer to a POST whose status is not a success: a JSON-RPC error the body holds
    /// (weighed first), else the status as an error.
    /// What rmcp is given for a successful answer whose body is JSON, to the message the
    /// POST sent (`asked`, the request; `initialize`, whether it is the handshake's).
    pub(super) async fn json_answer(
        &self,
        response: reqwest::Response,
        asked: Option<RequestId>,
        initialize: bool,
        session_id: Option<String>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        match (
            self.answer(read_body(response).await?, asked.as_ref()),
            asked,
        ) {
            // An error under a null `id` answers the request the POST sent (`id_less.rs`).
            (Answer::Message(message), asked) => {
                let message =
                    message_with_capabilities(initialize, tied_to(message, asked.as_ref()));
                Ok(StreamableHttpPostResponse::Json(message, session_id))
            }
            (Answer::Refused(Some(message), _), _) => {
                let message = message_with_capabilities(initialize, message);
                Ok(StreamableHttpPostResponse::Json(message, session_id))
            }
            // rmcp reads one message from a JSON body: a batch's come as events.
            (Answer::Batch(messages), _) if !messages.is_empty() => {
                let events = message_events(messages, None, None).into_iter().map(Ok);
                let events = futures::stream::iter(events).boxed();
                let events = events_with_capabilities(initialize, events);
                Ok(StreamableHttpPostResponse::Sse(events, session_id))
            }
            (Answer::Refused(None, _) | Answer::NotJsonRpc(..) | Answer::Batch(_), None) => {
                Ok(StreamableHttpPostResponse::Accepted)
            }
            // A JSON body answers the request the POST sent: one rmcp cannot read fails that
            // request (or the one its `id` names), not the connection's worker.
            (Answer::NotJsonRpc(text, error), Some(asked)) => {
                let text = without_bom(&text);
                let credentials = &self.credentials;
                let answer =
                    unreadable_answering(text, &error, &self.server, credentials, Some(&asked))
                        .unwrap_or_else(|| {
                            error_answering(asked, &error, &self.server, credentials)
                        });
                Ok(StreamableHttpPostResponse::Json(answer, session_id))
            }
            (Answer::Refused(None, why), Some(_)) => Err(
                StreamableHttpError::UnexpectedServerResponse(Cow::Owned(why.to_string())),
            ),
            (Answer::Batch(_), Some(_)) => Err(StreamableHttpError::UnexpectedServerResponse(
                Cow::Borrowed("the server's answer is a batch holding no JSON-RPC message"),
            )),
        }
    }

    /// The answer to a POST whose status is not a success: a JSON-RPC error the body holds
    /// (weighed first), else the status as an error.
    pub(super) async fn failure(
        &self,
        response: reqwest::Response,
        limits: StreamableHttpResponseLimits,
        asked: Option<&RequestId>,
        session_id: Option<String>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let status = response.status();
        let is_json = has_type(response.headers(), JSON_MIME_TYPE);
        let status_error = status_error(status, response.headers());
        // A rate limit, or a failure without JSON, is its status: its body is not read.
        let status_error = match status_error {
            Some(error) if !is_json || status == StatusCode::TOO_MANY_REQUESTS => {
                return Err(error.into());
            }
            other => other,
        };
        // A 401 or 403 without a challenge (those with one were answered before) is its
        // status, whatever its body says.
        let is_auth_failure = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
        let shown = limits.max_error_response_size;
        let diagnostic = if is_json && !is_auth_failure {
            match read_body(response).await {
                Ok(body) => {
                    let start = lossy_start(&body, shown);
                    match self.answer(body, asked) {
                        Answer::Message(error @ JsonRpcMessage::Error(_)) => {
                            let error = tied_to(error, asked);
                            return Ok(StreamableHttpPostResponse::Json(error, session_id));
                        }
                        Answer::Refused(Some(refusal), _) => {
                            return Ok(StreamableHttpPostResponse::Json(refusal, session_id));
                        }
                        Answer::Refused(None, why) => why.to_string(),
                        Answer::Message(_) | Answer::Batch(_) | Answer::NotJsonRpc(..) => start,
                    }
                }
                Err(_) => "(the body could not be read)".to_owned(),
            }
        } else {
            match read_start(response, shown).await {
                Ok(start) => String::from_utf8_lossy(&start).into_owned(),
                Err(_) => "(the body could not be read)".to_owned(),
            }
        };
        match status_error {
            Some(error) => Err(error.into()),
            None => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("HTTP {status}: {diagnostic}"),
            ))),
        }
    }
}
