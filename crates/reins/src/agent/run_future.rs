//! [`RunFuture`]: an awaited run whose state, once the run finishes, is kept for the thread's
//! next run.
//!
//! Why: a run's state is one allocation of a few kilobytes, larger than anything glibc's
//! allocator serves from its per-thread cache, and a request that large first merges every
//! small block the previous run freed back into its free lists (`malloc_consolidate`), about
//! 4,500 instructions once a run. Writing the next run into the finished run's allocation
//! skips both the request and the merge. A run's history grows past that size by its ninth
//! message, so a run answered with its text or a typed value (whose history is not handed back)
//! leaves its history's buffer, emptied, for the thread's next new run too. See
//! docs/PERFORMANCE.md, "Nineteenth session".

use super::builder::Agent;
use super::driver;
use super::hook::HookStack;
use super::options::{RunOptions, RunStart};
use super::stream::StreamSink;
use super::{PromptError, PromptResponse};
use crate::message::Message;
use futures::future::FusedFuture;
use pin_project_lite::pin_project;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

/// What the driver answers a run with.
type RunOutput = Result<PromptResponse, PromptError>;

/// What the driver starts a run from, awaited or streamed: a
/// [`PromptRequest`](super::PromptRequest)'s parts.
pub(super) struct RunParts {
    pub(super) agent: Agent,
    pub(super) start: RunStart,
    pub(super) hooks: HookStack,
    pub(super) options: RunOptions,
}

impl RunParts {
    /// The driver's future of the run, handing its items to `sink` when it is streamed. (No
    /// `async` layer of its own: the driver's future is the run's whole state.)
    pub(super) fn drive(
        mut self,
        sink: Option<StreamSink>,
    ) -> impl Future<Output = RunOutput> + Send + 'static {
        if let RunStart::New { history, .. } = &mut self.start {
            if history.capacity() == 0 {
                *history = spare_history();
            }
        }
        driver::run(self.agent, self.start, self.hooks, self.options, sink)
    }

    /// The driver's future of an awaited run.
    fn run(self) -> impl Future<Output = RunOutput> + Send + 'static {
        self.drive(None)
    }
}

/// The most messages a kept history buffer may hold: enough for a run of a few dozen turns,
/// little memory for the one run that starts with a larger buffer than it needs.
const SPARE_HISTORY_MESSAGES: usize = 64;

thread_local! {
    /// The history buffer of a run this thread finished, empty, for its next new run.
    static SPARE_HISTORY: Cell<Vec<Message>> = const { Cell::new(Vec::new()) };
}

/// A history buffer a finished run left on this thread, or a new one. (A run's history grows
/// past 1,032 bytes at its ninth message, and each such growth asks glibc for a block large
/// enough to merge its free lists first; reusing the buffer asks for nothing.)
fn spare_history() -> Vec<Message> {
    SPARE_HISTORY.try_with(Cell::take).unwrap_or_default()
}

/// Keeps the buffer of a finished run's history for the thread's next run, its messages
/// dropped, when the caller's answer does not return it.
pub(super) fn keep_history(mut history: Vec<Message>) {
    history.clear();
    // A buffer that holds nothing would only push out a spare that does.
    if (1..=SPARE_HISTORY_MESSAGES).contains(&history.capacity()) {
        let _ = SPARE_HISTORY.try_with(|spare| spare.set(history));
    }
}

/// How many finished runs' allocations a thread keeps: enough for a task that awaits a few
/// runs side by side, small enough that an idle thread holds little (a run's state is a few
/// kilobytes).
const SPARES_PER_THREAD: usize = 4;

/// A run's state in its allocation: running, or finished and free for the next run.
trait RunSlot: Send {
    /// Starts the run of `parts` here, in place of the finished run.
    fn start(self: Pin<&mut Self>, parts: RunParts);

    /// Polls the run; once it finishes, its state is dropped and the slot is free. `None`:
    /// the slot holds no run.
    fn poll_run(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<RunOutput>>;
}

pin_project! {
    /// The slot of the driver's future `F`, which `make` starts from a request's parts. (A
    /// function rather than the future's type named: the driver's future is an `async`
    /// block's, which has no name.)
    struct Slot<F> {
        make: fn(RunParts) -> F,
        #[pin]
        run: Option<F>,
    }
}

impl<F: Future<Output = RunOutput> + Send> RunSlot for Slot<F> {
    fn start(self: Pin<&mut Self>, parts: RunParts) {
        let mut slot = self.project();
        slot.run.set(Some((slot.make)(parts)));
    }

    fn poll_run(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<RunOutput>> {
        let mut slot = self.project();
        let Some(run) = slot.run.as_mut().as_pin_mut() else {
            return Poll::Ready(None);
        };
        let output = ready!(run.poll(cx));
        slot.run.set(None);
        Poll::Ready(Some(output))
    }
}

/// A slot the run lives in.
type BoxedSlot = Pin<Box<dyn RunSlot>>;

thread_local! {
    /// The allocations of runs this thread finished, free for its next runs.
    static SPARES: RefCell<Vec<BoxedSlot>> = const { RefCell::new(Vec::new()) };
}

/// A run being awaited: what awaiting a [`PromptRequest`](super::PromptRequest) (`T` =
/// `String`, the answer), a [`DetailedPromptRequest`](super::DetailedPromptRequest) (`T` =
/// [`PromptResponse`]) or a [`TypedPromptRequest`](super::TypedPromptRequest) (`T`, the typed
/// answer) gives.
///
/// It behaves as a boxed future of the run. Dropping it before it finishes drops the run at
/// once (its tools' and hooks' futures; `on_run_settled` is not called); a durable run gives
/// its lease back as last stored, in a task of its own, so that any worker may resume it at
/// once, a call it had started waiting in doubt. A run that finishes leaves its
/// allocation to the thread that polled it last, for that thread's next run; a thread keeps a
/// few. Polled again after it finished, it stays pending (and, as a
/// [`FusedFuture`], says it is terminated). It is `Unpin`: it can be polled through `&mut`.
///
/// ```
/// use reins::agent::{AgentBuilder, RunFuture};
/// use reins::testing::{ScriptedModel, Turn};
/// use std::future::IntoFuture;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("Hello!")])).build();
/// // Started now, awaited later: the run is a value that can be stored and moved.
/// let run: RunFuture<String> = agent.prompt("Hi").into_future();
/// assert_eq!(run.await.unwrap(), "Hello!");
/// # }
/// ```
#[must_use = "a run does nothing until awaited"]
pub struct RunFuture<T> {
    /// The run's state, until the run finishes.
    slot: Option<BoxedSlot>,
    /// Makes the caller's answer from the run's response (a typed answer can fail to parse).
    answer: fn(PromptResponse) -> Result<T, PromptError>,
}

impl<T> RunFuture<T> {
    /// Starts the run of a request's `parts`, in one of the thread's spare allocations when
    /// it has one.
    pub(super) fn new(
        parts: RunParts,
        answer: fn(PromptResponse) -> Result<T, PromptError>,
    ) -> Self {
        let spare = SPARES
            .try_with(|spares| spares.try_borrow_mut().ok()?.pop())
            .ok()
            .flatten();
        let slot = match spare {
            Some(mut slot) => {
                slot.as_mut().start(parts);
                slot
            }
            None => Box::pin(Slot {
                make: RunParts::run,
                run: Some(parts.run()),
            }),
        };
        RunFuture {
            slot: Some(slot),
            answer,
        }
    }
}

impl<T> Future for RunFuture<T> {
    type Output = Result<T, PromptError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(slot) = self.slot.as_mut() else {
            return Poll::Pending;
        };
        let Some(output) = ready!(slot.as_mut().poll_run(cx)) else {
            return Poll::Pending;
        };
        if let Some(slot) = self.slot.take() {
            keep(slot);
        }
        Poll::Ready(output.and_then(self.answer))
    }
}

/// Keeps a finished run's allocation for the thread's next run, when the thread has room.
fn keep(slot: BoxedSlot) {
    // A thread being torn down has no spares; the allocation is then freed here.
    let _ = SPARES.try_with(|spares| {
        if let Ok(mut spares) = spares.try_borrow_mut() {
            if spares.len() < SPARES_PER_THREAD {
                spares.push(slot);
            }
        }
    });
}

/// Finished once it answered: `futures::select!` then passes over it.
impl<T> FusedFuture for RunFuture<T> {
    fn is_terminated(&self) -> bool {
        self.slot.is_none()
    }
}

impl<T> fmt::Debug for RunFuture<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunFuture")
            .field("finished", &self.slot.is_none())
            .finish_non_exhaustive()
    }
}
