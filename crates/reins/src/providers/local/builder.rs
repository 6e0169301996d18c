use super::grammar::{DEFAULT_MAX_ARRAY_ITEMS, DEFAULT_MAX_STRING_LENGTH, Limits};
use super::sampler::Sampling;
use super::worker::{self, ContextConfig};
use super::{Inner, LocalModel, LocalModelError};
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The context size used when none is set, unless the model was trained on less.
pub const DEFAULT_CONTEXT_SIZE: u32 = 4096;

type LoadProgress = Box<dyn FnMut(f32) + Send>;

/// Settings for loading a [`LocalModel`]; [`build`](LocalModelBuilder::build) loads it.
///
/// The sampling settings are defaults: a request's `temperature` and `max_tokens`, and the
/// `stop`, `seed`, `top_k`, `top_p`, `min_p` and `repeat_penalty` keys of its
/// `additional_params`, override them for that request.
///
/// Tool calls and typed answers are written under a grammar that bounds the strings and
/// arrays their schemas leave unbounded ([`max_string_length`](Self::max_string_length),
/// [`max_array_items`](Self::max_array_items)), so a small model cannot loop inside one. A call
/// or answer that reaches such a bound, or `max_tokens`, finishes with
/// [`FinishReason::Length`](crate::completion::FinishReason::Length), not as a complete one.
pub struct LocalModelBuilder {
    path: PathBuf,
    name: Option<String>,
    context_size: Option<u32>,
    threads: Option<usize>,
    batch_size: u32,
    chat_template: Option<String>,
    pub(super) sampling: Sampling,
    pub(super) max_tokens: u64,
    pub(super) stop: Vec<String>,
    limits: Limits,
    progress: Option<LoadProgress>,
}

impl fmt::Debug for LocalModelBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalModelBuilder")
            .field("path", &self.path)
            .field("name", &self.name)
            .field("context_size", &self.context_size)
            .field("threads", &self.threads)
            .field("chat_template", &self.chat_template)
            .field("sampling", &self.sampling)
            .field("max_tokens", &self.max_tokens)
            .field("stop", &self.stop)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl LocalModelBuilder {
    pub(super) fn new(path: PathBuf) -> Self {
        LocalModelBuilder {
            path,
            name: None,
            context_size: None,
            threads: None,
            batch_size: 512,
            chat_template: None,
            sampling: Sampling::default(),
            max_tokens: 512,
            stop: Vec::new(),
            limits: Limits {
                string_length: DEFAULT_MAX_STRING_LENGTH,
                array_items: DEFAULT_MAX_ARRAY_ITEMS,
            },
            progress: None,
        }
    }

    /// The model's name in telemetry (`gen_ai.request.model`). Defaults to the file's name
    /// without its `.gguf` extension (`SmolLM2-135M-Instruct.Q4_1`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The context size in tokens (prompt plus answer). Defaults to the smaller of
    /// [`DEFAULT_CONTEXT_SIZE`] and what the model was trained on.
    pub fn context_size(mut self, tokens: u32) -> Self {
        self.context_size = Some(tokens);
        self
    }

    /// CPU threads for reading the prompt and generating. Defaults to the available
    /// parallelism.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads.max(1));
        self
    }

    /// The most prompt tokens read in one batch (512 by default).
    pub fn batch_size(mut self, tokens: u32) -> Self {
        self.batch_size = tokens.max(1);
        self
    }

    /// A chat template to use instead of the model's own: a name llama.cpp knows (`"chatml"`,
    /// `"llama3"`, ...) or a Jinja template in one of the forms llama.cpp recognises.
    pub fn chat_template(mut self, template: impl Into<String>) -> Self {
        self.chat_template = Some(template.into());
        self
    }

    /// The default sampling temperature (0.2); 0 always picks the most likely token.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.sampling.temperature = temperature;
        self
    }

    /// The default limit on generated tokens per turn (512).
    pub fn max_tokens(mut self, tokens: u64) -> Self {
        self.max_tokens = tokens;
        self
    }

    /// Default stop sequences: generation ends when the answer text contains one (it is not
    /// part of the answer).
    pub fn stop_sequences(mut self, stops: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.stop = stops.into_iter().map(Into::into).collect();
        self
    }

    /// The sampler's random seed (42 by default, so runs repeat).
    pub fn seed(mut self, seed: u32) -> Self {
        self.sampling.seed = seed;
        self
    }

    /// A repetition penalty over the last `last_n` tokens (1.0, the default, disables it).
    pub fn repeat_penalty(mut self, penalty: f32, last_n: i32) -> Self {
        self.sampling.repeat_penalty = penalty;
        self.sampling.repeat_last_n = last_n;
        self
    }

    /// The most characters of one string in a tool call's arguments or a typed answer, where
    /// the schema sets no `maxLength` ([`DEFAULT_MAX_STRING_LENGTH`], 2000, by default; at
    /// least 1). The grammar closes the string there; the call or answer then finishes with
    /// [`FinishReason::Length`](crate::completion::FinishReason::Length) (as does one whose
    /// string the model ended at exactly this length: the two cannot be told apart). Above
    /// [`MAX_GRAMMAR_REPETITION`](super::MAX_GRAMMAR_REPETITION), strings are unbounded and only `max_tokens` limits them.
    pub fn max_string_length(mut self, chars: u32) -> Self {
        self.limits.string_length = chars.max(1);
        self
    }

    /// The most items of one array in a tool call's arguments or a typed answer, where the
    /// schema sets no `maxItems` ([`DEFAULT_MAX_ARRAY_ITEMS`], 256, by default; at least 1).
    /// An array that reaches it is reported like a string that reaches
    /// [`max_string_length`](Self::max_string_length); above [`MAX_GRAMMAR_REPETITION`](super::MAX_GRAMMAR_REPETITION),
    /// arrays are unbounded.
    pub fn max_array_items(mut self, items: u32) -> Self {
        self.limits.array_items = items.max(1);
        self
    }

    /// Calls `progress` with the fraction loaded (0.0 to 1.0) while the model loads.
    pub fn on_load_progress(mut self, progress: impl FnMut(f32) + Send + 'static) -> Self {
        self.progress = Some(Box::new(progress));
        self
    }

    /// Loads the model and starts its worker thread. Blocking: call it before entering async
    /// code, or inside `spawn_blocking`.
    pub fn build(self) -> Result<LocalModel, LocalModelError> {
        let path = self.path.clone();
        check_gguf(&path)?;
        let backend = worker::backend()?;
        let mut params = LlamaModelParams::default();
        if let Some(mut progress) = self.progress {
            params = params.with_progress_callback(move |fraction| {
                progress(fraction);
                true
            });
        }
        let model = LlamaModel::load_from_file(backend, &path, &params)
            .map_err(|_| LocalModelError::Load { path: path.clone() })?;
        let template = match &self.chat_template {
            Some(template) => LlamaChatTemplate::new(template).map_err(|error| {
                LocalModelError::Template(format!("the chat template is not a C string: {error}"))
            })?,
            None => model
                .chat_template(None)
                .map_err(|_| LocalModelError::NotAChatModel { path: path.clone() })?,
        };
        // Fails now, not on the first request, when llama.cpp cannot apply the template.
        let probe = ["system", "user"]
            .into_iter()
            .filter_map(|role| LlamaChatMessage::new(role.to_owned(), "hi".to_owned()).ok())
            .collect::<Vec<_>>();
        model
            .apply_chat_template(&template, &probe, true)
            .map_err(|error| LocalModelError::UnsupportedTemplate {
                path: path.clone(),
                detail: error.to_string(),
            })?;
        let trained = model.n_ctx_train();
        let context_size = self
            .context_size
            .unwrap_or_else(|| match trained {
                0 => DEFAULT_CONTEXT_SIZE,
                trained => trained.min(DEFAULT_CONTEXT_SIZE),
            })
            .max(16);
        let threads = self.threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        });
        let config = ContextConfig {
            context_size,
            batch_size: self.batch_size.min(context_size),
            threads: i32::try_from(threads).unwrap_or(i32::MAX),
        };
        let model = Arc::new(model);
        let (jobs, context_size) = worker::spawn(Arc::clone(&model), config, path.clone())?;
        let name = self.name.unwrap_or_else(|| name_of_file(&path));
        Ok(LocalModel {
            inner: Arc::new(Inner {
                model,
                name,
                template,
                jobs,
                path,
                context_size,
                trained,
                threads,
                sampling: self.sampling,
                max_tokens: self.max_tokens,
                stop: self.stop,
                limits: self.limits,
            }),
        })
    }
}

/// The model's name by its file: the file's name, less a `.gguf` extension (what a model is
/// published and picked by, quantization included).
fn name_of_file(path: &Path) -> String {
    let file = path
        .file_name()
        .unwrap_or(path.as_os_str())
        .to_string_lossy();
    let stem = match file.len().checked_sub(".gguf".len()) {
        Some(cut) if file.is_char_boundary(cut) && file[cut..].eq_ignore_ascii_case(".gguf") => {
            &file[..cut]
        }
        _ => &file[..],
    };
    stem.to_owned()
}

/// Checks that `path` exists, is a file and starts with the GGUF magic.
fn check_gguf(path: &Path) -> Result<(), LocalModelError> {
    if path.is_dir() {
        return Err(LocalModelError::IsADirectory {
            path: path.to_path_buf(),
        });
    }
    let mut file = std::fs::File::open(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => LocalModelError::NotFound {
            path: path.to_path_buf(),
        },
        _ => LocalModelError::Io {
            path: path.to_path_buf(),
            source,
        },
    })?;
    let mut magic = Vec::with_capacity(4);
    file.by_ref()
        .take(4)
        .read_to_end(&mut magic)
        .map_err(|source| LocalModelError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if magic != b"GGUF" {
        return Err(LocalModelError::NotGguf {
            path: path.to_path_buf(),
            found: String::from_utf8_lossy(&magic).into_owned(),
        });
    }
    Ok(())
}
