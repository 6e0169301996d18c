//! Offline models for tests and examples: [`ScriptedModel`] replays scripted [`Turn`]s.
//!
//! ```
//! use reins::agent::AgentBuilder;
//! use reins::testing::{ScriptedModel, Turn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), reins::agent::PromptError> {
//! let model = ScriptedModel::new([Turn::text("Hello!")]);
//! let agent = AgentBuilder::new(model.clone()).build();
//! assert_eq!(agent.prompt("Hi").await?, "Hello!");
//! assert_eq!(model.requests().len(), 1);
//! # Ok(())
//! # }
//! ```

use crate::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, CompletionStream,
    StreamChunk,
};
use crate::message::AssistantContent;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use words::next_word;

mod turn;
mod words;

pub use turn::Turn;

/// A [`CompletionModel`] that answers each request with the next scripted [`Turn`].
///
/// Clones share one script and one request log. Streamed text and reasoning arrive in
/// several deltas (one per word), tool-call arguments in two fragments. Asking for more turns
/// than the script holds is a [`CompletionError::Other`] saying so, never a panic.
///
/// A test scripts what the model answers, runs the agent, and reads back what was sent:
///
/// ```
/// use reins::agent::{AgentBuilder, PromptError};
/// use reins::completion::Usage;
/// use reins::message::Message;
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::tool_fn;
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([
///     Turn::tool_call("lookup", json!({"city": "Oslo"})).usage(Usage::new(40, 8)),
///     Turn::text("It is 4°C in Oslo."),
/// ]);
/// let lookup = tool_fn("lookup", "Weather by city.", |_: serde_json::Value| async move {
///     Ok::<_, std::convert::Infallible>("4°C")
/// });
/// let agent = AgentBuilder::new(model.clone()).tool(lookup).build();
/// let answer = agent.prompt("Weather in Oslo?").await.unwrap();
/// assert_eq!(answer, "It is 4°C in Oslo.");
///
/// // The second request carried the tool's result back to the model.
/// let sent = model.requests();
/// assert!(matches!(sent[1].history.last(), Some(Message::Tool(result)) if result.content == "4°C"));
/// assert_eq!(model.remaining(), 0);
///
/// // A run that asks for more turns than scripted fails; it never panics.
/// let error = agent.prompt("And tomorrow?").await.unwrap_err();
/// assert!(matches!(error, PromptError::Completion { .. }), "{error:?}");
/// # }
/// ```
#[derive(Clone)]
pub struct ScriptedModel {
    script: Arc<Mutex<Script>>,
    native_output: bool,
    by_history: bool,
    /// What [`CompletionModel::model_name`] reports (none unless told).
    model_name: Option<Arc<str>>,
    /// What [`CompletionModel::provider_name`] reports (none unless told).
    provider_name: Option<Arc<str>>,
    /// What [`CompletionModel::endpoint`] reports (none unless told).
    endpoint: Option<Arc<str>>,
}

struct Script {
    /// Shared, so a resumable model copies the turn it serves outside the lock (runs served
    /// by one model at once wait on each other only to pick their turns).
    turns: VecDeque<Arc<Turn>>,
    served: usize,
    record: bool,
    requests: Vec<CompletionRequest>,
}

impl std::fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let script = self.lock();
        f.debug_struct("ScriptedModel")
            .field("remaining", &script.turns.len())
            .field("served", &script.served)
            .finish()
    }
}

impl ScriptedModel {
    /// A model that answers with `turns`, in order. Its place in the script lives in the
    /// model (and its clones): a run resumed with a fresh model, as in another process, is
    /// answered from the script's start again. Script such a run with
    /// [`resumable`](Self::resumable).
    pub fn new(turns: impl IntoIterator<Item = Turn>) -> Self {
        ScriptedModel {
            script: Arc::new(Mutex::new(Script {
                turns: turns.into_iter().map(Arc::new).collect(),
                served: 0,
                record: true,
                requests: Vec::new(),
            })),
            native_output: false,
            by_history: false,
            model_name: None,
            provider_name: None,
            endpoint: None,
        }
    }

    /// A model whose answer to a request is turn N of `turns`, where N is the number of
    /// assistant messages already in the request's history plus one. A durable run resumed in
    /// a fresh process therefore continues the same script.
    ///
    /// ```
    /// use reins::agent::{AgentBuilder, PromptError, ToolDecision};
    /// use reins::hooks::approval::{ApprovalPolicy, Rule};
    /// use reins::testing::{ScriptedModel, Turn};
    /// use reins::tool::tool_fn;
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // What each process builds: the same script, in a model of its own.
    /// let agent = || {
    ///     let model = ScriptedModel::resumable([
    ///         Turn::tool_call("refund", json!({"order": "A-17"})),
    ///         Turn::text("Refunded A-17."),
    ///     ]);
    ///     let refund = tool_fn("refund", "Refunds an order.", |_: serde_json::Value| async {
    ///         Ok::<_, std::convert::Infallible>("refunded")
    ///     });
    ///     let policy = ApprovalPolicy::new().rule(Rule::suspend("refund", "a person decides"));
    ///     AgentBuilder::new(model).tool(refund).add_hook(policy).build()
    /// };
    ///
    /// let Err(PromptError::Suspended { run }) = agent().prompt("Refund A-17").await else {
    ///     panic!("the refund waits for a person");
    /// };
    /// let call = run.pending().next().unwrap().internal_call_id.clone();
    /// // Resumed with a fresh model, the script goes on at turn 2 (`new` would start over at
    /// // the tool call and suspend again).
    /// let answer = agent().resume(*run).decide(call, ToolDecision::approve()).await;
    /// assert_eq!(answer.unwrap(), "Refunded A-17.");
    /// # }
    /// ```
    pub fn resumable(turns: impl IntoIterator<Item = Turn>) -> Self {
        let mut model = ScriptedModel::new(turns);
        model.by_history = true;
        model
    }

    /// Reports support for native structured output; the turn's text is the JSON answer.
    pub fn with_native_output(mut self) -> Self {
        self.native_output = true;
        self
    }

    /// Reports `name` as its [`model_name`](CompletionModel::model_name) (none by default), as
    /// a provider's model does (`gpt-4o`): for tests of what tells models apart by name —
    /// telemetry, or a [`ResponseCache`](crate::hooks::cache::ResponseCache), which keeps the
    /// answers of differently named models apart.
    ///
    /// ```
    /// use reins::completion::CompletionModel;
    /// use reins::testing::ScriptedModel;
    ///
    /// let model = ScriptedModel::new([]).with_provider_name("openai").with_model_name("gpt-4o");
    /// assert_eq!((model.provider_name(), model.model_name()), (Some("openai"), Some("gpt-4o")));
    /// assert_eq!(ScriptedModel::new([]).model_name(), None);
    /// ```
    pub fn with_model_name(mut self, name: impl Into<String>) -> Self {
        self.model_name = Some(Arc::from(name.into()));
        self
    }

    /// Reports `provider` as its [`provider_name`](CompletionModel::provider_name) (none by
    /// default), as a provider's model does (`openai`); see
    /// [`with_model_name`](Self::with_model_name).
    pub fn with_provider_name(mut self, provider: impl Into<String>) -> Self {
        self.provider_name = Some(Arc::from(provider.into()));
        self
    }

    /// Reports `endpoint` as its [`endpoint`](CompletionModel::endpoint) (none by default),
    /// as a provider's model says its base URL (`http://10.0.0.7:8000/v1`); see
    /// [`with_model_name`](Self::with_model_name).
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(Arc::from(endpoint.into()));
        self
    }

    /// Stops recording requests (for benchmarks, where the log would dominate).
    pub fn without_request_log(self) -> Self {
        self.lock().record = false;
        self
    }

    /// Adds turns at the end of the script.
    pub fn push(&self, turns: impl IntoIterator<Item = Turn>) {
        self.lock().turns.extend(turns.into_iter().map(Arc::new));
    }

    /// Every request received so far, exactly as sent.
    pub fn requests(&self) -> Vec<CompletionRequest> {
        self.lock().requests.clone()
    }

    /// How many turns are left.
    pub fn remaining(&self) -> usize {
        self.lock().turns.len()
    }

    fn lock(&self) -> MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn next_turn(&self, request: &CompletionRequest) -> Result<(Turn, usize), CompletionError> {
        let position = self.by_history.then(|| {
            request
                .history
                .iter()
                .filter(|m| matches!(m, crate::message::Message::Assistant { .. }))
                .count()
        });
        let (turn, served) = {
            let mut script = self.lock();
            script.served += 1;
            let served = script.served;
            if script.record {
                script.requests.push(request.clone());
            }
            match position {
                Some(position) => {
                    let turn = script.turns.get(position).cloned();
                    (
                        turn.ok_or_else(|| script_exhausted(position + 1))?,
                        position + 1,
                    )
                }
                None => {
                    let turn = script.turns.pop_front();
                    (turn.ok_or_else(|| script_exhausted(served))?, served)
                }
            }
        };
        // A popped turn is the script's only holder and moves out; a resumable model's turn
        // is copied.
        let turn = Arc::try_unwrap(turn).unwrap_or_else(|shared| Turn::clone(&shared));
        Ok((turn, served))
    }
}

impl CompletionModel for ScriptedModel {
    async fn completion(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        let (turn, served) = self.next_turn(request)?;
        if let Some(delay) = turn.delay {
            tokio::time::sleep(delay).await;
        }
        turn.into_response(served)
    }

    async fn stream(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionStream, CompletionError> {
        let (mut turn, served) = self.next_turn(request)?;
        if let Some(delay) = turn.delay {
            tokio::time::sleep(delay).await;
        }
        // Streamed, the content arrives before the failure.
        let fails_after = turn.fails_after.take();
        let response = turn.into_response(served)?;
        let chunks = Chunks {
            response: Some(response),
            part: 0,
            offset: 0,
            fails_after,
        };
        Ok(Box::pin(futures::stream::iter(chunks)))
    }

    fn supports_native_output(&self) -> bool {
        self.native_output
    }

    fn model_name(&self) -> Option<&str> {
        self.model_name.as_deref()
    }

    fn provider_name(&self) -> Option<&str> {
        self.provider_name.as_deref()
    }

    fn endpoint(&self) -> Option<&str> {
        self.endpoint.as_deref()
    }
}

/// A scripted turn's stream, cut as it is read (no chunk is built before it is asked for):
/// text and reasoning one word at a time, each tool call's arguments in two fragments, then
/// the whole response (or the turn's scripted failure).
struct Chunks {
    /// `None` once the last item was handed out.
    response: Option<CompletionResponse>,
    /// The content part being streamed, and how far into it (bytes of text; fragments of a
    /// tool call's arguments).
    part: usize,
    offset: usize,
    fails_after: Option<CompletionError>,
}

impl Iterator for Chunks {
    type Item = Result<StreamChunk, CompletionError>;

    fn next(&mut self) -> Option<Self::Item> {
        // A word of text, the usual chunk, on its own path: the item is written as a text
        // fragment alone. (Shared with the other kinds, the exit wrote every field of the
        // largest item, and a consumer copying the item whole stalled on those stores.)
        let response = self.response.as_ref()?;
        if let Some(AssistantContent::Text(text)) = response.content.iter().nth(self.part) {
            if let Some(word) = next_word(&text.text, &mut self.offset) {
                return Some(Ok(StreamChunk::Text(word.to_owned())));
            }
        }
        self.next_other()
    }
}

impl Chunks {
    /// [`Iterator::next`] past a word of text.
    #[inline(never)]
    fn next_other(&mut self) -> Option<Result<StreamChunk, CompletionError>> {
        let response = self.response.as_ref()?;
        while let Some(part) = response.content.iter().nth(self.part) {
            let chunk = match part {
                AssistantContent::Text(text) => {
                    next_word(&text.text, &mut self.offset).map(|w| StreamChunk::Text(w.to_owned()))
                }
                AssistantContent::Reasoning(reasoning) => {
                    next_word(&reasoning.text, &mut self.offset)
                        .map(|w| StreamChunk::Reasoning(w.to_owned()))
                }
                AssistantContent::ToolCall(call) if self.offset < 2 => {
                    let arguments = call.arguments_text();
                    let middle = (arguments.len() / 2..=arguments.len())
                        .find(|&i| arguments.is_char_boundary(i))
                        .unwrap_or(arguments.len());
                    let (first, second) = arguments.split_at(middle);
                    self.offset += 1;
                    Some(StreamChunk::ToolCall {
                        id: call.id.clone(),
                        name: (self.offset == 1).then(|| call.name.clone()),
                        delta: if self.offset == 1 { first } else { second }.to_owned(),
                    })
                }
                AssistantContent::ToolCall(_) => None,
            };
            match chunk {
                Some(chunk) => return Some(Ok(chunk)),
                None => {
                    self.part += 1;
                    self.offset = 0;
                }
            }
        }
        let response = self.response.take()?;
        Some(match self.fails_after.take() {
            Some(error) => Err(error),
            None => Ok(StreamChunk::Done(response)),
        })
    }
}

/// The error of a call past the end of the script (`requested` is one-based).
fn script_exhausted(requested: usize) -> CompletionError {
    CompletionError::Other(format!(
        "the scripted model has no turn left (it was asked for turn {requested})"
    ))
}
