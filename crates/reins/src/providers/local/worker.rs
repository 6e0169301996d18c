//! The thread that runs llama.cpp: it owns the context (which borrows the model and is not
//! `Sync`), takes one job at a time, and sends the turn's chunks back over a channel.
//!
//! The context's KV cache is kept between jobs: a prompt that starts like the previous one
//! (the next turn of the same conversation) is read only from where it differs.

use super::grammar::ToolGrammar;
use super::output::{Feed, OutputParser};
use super::sampler::{Sampling, TokenSampler};
use super::template::CALL_OPEN;
use super::{LocalModelError, LocalStats};
use crate::completion::{CompletionError, RawResponse, StreamChunk, Usage};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use std::num::NonZeroU32;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, mpsc};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;

/// The process's llama.cpp backend, initialised on first use with llama.cpp's logs routed
/// into `tracing` (target `llama-cpp-2`). llama.cpp allows one per process: code that also
/// calls `llama-cpp-2` directly should use this one rather than `LlamaBackend::init`.
pub fn backend() -> Result<&'static LlamaBackend, LocalModelError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
            LlamaBackend::init().map_err(|error| match error {
                llama_cpp_2::LlamaCppError::BackendAlreadyInitialized => {
                    "other code in this process initialised llama.cpp first; call \
                     reins::providers::local::backend() instead of LlamaBackend::init"
                        .to_owned()
                }
                other => other.to_string(),
            })
        })
        .as_ref()
        .map_err(|error| LocalModelError::Backend(error.clone()))
}

/// Held while a turn runs: the local models of a process take turns on the CPU.
static COMPUTE: Mutex<()> = Mutex::new(());

/// Where a job's chunks go.
pub(super) type ChunkSender = UnboundedSender<Result<StreamChunk, CompletionError>>;

/// One model turn.
pub(super) struct Job {
    pub tokens: Vec<LlamaToken>,
    pub grammar: ToolGrammar,
    pub sampling: Sampling,
    pub max_tokens: usize,
    pub parser: OutputParser,
    pub chunks: ChunkSender,
    /// Send each chunk as it is produced (false: only the final `Done`, for `completion`).
    pub stream: bool,
}

/// The context's shape.
#[derive(Debug, Clone, Copy)]
pub(super) struct ContextConfig {
    pub context_size: u32,
    pub batch_size: u32,
    pub threads: i32,
}

/// Starts the worker thread and waits until its context exists; returns the job queue and
/// the context size llama.cpp allocated (it may round the size asked for up).
pub(super) fn spawn(
    model: Arc<LlamaModel>,
    config: ContextConfig,
    path: PathBuf,
) -> Result<(mpsc::Sender<Job>, u32), LocalModelError> {
    let backend = backend()?;
    let (jobs, inbox) = mpsc::channel::<Job>();
    let (ready, started) = mpsc::sync_channel::<Result<u32, LocalModelError>>(1);
    std::thread::Builder::new()
        .name("reins-local-model".to_owned())
        .spawn(move || {
            let params = LlamaContextParams::default()
                .with_n_ctx(NonZeroU32::new(config.context_size))
                .with_n_batch(config.batch_size)
                .with_n_ubatch(config.batch_size)
                .with_n_threads(config.threads)
                .with_n_threads_batch(config.threads);
            let context = match model.new_context(backend, params) {
                Ok(context) => context,
                Err(error) => {
                    let _ = ready.send(Err(LocalModelError::Context {
                        path,
                        context: config.context_size,
                        reason: error.to_string(),
                    }));
                    return;
                }
            };
            let mut worker = Worker {
                model: &model,
                batch: LlamaBatch::new(config.batch_size as usize, 1),
                batch_size: config.batch_size as usize,
                context,
                cached: Vec::new(),
            };
            let _ = ready.send(Ok(worker.context.n_ctx()));
            while let Ok(job) = inbox.recv() {
                if job.chunks.is_closed() {
                    // Cancelled while it waited: not a token of its prompt is read.
                    continue;
                }
                let chunks = job.chunks.clone();
                // llama.cpp's threads spin while they wait: two models decoding at once on
                // the same cores slow each other down many times over. One turn at a time.
                let _turn = COMPUTE.lock().unwrap_or_else(PoisonError::into_inner);
                let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| worker.run(job)));
                let error = match outcome {
                    Ok(Ok(())) => continue,
                    Ok(Err(error)) => CompletionError::from(error),
                    Err(_) => CompletionError::Other("the local model panicked".to_owned()),
                };
                // The cache may not match what was read: start the next job from scratch.
                worker.reset();
                let _ = chunks.send(Err(error));
            }
        })
        .map_err(|error| LocalModelError::Backend(format!("cannot start a thread: {error}")))?;
    match started.recv() {
        Ok(Ok(context_size)) => Ok((jobs, context_size)),
        Ok(Err(error)) => Err(error),
        Err(_) => Err(LocalModelError::WorkerGone),
    }
}

struct Worker<'m> {
    model: &'m LlamaModel,
    context: LlamaContext<'m>,
    batch: LlamaBatch<'static>,
    batch_size: usize,
    /// The tokens whose keys and values are in the context, in order.
    cached: Vec<LlamaToken>,
}

impl Worker<'_> {
    fn reset(&mut self) {
        self.context.clear_kv_cache();
        self.cached.clear();
    }

    /// Appends `token` to the batch at the next position.
    fn add(&mut self, token: LlamaToken, logits: bool) -> Result<(), LocalModelError> {
        let position = i32::try_from(self.cached.len())
            .map_err(|_| LocalModelError::Decode("the position overflows".to_owned()))?;
        self.batch
            .add(token, position, &[0], logits)
            .map_err(|error| LocalModelError::Decode(error.to_string()))?;
        self.cached.push(token);
        Ok(())
    }

    fn decode(&mut self) -> Result<(), LocalModelError> {
        self.context
            .decode(&mut self.batch)
            .map_err(|error| LocalModelError::Decode(error.to_string()))
    }

    /// Reads the prompt, reusing the cached prefix; returns how many tokens were reused, or
    /// `None` when the job was cancelled (`chunks` closed) before it was all read.
    fn read_prompt(
        &mut self,
        tokens: &[LlamaToken],
        chunks: &ChunkSender,
    ) -> Result<Option<usize>, LocalModelError> {
        let mut common = self
            .cached
            .iter()
            .zip(tokens)
            .take_while(|(cached, token)| cached == token)
            .count();
        // The last prompt token is always read again: its logits pick the first token.
        common = common.min(tokens.len().saturating_sub(1));
        if common < self.cached.len() {
            let start = u32::try_from(common).unwrap_or(u32::MAX);
            if matches!(
                self.context.clear_kv_cache_seq(Some(0), Some(start), None),
                Ok(true)
            ) {
                self.cached.truncate(common);
            } else {
                self.reset();
                common = 0;
            }
        }
        let rest = tokens.get(common..).unwrap_or_default();
        for (index, chunk) in rest.chunks(self.batch_size).enumerate() {
            if chunks.is_closed() {
                return Ok(None);
            }
            self.batch.clear();
            let last_chunk = (index + 1) * self.batch_size >= rest.len();
            for (offset, token) in chunk.iter().enumerate() {
                self.add(*token, last_chunk && offset + 1 == chunk.len())?;
            }
            self.decode()?;
        }
        Ok(Some(common))
    }

    fn run(&mut self, job: Job) -> Result<(), LocalModelError> {
        let Job {
            tokens,
            grammar,
            sampling,
            max_tokens,
            mut parser,
            chunks,
            stream,
        } = job;
        let context_size = self.context.n_ctx() as usize;
        if tokens.is_empty() {
            return Err(LocalModelError::InvalidRequest(
                "the prompt is empty".to_owned(),
            ));
        }
        let started = Instant::now();
        let Some(reused) = self.read_prompt(&tokens, &chunks)? else {
            return Ok(());
        };
        let prompt_eval = started.elapsed();

        let (rules, constraining) = match &grammar {
            ToolGrammar::None => (None, false),
            ToolGrammar::Forced(rules) | ToolGrammar::Json(rules) => (Some(rules.as_str()), true),
            ToolGrammar::Lazy(rules) => (Some(rules.as_str()), false),
        };
        let mut sampler = TokenSampler::new(self.model, rules, constraining, sampling)?;
        // Until the model opens a call, the bytes it wrote (to find the opening tag in).
        let mut before_call = (rules.is_some() && !constraining).then(Vec::new);
        let vocab = self.model.vocab();
        let mut logits_index = self.batch.n_tokens() - 1;
        let mut text = Utf8Buffer::default();
        let mut out = Vec::new();
        let mut generated = 0usize;
        let started = Instant::now();
        let mut truncated = max_tokens == 0;
        while !truncated {
            if chunks.is_closed() {
                // The stream was dropped: nobody reads the rest.
                return Ok(());
            }
            let token = sampler.sample(self.model, &self.context, logits_index)?;
            generated += 1;
            if vocab.is_eog(token) {
                break;
            }
            let mut bytes = vocab.token_to_piece(token, false, None);
            let mut next = vec![token];
            if let Some(written) = before_call.as_mut()
                && let Some(end) = opening_tag_end(written, &bytes)
            {
                // The call's grammar starts right after the tag. A token that runs past it
                // (`>.` is one token) is cut back to the tag's end: its rest may be nothing the
                // grammar allows, and was never read into the context.
                if end < bytes.len() {
                    bytes.truncate(end);
                    next = vocab.tokenize(&bytes, false, false);
                    generated += next.len().saturating_sub(1);
                }
                sampler.constrain();
                before_call = None;
            }
            let piece = text.push(&bytes);
            let feed = parser.push(&piece, &mut out);
            if stream {
                for chunk in out.drain(..) {
                    if chunks.send(Ok(chunk)).is_err() {
                        return Ok(());
                    }
                }
            } else {
                out.clear();
            }
            if feed == Feed::Stop {
                break;
            }
            // The token limit or the end of the context: the last tokens are not read.
            if next.is_empty()
                || generated >= max_tokens
                || self.cached.len() + next.len() > context_size
            {
                truncated = true;
                break;
            }
            self.batch.clear();
            for (index, token) in next.iter().enumerate() {
                self.add(*token, index + 1 == next.len())?;
            }
            self.decode()?;
            logits_index = self.batch.n_tokens() - 1;
        }
        let generation = started.elapsed();
        let rest = text.finish();
        if !rest.is_empty() {
            parser.push(&rest, &mut out);
        }
        let stats = LocalStats {
            prompt_tokens: tokens.len(),
            cached_prompt_tokens: reused,
            prompt_eval,
            generated_tokens: generated,
            generation,
            text: parser.raw().to_owned(),
        };
        let usage = Usage::new(tokens.len() as u64, generated as u64);
        let response = parser.finish(truncated, usage, RawResponse::new(stats), &mut out);
        if !stream {
            out.clear();
        }
        out.push(StreamChunk::Done(response));
        for chunk in out {
            if chunks.send(Ok(chunk)).is_err() {
                break;
            }
        }
        Ok(())
    }
}

/// Where the opening tag ends in `piece`, the bytes of the token just sampled, when `piece`
/// completes it after `written` (all bytes before it); `piece` is appended to `written`.
fn opening_tag_end(written: &mut Vec<u8>, piece: &[u8]) -> Option<usize> {
    let before = written.len();
    written.extend_from_slice(piece);
    // The tag was not in `written` before: a match ends inside `piece`.
    let from = before.saturating_sub(CALL_OPEN.len() - 1);
    let at = memchr::memmem::find(written.get(from..)?, CALL_OPEN.as_bytes())?;
    Some(from + at + CALL_OPEN.len() - before)
}

/// Joins token bytes into text, holding back a UTF-8 sequence split across tokens.
#[derive(Debug, Default)]
struct Utf8Buffer(Vec<u8>);

impl Utf8Buffer {
    fn push(&mut self, bytes: &[u8]) -> String {
        self.0.extend_from_slice(bytes);
        match std::str::from_utf8(&self.0) {
            Ok(text) => {
                let text = text.to_owned();
                self.0.clear();
                text
            }
            // An incomplete sequence at the end: keep it for the next token.
            Err(error) if error.error_len().is_none() => {
                let valid = error.valid_up_to();
                let text = String::from_utf8_lossy(self.0.get(..valid).unwrap_or_default());
                let text = text.into_owned();
                self.0.drain(..valid);
                text
            }
            Err(_) => self.finish(),
        }
    }

    fn finish(&mut self) -> String {
        let text = String::from_utf8_lossy(&self.0).into_owned();
        self.0.clear();
        text
    }
}

/// Durations as tokens per second.
pub(super) fn per_second(tokens: usize, elapsed: Duration) -> f64 {
    let seconds = elapsed.as_secs_f64();
    if seconds > 0.0 {
        tokens as f64 / seconds
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_opening_tag_is_found_across_tokens_and_cut_inside_one() {
        let mut written = Vec::new();
        assert_eq!(opening_tag_end(&mut written, b"Sure <tool"), None);
        assert_eq!(opening_tag_end(&mut written, b"_call"), None);
        assert_eq!(opening_tag_end(&mut written, b">."), Some(1));
        let mut written = b"<tool_call".to_vec();
        assert_eq!(opening_tag_end(&mut written, b">"), Some(1));
        let mut written = Vec::new();
        assert_eq!(opening_tag_end(&mut written, b" <tool_call>\n{"), Some(12));
    }

    #[test]
    fn utf8_split_across_tokens_is_joined() {
        let mut buffer = Utf8Buffer::default();
        let bytes = "é€".as_bytes();
        assert_eq!(buffer.push(&bytes[..1]), "");
        assert_eq!(buffer.push(&bytes[1..3]), "é");
        assert_eq!(buffer.push(&bytes[3..]), "€");
        assert_eq!(buffer.push(&[0xff, b'a']), "\u{fffd}a");
    }
}
