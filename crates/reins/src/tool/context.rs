use super::{ToolAttachments, ToolOutcome};
use crate::completion::Usage;
use serde_json::Value;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

tokio::task_local! {
    static CURRENT_CALL: ToolCallContext;
}

/// What a running tool can learn about the call it serves, and where it attaches metadata.
///
/// Inside [`Tool::call`](super::Tool::call), [`ToolCallContext::current`] returns the context
/// of the call being executed.
///
/// ```
/// use reins::prelude::*;
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::ToolCallContext;
/// use serde_json::{Value, json};
/// use std::sync::{Arc, Mutex};
///
/// /// The fees hooks were told of, never the model.
/// struct Fees(Arc<Mutex<Vec<Value>>>);
///
/// impl AgentHook for Fees {
///     async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
///         if let Some(fee) = event.tool_result().and_then(|r| r.extensions().get("fee_cents")) {
///             self.0.lock().unwrap().push(fee.clone());
///         }
///         OutcomeAction::proceed()
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// // The idempotency keys the payment service was sent.
/// let keys = Arc::new(Mutex::new(Vec::new()));
/// let sent = keys.clone();
/// let pay = tool_fn("pay", "Pays an invoice.", move |_: Value| {
///     let sent = sent.clone();
///     async move {
///         let call = ToolCallContext::current().expect("inside a tool call");
///         sent.lock().unwrap().push(call.effect_id());
///         call.set_extension("fee_cents", json!(30));
///         Ok::<_, std::convert::Infallible>("paid")
///     }
/// });
/// let fees = Arc::new(Mutex::new(Vec::new()));
/// let model = ScriptedModel::new([
///     Turn::tool_call("pay", json!({"invoice": 7})),
///     Turn::text("Paid."),
/// ]);
/// let agent = AgentBuilder::new(model.clone())
///     .tool(pay)
///     .add_hook(Fees(fees.clone()))
///     .build();
/// let response = agent.prompt("Pay invoice 7.").extended_details().await.unwrap();
///
/// // The key names the run and the call, so the same call executed again after a crash
/// // sends the same key.
/// assert!(keys.lock().unwrap()[0].starts_with(&format!("{}/", response.run_id())));
/// assert_eq!(*fees.lock().unwrap(), [json!(30)]);
/// let sent_to_model = serde_json::to_string(&model.requests()[1]).unwrap();
/// assert!(!sent_to_model.contains("fee_cents"));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ToolCallContext {
    inner: Arc<CallInfo>,
}

/// The call's three ids in one string (`run id`, then `internal call id`, then `tool call
/// id`), held inline when they fit, so a context costs one allocation in the usual case.
#[derive(Debug)]
struct CallInfo {
    ids: CallIds,
    /// Where the internal call id starts and ends in `ids`.
    internal_start: usize,
    internal_end: usize,
    /// What the tool attached to its call while it ran.
    attached: Mutex<ToolAttachments>,
}

/// Room for the three ids inline: a UUID run id (36 bytes), an internal id of a few bytes and
/// a provider's call id of a few dozen (OpenAI's and Anthropic's are about 30).
const INLINE_IDS: usize = 96;

/// The three ids' text, inline when it fits, else on the heap. Every call of every run
/// builds one; a second allocation per call would cost a concurrent service more than the
/// 96 bytes do.
enum CallIds {
    Inline { len: u8, bytes: [u8; INLINE_IDS] },
    Heap(Box<str>),
}

impl CallIds {
    fn new(parts: [&str; 3]) -> Self {
        let len: usize = parts.iter().map(|part| part.len()).sum();
        match u8::try_from(len) {
            Ok(short) if len <= INLINE_IDS => {
                let mut bytes = [0; INLINE_IDS];
                let mut at = 0;
                for part in parts {
                    let end = at + part.len();
                    if let Some(slot) = bytes.get_mut(at..end) {
                        slot.copy_from_slice(part.as_bytes());
                    }
                    at = end;
                }
                CallIds::Inline { len: short, bytes }
            }
            _ => CallIds::Heap(parts.concat().into_boxed_str()),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            // Whole strings were copied in, so the bytes are UTF-8.
            CallIds::Inline { len, bytes } => bytes
                .get(..usize::from(*len))
                .and_then(|text| std::str::from_utf8(text).ok())
                .unwrap_or_default(),
            CallIds::Heap(text) => text,
        }
    }
}

impl fmt::Debug for CallIds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl ToolCallContext {
    /// A context for the call `internal_call_id` (answering the provider's `tool_call_id`)
    /// of the run `run_id`.
    pub fn new(
        run_id: impl AsRef<str>,
        internal_call_id: impl AsRef<str>,
        tool_call_id: impl AsRef<str>,
    ) -> Self {
        let (run_id, internal_call_id, tool_call_id) = (
            run_id.as_ref(),
            internal_call_id.as_ref(),
            tool_call_id.as_ref(),
        );
        ToolCallContext {
            inner: Arc::new(CallInfo {
                internal_start: run_id.len(),
                internal_end: run_id.len() + internal_call_id.len(),
                ids: CallIds::new([run_id, internal_call_id, tool_call_id]),
                attached: Mutex::default(),
            }),
        }
    }

    /// The context of the tool call running on this task, if any.
    pub fn current() -> Option<ToolCallContext> {
        CURRENT_CALL.try_with(Clone::clone).ok()
    }

    /// The id of the run the call belongs to.
    pub fn run_id(&self) -> &str {
        self.inner
            .ids
            .as_str()
            .get(..self.inner.internal_start)
            .unwrap_or_default()
    }

    /// reins' id of this call, unique within the run and stable across re-executions.
    pub fn internal_call_id(&self) -> &str {
        let info = &*self.inner;
        info.ids
            .as_str()
            .get(info.internal_start..info.internal_end)
            .unwrap_or_default()
    }

    /// The provider's id of this call.
    pub fn tool_call_id(&self) -> &str {
        self.inner
            .ids
            .as_str()
            .get(self.inner.internal_end..)
            .unwrap_or_default()
    }

    /// A stable id of this call's effect, the same on every re-execution of the same call of
    /// the same run: use it as an idempotency key for side effects.
    pub fn effect_id(&self) -> String {
        format!("{}/{}", self.run_id(), self.internal_call_id())
    }

    /// Attaches metadata to the call's result; hooks see it, the model never does.
    pub fn set_extension(&self, key: impl Into<String>, value: Value) {
        self.attached().extensions.insert(key, value);
    }

    /// Answers the call as skipped, telling the model `reason`, whatever the tool returns:
    /// the run records [`ToolOutcome::Skipped`] with `reason` as the output, as it does for a
    /// hook's skip or a [`ToolDecision::Skip`](crate::run::ToolDecision::Skip).
    ///
    /// For a tool that wraps another and answers a call without running it — e.g. an engine
    /// that journals calls and takes a person's decision about one a crash left in doubt
    /// (reins-restate) — so that hooks, the trace and the run's record see what the decision
    /// was, not a success. The last answer given wins.
    pub fn answer_skipped(&self, reason: impl Into<String>) {
        self.attached().answer = Some(ToolOutcome::Skipped {
            reason: reason.into(),
        });
    }

    /// Answers the call as denied, telling the model `report`, whatever the tool returns: the
    /// run records [`ToolOutcome::Denied`] with `report` as the output, as it does for a
    /// hook's denial or a [`ToolDecision::Deny`](crate::run::ToolDecision::Deny). See
    /// [`answer_skipped`](Self::answer_skipped) for why.
    pub fn answer_denied(&self, report: impl Into<String>) {
        self.attached().answer = Some(ToolOutcome::Denied {
            report: report.into(),
        });
    }

    /// Counts `usage` — tokens the tool spent on model calls of its own, such as another
    /// agent's run — in the usage of the run that called it
    /// ([`PromptResponse::usage`](crate::agent::PromptResponse::usage), its trace span, a
    /// durable run's stored state), as if the run had made those calls. Each call adds to
    /// what the call counted before. A failing tool counts what it added too, unless its
    /// failure ends the run ([`ToolErrorPolicy::Fail`](crate::agent::ToolErrorPolicy::Fail)). A
    /// durable run keeps it in its stored state with the call's result, so a resumed run,
    /// which replays the result, does not count it again; on Restate (reins-restate's
    /// journaled tools) it is journaled with the call's result and counted once whether the
    /// invocation is replayed or not. A
    /// [`Budget`](crate::hooks::budget::Budget) of the calling run counts its own model calls
    /// only: give the other agent a budget of its own.
    ///
    /// An agent used as another agent's tool, its tokens counted in the caller's:
    ///
    /// ```
    /// use reins::agent::{AgentBuilder, PromptError};
    /// use reins::completion::Usage;
    /// use reins::testing::{ScriptedModel, Turn};
    /// use reins::tool::{ToolCallContext, tool_fn};
    /// use serde_json::json;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Ask {
    ///     /// The question for the geographer.
    ///     prompt: String,
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), PromptError> {
    /// let geographer = AgentBuilder::new(ScriptedModel::new([
    ///     Turn::text("Paris.").usage(Usage::new(100, 10)),
    /// ]))
    /// .build();
    /// let ask_geographer = tool_fn("ask_geographer", "Answers geography questions.", move |ask: Ask| {
    ///     let geographer = geographer.clone(); // cheap: clones share one agent
    ///     async move {
    ///         let run = geographer.prompt(ask.prompt).extended_details().await?;
    ///         if let Some(call) = ToolCallContext::current() {
    ///             call.add_usage(run.usage());
    ///         }
    ///         Ok::<_, PromptError>(run.output)
    ///     }
    /// });
    /// let model = ScriptedModel::new([
    ///     Turn::tool_call("ask_geographer", json!({"prompt": "Capital of France?"}))
    ///         .usage(Usage::new(20, 5)),
    ///     Turn::text("It is Paris.").usage(Usage::new(30, 5)),
    /// ]);
    /// let agent = AgentBuilder::new(model).tool(ask_geographer).build();
    /// let run = agent.prompt("What is the capital of France?").extended_details().await?;
    /// assert_eq!(run.output, "It is Paris.");
    /// // Its own two model calls and the geographer's one.
    /// assert_eq!((run.usage().input_tokens, run.usage().output_tokens), (150, 20));
    /// # Ok(())
    /// # }
    /// ```
    pub fn add_usage(&self, usage: Usage) {
        self.attached().usage += usage;
    }

    fn attached(&self) -> std::sync::MutexGuard<'_, ToolAttachments> {
        self.inner
            .attached
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// What the tool attached: its extensions, the outcome it answered the call with in
    /// place of its own, if it did, and the tokens it counted in
    /// ([`add_usage`](Self::add_usage)), taken so that the run adds them once.
    pub(crate) fn take_attached(&self) -> ToolAttachments {
        // Field by field: taking the whole record in one move cost about 260 instructions
        // more a run (docs/PERFORMANCE.md, "Fifty-eighth stop").
        let mut attached = self.attached();
        ToolAttachments {
            extensions: std::mem::take(&mut attached.extensions),
            answer: attached.answer.take(),
            usage: std::mem::take(&mut attached.usage),
        }
    }

    /// Runs `work` as a call of its own with this call's ids (what
    /// [`current`](Self::current) returns inside it), and returns with its output what it
    /// attached, which this call does not get: hand it over with [`attach`](Self::attach).
    ///
    /// For an engine that journals a call's result and, on replay, returns the journaled
    /// result without running the tool (reins-restate): it journals the attachments with the
    /// result and attaches them after the step, on the first execution and every replay
    /// alike, so the run counts a tool's usage once and its hooks see the same extensions
    /// either way.
    ///
    /// ```
    /// use reins::completion::Usage;
    /// use reins::tool::ToolCallContext;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let call = ToolCallContext::new("run-1", "t1c0", "call_1");
    /// let (output, attached) = call
    ///     .capture(async {
    ///         let inner = ToolCallContext::current().expect("inside the capture");
    ///         inner.add_usage(Usage::new(100, 10));
    ///         inner.effect_id()
    ///     })
    ///     .await;
    /// assert_eq!(output, "run-1/t1c0");
    /// assert_eq!(attached.usage, Usage::new(100, 10));
    /// // What a replay would do with the journaled attachments.
    /// let journaled = serde_json::to_string(&attached).unwrap();
    /// call.attach(serde_json::from_str(&journaled).unwrap());
    /// # }
    /// ```
    pub async fn capture<F: Future>(&self, work: F) -> (F::Output, ToolAttachments) {
        let own = ToolCallContext::new(self.run_id(), self.internal_call_id(), self.tool_call_id());
        let output = own.clone().scope(work).await;
        (output, own.take_attached())
    }

    /// Attaches `attachments` to this call as if the tool had attached them while it ran:
    /// each extension is set, the answer (if any) given, the usage added.
    pub fn attach(&self, attachments: ToolAttachments) {
        let ToolAttachments {
            extensions,
            answer,
            usage,
        } = attachments;
        let mut attached = self.attached();
        for (key, value) in extensions.iter() {
            attached.extensions.insert(key, value.clone());
        }
        if answer.is_some() {
            attached.answer = answer;
        }
        attached.usage += usage;
    }

    pub(crate) fn scope<F: Future>(self, future: F) -> impl Future<Output = F::Output> {
        CURRENT_CALL.scope(self, future)
    }
}

#[cfg(test)]
mod tests {
    use super::ToolCallContext;

    #[test]
    fn each_id_reads_back_as_given() {
        for (run, internal, call) in [
            ("run-1", "t1c0", "call_abc"),
            ("", "", ""),
            ("rün", "", "ça"),
            ("r", "t2c1", ""),
            // A UUID run id and a provider's id of usual length: inline.
            (
                "0193a4f2-7c1e-7d2a-9b3c-4d5e6f708192",
                "t12c3",
                "toolu_01A09q90qw90lq917835lq9",
            ),
            // Ids past the inline room, and past 255 bytes, go to the heap.
            (&"r".repeat(60), "t1c0", &"c".repeat(40)),
            (&"r".repeat(200), "t1c0", &"ç".repeat(40)),
        ] {
            let context = ToolCallContext::new(run, internal, call);
            assert_eq!(
                (
                    context.run_id(),
                    context.internal_call_id(),
                    context.tool_call_id()
                ),
                (run, internal, call)
            );
            assert_eq!(context.effect_id(), format!("{run}/{internal}"));
        }
    }
}
