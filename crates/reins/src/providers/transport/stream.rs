//! A streamed answer: bytes → server-sent events (within the line and event limits) → the
//! protocol's decoder → chunks, each read within the idle timeout and the call's deadline.

use super::client::{HttpClient, Wait};
use super::echoes::EchoFilter;
use super::protocol::{MAX_ANSWER_PARTS, StreamDecoder, too_many_parts};
use super::sse::{SseDecoder, SseError, SseEvent};
use crate::completion::{CompletionError, CompletionStream, StreamChunk};
use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::Response;
use std::collections::VecDeque;
use std::sync::Arc;
use tokio::time::Instant;

/// Everything one streamed answer holds between two items.
struct ChunkStream<D> {
    client: Arc<HttpClient>,
    deadline: Instant,
    bytes: BoxStream<'static, reqwest::Result<Bytes>>,
    sse: SseDecoder,
    events: VecDeque<SseEvent>,
    /// What the decoder made of the events, before the echo filter.
    chunks: VecDeque<StreamChunk>,
    /// The chunks to hand out, past the echo filter.
    ready: VecDeque<StreamChunk>,
    /// Scrubs the key from fragments and the response; `None` without a key.
    echoes: Option<EchoFilter>,
    /// `None` once the answer is complete or has failed.
    decoder: Option<D>,
    /// The connection has closed and its last event is in `events`.
    closed: bool,
    /// Bytes of text, reasoning and tool-call chunks handed out so far: what the decoder
    /// holds assembling the answer, bounded like a whole body.
    assembled: usize,
}

/// The chunks of a streamed answer: every event's chunks in order, then `Done` with the
/// assembled response, or one error, after which the stream ends.
pub(crate) fn chunk_stream<D: StreamDecoder>(
    client: Arc<HttpClient>,
    response: Response,
    decoder: D,
    deadline: Instant,
) -> CompletionStream {
    let limits = client.limits;
    let echoes = client.echoes.clone().map(EchoFilter::new);
    let state = ChunkStream {
        client,
        deadline,
        bytes: response.bytes_stream().boxed(),
        sse: SseDecoder::with_limits(limits.line, limits.event),
        events: VecDeque::new(),
        chunks: VecDeque::new(),
        ready: VecDeque::new(),
        echoes,
        decoder: Some(decoder),
        closed: false,
        assembled: 0,
    };
    Box::pin(futures::stream::unfold(state, |mut state| async move {
        let item = state.next().await?;
        Some((item, state))
    }))
}

impl<D: StreamDecoder> ChunkStream<D> {
    async fn next(&mut self) -> Option<Result<StreamChunk, CompletionError>> {
        loop {
            if let Some(chunk) = self.next_ready() {
                // Every event may fit the limits while the answer they add up to grows
                // without end; it is held whole until `Done`, so it is bounded too.
                self.assembled = self.assembled.saturating_add(assembled_bytes(&chunk));
                let limit = self.client.limits.body;
                if self.assembled > limit {
                    let error = super::body::too_large("the streamed answer", limit);
                    return Some(Err(self.broken(error)));
                }
                return Some(Ok(chunk));
            }
            let decoder = self.decoder.as_mut()?;
            if let Some(event) = self.events.pop_front() {
                match decoder.event(event.event.as_deref(), &event.data, &mut self.chunks) {
                    Ok(None) => {
                        // What the decoder keeps without streaming it (a thinking signature,
                        // a block it does not read) grows with the stream as the answer does.
                        let held = self.assembled.saturating_add(decoder.kept());
                        let limit = self.client.limits.body;
                        if held > limit {
                            let error = super::body::too_large("the streamed answer", limit);
                            return Some(Err(self.broken(error)));
                        }
                        // Checked before the event's chunks go on: no part past the limit
                        // reaches the run.
                        if decoder.parts() > MAX_ANSWER_PARTS {
                            return Some(Err(self.fail(too_many_parts())));
                        }
                    }
                    Ok(Some(response)) => {
                        // The answer an ending event lists (a Responses `response.completed`)
                        // was never counted by `parts`, nor were parts started by text and
                        // reasoning taking turns: the whole answer is held to the limit.
                        if response.content.len() > MAX_ANSWER_PARTS {
                            return Some(Err(self.fail(too_many_parts())));
                        }
                        self.decoder = None;
                        self.chunks.push_back(StreamChunk::Done(response));
                    }
                    Err(error) => return Some(Err(self.fail(error))),
                }
                continue;
            }
            if self.closed {
                let decoder = self.decoder.take()?;
                match decoder.closed() {
                    Ok(response) if response.content.len() > MAX_ANSWER_PARTS => {
                        return Some(Err(self.fail(too_many_parts())));
                    }
                    Ok(response) => self.chunks.push_back(StreamChunk::Done(response)),
                    Err(error) => {
                        let error = with_stray_line(error, self.sse.stray_line());
                        return Some(Err(self.fail(error)));
                    }
                }
                continue;
            }
            let read = self
                .client
                .within(self.deadline, Wait::Idle, self.bytes.next())
                .await;
            let events = &mut self.events;
            let decoded = match read {
                Ok(Some(Ok(bytes))) => self.sse.feed(&bytes, |event| events.push_back(event)),
                Ok(None) => {
                    self.closed = true;
                    self.sse.finish(|event| events.push_back(event))
                }
                Ok(Some(Err(error))) => {
                    let error = self.client.transport_error(&error);
                    return Some(Err(self.broken(error)));
                }
                Err(timeout) => return Some(Err(self.broken(timeout))),
            };
            if let Err(error) = decoded {
                let error = match error {
                    SseError::LineTooLong { limit } => CompletionError::TooLarge {
                        what: "a line of the event stream".to_owned(),
                        limit,
                    },
                    SseError::EventTooLarge { limit } => CompletionError::TooLarge {
                        what: "an event of the stream".to_owned(),
                        limit,
                    },
                    SseError::Invalid(message) => CompletionError::Decode(message),
                };
                return Some(Err(self.broken(error)));
            }
        }
    }

    /// The next chunk to hand out: the decoder's, through the echo filter (which may hold a
    /// fragment back, or hand out what it held before it).
    fn next_ready(&mut self) -> Option<StreamChunk> {
        let Some(filter) = &mut self.echoes else {
            return self.chunks.pop_front();
        };
        while self.ready.is_empty() {
            filter.pass(self.chunks.pop_front()?, &mut self.ready);
        }
        self.ready.pop_front()
    }

    /// Ends the stream with `error`, scrubbed of the key.
    fn fail(&mut self, error: CompletionError) -> CompletionError {
        self.decoder = None;
        self.chunks.clear();
        self.ready.clear();
        self.client.scrub_error(error)
    }

    /// Ends a stream that broke, stalled or overflowed, saying what had arrived.
    fn broken(&mut self, error: CompletionError) -> CompletionError {
        let received = self
            .decoder
            .as_ref()
            .map(|decoder| decoder.received())
            .unwrap_or_default();
        let error = match error {
            CompletionError::Transport(message) => CompletionError::Transport(format!(
                "{message}; the stream broke after receiving {received}"
            )),
            CompletionError::Timeout(message) => {
                CompletionError::Timeout(format!("{message}; the stream had sent {received}"))
            }
            CompletionError::Decode(message) => {
                CompletionError::Decode(format!("{message}; after receiving {received}"))
            }
            other => other,
        };
        self.fail(error)
    }
}

/// The error of a stream that ended without its answer, quoting the first line that was no
/// event-stream field: a server answering an error as text under an event-stream type says
/// what went wrong only there.
fn with_stray_line(error: CompletionError, stray: Option<&str>) -> CompletionError {
    match (error, stray) {
        (CompletionError::Decode(message), Some(line)) => CompletionError::Decode(format!(
            "{message}; the body held text that is not server-sent events: {line}"
        )),
        (error, _) => error,
    }
}

/// The bytes a chunk adds to the answer being assembled, and hands out. A tool call's id
/// comes with each fragment of its arguments, so it counts each time: a server giving a call
/// a huge id, then its arguments a byte at a time, would otherwise have reins copy that id
/// once per byte, far past the limit.
fn assembled_bytes(chunk: &StreamChunk) -> usize {
    match chunk {
        StreamChunk::Text(text) | StreamChunk::Reasoning(text) => text.len(),
        StreamChunk::ToolCall { id, name, delta } => {
            id.len() + delta.len() + name.as_ref().map_or(0, String::len)
        }
        StreamChunk::Done(_) => 0,
    }
}
