//! What a check answers ([`Verdict`]), the [`Check`] trait, and the erased form the hook stores.

use crate::panics::panic_message;
use futures::FutureExt;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::task::Poll;
use std::time::Duration;

/// Where a check runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// The user's prompt, once, before the first model call (`on_run_start`).
    Input,
    /// Each final answer: a model turn without tool calls (`on_model_turn_finished`).
    Answer,
    /// The JSON arguments of each tool call, before the tool runs (`on_dispatch`).
    ToolArgs,
}

impl Stage {
    /// The stage's name in a trip reason: `input`, `answer` or `tool_args`.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Input => "input",
            Stage::Answer => "answer",
            Stage::ToolArgs => "tool_args",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A check's answer. What each verdict does depends on the stage:
///
/// - `Pass`: the next check runs.
/// - `Rewrite(text)`: on the [input](Stage::Input) the prompt becomes `text`, on
///   [tool arguments](Stage::ToolArgs) the arguments do (as JSON); later checks see the new
///   text. Tool arguments rewritten to anything but a JSON object skip the call, telling the
///   model so (the run refuses such arguments from the model too). On an
///   [answer](Stage::Answer) it trips: an answer cannot be rewritten.
/// - `Reject(message)`: on an answer, the model is asked again with `message` as feedback, at
///   most [`max_retries`](super::Guardrails::max_retries) times per run, then the run trips;
///   on tool arguments, the call is skipped and the model receives `message` as its result;
///   on the input it trips, as there is no model to tell yet.
/// - `Trip(message)`: the run stops.
///
/// A trip ends the run with a [`GuardrailTripped`](super::GuardrailTripped) reason.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// The text is fine.
    Pass,
    /// Replace the text (input and tool arguments only).
    Rewrite(String),
    /// Tell the model what is wrong so it can do better: retry feedback for an answer, the
    /// result of a skipped tool call.
    Reject(String),
    /// Stop the run.
    Trip(String),
}

impl Verdict {
    /// The text is fine.
    pub fn pass() -> Self {
        Verdict::Pass
    }
    /// Replace the text.
    pub fn rewrite(text: impl Into<String>) -> Self {
        Verdict::Rewrite(text.into())
    }
    /// Tell the model `message` and let it try again.
    pub fn reject(message: impl Into<String>) -> Self {
        Verdict::Reject(message.into())
    }
    /// Stop the run with `message`.
    pub fn trip(message: impl Into<String>) -> Self {
        Verdict::Trip(message.into())
    }
    /// The verdict of a check that can fail (a classifier behind a network call): an error
    /// trips, so a check that cannot decide never lets the text through.
    pub fn from_result<E: fmt::Display>(result: Result<Verdict, E>) -> Self {
        match result {
            Ok(verdict) => verdict,
            Err(error) => Verdict::Trip(format!("the check failed: {error}")),
        }
    }
}

/// A check on a piece of text, possibly asynchronous, e.g. a call to a classifier model.
///
/// Implement it with an `async fn`. A check that panics trips, and so does one that errors
/// (map errors with [`Verdict::from_result`]) or outlives the guardrails'
/// [`timeout`](super::Guardrails::timeout). For a synchronous rule, a closure is simpler: see
/// [`Guardrails::input_fn`](super::Guardrails::input_fn) and its siblings.
///
/// ```
/// use reins::hooks::guardrail::{Check, Verdict};
///
/// /// Stands in for a moderation model behind an HTTP API.
/// struct Moderation;
///
/// impl Moderation {
///     async fn flagged(&self, text: &str) -> Result<bool, std::io::Error> {
///         Ok(text.contains("attack"))
///     }
/// }
///
/// impl Check for Moderation {
///     async fn check(&self, text: &str) -> Verdict {
///         Verdict::from_result(self.flagged(text).await.map(|flagged| {
///             if flagged { Verdict::trip("flagged by moderation") } else { Verdict::Pass }
///         }))
///     }
/// }
/// ```
pub trait Check: Send + Sync + 'static {
    /// Judges `text`.
    fn check(&self, text: &str) -> impl Future<Output = Verdict> + Send;

    /// This check, with its rejections turned into trips: the run stops instead of the model
    /// getting another chance.
    fn tripping(self) -> Tripping<Self>
    where
        Self: Sized,
    {
        Tripping(self)
    }
}

/// A check whose rejections trip; see [`Check::tripping`].
#[derive(Debug, Clone)]
pub struct Tripping<C>(C);

impl<C: Check> Check for Tripping<C> {
    async fn check(&self, text: &str) -> Verdict {
        match self.0.check(text).await {
            Verdict::Reject(message) => Verdict::Trip(message),
            verdict => verdict,
        }
    }
}

/// A synchronous closure as a check.
pub(super) struct FnCheck<F>(pub F);

impl<F> Check for FnCheck<F>
where
    F: Fn(&str) -> Verdict + Send + Sync + 'static,
{
    async fn check(&self, text: &str) -> Verdict {
        (self.0)(text)
    }
}

/// Object-safe form of [`Check`], so checks of any type are stored together.
pub(super) trait ErasedCheck: Send + Sync {
    /// The check's verdict on `text`, a panic or a timeout turned into a trip: one boxed
    /// future around the check's own, its timer and the guard. (Boxed whole, so the hook's
    /// own future, held inline by the stack, stays small also for calls no check applies to.)
    fn judge<'a>(&'a self, text: &'a str, timeout: Option<Duration>) -> BoxFuture<'a, Verdict>;
}

impl<C: Check> ErasedCheck for C {
    fn judge<'a>(&'a self, text: &'a str, timeout: Option<Duration>) -> BoxFuture<'a, Verdict> {
        Box::pin(judged(move || Check::check(self, text), timeout))
    }
}

/// The verdict of the check `call` starts, a panic or a timeout turned into a trip.
async fn judged<F: Future<Output = Verdict>>(
    call: impl FnOnce() -> F,
    timeout: Option<Duration>,
) -> Verdict {
    // The check is called inside the guard (a check written as a plain `fn` runs code
    // before it returns its future), and so is the timer: without a timer in the runtime it
    // panics, which then trips like any other failure to decide.
    let timed = async {
        let mut check = std::pin::pin!(call());
        // A check that answers at once (every synchronous one) needs no timer: it costs
        // none, and runs on a runtime without one.
        if let Poll::Ready(verdict) = futures::poll!(check.as_mut()) {
            return Ok(verdict);
        }
        match timeout {
            Some(limit) => tokio::time::timeout(limit, check).await.map_err(|_| limit),
            None => Ok(check.await),
        }
    };
    match AssertUnwindSafe(timed).catch_unwind().await {
        Ok(Ok(verdict)) => verdict,
        Ok(Err(limit)) => Verdict::Trip(format!(
            "the check did not answer within {} ms",
            limit.as_millis()
        )),
        Err(panic) => Verdict::Trip(format!(
            "the check panicked: {}",
            panic_message(panic.as_ref())
        )),
    }
}
