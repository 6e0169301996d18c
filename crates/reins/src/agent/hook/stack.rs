//! [`HookStack`]: hooks in registration order (each [`Held`]: a hook of any type, with what
//! its calls taught of its default answers), and for each kind of event the hooks that
//! observe it. A stack registered in a stack adds its hooks, so a stack never holds another.
//! What a run asks of a stack is in `run_calls.rs`.

use super::AgentHook;
use super::StepEventKind;
use super::defaults::DefaultAnswers;
use super::erased::ErasedHook;
use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Hooks in registration order, composed as the hooks guide says. Build one to register
/// several hooks as one, or to drive hooks yourself (e.g. for effects of your own through
/// [`DispatchEvent::effect`](super::DispatchEvent::effect)).
///
/// # Composition
///
/// - **Chained**: `on_run_start` rewrites, `on_model_select` selections, and `on_dispatch` /
///   `on_outcome` rewrites pass to the next hook, which sees the updated prompt, model,
///   arguments or result. The last change wins; a stop, skip or denial ends the chain.
/// - **Merged**: `on_completion_call` patches from all hooks merge in order (see
///   [`RequestPatch`](super::RequestPatch) for how conflicting fields merge). A stop ends it.
/// - **First decision wins**: for `on_model_turn_finished`, `on_invalid_tool_call`, the delta
///   events and the step view's `CompletionResponse` / `StreamResponseFinish`, the first hook
///   that answers something other than continue (or `None`) decides, and later hooks are not
///   called for that event.
/// - **Everyone observes**: `on_run_settled` runs every hook.
///
/// A stack pushed into a stack (or registered with an agent or a run) adds its hooks, in
/// order: composing stacks is the same as registering their hooks one by one, so a group of
/// hooks built once can be registered anywhere at no cost per event.
///
/// Each hook's `observes` is read once, when it is pushed; a hook is never called for a kind
/// it does not observe, and an event no hook observes is not even built. A hook that answers
/// a kind with the trait's defaults alone (it implements neither that kind's method nor
/// `on_event`) is called for it once; the stack then knows the answer is `Continue` and
/// stops calling it for that kind.
///
/// ```
/// use reins::agent::{AgentBuilder, HookStack};
/// use reins::hooks::approval::{ApprovalPolicy, Rule};
/// use reins::hooks::loop_breaker::LoopBreaker;
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::tool_fn;
/// use serde_json::{Value, json};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// // A policy built once, for every agent that needs it.
/// let policy = HookStack::new()
///     .with(ApprovalPolicy::new().rule(Rule::deny("delete_*", "deleting is not allowed")))
///     .with(LoopBreaker::new());
/// assert_eq!(policy.len(), 2);
///
/// let delete = tool_fn("delete_file", "Deletes a file.", |_: Value| async {
///     Ok::<_, std::convert::Infallible>("deleted")
/// });
/// let model = ScriptedModel::new([
///     Turn::tool_call("delete_file", json!({ "path": "notes.txt" })),
///     Turn::text("I may not delete it."),
/// ]);
/// let agent = AgentBuilder::new(model.clone())
///     .tool(delete)
///     .add_hook(policy.clone())
///     .build();
///
/// assert_eq!(agent.prompt("Delete notes.txt").await.unwrap(), "I may not delete it.");
/// // The call did not run: the model was told why.
/// let told = model.requests()[1].history.last().unwrap().text();
/// assert!(told.contains("deleting is not allowed"), "{told}");
/// # }
/// ```
#[derive(Clone, Default)]
pub struct HookStack {
    hooks: Vec<Arc<Held>>,
    /// For each event kind, the hooks that observe it, in registration order.
    observers: Vec<Vec<Arc<Held>>>,
    /// The kinds found to have no observer left to call, or one always called (see
    /// [`Known`]).
    known: Known,
}

/// What a stack knows of its kinds, a bit per kind in each half of one word, so a run's
/// question "is this kind observed?" (asked several times a turn) is one load once the answer
/// is known:
///
/// - *silent* (low half): no member will be called for the kind again: every observer was
///   found to answer it with the defaults alone (or none observes it);
/// - *loud* (high half): a member hook was found to answer it with code of the user's, so it
///   will be called for every event of the kind.
///
/// Both are true for good once true: a stack learns how its hooks answer and never unlearns
/// it, and its members change only through `&mut`, which clears this.
#[derive(Debug, Default)]
struct Known(AtomicU64);

impl Known {
    /// Whether `kind` is known to be silent (`Some(false)`) or loud (`Some(true)`).
    #[inline]
    fn observed(&self, kind: StepEventKind) -> Option<bool> {
        let known = self.0.load(Ordering::Relaxed);
        let bit = 1u64 << kind.index();
        if known & bit != 0 {
            Some(false)
        } else if known & (bit << 32) != 0 {
            Some(true)
        } else {
            None
        }
    }

    #[inline]
    fn silent(&self, kind: StepEventKind) -> bool {
        self.0.load(Ordering::Relaxed) & (1 << kind.index()) != 0
    }

    #[inline]
    fn mark(&self, kind: StepEventKind, observed: bool) {
        let bit = 1u64 << kind.index();
        self.0
            .fetch_or(if observed { bit << 32 } else { bit }, Ordering::Relaxed);
    }
}

impl Clone for Known {
    /// A copy of a stack has the same members, so what is known of them holds for it too.
    fn clone(&self) -> Self {
        Known(AtomicU64::new(self.0.load(Ordering::Relaxed)))
    }
}

impl std::fmt::Debug for HookStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HookStack({} hooks)", self.hooks.len())
    }
}

/// The hooks of a stack that observe one kind of event, in registration order, less those
/// known to answer it with the defaults alone.
#[derive(Clone)]
pub(crate) struct Observers<'s> {
    members: std::slice::Iter<'s, Arc<Held>>,
    kind: StepEventKind,
}

impl Observers<'_> {
    /// The kind of event these members observe.
    #[inline]
    pub(crate) fn kind(&self) -> StepEventKind {
        self.kind
    }
}

impl<'s> Iterator for Observers<'s> {
    type Item = &'s Held;
    // A loop rather than `find`: `find`'s body and closure were left out of line, at about
    // 35 instructions per event kind asked about.
    #[allow(clippy::manual_find)]
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        for held in &mut self.members {
            if !held.answers.proven(self.kind) {
                return Some(held);
            }
        }
        None
    }
}

impl HookStack {
    /// An empty stack.
    pub fn new() -> Self {
        HookStack {
            hooks: Vec::new(),
            observers: vec![Vec::new(); StepEventKind::ALL.len()],
            known: Known::default(),
        }
    }

    /// Adds a hook after the ones already there. A [`HookStack`] adds its hooks, in order.
    pub fn push<H: AgentHook>(&mut self, hook: H) {
        let mut slot = Some(hook);
        let stack = (&mut slot as &mut dyn Any)
            .downcast_mut::<Option<HookStack>>()
            .and_then(Option::take);
        match (stack, slot) {
            (Some(stack), _) => {
                for held in stack.hooks {
                    self.push_held(held);
                }
            }
            (None, Some(hook)) => self.push_held(Arc::new(Held {
                answers: DefaultAnswers::of::<H>(),
                hook: Box::new(hook),
            })),
            // The slot is emptied only when it held a stack.
            (None, None) => {}
        }
    }

    /// Adds a hook and returns the stack, for chaining.
    pub fn with<H: AgentHook>(mut self, hook: H) -> Self {
        self.push(hook);
        self
    }

    /// The number of hooks (a stack pushed into this one counts as its hooks).
    pub fn len(&self) -> usize {
        self.hooks.len()
    }

    /// Whether the stack has no hooks.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// Appends the hooks of `other`, after this stack's own.
    pub fn extend(&mut self, other: &HookStack) {
        for held in &other.hooks {
            self.push_held(Arc::clone(held));
        }
    }

    /// Adds a held hook, and to the observers of each kind its `observes` answers for.
    fn push_held(&mut self, held: Arc<Held>) {
        if self.observers.is_empty() {
            self.observers = vec![Vec::new(); StepEventKind::ALL.len()];
        }
        for kind in StepEventKind::ALL {
            if held.hook.observes(kind) {
                self.observers[kind.index()].push(Arc::clone(&held));
            }
        }
        self.hooks.push(held);
        self.known = Known::default();
    }

    /// Whether any hook observes `kind` (and is not known to answer it with the defaults
    /// alone).
    #[inline]
    pub fn observes(&self, kind: StepEventKind) -> bool {
        if let Some(observed) = self.known.observed(kind) {
            return observed;
        }
        self.learn_observed(kind)
    }

    /// Whether any hook observes `kind`, found by asking the members, and remembered when
    /// it will hold for good.
    #[inline(never)]
    fn learn_observed(&self, kind: StepEventKind) -> bool {
        match self.observers(kind).next() {
            None => {
                self.known.mark(kind, false);
                false
            }
            Some(held) => {
                if held.answers.by_user(kind) {
                    self.known.mark(kind, true);
                }
                true
            }
        }
    }

    /// The hooks that observe `kind`.
    #[inline]
    pub(crate) fn observers(&self, kind: StepEventKind) -> Observers<'_> {
        let members = match self.observers.get(kind.index()) {
            Some(members) if !self.known.silent(kind) => members.as_slice(),
            _ => &[],
        };
        Observers {
            members: members.iter(),
            kind,
        }
    }
}

/// A hook as a stack holds it, with what its calls taught of its default answers.
///
/// The hook is boxed rather than held inline (`Held<dyn ErasedHook>`): behind an `Arc`, an
/// unsized field's place depends on the hook type's alignment, which every call then
/// computes from the vtable (about 6 instructions each time the rule reaches the hook or
/// what it learned, several times a call); a box costs one load.
pub(crate) struct Held {
    pub answers: DefaultAnswers,
    pub hook: Box<dyn ErasedHook>,
}
