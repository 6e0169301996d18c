//! Response cache and replay: model turns served from responses already seen for the same
//! request, without calling the model — to save cost, to test offline, or to replay a recorded
//! run exactly.

#[cfg(test)]
mod failure_tests;
mod key;
mod miss;
#[cfg(test)]
mod model_tests;
mod recording;
#[cfg(test)]
mod tests;

pub use miss::{CacheMiss, OutdatedRecording};
pub use recording::{CacheError, CachedResponse};

use crate::agent::{
    AgentHook, DispatchAction, DispatchEvent, HookContext, OutcomeAction, OutcomeEvent,
    StepEventKind, StopReason,
};
use crate::completion::{CompletionError, CompletionRequest};
use key::{Answered, KEY_VERSION, ModelKey, key};
use recording::{Answer, Recorded, Recording};
use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

/// Serves a model turn from a cache keyed by the model and the request instead of calling
/// the model.
///
/// - [`ResponseCache::in_memory`]: a hit is served, a miss calls the model and keeps its
///   response for the next identical request.
/// - [`ResponseCache::record_to`]: the same, and every response is appended to a JSON Lines
///   file (responses already in it are served, so a recording can be extended).
/// - [`ResponseCache::replay`]: serves only the responses of a recording; a request it does
///   not hold stops the run with a [`CacheMiss`] instead of calling the model — a recorded
///   run replays deterministically, in tests or to reproduce a production run.
///
/// The key is a SHA-256 digest of the model and the request as this hook sees it at
/// dispatch: register the cache after hooks that patch requests (redaction, for one), so it
/// keys what is sent. A served turn reports zero usage (no tokens were spent), and the outcome
/// hooks see it like any response. Shared between runs and agents by cloning.
///
/// The request (history, preamble, documents, tools, tool choice, sampling and provider
/// parameters, output schema) is keyed whole, and the model the call goes to (the one
/// `on_model_select` or a fallback's retry chose) by its label and what it says it is: its
/// [`provider_name`](crate::completion::CompletionModel::provider_name),
/// [`model_name`](crate::completion::CompletionModel::model_name) and
/// [`endpoint`](crate::completion::CompletionModel::endpoint) (every provider's model says
/// all three: `openai` / `gpt-4o` / `https://api.openai.com/v1`; the endpoint is the base
/// URL without user info, query or the key, so no credential enters a key). So agents
/// sharing a cache (its clones), an agent whose model was swapped (`gpt-4o` for a
/// `claude-…`) while the cache or the file [`record_to`](Self::record_to) extends was kept,
/// or two OpenAI-compatible servers serving one model name at different addresses, are
/// never served another model's answers; the same model under the same label shares them.
/// A model that says none of them (a model of your own, a
/// [`ScriptedModel`](crate::testing::ScriptedModel) unless told with
/// [`with_model_name`](crate::testing::ScriptedModel::with_model_name)) is keyed by its
/// label alone: agents sharing a cache must then give different such models different labels.
///
/// **Recordings of older key versions** keep serving a model whose key did not change: lines
/// without `key_version` (keyed by the label alone) a model that says nothing, lines of
/// `key_version` 2 (keyed without the endpoint) a model that says no endpoint. For a model
/// that says what the recording's version did not key, a request such a line answers is not
/// served — which model (or server) answered it is unknown: a replay stops with an
/// [`OutdatedRecording`] (record the run again), and a recording cache calls the model,
/// appends its answer, and logs a `tracing::warn!` once per run. A line whose `key_version`
/// is newer than this reins reads is a [`CacheError::Malformed`].
///
/// Register a recording cache **before** a
/// [`ModelFallback`](crate::hooks::fallback::ModelFallback) (and any hook that retries a
/// model call or replaces a failed one in `on_outcome`): such a hook ends the outcome chain,
/// so a cache after it never sees the call it answered, the recording lacks that call, and a
/// replay stops on it with a [`CacheMiss`]. A recording cache that notices this logs a
/// `tracing::warn!` once per run.
///
/// Register the cache **before** a [`Budget`](crate::hooks::budget::Budget): a hit is served
/// at dispatch and ends the dispatch chain, so a budget after it never sees the call and
/// counts no model call (its zero usage still reaches the budget's outcome). Registered
/// before the cache, a budget counts each hit as a model call, and can stop a run the cache
/// would have served for free.
///
/// **Memory.** Nothing is ever evicted: an in-memory or recording cache keeps every response
/// it was given for as long as it lives, one entry per distinct request (and per repeat of a
/// request within a run). That suits tests, replays and short-lived processes; in a
/// long-running service whose requests keep changing (every conversation is a new request),
/// it grows without bound. [`len`](Self::len) tells its size; drop the cache (its last clone)
/// and make a new one to start afresh.
///
/// A request a run sends again (a hook's
/// [`ModelTurnAction::repeat`](crate::agent::ModelTurnAction::repeat) asks again with the same
/// request) is its own entry: the n-th identical request of a run is served the n-th response
/// kept for it, and a miss calls the model. So a repeat gets a new answer, and a replay
/// follows the recorded run.
///
/// A failed model call is recorded too (a line with a `failure` instead of a `response`), and
/// a replay answers that call with the same failure ([`DispatchAction::fail`]), so a run that
/// fell back to another model replays the same way. A failure is never served otherwise: in
/// memory or while recording, the call goes to the model again. (In memory a failure is not
/// kept, and takes no place among a run's identical requests.)
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::hooks::cache::ResponseCache;
/// use reins::testing::{ScriptedModel, Turn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let cache = ResponseCache::in_memory();
/// let model = ScriptedModel::new([Turn::text("4")]);
/// let agent = AgentBuilder::new(model.clone()).add_hook(cache.clone()).build();
/// assert_eq!(agent.prompt("2 + 2?").await.unwrap(), "4");
/// // The same request again is served from the cache: the model is not called.
/// assert_eq!(agent.prompt("2 + 2?").await.unwrap(), "4");
/// assert_eq!((model.requests().len(), cache.len()), (1, 1));
/// # }
/// ```
#[derive(Clone)]
pub struct ResponseCache {
    inner: Arc<Inner>,
}

struct Inner {
    replay_only: bool,
    entries: Mutex<HashMap<[u8; 32], CachedResponse>>,
    /// The recorded failures a replay answers calls with (empty unless replaying).
    failures: HashMap<[u8; 32], CompletionError>,
    /// The keys the recording holds of older key versions (see [`Recorded::older`]).
    older: HashMap<[u8; 32], u32>,
    recording: Option<Recording>,
}

/// The request a run dispatched and the cache missed, kept in the run's scratchpad until its
/// response arrives: the request's digest, and the key its response is kept under.
#[derive(Clone, Copy)]
struct PendingKey {
    request: [u8; 32],
    key: [u8; 32],
}

impl ResponseCache {
    /// An empty cache in memory: misses call the model, and their responses are kept.
    pub fn in_memory() -> Self {
        ResponseCache::with(false, Recorded::default(), None)
    }

    /// A cache recorded to `path`, a JSON Lines file created when missing: the responses
    /// already in it are served, and every new response is appended as one line. A line that
    /// does not read as a recorded response (one cut short by a crash included) fails with
    /// [`CacheError::Malformed`] naming it, as [`replay`](Self::replay) does: remove it to
    /// go on.
    pub fn record_to(path: impl AsRef<Path>) -> Result<Self, CacheError> {
        let (recorded, recording) = Recording::open(path.as_ref())?;
        // A recorded failure is not served here: the model may answer now.
        let recorded = Recorded {
            failures: HashMap::new(),
            ..recorded
        };
        Ok(ResponseCache::with(false, recorded, Some(recording)))
    }

    /// Serves only the responses recorded in `path`: the model is never called, and a
    /// request the recording does not hold stops the run with a [`CacheMiss`].
    pub fn replay(path: impl AsRef<Path>) -> Result<Self, CacheError> {
        let recorded = Recording::read(path.as_ref())?;
        Ok(ResponseCache::with(true, recorded, None))
    }

    fn with(replay_only: bool, recorded: Recorded, recording: Option<Recording>) -> Self {
        ResponseCache {
            inner: Arc::new(Inner {
                replay_only,
                entries: Mutex::new(recorded.responses),
                failures: recorded.failures,
                older: recorded.older,
                recording,
            }),
        }
    }

    /// How many responses the cache holds.
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether the cache holds no response.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], CachedResponse>> {
        // The map is only read or inserted into under the lock: never left half-changed.
        self.inner
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for ResponseCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseCache")
            .field("responses", &self.len())
            .field("replay_only", &self.inner.replay_only)
            .field("recording", &self.inner.recording)
            .finish()
    }
}

impl ResponseCache {
    /// A miss still pending at the next model call had its outcome taken by a hook registered
    /// before the cache (a fallback's retry, a replaced failure): a recording then lacks that
    /// call, and a replay stops on it with a [`CacheMiss`]. Said once per run, with the fix.
    fn check_unseen_outcome(&self, ctx: &HookContext) {
        let Some(recording) = &self.inner.recording else {
            return;
        };
        if ctx.scratchpad().remove::<PendingKey>().is_none() {
            return;
        }
        if said_first_in_run::<UnseenOutcome>(ctx) {
            tracing::warn!(
                run_id = ctx.run_id(),
                recording = ?recording,
                "response cache: a hook registered before the cache answered a model call's \
                 outcome (a fallback's retry, or a replaced failure), so the recording lacks \
                 that call and a replay will stop on it with a cache miss; register the cache \
                 before such hooks"
            );
        }
    }
}

/// A warning said once a run: its recording lacks a call (`check_unseen_outcome`).
enum UnseenOutcome {}

impl ResponseCache {
    /// Whether the recording holds an answer to this call of `request` only under an older
    /// key version's key of `model` (version 1: its label alone; version 2: without its
    /// endpoint), which differs from its own key because the model says what that version
    /// did not key — so its own key missed, and which model gave that answer is unknown.
    fn recorded_under_older_key(
        &self,
        model: ModelKey<'_>,
        request: &CompletionRequest,
        before: u32,
    ) -> bool {
        if self.inner.older.is_empty() {
            return false;
        }
        (1..KEY_VERSION).any(|version| {
            let then = model.as_of(version);
            then != model
                && key(then, request).is_ok_and(|digest| {
                    self.inner.older.get(&Answered::nth(digest, before)) == Some(&version)
                })
        })
    }

    /// Says once a run that the recording's answer to a call predates the model's keys, so
    /// the model is called and its answer recorded again.
    fn warn_outdated_once(&self, ctx: &HookContext, model: ModelKey<'_>) {
        if said_first_in_run::<OutdatedAnswer>(ctx) {
            tracing::warn!(
                run_id = ctx.run_id(),
                recording = ?self.inner.recording,
                model = model.label,
                "response cache: the recording answers this call only under a key of before \
                 responses were keyed by the model's provider, name and endpoint, so which \
                 model gave that answer is unknown; the model is called and its answer \
                 recorded again"
            );
        }
    }
}

/// A warning said once a run: its recording predates keys by model (`warn_outdated_once`).
enum OutdatedAnswer {}

/// Whether a run was given the warning `Warning` names yet.
struct Said<Warning>(bool, PhantomData<fn() -> Warning>);

impl<Warning> Default for Said<Warning> {
    fn default() -> Self {
        Said(false, PhantomData)
    }
}

/// Whether the warning `Warning` names is to be said now: the first time a run asks.
fn said_first_in_run<Warning: 'static>(ctx: &HookContext) -> bool {
    ctx.scratchpad()
        .update(|said: &mut Said<Warning>| !std::mem::replace(&mut said.0, true))
}

impl AgentHook for ResponseCache {
    fn observes(&self, kind: StepEventKind) -> bool {
        matches!(
            kind,
            StepEventKind::CompletionDispatch | StepEventKind::CompletionOutcome
        )
    }

    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        let (Some(label), Some(request)) = (event.model(), event.request()) else {
            return DispatchAction::proceed();
        };
        let model = ModelKey {
            label,
            provider: event.model_provider(),
            name: event.model_name(),
            endpoint: event.model_endpoint(),
        };
        self.check_unseen_outcome(ctx);
        let digest = match key(model, request) {
            Ok(digest) => digest,
            Err(error) if self.inner.replay_only => {
                return DispatchAction::stop(format!("response cache: {error}"));
            }
            Err(_) => return DispatchAction::proceed(),
        };
        let before = Answered::before(ctx, digest);
        let key = Answered::nth(digest, before);
        let served = self.entries().get(&key).map(CachedResponse::to_response);
        if let Some(response) = served {
            ctx.scratchpad().remove::<PendingKey>();
            Answered::count(ctx, digest);
            return DispatchAction::respond(response);
        }
        if let Some(failure) = self.inner.failures.get(&key) {
            Answered::count(ctx, digest);
            return DispatchAction::fail(failure.clone());
        }
        if self.recorded_under_older_key(model, request, before) {
            if self.inner.replay_only {
                return DispatchAction::stop(StopReason::because(OutdatedRecording {
                    model: label.to_owned(),
                    provider: model.provider.map(str::to_owned),
                    model_name: model.name.map(str::to_owned),
                    endpoint: model.endpoint.map(str::to_owned),
                    turn: ctx.turn(),
                }));
            }
            self.warn_outdated_once(ctx, model);
        }
        if self.inner.replay_only {
            return DispatchAction::stop(StopReason::because(CacheMiss {
                model: label.to_owned(),
                turn: ctx.turn(),
            }));
        }
        ctx.scratchpad().set(PendingKey {
            request: digest,
            key,
        });
        DispatchAction::proceed()
    }

    async fn on_outcome(&self, ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        // Only a response to the request this hook missed on is kept: not a served one, and
        // not one after a failed call.
        let Some(PendingKey { request, key }) = ctx.scratchpad().remove::<PendingKey>() else {
            return OutcomeAction::proceed();
        };
        let Some(response) = event.completion() else {
            // A failed call is recorded, so a replay fails it the same way (a fallback then
            // takes the turn as it did), and takes its place in the run's sequence of calls;
            // it is never served from memory: the model may answer next time.
            if let (Some(recording), Some(failure)) =
                (&self.inner.recording, event.completion_error())
            {
                Answered::count(ctx, request);
                if let Err(error) = recording.append(&key, Answer::Failure(failure)) {
                    tracing::warn!(%error, "response cache: could not record a failed call");
                }
            }
            return OutcomeAction::proceed();
        };
        Answered::count(ctx, request);
        let cached = CachedResponse::of(response);
        if let Some(recording) = &self.inner.recording {
            if let Err(error) = recording.append(&key, Answer::Response(&cached)) {
                tracing::warn!(%error, "response cache: could not record a response");
            }
        }
        self.entries().insert(key, cached);
        OutcomeAction::proceed()
    }
}
