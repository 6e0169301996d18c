//! The local model's sizes in an agent file (`threads`, `context_size` under `[model]`):
//! checked by `reins check`, and read as what the model loader takes.

use super::diagnostic::Diagnostic;
use super::{LoadedAgent, ModelConfig};

/// The variable naming the model file of a local agent without `path`
/// (`reins::providers::local::MODEL_ENV`, which a build without the local model lacks).
const MODEL_VARIABLE: &str = "REINS_MODEL";

/// The most CPU threads an agent file may ask for.
const MAX_THREADS: i64 = 1024;
/// The smallest context an agent file may ask for: less holds no useful prompt.
const MIN_CONTEXT: i64 = 64;
/// The largest context an agent file may ask for (2^20 tokens).
const MAX_CONTEXT: i64 = 1 << 20;

/// What the loader takes: `None` keeps the model's default.
#[cfg(feature = "local")]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LocalSizes {
    /// CPU threads.
    pub threads: Option<usize>,
    /// The context size in tokens.
    pub context_size: Option<u32>,
}

#[cfg(feature = "local")]
impl LocalSizes {
    /// The sizes of a checked `[model]` (a value out of range, which the check refuses,
    /// keeps the default).
    pub fn of(config: &ModelConfig) -> Self {
        LocalSizes {
            threads: config
                .threads
                .as_ref()
                .and_then(|threads| usize::try_from(*threads.get_ref()).ok())
                .filter(|threads| *threads > 0),
            context_size: config
                .context_size
                .as_ref()
                .and_then(|size| u32::try_from(*size.get_ref()).ok()),
        }
    }
}

/// `threads` from 1 to 1024, `context_size` from 64 to 2^20 tokens.
pub(super) fn check_local_sizes(
    agent: &LoadedAgent,
    config: &ModelConfig,
    problems: &mut Vec<Diagnostic>,
) {
    if let Some(threads) = &config.threads
        && !(1..=MAX_THREADS).contains(threads.get_ref())
    {
        problems.push(agent.error_at(
            threads.span(),
            format!(
                "`threads` is {}: give the CPU threads to run the model on, from 1 to \
                 {MAX_THREADS} (leave it out to use all available)",
                threads.get_ref()
            ),
        ));
    }
    if let Some(size) = &config.context_size
        && !(MIN_CONTEXT..=MAX_CONTEXT).contains(size.get_ref())
    {
        problems.push(agent.error_at(
            size.span(),
            format!(
                "`context_size` is {}: give the context in tokens, from {MIN_CONTEXT} to \
                 {MAX_CONTEXT} (leave it out for the smaller of 4096 and what the model was \
                 trained on)",
                size.get_ref()
            ),
        ));
    }
}

/// For `reins check`: a local model without `path` runs on the file `REINS_MODEL` names, when
/// set; that it exists is checked here as `path`'s is, the mistake at `provider`'s line
/// saying where the path came from. (Not for `run`: its `--model` replaces the variable.)
pub(super) fn check_model_variable(
    agent: &LoadedAgent,
    config: &ModelConfig,
    problems: &mut Vec<Diagnostic>,
) {
    if config.path.is_some() {
        return;
    }
    let Some(named) = std::env::var_os(MODEL_VARIABLE).filter(|path| !path.is_empty()) else {
        return;
    };
    let file = std::path::PathBuf::from(named);
    let problem = if file.is_dir() {
        "is a directory: name the .gguf file inside it"
    } else if file.is_file() {
        return;
    } else {
        "does not exist"
    };
    problems.push(agent.error_at(
        config.provider.span(),
        format!(
            "model file {} {problem} (the {MODEL_VARIABLE} variable names it, as the local \
             model's file when `[model]` has no `path`)",
            file.display()
        ),
    ));
}
