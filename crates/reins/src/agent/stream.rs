use super::error::PromptError;
use super::response::PromptResponse;
use crate::tool::ToolOutcome;
use futures::Stream;
use futures::future::BoxFuture;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
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
/// Small enough that the consumer frees each batch while the allocator's per-thread cache of
/// freed blocks still holds it (glibc keeps seven blocks of a size): the model's next deltas
/// reuse that memory instead of taking the allocator's slower paths (measured against 4, 8,
/// 12, 16 and 32; see docs/PERFORMANCE.md).
const HANDOVER_BATCH: usize = 7;

type Queue = VecDeque<StreamItem>;

thread_local! {
    /// The queue of the streamed run being polled on this thread. A run advances only inside
    /// its stream's `poll_next`, which lends the run its queue for the poll ([`lend`]); the
    /// run's [`StreamSink`] pushes there, so a delta reaches its consumer without a lock. A
    /// stream polled inside another run (a hook or a tool streaming an agent of its own) lends
    /// its queue in turn and gives the outer one back when its poll ends.
    static POLLED_RUN_QUEUE: RefCell<Option<Queue>> = const { RefCell::new(None) };
}

/// Lends `queue` to the run polled in `poll`, and takes it back, with what the run pushed,
/// however `poll` ends.
fn lend<R>(queue: &mut Queue, poll: impl FnOnce() -> R) -> R {
    struct GiveBack<'q> {
        queue: &'q mut Queue,
        outer: Option<Queue>,
    }
    impl Drop for GiveBack<'_> {
        fn drop(&mut self) {
            let outer = self.outer.take();
            let lent = POLLED_RUN_QUEUE.try_with(|polled| polled.replace(outer));
            let placeholder =
                std::mem::replace(self.queue, lent.ok().flatten().unwrap_or_default());
            // What `lend` left in the stream's place: a new, empty queue, which owns no memory,
            // so there is nothing to drop (and no call to drop it, each time a run is polled).
            std::mem::forget(placeholder);
        }
    }
    let lent = std::mem::take(queue);
    match POLLED_RUN_QUEUE.try_with(|polled| polled.replace(Some(lent))) {
        Ok(outer) => {
            let _give_back = GiveBack { queue, outer };
            poll()
        }
        // This thread's queue slot is already destroyed: only while the thread's locals are
        // torn down, where no stream is polled in practice. The run is polled without a queue,
        // and what it pushes in this poll is dropped (see `StreamSink::push_delta`).
        Err(_) => poll(),
    }
}

/// Where a streamed run's driver puts items for the stream to hand out: the queue its stream
/// lent for the poll.
#[derive(Clone, Default)]
pub(crate) struct StreamSink {
    /// Items pushed while no queue was lent, which the run's structure rules out (it is only
    /// polled by its stream, inside [`lend`]); kept so nothing could be lost.
    strays: Arc<Strays>,
}

#[derive(Default)]
struct Strays {
    queue: Mutex<Queue>,
    /// Whether `queue` holds items (read without locking it).
    any: AtomicBool,
}

impl StreamSink {
    /// Queues an item for the stream to hand out.
    pub fn push(&self, item: StreamItem) {
        self.push_delta(item);
    }

    /// Queues a delta; true when the queue holds a batch the consumer should take before the
    /// run goes on ([`StreamSink::hand_over`]).
    #[inline]
    pub fn push_delta(&self, item: StreamItem) -> bool {
        self.push_made(|| item)
    }

    /// Queues a fragment of answer text, as [`StreamSink::push_delta`] does. (The item is made
    /// where it is queued, rather than moved there whole: 104 bytes for 24 of text.)
    #[inline]
    pub fn push_text(&self, delta: String) -> bool {
        self.push_made(|| StreamItem::Text(delta))
    }

    /// Queues a fragment of reasoning, as [`StreamSink::push_text`] does.
    #[inline]
    pub fn push_reasoning(&self, delta: String) -> bool {
        self.push_made(|| StreamItem::Reasoning(delta))
    }

    #[inline(always)]
    fn push_made(&self, item: impl FnOnce() -> StreamItem) -> bool {
        let strays = &self.strays;
        let queued = POLLED_RUN_QUEUE.try_with(|polled| {
            let mut polled = match polled.try_borrow_mut() {
                Ok(polled) => polled,
                Err(_) => return strays.push(item()),
            };
            match polled.as_mut() {
                Some(queue) => {
                    queue.push_back(item());
                    queue.len() >= HANDOVER_BATCH
                }
                None => strays.push(item()),
            }
        });
        // `Err` only once this thread's queue slot is destroyed (see `lend`): the item is
        // dropped with the closure.
        queued.unwrap_or(false)
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
        let queued = POLLED_RUN_QUEUE
            .try_with(|polled| polled.try_borrow().ok()?.as_ref().map(|q| !q.is_empty()));
        if matches!(queued, Ok(Some(true))) || self.strays.any.load(Ordering::Relaxed) {
            YieldOnce(false).await;
        }
    }
}

impl Strays {
    /// Keeps an item pushed while no queue was lent; false: no batch to hand over.
    #[cold]
    fn push(&self, item: StreamItem) -> bool {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        queue.push_back(item);
        self.any.store(true, Ordering::Relaxed);
        false
    }

    /// Moves stray items, if any, behind `ready`'s.
    #[inline]
    fn drain_into(&self, ready: &mut Queue) {
        if self.any.load(Ordering::Relaxed) {
            let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
            ready.extend(queue.drain(..));
            self.any.store(false, Ordering::Relaxed);
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
    /// What the run queued, lent to it while it is polled.
    ready: Queue,
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
    /// Polls the run for more items, once those it queued were all handed out.
    fn advance(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<StreamItem, PromptError>>> {
        let Some(driver) = self.driver.as_mut() else {
            return Poll::Ready(self.error.take().map(Err));
        };
        let polled = lend(&mut self.ready, || driver.as_mut().poll(cx));
        self.sink.strays.drain_into(&mut self.ready);
        match polled {
            Poll::Pending => match self.ready.pop_front() {
                Some(item) => Poll::Ready(Some(Ok(item))),
                None => Poll::Pending,
            },
            Poll::Ready(result) => {
                self.driver = None;
                match result {
                    Ok(response) => self.ready.push_back(StreamItem::Final(Box::new(response))),
                    Err(error) => self.error = Some(error),
                }
                match self.ready.pop_front() {
                    Some(item) => Poll::Ready(Some(Ok(item))),
                    None => Poll::Ready(self.error.take().map(Err)),
                }
            }
        }
    }
}

impl Stream for PromptStream {
    type Item = Result<StreamItem, PromptError>;

    // Inlined into the consumer's loop: most polls hand out an item the run already queued.
    #[inline]
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        match this.ready.pop_front() {
            Some(item) => Poll::Ready(Some(Ok(item))),
            None => this.advance(cx),
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
