use super::error::PromptError;
use super::response::PromptResponse;
use crate::tool::ToolOutcome;
use futures::Stream;
use futures::future::BoxFuture;
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

/// One item of a streamed run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum StreamItem {
    /// A fragment of answer text (provisional until the turn is accepted).
    Text(String),
    /// A fragment of reasoning.
    Reasoning(String),
    /// A fragment of a tool call's arguments.
    ToolCallDelta {
        /// The provider's id of the call.
        tool_call_id: String,
        /// reins' id of the call.
        internal_call_id: String,
        /// The tool's name, on the first fragment of the call.
        tool_name: Option<String>,
        /// The new fragment.
        delta: String,
    },
    /// A hook or the run discarded the turn streamed so far (a repeat or an invalid
    /// tool-call retry): text streamed for that turn is withdrawn.
    TurnDiscarded {
        /// The one-based index of the discarded model call.
        turn: usize,
    },
    /// A tool call finished and the model will see `result`.
    ToolResult {
        /// The provider's id of the call.
        tool_call_id: String,
        /// The tool that was called.
        tool_name: String,
        /// The model-visible result.
        result: String,
        /// The structured outcome.
        outcome: ToolOutcome,
    },
    /// The run finished; always the last item of a successful run. (Boxed: the response is
    /// large and every other item is small.)
    Final(Box<PromptResponse>),
}

/// How many deltas a streamed run queues before it pauses for the consumer to take them.
const HANDOVER_BATCH: usize = 32;

/// Where a streamed run's driver puts items for the stream to hand out.
#[derive(Clone, Default)]
pub(crate) struct StreamSink {
    queue: Arc<Mutex<VecDeque<StreamItem>>>,
}

impl StreamSink {
    /// Queues an item for the stream to hand out.
    pub fn push(&self, item: StreamItem) {
        self.lock().push_back(item);
    }

    /// Queues a delta; true when the queue holds a batch the consumer should take before the
    /// run goes on ([`StreamSink::hand_over`]).
    #[inline]
    pub fn push_delta(&self, item: StreamItem) -> bool {
        let mut queue = self.lock();
        queue.push_back(item);
        queue.len() >= HANDOVER_BATCH
    }

    /// Pauses the run once so the consumer takes the queued batch. A model that streams
    /// faster than the consumer reads (a local model, a replay, a fast network) would
    /// otherwise queue its whole turn: the queue stays bounded, and each delta is dropped by
    /// the consumer soon after it was made, while the allocator still has it at hand.
    pub async fn hand_over(&self) {
        YieldOnce(false).await;
    }

    /// Lets the consumer take what is queued before the run goes on: the run pauses here
    /// until the consumer asks for more than the queue holds. The driver calls it before every
    /// model call and before running tools, so a consumer sees a turn's output before its
    /// tools run, and dropping the stream stops the run there.
    pub async fn flush(&self) {
        if !self.lock().is_empty() {
            YieldOnce(false).await;
        }
    }

    #[inline]
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<StreamItem>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Moves every queued item into `ready` (one lock for the whole batch).
    fn drain_into(&self, ready: &mut VecDeque<StreamItem>) {
        let mut queue = self.lock();
        if ready.is_empty() {
            std::mem::swap(&mut *queue, ready);
        } else {
            ready.extend(queue.drain(..));
        }
    }
}

/// Returns `Pending` once. Only awaited while items are queued: `PromptStream` then hands
/// them out and polls the driver again on the consumer's next `poll_next`, so no wake-up is
/// needed and none is lost.
struct YieldOnce(bool);

impl std::future::Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            Poll::Pending
        }
    }
}

/// A streamed run: `Result<StreamItem, PromptError>` items, ending with
/// [`StreamItem::Final`] or an error. The run advances only while the stream is polled, and
/// dropping the stream cancels it.
pub struct PromptStream {
    sink: StreamSink,
    /// Items taken from the sink, handed out one by one without locking it again.
    ready: VecDeque<StreamItem>,
    driver: Option<BoxFuture<'static, Result<PromptResponse, PromptError>>>,
    /// The run's error, handed out after the items produced before it.
    error: Option<PromptError>,
}

impl PromptStream {
    pub(crate) fn new(
        sink: StreamSink,
        driver: BoxFuture<'static, Result<PromptResponse, PromptError>>,
    ) -> Self {
        PromptStream {
            sink,
            ready: VecDeque::new(),
            driver: Some(driver),
            error: None,
        }
    }
}

impl PromptStream {
    #[inline]
    fn next_ready(&mut self) -> Option<StreamItem> {
        if self.ready.is_empty() {
            self.sink.drain_into(&mut self.ready);
        }
        self.ready.pop_front()
    }
}

impl Stream for PromptStream {
    type Item = Result<StreamItem, PromptError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(item) = this.next_ready() {
            return Poll::Ready(Some(Ok(item)));
        }
        let Some(driver) = this.driver.as_mut() else {
            return Poll::Ready(this.error.take().map(Err));
        };
        match driver.as_mut().poll(cx) {
            Poll::Pending => match this.next_ready() {
                Some(item) => Poll::Ready(Some(Ok(item))),
                None => Poll::Pending,
            },
            Poll::Ready(result) => {
                this.driver = None;
                match result {
                    Ok(response) => this.sink.push(StreamItem::Final(Box::new(response))),
                    Err(error) => this.error = Some(error),
                }
                match this.next_ready() {
                    Some(item) => Poll::Ready(Some(Ok(item))),
                    None => Poll::Ready(this.error.take().map(Err)),
                }
            }
        }
    }
}

impl std::fmt::Debug for PromptStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptStream")
            .field("finished", &self.driver.is_none())
            .finish()
    }
}
