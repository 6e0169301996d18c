//! What rmcp is given for an event that ended: a message event's data weighed, a refused or
//! unreadable one replaced by the error answering its request, a batch split into events.

use super::parser::{EventFields, EventParser};
use super::{is_message, message_events};
use crate::batch::batch_messages;
use crate::id_less::tied_data;
use crate::unreadable::{unreadable, unreadable_answering};
use crate::weighed::{MAX_MESSAGE_BYTES, Unread, is_light, refusal_answering};
use sse_stream::Sse;
use std::borrow::Cow;
use std::collections::VecDeque;

impl EventParser {
    /// The event rmcp is given for `event`: its data weighed when it is a message.
    pub(super) fn finished(&self, event: EventFields) -> Sse {
        let is_message = is_message(event.kind.as_deref());
        let data = match event.has_data {
            false => None,
            true if event.data_length > MAX_MESSAGE_BYTES => {
                let why = Unread::TooLong {
                    bytes: event.data_length,
                };
                self.refused(&event.data, why, is_message)
            }
            true if is_message && !is_light(&event.data) => {
                let why = Unread::TooHeavy {
                    bytes: event.data_length,
                };
                self.refused(&event.data, why, is_message)
            }
            true => {
                let answer = is_message
                    .then(|| unreadable(&event.data))
                    .flatten()
                    .and_then(|error| self.unreadable(&event.data, &error));
                let data =
                    answer.unwrap_or_else(|| String::from_utf8_lossy(&event.data).into_owned());
                // An error under a null `id` answers the request the POST sent (`id_less.rs`).
                let tied = is_message
                    .then(|| tied_data(&data, self.asked.as_ref()))
                    .flatten();
                Some(tied.unwrap_or(data))
            }
        };
        self.unechoed(Sse {
            event: event.kind,
            data,
            id: event.id,
            retry: event.retry,
        })
    }

    /// `event` without the server's credentials in its data, type or `id`. rmcp logs some of
    /// these before `unechoed.rs` is given the message: a message on the `initialize` stream
    /// before its answer (DEBUG), the last event's `id` when an event's data is no message
    /// (DEBUG) or the stream fails (WARN). A replaced `id` is sent back as such to resume the
    /// stream: a server quoting its credentials there cannot resume it after that event.
    fn unechoed(&self, mut event: Sse) -> Sse {
        let Some(echoes) = self.credentials.echoes() else {
            return event;
        };
        let clean = |text: &mut String| {
            if let Cow::Owned(redacted) = echoes.redact(text) {
                *text = redacted;
            }
        };
        if let Some(data) = &mut event.data {
            // A credential written with JSON escapes is found only in the parsed message.
            let replaced = match echoes.redact(data) {
                Cow::Borrowed(_) if !data.contains('\\') => None,
                _ => serde_json::from_str::<serde_json::Value>(data)
                    .ok()
                    .and_then(|value| echoes.redact_json(&value))
                    .and_then(|value| serde_json::to_string(&value).ok()),
            };
            match replaced {
                Some(replaced) => *data = replaced,
                None => clean(data),
            }
        }
        if let Some(id) = &mut event.id {
            clean(id);
        }
        if let Some(kind) = &mut event.event {
            clean(kind);
        }
        event
    }

    /// The data that stands for an answer rmcp cannot read (`error` says why): the error
    /// answering its request. `None` when it answers none: rmcp passes over it as it is.
    fn unreadable(&self, text: &[u8], error: &serde_json::Error) -> Option<String> {
        let answer = unreadable_answering(
            text,
            error,
            &self.server,
            &self.credentials,
            self.asked.as_ref(),
        )?;
        serde_json::to_string(&answer).ok()
    }

    /// Adds `event` to `ready`: as an event for each of its messages when its data is a
    /// batch, else as it is.
    pub(super) fn unbatched(&self, event: Sse, ready: &mut VecDeque<Sse>) {
        let batch = match (&event.data, is_message(event.event.as_deref())) {
            (Some(data), true) => batch_messages(data.as_bytes(), &self.server),
            _ => None,
        };
        match batch {
            Some(messages) => ready.extend(message_events(messages, event.id, event.retry)),
            None => ready.push_back(event),
        }
    }

    /// The data that stands for a message refused unread: the error answering its request,
    /// or none.
    fn refused(&self, text: &[u8], why: Unread, is_message: bool) -> Option<String> {
        if !is_message {
            // rmcp does not read other events' data as messages: nothing is answered.
            tracing::warn!(target: "reins_mcp", server = %self.server, "{why}");
            return None;
        }
        let answer = refusal_answering(
            text,
            why,
            &self.server,
            &self.credentials,
            self.asked.as_ref(),
        )?;
        match serde_json::to_string(&answer) {
            Ok(answer) => Some(answer),
            Err(error) => {
                tracing::warn!(target: "reins_mcp", server = %self.server, %error, "{why}");
                None
            }
        }
    }
}
