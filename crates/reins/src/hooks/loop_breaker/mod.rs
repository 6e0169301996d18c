//! [`LoopBreaker`]: the same tool called with the same arguments too many times in a row is
//! answered with feedback instead of running, and then stops the run with a typed
//! [`LoopDetected`].

#[cfg(test)]
mod key_tests;
#[cfg(test)]
mod tests;

use crate::agent::{
    AgentHook, DispatchAction, DispatchEvent, HookContext, PromptError, StepEventKind, StopReason,
};
use crate::hooks::recorded::Recorded;
use crate::json_text::{self, JsonOut};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// The entry kind the streak is recorded under.
const ENTRY_KIND: &str = "reins.loop_breaker";

/// Catches a model that calls the same tool with the same arguments over and over.
///
/// Calls are compared by tool name and parsed JSON arguments, so key order and whitespace do
/// not matter; numbers compare as written, so `{"a": 1}` and `{"a": 1.0}` are different
/// calls. Counting consecutive identical calls (across turns, and within a turn's parallel
/// calls; any other call the breaker sees in between starts the count again):
///
/// - the `feedback_after`-th identical call in a row (3 by default) does not run: the model
///   gets a tool result saying it is repeating itself and should change its approach
///   ([`DispatchAction::skip`], which ends the dispatch chain, so later hooks and the tool
///   are not called);
/// - the `stop_after`-th (5 by default) stops the run with [`PromptError::Cancelled`] whose
///   reason is a [`LoopDetected`]; read it back with [`LoopDetected::from_error`].
///
/// **A stop only follows an answer the model has read.** The model reads tool results at its
/// next turn, so a call at or past `stop_after` stops the run only when the model has read,
/// in an earlier turn, the feedback for the streak (or, with `stop_after` at or below
/// `feedback_after`, which asks for no feedback, the result of the streak's first call);
/// until then it is answered with feedback. A turn of five identical parallel calls runs two
/// and answers three with feedback, and the run stops only if the next turn repeats the call
/// again.
///
/// **What counts as the same call.** By default, the whole arguments: a model that changes
/// an argument the tool ignores (a counter, a timestamp, a `reason` field) makes every call
/// a new one. For such a tool, compare only the arguments that decide what it does
/// ([`compare_arguments`](Self::compare_arguments)`("search", ["q"])`), or the tool name
/// alone (`compare_arguments("poll", [] as [&str; 0])`, or
/// [`compare_tool_names_only`](Self::compare_tool_names_only) for every tool without a key
/// of its own).
///
/// **What it does not catch.** Only a streak of one identical call counts: a model
/// alternating between two calls (A, B, A, B …) resets the count each time and is never
/// caught; `max_turns` bounds such a run. Calls a hook registered before the breaker
/// refused are not seen: register the breaker before an
/// [`ApprovalPolicy`](crate::hooks::approval::ApprovalPolicy) so that a model repeating a
/// denied call is caught too.
///
/// The count lives in the run (its scratchpad, and an entry, `reins.loop_breaker`, recorded
/// at each checkpoint and the run's end), so one breaker serves concurrent runs and a
/// durable run resumed elsewhere keeps its streak. Several breakers in one run count each
/// call once. If the record cannot be read the run stops. Calls an earlier hook skipped,
/// denied or suspended are not seen, and neither are calls a resumed run runs on a
/// person's decision. With `tool_concurrency > 1`, the calls of one turn count in the order
/// their dispatches run.
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::hooks::loop_breaker::{LoopBreaker, LoopDetected};
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::tool_fn;
/// use serde_json::json;
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Query {
///     q: String,
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let runs = Arc::new(AtomicUsize::new(0));
/// let counter = Arc::clone(&runs);
/// let search = tool_fn("search", "Searches the web.", move |args: Query| {
///     counter.fetch_add(1, Ordering::SeqCst);
///     async move { Ok::<_, std::convert::Infallible>(format!("no results for {}", args.q)) }
/// });
/// // A model stuck on one search.
/// let stuck = || Turn::tool_call("search", json!({"q": "reins"}));
/// let model = ScriptedModel::new([stuck(), stuck(), stuck(), stuck(), stuck()]);
/// let agent = AgentBuilder::new(model.clone())
///     .tool(search)
///     .add_hook(LoopBreaker::new()) // feedback at 3 in a row, stop at 5
///     .build();
///
/// let error = agent.prompt("Find reins").await.unwrap_err();
/// let stop = LoopDetected::from_error(&error).expect("the loop breaker stopped the run");
/// assert_eq!((stop.tool.as_str(), stop.repeats), ("search", 5));
/// // Only the first two searches ran; the 3rd and 4th were answered with feedback.
/// assert_eq!(runs.load(Ordering::SeqCst), 2);
/// let seen = model.requests()[3].history.last().unwrap().text();
/// assert!(seen.contains("change your approach"), "{seen}");
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct LoopBreaker {
    feedback_after: u32,
    stop_after: u32,
    feedback: Option<String>,
    /// The arguments calls to a tool are compared by, by tool name, sorted and without
    /// repeats (none: by the tool name alone). A tool not here is compared by its whole
    /// arguments, or by its name alone under `names_only`.
    keys: BTreeMap<String, Vec<String>>,
    names_only: bool,
}

impl Default for LoopBreaker {
    fn default() -> Self {
        LoopBreaker::new()
    }
}

impl LoopBreaker {
    /// Feedback at the 3rd identical call in a row, stop at the 5th.
    pub fn new() -> Self {
        LoopBreaker {
            feedback_after: 3,
            stop_after: 5,
            feedback: None,
            keys: BTreeMap::new(),
            names_only: false,
        }
    }

    /// The `n`-th identical call in a row, and every one after it, is answered with feedback
    /// instead of running (at least 2: a first call is no repeat). At or above
    /// [`stop_after`](Self::stop_after) the run stops instead, once the model has read
    /// feedback for the streak (see [`LoopBreaker`]).
    pub fn feedback_after(mut self, n: u32) -> Self {
        self.feedback_after = n.max(2);
        self
    }

    /// The `m`-th identical call in a row stops the run (at least 2), once the model has read
    /// the streak's feedback in an earlier turn (see [`LoopBreaker`]); until then it is
    /// answered with feedback.
    pub fn stop_after(mut self, m: u32) -> Self {
        self.stop_after = m.max(2);
        self
    }

    /// What the model is told instead of the default feedback when it repeats a call.
    pub fn feedback_message(mut self, text: impl Into<String>) -> Self {
        self.feedback = Some(text.into());
        self
    }

    /// Compares calls to `tool` by the top-level arguments named in `arguments` only: two
    /// calls whose values for those are equal (compared as parsed JSON, like whole
    /// arguments; an argument left out differs from one given as `null`) are the same call,
    /// whatever their other arguments say. With no names, every call to `tool` is the same
    /// call. Other tools keep their comparison. Arguments that are not a JSON object have
    /// none of the names.
    ///
    /// ```
    /// use reins::hooks::loop_breaker::LoopBreaker;
    ///
    /// // `search` ignores `reason`: a model changing only it is repeating itself.
    /// let breaker = LoopBreaker::new()
    ///     .compare_arguments("search", ["q", "page"])
    ///     .compare_arguments("check_status", [] as [&str; 0]); // any arguments
    /// # let _ = breaker;
    /// ```
    pub fn compare_arguments<I, S>(mut self, tool: impl Into<String>, arguments: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut names: Vec<String> = arguments.into_iter().map(Into::into).collect();
        names.sort();
        names.dedup();
        self.keys.insert(tool.into(), names);
        self
    }

    /// Compares calls by the tool name alone, whatever their arguments, for every tool not
    /// given its own arguments with [`compare_arguments`](Self::compare_arguments): the
    /// breaker then counts calls to one tool in a row. Strict: a model paging through
    /// results with one tool is a streak too.
    pub fn compare_tool_names_only(mut self) -> Self {
        self.names_only = true;
        self
    }

    /// The arguments calls to `tool` are compared by; `None` for their whole arguments.
    fn key_of(&self, tool: &str) -> Option<&[String]> {
        match self.keys.get(tool) {
            Some(names) => Some(names),
            None => self.names_only.then_some(&[]),
        }
    }

    /// The fingerprint a call to `tool` with `args` is compared by.
    fn fingerprint_of(&self, tool: &str, args: Result<&Value, &str>) -> u64 {
        match self.key_of(tool) {
            None => fingerprint(tool, args),
            Some(names) => keyed_fingerprint(tool, names, args.ok()),
        }
    }

    fn feedback_for(&self, tool: &str, repeats: u32) -> String {
        if let Some(text) = &self.feedback {
            return text.clone();
        }
        let same = match self.key_of(tool) {
            None => "with exactly these arguments ".to_owned(),
            Some([]) => String::new(),
            Some(names) => format!("with the same `{}` ", names.join("`, `")),
        };
        format!(
            "Not run: you called `{tool}` {same}{repeats} times in a row, and repeating the \
             call will not give a different result. You are repeating yourself: change your \
             approach (different arguments, another tool, or answer with what you have)."
        )
    }
}

/// The run's streak of identical calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Streak {
    tool: String,
    /// A stable hash of the canonical arguments (the arguments themselves may be large).
    fingerprint: u64,
    repeats: u32,
    /// The turn `seen` belongs to; the list is reset when the turn changes.
    turn: usize,
    /// The calls of `turn` already counted, with their place in the streak, so a call seen
    /// by several breakers (or again after a resume) is counted once.
    seen: Vec<(String, u32)>,
    /// The turn of the streak's first call. (0 in records written before it.)
    #[serde(default)]
    started_in_turn: usize,
    /// The turn in which a call of the streak was first answered with feedback: the model
    /// has read it from the next turn on. (Absent from records written before it.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    told_in_turn: Option<usize>,
}

/// What the breaker does with a call: its place in the streak, and whether it stops.
enum Answer {
    Run,
    Feedback(u32),
    Stop(u32),
}

impl LoopBreaker {
    /// Counts `call_id` into the run's streak and decides its answer.
    fn judge(
        &self,
        ctx: &HookContext,
        tool: &str,
        fingerprint: u64,
        call_id: &str,
    ) -> Result<Answer, String> {
        let turn = ctx.turn();
        ctx.scratchpad().update(|recorded: &mut Recorded<Streak>| {
            let streak = recorded
                .load(ctx, ENTRY_KIND, Streak::default)
                .map_err(|error| {
                    format!(
                        "loop breaker: the run's record could not be read ({error}), so \
                         repeated calls cannot be told apart"
                    )
                })?;
            let (repeats, mut changed) = count(streak, turn, tool, fingerprint, call_id);
            // The answer the model must have read before a stop: the feedback, when it comes
            // before the stop, else the streak's first result.
            let read_in = if self.feedback_after < self.stop_after {
                streak.told_in_turn
            } else {
                Some(streak.started_in_turn)
            };
            let read_earlier = read_in.is_some_and(|read| read < turn);
            let answer = if repeats >= self.stop_after && read_earlier {
                Answer::Stop(repeats)
            } else if repeats >= self.feedback_after.min(self.stop_after) {
                if streak.told_in_turn.is_none() {
                    streak.told_in_turn = Some(turn);
                    changed = true;
                }
                Answer::Feedback(repeats)
            } else {
                Answer::Run
            };
            if changed {
                recorded.changed();
            }
            Ok(answer)
        })
    }
}

/// Counts `call_id` of `turn` into `streak`: its place in the streak, and whether the
/// streak changed.
fn count(
    streak: &mut Streak,
    turn: usize,
    tool: &str,
    fingerprint: u64,
    call_id: &str,
) -> (u32, bool) {
    if streak.turn != turn {
        streak.turn = turn;
        streak.seen.clear();
    }
    if let Some((_, place)) = streak.seen.iter().find(|(id, _)| id == call_id) {
        return (*place, false);
    }
    if streak.repeats > 0 && streak.fingerprint == fingerprint && streak.tool == tool {
        streak.repeats = streak.repeats.saturating_add(1);
    } else {
        streak.tool = tool.to_owned();
        streak.fingerprint = fingerprint;
        streak.repeats = 1;
        streak.started_in_turn = turn;
        streak.told_in_turn = None;
    }
    streak.seen.push((call_id.to_owned(), streak.repeats));
    (streak.repeats, true)
}

impl AgentHook for LoopBreaker {
    fn observes(&self, kind: StepEventKind) -> bool {
        kind == StepEventKind::ToolDispatch
    }

    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        let (Some(tool), Some(call_id)) = (event.tool_name(), event.internal_call_id()) else {
            return DispatchAction::proceed();
        };
        // The arguments are read from the model's own value, borrowed: no JSON text is
        // written to be parsed again, unless they are not JSON.
        let fingerprint = match event.tool_args_value() {
            Some(Ok(args)) => self.fingerprint_of(tool, Ok(&args)),
            _ => self.fingerprint_of(tool, Err(event.tool_args().unwrap_or_default())),
        };
        match self.judge(ctx, tool, fingerprint, call_id) {
            Ok(Answer::Stop(repeats)) => DispatchAction::stop(StopReason::because(LoopDetected {
                tool: tool.to_owned(),
                repeats,
            })),
            Ok(Answer::Feedback(repeats)) => DispatchAction::skip(self.feedback_for(tool, repeats)),
            Ok(Answer::Run) => DispatchAction::proceed(),
            Err(reason) => DispatchAction::stop(reason),
        }
    }
}

/// A stable 64-bit FNV-1a hash of the tool name and the arguments (`Ok`) with their object
/// keys sorted and no whitespace; arguments that are not JSON (`Err`, their text) are hashed
/// as they are. (Stable across processes and releases, unlike `std`'s hasher, since it is
/// stored with the run.)
fn fingerprint(tool: &str, args: Result<&Value, &str>) -> u64 {
    let mut hash = Fnv1a(0xcbf2_9ce4_8422_2325);
    hash.put(tool);
    hash.put_ascii(0);
    match args {
        // The canonical text is hashed as it is written, never held.
        Ok(value) => json_text::write_sorted(&mut hash, value),
        Err(text) => {
            hash.put_ascii(0);
            hash.put(text);
        }
    }
    hash.0
}

/// As [`fingerprint`], of the tool name and only the arguments `names` (sorted) of `args`,
/// each marked present (and its canonical value) or absent; `args` that are not an object
/// (or not JSON: `None`) have none of them. A leading 1 keeps it apart from every
/// whole-arguments fingerprint of the tool.
fn keyed_fingerprint(tool: &str, names: &[String], args: Option<&Value>) -> u64 {
    let mut hash = Fnv1a(0xcbf2_9ce4_8422_2325);
    hash.put(tool);
    hash.put_ascii(0);
    hash.put_ascii(1);
    let fields = args.and_then(Value::as_object);
    for name in names {
        hash.put(name);
        hash.put_ascii(0);
        match fields.and_then(|fields| fields.get(name)) {
            Some(value) => {
                hash.put_ascii(1);
                json_text::write_sorted(&mut hash, value);
            }
            None => hash.put_ascii(2),
        }
        hash.put_ascii(0);
    }
    hash.0
}

/// 64-bit FNV-1a over the bytes written to it.
struct Fnv1a(u64);

impl Fnv1a {
    fn byte(&mut self, byte: u8) {
        self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
}

impl JsonOut for Fnv1a {
    fn put(&mut self, text: &str) {
        text.bytes().for_each(|byte| self.byte(byte));
    }
    fn put_ascii(&mut self, ascii: u8) {
        self.byte(ascii);
    }
}

/// A [`LoopBreaker`] stopped the run: `tool` was called with the same arguments `repeats`
/// times in a row.
///
/// It is the typed cause of the run's [`StopReason`]; the reason's text is its `Display`:
///
/// ```text
/// loop detected: `<tool>` was called <repeats> times in a row with the same arguments
/// ```
///
/// Read it back with [`LoopDetected::from_error`] rather than by matching the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopDetected {
    /// The tool the model kept calling.
    pub tool: String,
    /// How many identical calls in a row it made, the stopped one included.
    pub repeats: u32,
}

const PREFIX: &str = "loop detected: `";
const MIDDLE: &str = "` was called ";
const SUFFIX: &str = " times in a row with the same arguments";

impl LoopDetected {
    /// The loop stop carried by `error`, if a [`LoopBreaker`] stopped the run; `None` for any
    /// other error (including the breaker's fail-closed stop on an unreadable record).
    pub fn from_error(error: &PromptError) -> Option<Self> {
        crate::hooks::stopped_by(error)
    }
}

impl fmt::Display for LoopDetected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}{MIDDLE}{}{SUFFIX}", self.tool, self.repeats)
    }
}

impl std::error::Error for LoopDetected {}
