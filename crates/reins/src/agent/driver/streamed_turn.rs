//! A streamed model turn: the model's stream opened, each chunk handed to the delta hooks and
//! the run's stream, and the turn's response returned.

use super::{Driver, Halt, internal_call_id};
use crate::agent::hook::{
    HookStack, ObservationAction, ReasoningDeltaEvent, StepEventKind, TextDeltaEvent,
    ToolCallDeltaEvent,
};
use crate::agent::stream::StreamSink;
use crate::agent::stream_item::StreamItem;
use crate::completion::{
    CompletionError, CompletionRequest, CompletionResponse, CompletionStream, DynCompletionModel,
    StreamChunk,
};
use crate::panics::panic_message;
use futures::StreamExt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

/// Where a streamed turn's chunks come from.
pub(super) enum TurnSource<'s> {
    /// A model's stream, opened for `request`.
    Model(&'s dyn DynCompletionModel, &'s CompletionRequest),
    /// Chunks already made: a response a dispatch hook answered the call with.
    Served(CompletionStream),
}

impl Driver<'_> {
    /// Streams one model turn from `source`: each chunk handed to the delta hooks and the
    /// run's stream. Returns the turn's response and whether it streamed any text.
    ///
    /// Awaited inside [`CaughtTurn`], which makes a panic of the model (opening the stream,
    /// producing a chunk, dropping the stream) the turn's error. (A hook's panic is caught
    /// where the hook is called.)
    pub(super) async fn stream_turn(
        &self,
        source: TurnSource<'_>,
        sink: &StreamSink,
    ) -> Result<(CompletionResponse, bool), Halt> {
        let mut stream = match source {
            TurnSource::Served(stream) => stream,
            TurnSource::Model(model, request) => {
                model.stream(request).await.map_err(Halt::Completion)?
            }
        };
        let turn = self.state.turn;
        let mut text = String::new();
        let mut reasoning = String::new();
        // Read once a turn: hooks only ever stop observing a kind (see `HookStack`), and a
        // stack asked about a kind its hooks no longer observe calls none of them. The members
        // a delta is offered to are looked up once a turn too; one that the stack learns
        // mid-turn answers a kind by default is still passed over at each delta.
        let observes_text = self.observes(StepEventKind::TextDelta);
        let observes_reasoning = self.observes(StepEventKind::ReasoningDelta);
        let observes_call_deltas = self.observes(StepEventKind::ToolCallDelta);
        let text_observers = self.hooks.observers(StepEventKind::TextDelta);
        let reasoning_observers = self.hooks.observers(StepEventKind::ReasoningDelta);
        let call_delta_observers = self.hooks.observers(StepEventKind::ToolCallDelta);
        // (provider id, internal id, arguments so far), in order of first appearance.
        let mut calls: Vec<(String, String, String)> = Vec::new();
        loop {
            // A text fragment joins the turn's text in the poll that received it, before the
            // chunk is moved into this future's state: the move reads the chunk with wide loads
            // just after the model's stream wrote it with narrow ones, and stalled on every
            // delta until the append came between them. (Reasoning is appended below: doing
            // the same for it here made the loop's code 13% slower. See docs/PERFORMANCE.md,
            // "Eleventh session".)
            let chunk = std::future::poll_fn(|cx| {
                let polled = stream.poll_next_unpin(cx);
                if let Poll::Ready(Some(Ok(StreamChunk::Text(delta)))) = &polled {
                    text.push_str(delta);
                }
                polled
            })
            .await;
            match chunk {
                None => break,
                Some(Err(error)) => return Err(Halt::Completion(error)),
                Some(Ok(StreamChunk::Text(delta))) => {
                    if observes_text {
                        let event = TextDeltaEvent {
                            delta: &delta,
                            aggregated: &text,
                        };
                        if let ObservationAction::Stop(reason) =
                            HookStack::text_delta(text_observers.clone(), self.ctx, event).await?
                        {
                            return Err(Halt::Stop(reason));
                        }
                    }
                    if sink.push_text(delta) {
                        sink.hand_over().await;
                    }
                }
                Some(Ok(StreamChunk::Reasoning(delta))) => {
                    reasoning.push_str(&delta);
                    if observes_reasoning {
                        let event = ReasoningDeltaEvent {
                            delta: &delta,
                            aggregated: &reasoning,
                        };
                        if let ObservationAction::Stop(reason) =
                            HookStack::reasoning_delta(reasoning_observers.clone(), self.ctx, event)
                                .await?
                        {
                            return Err(Halt::Stop(reason));
                        }
                    }
                    if sink.push_reasoning(delta) {
                        sink.hand_over().await;
                    }
                }
                Some(Ok(StreamChunk::ToolCall { id, name, delta })) => {
                    let index = match calls.iter().position(|(call_id, ..)| *call_id == id) {
                        Some(index) => index,
                        None => {
                            calls.push((id, internal_call_id(turn, calls.len()), String::new()));
                            calls.len() - 1
                        }
                    };
                    let Some((call_id, internal_id, arguments)) = calls.get_mut(index) else {
                        continue;
                    };
                    arguments.push_str(&delta);
                    if observes_call_deltas {
                        let event = ToolCallDeltaEvent {
                            tool_call_id: call_id,
                            internal_call_id: internal_id,
                            tool_name: name.as_deref(),
                            delta: &delta,
                            aggregated: arguments,
                        };
                        if let ObservationAction::Stop(reason) = HookStack::tool_call_delta(
                            call_delta_observers.clone(),
                            self.ctx,
                            event,
                        )
                        .await?
                        {
                            return Err(Halt::Stop(reason));
                        }
                    }
                    let item = StreamItem::ToolCallDelta {
                        tool_call_id: call_id.clone(),
                        internal_call_id: internal_id.clone(),
                        tool_name: name,
                        delta,
                    };
                    if sink.push_delta(item) {
                        sink.hand_over().await;
                    }
                }
                Some(Ok(StreamChunk::Done(response))) => return Ok((response, !text.is_empty())),
            }
        }
        Err(Halt::Completion(CompletionError::Decode(format!(
            "the stream ended before the model finished its turn (received {} bytes of text \
             and {} tool-call fragments so far)",
            text.len(),
            calls.len()
        ))))
    }
}

/// A streamed turn, with a panic while it is polled made the turn's error: the model's (a
/// hook's panic is caught where the hook is called), which never unwinds into the caller's
/// task. One layer of futures where `catch_unwind().map(..)` is three, and the run passes
/// through each of them twice every time it hands a batch of deltas to its consumer.
pub(super) struct CaughtTurn<F>(pub Pin<Box<F>>);

impl<F: Future<Output = Result<(CompletionResponse, bool), Halt>>> Future for CaughtTurn<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let turn = self.0.as_mut();
        match catch_unwind(AssertUnwindSafe(|| turn.poll(cx))) {
            Ok(polled) => polled,
            // Ready: the turn, left as it was when it panicked, is not polled again.
            Err(panic) => Poll::Ready(Err(Halt::Completion(model_panicked(panic)))),
        }
    }
}

/// A model implementation's panic, as the error of its call.
pub(super) fn model_panicked(panic: Box<dyn std::any::Any + Send>) -> CompletionError {
    CompletionError::Other(format!(
        "the model panicked: {}",
        panic_message(panic.as_ref())
    ))
}
