//! Agents in a TOML file: the file's shape ([`AgentFile`]), read with spans so that every
//! mistake points at its line ([`diagnostic`]), then checked beyond its shape ([`check`]).
//!
//! Unknown keys are errors (`deny_unknown_fields` everywhere): a misspelt `max_turn` must not
//! silently fall back to a default.

pub mod approval;
mod budget;
pub mod check;
pub mod diagnostic;
mod hook_checks;
mod hooks;
mod list_hints;
pub mod local_model;
mod masking;
mod mcp_server;
pub mod model_keys;
pub mod model_timeouts;
mod passthrough;
mod paths;
mod programs;
mod restate;
pub mod shell_tool;
mod suggest;
pub mod tool_choice;
mod variables;

use diagnostic::Diagnostic;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

pub use hooks::*;
pub use variables::missing as variable_missing;

/// One agent, as written in its file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentFile {
    /// The agent's name (default: the file's stem), shown in run listings.
    pub name: Option<String>,
    /// The system prompt.
    #[serde(default)]
    pub preamble: String,
    /// The prompt `reins run` sends when none is given.
    pub default_prompt: Option<String>,
    /// Which model runs the agent.
    pub model: Spanned<ModelConfig>,
    /// Limits of one run.
    #[serde(default)]
    pub limits: Limits,
    /// The tools the model may call.
    #[serde(default)]
    pub tools: Tools,
    /// The ready-made hooks and their settings.
    #[serde(default)]
    pub hooks: Hooks,
    /// Where runs are kept.
    pub store: Option<Spanned<StoreConfig>>,
    /// The web inbox.
    #[serde(default)]
    pub ui: UiConfig,
}

/// The label the agent's own model is registered under (reins' label for the model
/// `AgentBuilder::new` takes).
pub const DEFAULT_LABEL: &str = "default";

/// The label of `[limits] over_budget_model`, which the budget switches to.
pub const OVER_BUDGET_LABEL: &str = "over-budget";

impl AgentFile {
    /// Every model of the file with the label it is registered under, the agent's own first:
    /// [`DEFAULT_LABEL`], then the fallbacks (`fallback-1`, ...), then [`OVER_BUDGET_LABEL`].
    pub fn labeled_models(&self) -> Vec<(String, &Spanned<ModelConfig>)> {
        let fallbacks = self
            .hooks
            .fallback
            .iter()
            .flat_map(|fallback| &fallback.models)
            .enumerate()
            .map(|(index, model)| (format!("fallback-{}", index + 1), model));
        std::iter::once((DEFAULT_LABEL.to_owned(), &self.model))
            .chain(fallbacks)
            .chain(
                self.limits
                    .over_budget_model
                    .iter()
                    .map(|model| (OVER_BUDGET_LABEL.to_owned(), model)),
            )
            .collect()
    }
}

/// `reins ui` settings.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UiConfig {
    /// A link to a run's trace in your tracing UI; `{run}` is replaced by the run's id
    /// (URL-encoded). An `http://` or `https://` URL.
    pub trace_link: Option<Spanned<String>>,
}

/// A model: a hosted provider and a model name, or the embedded local model.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// `local`, `openai`, `anthropic`, `gemini` or `openai-compatible`.
    pub provider: Spanned<String>,
    /// The provider's model name (hosted providers).
    pub name: Option<Spanned<String>>,
    /// A GGUF file for `local` (default: `$REINS_MODEL`, else the default model).
    pub path: Option<Spanned<String>>,
    /// `local` only: the CPU threads that run the model (default: all available).
    pub threads: Option<Spanned<i64>>,
    /// `local` only: the context size in tokens, prompt and answer together (default: the
    /// smaller of 4096 and what the model was trained on).
    pub context_size: Option<Spanned<i64>>,
    /// The provider's base URL (e.g. a proxy or a compatible server); without it, `openai`,
    /// `anthropic` and `gemini` read `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL` /
    /// `GEMINI_BASE_URL` when set.
    pub base_url: Option<Spanned<String>>,
    /// The environment variable holding the API key (default: the provider's usual one).
    pub api_key_env: Option<Spanned<String>>,
    /// The most tokens one answer may have (`local`, left out: 200 for the default model,
    /// which can loop; a model the file or `--model` names answers until its context is full).
    pub max_tokens: Option<u64>,
    /// The sampling temperature.
    pub temperature: Option<f64>,
    /// `[input, output]` price per million tokens of this model, for the budget's cost (the
    /// `[limits]` price applies to models without one).
    pub price_per_million: Option<Spanned<[f64; 2]>>,
    /// `[read, write]` price per million input tokens this model reads from or writes to its
    /// provider's prompt cache (else they cost the input price); needs `price_per_million`.
    pub cache_price_per_million: Option<Spanned<[f64; 2]>>,
    /// `openai` only: the API spoken, `chat` (Chat Completions, the default) or `responses`
    /// (the Responses API, which carries a reasoning model's reasoning from turn to turn).
    pub api: Option<Spanned<String>>,
    /// Hosted models: seconds one model call may take in all, retries and the whole answer
    /// included (default 600).
    pub timeout_secs: Option<Spanned<u64>>,
    /// Hosted models: the longest silence of a call, before its answer begins and between
    /// its parts, in seconds (default 120).
    pub idle_timeout_secs: Option<Spanned<u64>>,
}

/// The most `max_invalid_tool_call_retries` a file may set: a model that still calls tools it
/// may not after this many corrections is not helped by more.
pub const MAX_INVALID_TOOL_CALL_RETRIES: usize = 10;

/// Limits of one run; the budget limits become a [`reins::hooks::budget::Budget`].
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// The most model calls of one run (default 8, at least 1).
    pub max_turns: Option<Spanned<usize>>,
    /// How many times a run tells the model it called a tool it may not call (naming the
    /// ones it may) and asks again, each a model call of `max_turns` (default 2, at most
    /// [`MAX_INVALID_TOOL_CALL_RETRIES`]); 0 fails the run at such a call, and repairs no
    /// misnamed call either.
    pub max_invalid_tool_call_retries: Option<Spanned<usize>>,
    /// Budget: tokens read.
    pub max_input_tokens: Option<u64>,
    /// Budget: tokens written.
    pub max_output_tokens: Option<u64>,
    /// Budget: tokens read and written.
    pub max_total_tokens: Option<u64>,
    /// Budget: model calls.
    pub max_model_calls: Option<u64>,
    /// Budget: tool calls.
    pub max_tool_calls: Option<u64>,
    /// Budget: seconds from the start of the run (pauses included).
    pub max_wall_time_secs: Option<u64>,
    /// Budget: cost, priced by `price_per_million`.
    pub max_cost: Option<Spanned<f64>>,
    /// `[input, output]` price per million tokens, for `max_cost`: of every model without a
    /// price of its own.
    pub price_per_million: Option<Spanned<[f64; 2]>>,
    /// `[read, write]` price per million prompt-cache input tokens of the models priced by
    /// the `price_per_million` beside it (else they cost its input price).
    pub cache_price_per_million: Option<Spanned<[f64; 2]>>,
    /// Budget: the model a run's later calls go to once a limit is used up, instead of
    /// stopping (registered as `over-budget`).
    pub over_budget_model: Option<Spanned<ModelConfig>>,
    /// With `over_budget_model`, the run stops once a limit times this is used up too
    /// (default 1.5).
    pub hard_limit_factor: Option<Spanned<f64>>,
}

impl Limits {
    /// Whether any budget limit is set (`max_turns` is the run's own, not the budget's).
    pub fn any_budget(&self) -> bool {
        self.max_input_tokens.is_some()
            || self.max_output_tokens.is_some()
            || self.max_total_tokens.is_some()
            || self.max_model_calls.is_some()
            || self.max_tool_calls.is_some()
            || self.max_wall_time_secs.is_some()
            || self.max_cost.is_some()
    }
}

/// The tools of the agent.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tools {
    /// MCP servers, each started as a command speaking MCP on stdio.
    #[serde(default)]
    pub mcp: Vec<Spanned<McpConfig>>,
    /// Commands run with arguments filled in from the model's call.
    #[serde(default)]
    pub shell: Vec<Spanned<ShellToolConfig>>,
}

/// An MCP server's tools.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// The server's name (in errors and logs).
    pub name: String,
    /// The program to start (a server speaking MCP on stdio); or give `url`.
    pub command: Option<Spanned<String>>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables for it (an entry for a model's key variable gives it
    /// that value).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Model key variables it inherits all the same (see [`ShellToolConfig::env_passthrough`]).
    #[serde(default)]
    pub env_passthrough: Vec<Spanned<String>>,
    /// Its working directory (relative to the agent file).
    pub cwd: Option<Spanned<String>>,
    /// Only these tools (names as the server gives them).
    pub include: Option<Vec<String>>,
    /// Not these tools.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// A prefix put before each tool's name.
    pub prefix: Option<String>,
    /// Seconds one call may take (at least 1).
    pub call_timeout_secs: Option<Spanned<u64>>,
    /// The URL of a server speaking MCP over streamable HTTP; or give `command`.
    pub url: Option<Spanned<String>>,
    /// The environment variable holding a bearer token for the `url` server (its value is
    /// sent as `Authorization: Bearer ...`, never printed).
    pub bearer_token_env: Option<Spanned<String>>,
    /// Headers for the `url` server, each naming the environment variable holding its value.
    #[serde(default)]
    pub headers_from_env: BTreeMap<String, Spanned<String>>,
}

/// A tool that runs a program: the model's arguments fill the `{placeholders}` of `command`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellToolConfig {
    /// The name the model calls it by.
    pub name: Spanned<String>,
    /// What it does, for the model.
    pub description: String,
    /// The program and its arguments; `{name}` in an element is replaced by the argument
    /// `name` (never through a shell: one element stays one argument).
    pub command: Spanned<Vec<String>>,
    /// The JSON schema of the arguments (an object schema).
    pub schema: Spanned<toml::Value>,
    /// Seconds one call may take (default 60; at least 1).
    pub timeout_secs: Option<Spanned<u64>>,
    /// Working directory (relative to the agent file; default: where `reins` runs).
    pub cwd: Option<Spanned<String>>,
    /// The tool changes nothing (approval rules can allow read-only tools).
    #[serde(default)]
    pub read_only: bool,
    /// Model key variables the program inherits all the same: without, the variables the
    /// agent's models read their keys from ([`model_keys::key_variables`]) are removed from
    /// its environment. Each must be one of them (`passthrough::check_passthrough`).
    #[serde(default)]
    pub env_passthrough: Vec<Spanned<String>>,
    /// A value starting with `-` may begin an argument where the program could read it as an
    /// option (`["git", "log", "{ref}"]` given `--output=FILE`); without, such a call is
    /// refused (`shell_tool::option_values`).
    #[serde(default)]
    pub allow_option_values: bool,
}

/// Where runs are kept: SQLite by default.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// The SQLite file (relative to the agent file; default `.reins/runs.sqlite`).
    pub sqlite: Option<Spanned<String>>,
    /// The environment variable holding a PostgreSQL connection string.
    pub postgres_url_env: Option<Spanned<String>>,
    /// The ingress URL of a Restate server (e.g. `http://127.0.0.1:8080`): runs execute on
    /// the workers `reins serve` starts, every model and tool call a journaled step, and
    /// `reins run` and `reins runs show|approve|deny|resume` go through the ingress.
    pub restate: Option<Spanned<String>>,
    /// The environment variable holding a bearer token for the Restate ingress (Restate
    /// Cloud, an authenticating proxy), sent as `Authorization: Bearer` by every command but
    /// `reins serve` (whose worker only answers Restate); also sent to the admin API by
    /// `reins serve --register` unless `restate_admin_token_env` is named. Restate keeps each
    /// call's headers with its invocation (the journal's input entry, readable through the
    /// admin API, forwarded to workers): let the proxy in front of the ingress strip the
    /// header, and never reuse a model key as this token.
    pub restate_token_env: Option<Spanned<String>>,
    /// The environment variable holding the admin API's bearer token, for `reins serve
    /// --register`, when it is not the ingress's (Restate Cloud gives each its own).
    pub restate_admin_token_env: Option<Spanned<String>>,
    /// The public request identity keys (`publickeyv1_…`) of the Restate server: `reins
    /// serve` then takes only the requests that server signed (discovery and invocations),
    /// refusing any other caller of its port — a second Restate server included, which
    /// could otherwise replay runs of its own choosing and run the agent's tools.
    #[serde(default)]
    pub restate_identity_keys: Vec<Spanned<String>>,
    /// How many checkpoints of each run the SQLite or PostgreSQL store keeps, newest first
    /// (default: every one): a long run's record then grows with its state only, and
    /// `runs fork --at` reaches back that far.
    pub keep_checkpoints: Option<Spanned<usize>>,
    /// How long, in seconds, a process's claim on a run lasts without a write (default 300,
    /// from 1 to [`MAX_LEASE_SECS`]): how long a run that process left (killed on another
    /// machine, say) stays busy before another may resume it. A resume on the same machine,
    /// in the same pid namespace and boot, takes a dead process's run over at once. Longer
    /// than the longest step of a run.
    pub lease_secs: Option<Spanned<u64>>,
}

/// The longest `[store] lease_secs`: a day.
pub const MAX_LEASE_SECS: u64 = 86_400;

/// An agent file read and checked: its contents and where it is.
#[derive(Debug)]
pub struct LoadedAgent {
    /// The file.
    pub path: PathBuf,
    /// Its parsed contents.
    pub file: AgentFile,
    /// Its text, for pointing at lines later.
    pub source: String,
    /// What its relative paths are resolved against ([`LoadedAgent::base_dir`]).
    base_dir: PathBuf,
}

impl LoadedAgent {
    /// The agent's name: `name`, else the file's stem.
    pub fn name(&self) -> String {
        self.file.name.clone().unwrap_or_else(|| {
            self.path
                .file_stem()
                .map_or_else(|| "agent".to_owned(), |s| s.to_string_lossy().into_owned())
        })
    }

    /// The directory relative paths in the file are resolved against: the file's own, or the
    /// current directory for a file that has none ([`base_dir_of`]).
    pub fn base_dir(&self) -> PathBuf {
        self.base_dir.clone()
    }

    /// `relative` resolved against [`base_dir`](Self::base_dir).
    pub fn resolve(&self, relative: &str) -> PathBuf {
        let path = Path::new(relative);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.base_dir().join(path)
        }
    }

    /// A diagnostic pointing at `span` of this file.
    pub fn error_at(&self, span: std::ops::Range<usize>, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(&self.path, &self.source, Some(span), message)
    }
}

/// Reads `path`, parses it and checks it (with the variables `needs` says the command needs):
/// the agent and its warnings, or every error (with the warnings), each a [`Diagnostic`]
/// naming the line.
pub fn load(
    path: &Path,
    needs: check::Needs,
) -> Result<(LoadedAgent, Vec<Diagnostic>), Vec<Diagnostic>> {
    checked(read(path)?, needs)
}

/// Reads `path` and parses it, unchecked: read once, then [`checked`] with what the command
/// needs given what the file says (a file given as a pipe can be read only once).
pub fn read(path: &Path) -> Result<LoadedAgent, Vec<Diagnostic>> {
    // Before it is read: what a pipe is is known while it is open.
    let base_dir = base_dir_of(path);
    let source = std::fs::read_to_string(path).map_err(|error| {
        vec![Diagnostic::new(
            path,
            "",
            None,
            format!("cannot read the agent file: {error}"),
        )]
    })?;
    let file: AgentFile = toml::from_str(&source).map_err(|error| {
        let message = diagnostic::plain(error.message().trim_end());
        let hint = list_hints::hint(&source, error.span().as_ref(), &message);
        vec![Diagnostic::new(
            path,
            &source,
            error.span(),
            message + &hint,
        )]
    })?;
    Ok(LoadedAgent {
        path: path.to_path_buf(),
        file,
        source,
        base_dir,
    })
}

/// What the relative paths of the agent file at `path` are resolved against: its directory
/// when it is a regular file in one, else the current directory. A file given as a pipe
/// (`reins run <(envsubst < agent.toml.in)`, read as `/dev/fd/63`), or any other file that is
/// not a regular one (a FIFO, a device), has no directory of its own, and neither has one
/// named by a descriptor (`/dev/fd/N`, `/proc/self/fd/N`, `/dev/stdin`) whatever it is:
/// `/dev/fd` holds neither its tools' programs nor a store.
fn base_dir_of(path: &Path) -> PathBuf {
    let regular = std::fs::metadata(path).is_ok_and(|metadata| metadata.is_file());
    match path.parent() {
        Some(parent) if regular && !parent.as_os_str().is_empty() && !names_a_descriptor(path) => {
            parent.to_path_buf()
        }
        _ => PathBuf::from("."),
    }
}

/// Whether `path` names one of the process's open files by its descriptor rather than a file
/// in a directory: `/dev/fd/N`, `/proc/PID/fd/N` (`/proc/self/fd/N`), `/dev/stdin`.
fn names_a_descriptor(path: &Path) -> bool {
    let Some(parent) = path.parent() else {
        return false;
    };
    path == Path::new("/dev/stdin")
        || parent == Path::new("/dev/fd")
        || (parent.starts_with("/proc") && parent.file_name() == Some(std::ffi::OsStr::new("fd")))
}

/// `agent` checked with the variables `needs` says the command needs: the agent and its
/// warnings, or every error (with the warnings).
pub fn checked(
    agent: LoadedAgent,
    needs: check::Needs,
) -> Result<(LoadedAgent, Vec<Diagnostic>), Vec<Diagnostic>> {
    let problems = check::check(&agent, needs);
    if problems.iter().any(Diagnostic::is_error) {
        Err(problems)
    } else {
        Ok((agent, problems))
    }
}

#[cfg(test)]
mod tests {
    use super::base_dir_of;
    use std::path::{Path, PathBuf};

    #[test]
    fn a_regular_file_s_paths_are_its_directory_s_and_a_descriptor_s_the_current_one() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("agent.toml");
        std::fs::write(&path, "").expect("the file");
        assert_eq!(base_dir_of(&path), dir.path());
        assert_eq!(base_dir_of(Path::new("agent.toml")), PathBuf::from("."));
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // The same regular file, named by its descriptor: `/dev/fd` is no directory of its.
            let file = std::fs::File::open(&path).expect("open it");
            let fd = file.as_raw_fd();
            for named in [format!("/dev/fd/{fd}"), format!("/proc/self/fd/{fd}")] {
                assert_eq!(
                    base_dir_of(Path::new(&named)),
                    PathBuf::from("."),
                    "{named}"
                );
            }
        }
        // Not a regular file: a directory's parent is no agent file's directory either.
        assert_eq!(base_dir_of(dir.path()), PathBuf::from("."));
    }
}
