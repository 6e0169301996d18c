use super::error::PromptError;
use super::response::PromptResponse;
use super::stream_item::StreamItem;
use futures::Stream;
use futures::future::BoxFuture;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

/// How many deltas a streamed run queues before it pauses for the consumer to take them.
/// Small enough that the consumer frees each batch while the allocator's per-thread cache of
/// freed blocks still holds it (glibc keeps seven blocks of a size): the model's next deltas
/// reuse that memory instead of taking the allocator's slower paths (measured against 4, 8,
/// 12, 16 and 32; see docs/PERFORMANCE.md).
const HANDOVER_BATCH: usize = 7;

/// The items a streamed run queued for its consumer, in order. A fragment of text or
/// reasoning (nearly every item) is queued as its string alone, in 32 bytes, rather than as a
/// 104-byte [`StreamItem`]: the larger item was built on the stack and then copied into its
/// slot, and that copy stalled on the stores just before it, on every delta (see
/// docs/PERFORMANCE.md, "Tenth session").
#[derive(Default)]
struct Queue {
    order: VecDeque<Queued>,
    /// The other items, in order; each has its place in `order`.
    others: VecDeque<StreamItem>,
}

/// One queued item, or its place.
enum Queued {
    Text(String),
    Reasoning(String),
    Other,
}

impl Queue {
    /// Queues `item`; the number of items queued.
    #[inline(always)]
    fn push(&mut self, item: Queued) -> usize {
        self.order.push_back(item);
        self.order.len()
    }

    /// Queues any item: a fragment as its string, another item in `others` with its place
    /// in `order`; the number of items queued.
    #[inline]
    fn push_item(&mut self, item: StreamItem) -> usize {
        match item {
            StreamItem::Text(delta) => self.push(Queued::Text(delta)),
            StreamItem::Reasoning(delta) => self.push(Queued::Reasoning(delta)),
            other => {
                self.others.push_back(other);
                self.push(Queued::Other)
            }
        }
    }

    /// The first item queued, if any.
    #[inline(always)]
    fn pop_front(&mut self) -> Option<StreamItem> {
        match self.order.pop_front()? {
            Queued::Text(delta) => Some(StreamItem::Text(delta)),
            Queued::Reasoning(delta) => Some(StreamItem::Reasoning(delta)),
            Queued::Other => self.others.pop_front(),
        }
    }

    fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Moves `other`'s items behind these.
    fn append(&mut self, other: &mut Queue) {
        self.order.append(&mut other.order);
        self.others.append(&mut other.others);
    }
}

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
        self.push_made(|queue| queue.push_item(item))
    }

    /// Queues a fragment of answer text, as [`StreamSink::push_delta`] does.
    #[inline]
    pub fn push_text(&self, delta: String) -> bool {
        self.push_made(|queue| queue.push(Queued::Text(delta)))
    }

    /// Queues a fragment of reasoning, as [`StreamSink::push_text`] does.
    #[inline]
    pub fn push_reasoning(&self, delta: String) -> bool {
        self.push_made(|queue| queue.push(Queued::Reasoning(delta)))
    }

    #[inline(always)]
    fn push_made(&self, push: impl FnOnce(&mut Queue) -> usize) -> bool {
        let strays = &self.strays;
        let queued = POLLED_RUN_QUEUE.try_with(|polled| {
            let mut polled = match polled.try_borrow_mut() {
                Ok(polled) => polled,
                Err(_) => return strays.push(push),
            };
            match polled.as_mut() {
                Some(queue) => push(queue) >= HANDOVER_BATCH,
                None => strays.push(push),
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
    fn push(&self, push: impl FnOnce(&mut Queue) -> usize) -> bool {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        push(&mut queue);
        self.any.store(true, Ordering::Relaxed);
        false
    }

    /// Moves stray items, if any, behind `ready`'s.
    #[inline]
    fn drain_into(&self, ready: &mut Queue) {
        if self.any.load(Ordering::Relaxed) {
            let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
            ready.append(&mut queue);
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
///
/// ```
/// use futures::StreamExt;
/// use reins::agent::{AgentBuilder, StreamItem};
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([
///     Turn::tool_call("clock", json!({})),
///     Turn::text("It is noon."),
/// ]);
/// let clock = reins::tool::tool_fn("clock", "The time.", |_: serde_json::Value| async move {
///     Ok::<_, std::convert::Infallible>("12:00")
/// });
/// let agent = AgentBuilder::new(model).tool(clock).build();
///
/// let mut stream = agent.prompt("What time is it?").stream();
/// let (mut shown, mut results, mut answer) = (String::new(), Vec::new(), None);
/// while let Some(item) = stream.next().await {
///     match item.expect("the run succeeds") {
///         StreamItem::Text(delta) => shown.push_str(&delta),
///         StreamItem::ToolResult { tool_name, result, .. } => results.push((tool_name, result)),
///         StreamItem::Final(response) => answer = Some(response.output),
///         _ => {}
///     }
/// }
/// assert_eq!(results, [("clock".to_string(), "12:00".to_string())]);
/// // The text arrived in fragments; put together, it is the answer.
/// assert_eq!(Some(shown), answer);
/// # }
/// ```
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
            ready: Queue::default(),
            driver: Some(driver),
            error: None,
        }
    }
}

impl PromptStream {
    /// The other item whose place came up in `order`. (Out of line: the consumer's loop
    /// inlines `poll_next`, which hands out fragments.)
    #[inline(never)]
    fn next_other(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<StreamItem, PromptError>>> {
        match self.ready.others.pop_front() {
            Some(item) => Poll::Ready(Some(Ok(item))),
            None => self.advance(cx),
        }
    }

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
                    Ok(response) => {
                        self.ready.push_item(StreamItem::Final(Box::new(response)));
                    }
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
    // A fragment is handed out in its own arm, so only its string is written into the
    // consumer's item; through `Queue::pop_front` the item was built whole first and all its
    // 112 bytes copied out, most of them unset, which stalled on every delta (see
    // docs/PERFORMANCE.md, "Eleventh session").
    #[inline]
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        match this.ready.order.pop_front() {
            Some(Queued::Text(delta)) => Poll::Ready(Some(Ok(StreamItem::Text(delta)))),
            Some(Queued::Reasoning(delta)) => Poll::Ready(Some(Ok(StreamItem::Reasoning(delta)))),
            Some(Queued::Other) => this.next_other(cx),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn discarded(turn: usize) -> StreamItem {
        StreamItem::TurnDiscarded { turn }
    }

    /// What each item is, in a form that compares.
    fn describe(item: &StreamItem) -> String {
        match item {
            StreamItem::Text(text) => format!("text {text}"),
            StreamItem::Reasoning(text) => format!("reasoning {text}"),
            StreamItem::TurnDiscarded { turn } => format!("discarded {turn}"),
            other => format!("{other:?}"),
        }
    }

    fn drain(queue: &mut Queue) -> Vec<String> {
        std::iter::from_fn(|| queue.pop_front())
            .map(|item| describe(&item))
            .collect()
    }

    #[test]
    fn a_queue_hands_out_fragments_and_other_items_in_the_order_they_came() {
        let mut queue = Queue::default();
        assert_eq!(queue.push(Queued::Text("a".into())), 1);
        assert_eq!(queue.push_item(discarded(1)), 2);
        assert_eq!(queue.push_item(StreamItem::Reasoning("b".into())), 3);
        assert_eq!(queue.push_item(discarded(2)), 4);
        let mut later = Queue::default();
        later.push_item(discarded(3));
        later.push(Queued::Text("c".into()));
        queue.append(&mut later);
        assert!(later.is_empty());
        assert_eq!(
            drain(&mut queue),
            [
                "text a",
                "discarded 1",
                "reasoning b",
                "discarded 2",
                "discarded 3",
                "text c"
            ]
        );
        assert!(queue.is_empty());
        assert!(queue.others.is_empty());
    }
}
