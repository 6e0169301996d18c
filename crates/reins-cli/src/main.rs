//! `reins`: run, watch and approve LLM agents defined in a TOML file — from the terminal or
//! a web inbox — without writing a `main.rs`.
//!
//! ```text
//! reins check agent.toml                 # validate, pointing at the line of any mistake
//! reins run agent.toml "prompt"          # stream the answer; approvals in the terminal
//! reins run agent.toml "prompt" --json   # one JSON event per line
//! reins run agent.toml --model big.gguf  # a local agent on any GGUF chat model
//! reins chat agent.toml                  # a conversation, kept in the store
//! reins runs list agent.toml             # the runs in the agent's store
//! reins runs approve agent.toml RUN      # decide a waiting call, then `runs resume`
//! reins runs fork agent.toml RUN --at 3  # a new run from a checkpoint (`runs checkpoints`)
//! reins ui agent.toml                    # the web inbox: prints its address, with a token
//! reins serve agent.toml --register URL  # the Restate worker of a `[store] restate` agent
//! reins                                  # the built-in offline demo
//! ```
//!
//! Exit codes: 0 done, 1 error, 2 invalid agent file or usage, 3 suspended (a call waits for
//! a person), 4 a budget, the turn limit or the loop breaker stopped the run, 130 interrupted
//! (docs/CLI.md lists them with the `--json` output).

#[macro_use]
mod terminal_lines;
#[macro_use]
mod output;
mod approve;
mod args_check;
mod assemble;
mod chat;
mod command_editor;
mod config;
mod cursor_column;
mod decide;
mod decide_commands;
mod decided_by;
mod demo;
mod demo_hooks;
mod demo_tools;
mod early;
mod edited_args;
mod editor;
mod fork;
mod in_doubt;
mod interrupt;
mod keys;
mod lease_keeper;
mod listen_address;
#[cfg(feature = "local")]
mod local;
mod process_group;
mod question_ctrl_c;
mod restate;
mod run;
mod run_command;
mod run_decisions;
mod run_id;
mod run_in_progress;
mod runs;
mod runs_command;
mod runs_decide;
mod shell_tool;
mod shell_word;
mod spinner;
mod store;
mod telemetry;
#[cfg(test)]
mod test_runs;
mod tool_schema;
mod tool_supervisor;
mod trail;
mod ui;
mod usage;
mod waiting_calls;
mod warnings;

use clap::{Parser, Subcommand};
use config::check::Needs;
use run::EXIT_INVALID;
use runs_command::{RunsCommand, runs_main};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Run, watch and approve LLM agents defined in a TOML file. With no subcommand: the
/// built-in offline demo.
// No `Debug`: `--token` is a secret.
#[derive(Parser)]
#[command(
    name = "reins",
    version,
    args_conflicts_with_subcommands = true,
    after_help = AFTER_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    demo: demo::Args,
}

/// The end of `reins --help`: where a person who has only the command learns to write an
/// agent file, and what the exit codes say.
const AFTER_HELP: &str = "\
An agent file is TOML: a [model], its tools ([[tools.shell]], [[tools.mcp]]), hooks such as
[hooks.approval] and a [store]. The README's section `The reins command: agents in a file`
describes every key; the agents in crates/reins-cli/agents are examples to start from, and
`reins check agent.toml` shows each mistake at its line.

Exit codes: 0 done, 1 error, 2 invalid agent file or usage, 3 suspended (a call waits for a
person, also after Ctrl-C at the approval question; the run prints the commands that decide
it: `reins runs approve|deny agent.toml RUN`, then `reins runs resume agent.toml RUN`, or
`reins ui agent.toml`), 4 a budget, the turn limit or the loop breaker stopped the run,
130 interrupted. docs/CLI.md lists them with the --json events.";

#[derive(Subcommand)]
enum Command {
    /// Validate an agent file; every mistake is shown at its line.
    Check {
        /// The agent file.
        agent: PathBuf,
    },
    /// Run an agent on a prompt, streaming the answer.
    Run {
        /// The agent file.
        agent: PathBuf,
        /// What to ask (default: the file's `default_prompt`).
        prompt: Option<String>,
        /// One JSON event per line on stdout.
        #[arg(long)]
        json: bool,
        /// Run a `provider = "local"` agent on this GGUF chat model instead of the file's.
        #[arg(long, value_name = "GGUF")]
        model: Option<PathBuf>,
    },
    /// A conversation in the terminal; every message is a run kept in the store.
    Chat {
        /// The agent file.
        agent: PathBuf,
        /// Continue the conversation of this run (its id, or its start when no other
        /// run's id starts so).
        #[arg(long)]
        resume: Option<String>,
        /// Run a `provider = "local"` agent on this GGUF chat model instead of the file's.
        #[arg(long, value_name = "GGUF")]
        model: Option<PathBuf>,
    },
    /// The runs in an agent's store.
    Runs {
        #[command(subcommand)]
        command: RunsCommand,
    },
    /// Run the agent's Restate worker (its store is `[store] restate`) until Ctrl-C or
    /// SIGTERM.
    Serve {
        /// The agent file.
        agent: PathBuf,
        /// The address the worker listens on (Restate's deployment endpoint): an address or
        /// a host name, with its port. Anything but loopback (a name counts as loopback only
        /// when every address it resolves to is) requires the file's
        /// `[store] restate_identity_keys` or `--unverified-callers`.
        #[arg(long, default_value = "127.0.0.1:9080", value_parser = listen_address::parse)]
        listen: String,
        /// Off loopback, serve without `restate_identity_keys`: every caller that reaches the
        /// port can make the worker run the agent's tools, so only where nothing but the
        /// Restate server can reach it (a private network).
        #[arg(long)]
        unverified_callers: bool,
        /// Register the deployment with this Restate admin API (e.g. http://127.0.0.1:9070)
        /// once the worker listens, with the token of `[store] restate_admin_token_env` (else
        /// `restate_token_env`) if the file names one.
        #[arg(long, value_name = "ADMIN_URL")]
        register: Option<String>,
        /// The URL Restate reaches the worker at, when it is not `http://` followed by the
        /// `--listen` address (behind a proxy, or listening on 0.0.0.0).
        #[arg(long, value_name = "URL", requires = "register")]
        deployment_url: Option<String>,
    },
    /// The web inbox: runs, timelines and approvals in a browser.
    Ui {
        /// The agent file.
        agent: PathBuf,
        /// The address to listen on: an address or a host name, with its port
        /// (`localhost:8080`). Anything but loopback (a name counts as loopback only when
        /// every address it resolves to is) requires `--token`, of 16 characters or more.
        #[arg(long, default_value = "127.0.0.1:7878", value_parser = listen_address::parse)]
        bind: String,
        /// A token every request must carry (`?token=` once, then a cookie). Without it
        /// (and without `--no-token`) the inbox makes one and prints the address to open
        /// with it.
        #[arg(long, env = keys::UI_TOKEN_ENV, hide_env_values = true)]
        token: Option<String>,
        /// Ask no token, on a loopback address only: then any process on this machine,
        /// a tool the agent runs among them, can open the inbox and approve calls.
        #[arg(long, conflicts_with = "token")]
        no_token: bool,
    },
}

fn main() -> ExitCode {
    // A shell tool's supervisor is this executable too: it starts no runtime.
    if let Some(code) = tool_supervisor::supervise_if_asked() {
        return code;
    }
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(cli_main()),
        Err(error) => {
            eprintln!("reins: cannot start: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn cli_main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().collect();
    if let Some(message) = usage::misread(&args) {
        eprintln!("reins: {message}");
        return ExitCode::from(EXIT_INVALID);
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(error) => return early::usage_error(&error, &args),
    };
    let export = telemetry::start_logging();
    let code = match cli.command {
        None => demo::main(cli.demo).await,
        Some(command) => command_main(command).await,
    };
    if let Some(otel) = export {
        let timeout =
            telemetry::export_wait(std::env::var("OTEL_EXPORTER_OTLP_TIMEOUT").ok().as_deref());
        // The OTLP exporter blocks while it flushes: off the async runtime.
        match tokio::task::spawn_blocking(move || otel.shutdown_within(timeout)).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => eprintln!("reins: warning: {error}"),
            Err(error) => eprintln!("reins: warning: exporting the trace failed: {error}"),
        }
    }
    code
}

/// Reads and checks an agent file, printing every mistake.
pub(crate) fn load(path: &Path, needs: Needs) -> Result<config::LoadedAgent, ExitCode> {
    early::Early::text().load(path, needs)
}

/// Reads and checks an agent file for `command`, which runs the agent on the run records of
/// its embedded store (`chat`, `ui`): an agent on the Restate store is refused first, before
/// the variables only a model call needs are looked for (on Restate the worker calls the
/// model, and setting them would not help).
fn load_for_records(path: &Path, command: &str) -> Result<config::LoadedAgent, ExitCode> {
    let loaded = early::Early::text().load_for(path, run_command::needs)?;
    if let Some(error) = restate::unsupported(&loaded, command) {
        return Err(fail(error));
    }
    Ok(loaded)
}

/// `--model`: the local model's GGUF file, replacing the agent file's `path` (a relative
/// `--model` is relative to the current directory, as a command-line path is); else why
/// not (a usage mistake, exit 2).
fn with_model(
    mut loaded: config::LoadedAgent,
    model: Option<PathBuf>,
) -> Result<config::LoadedAgent, String> {
    let Some(model) = model else {
        return Ok(loaded);
    };
    let config = loaded.file.model.get_mut();
    if config.provider.get_ref() != "local" {
        return Err(format!(
            "--model takes a GGUF file for `provider = \"local\"`; {} uses `{}`",
            loaded.path.display(),
            config.provider.get_ref()
        ));
    }
    let model = std::path::absolute(&model).unwrap_or(model);
    if model.is_dir() {
        return Err(format!(
            "--model {} is a directory: name the .gguf file inside it",
            model.display()
        ));
    }
    if !model.is_file() {
        return Err(format!("--model {}: no such file", model.display()));
    }
    config.path = Some(toml::Spanned::new(
        0..0,
        model.to_string_lossy().into_owned(),
    ));
    Ok(loaded)
}

/// Says why the command failed (exit 1); the message may quote a server or a model, so
/// control sequences are shown as text.
pub(crate) fn fail(message: impl std::fmt::Display) -> ExitCode {
    early::Early::text().fail(message, ExitCode::FAILURE)
}

async fn command_main(command: Command) -> ExitCode {
    match command {
        Command::Check { agent } => {
            match early::Early::text().load_warned(&agent, Needs::Everything) {
                Ok((loaded, warnings)) => {
                    // A warning fails nothing, but "ok" alone under one reads as if it were
                    // nothing: a run then fails where it warned (a program not found).
                    let warned = match warnings {
                        0 => String::new(),
                        1 => ", with the warning above".to_owned(),
                        n => format!(", with the {n} warnings above"),
                    };
                    outln!(
                        "{}: ok{warned} (agent `{}`)",
                        agent.display(),
                        loaded.name()
                    );
                    ExitCode::SUCCESS
                }
                Err(code) => code,
            }
        }
        Command::Run {
            agent,
            prompt,
            json,
            model,
        } => run_command::run_main(&agent, prompt, json, model).await,
        Command::Runs { command } => runs_main(command).await,
        Command::Serve {
            agent,
            listen,
            unverified_callers,
            register,
            deployment_url,
        } => {
            // Before anything that can take time (MCP servers, registering): Ctrl-C or SIGTERM
            // from then on stops the worker cleanly (exit 0), never the default way.
            let stop = interrupt::StopSignal::listen();
            // The worker never calls the ingress: only `--register`'s admin API wants a token.
            let needs = Needs::Worker {
                register: register.is_some(),
            };
            let loaded = match load(&agent, needs) {
                Ok(loaded) => loaded,
                Err(code) => return code,
            };
            let options = restate::ServeOptions {
                listen,
                unverified_callers,
                register,
                deployment: deployment_url,
            };
            match restate::serve(&loaded, options, stop).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => error.report(),
            }
        }
        Command::Chat {
            agent,
            resume,
            model,
        } => {
            let loaded = match load_for_records(&agent, "chat") {
                Ok(loaded) => loaded,
                Err(code) => return code,
            };
            let loaded = match with_model(loaded, model) {
                Ok(loaded) => loaded,
                Err(error) => return early::Early::text().invalid(error),
            };
            let store = match store::open(&loaded).await {
                Ok(store) => store,
                Err(error) => return fail(error),
            };
            let name = loaded.name();
            let resumed = match resume {
                Some(run) => match chat::resumed(&store, &name, &loaded.path, &run).await {
                    Ok(state) => Some(state),
                    Err(code) => return code,
                },
                None => None,
            };
            let assembled =
                match assemble::assemble(&loaded, approve::CliDecider::detect(&loaded)).await {
                    Ok(assembled) => assembled,
                    Err(error) => return error.report(),
                };
            chat::chat(&assembled, &name, &loaded.path, store, resumed)
                .await
                .exit_code()
        }
        Command::Ui {
            agent,
            bind,
            token,
            no_token,
        } => {
            // Before anything that can take time (opening the store, listening): a SIGTERM
            // from then on stops the inbox cleanly (exit 0), never the default way.
            let stop = interrupt::StopSignal::listen();
            // Without the model's key the inbox still records decisions (ui::without_key).
            let (loaded, resuming) = match ui::load_agent(&agent) {
                Ok(loaded) => loaded,
                Err(code) => return code,
            };
            let bind = match listen_address::ListenAddress::resolve(&bind).await {
                Ok(bind) => bind,
                Err(error) => return fail(error),
            };
            // A usage mistake (exit 2), refused before anything is opened; `serve` checks it
            // again for its other callers.
            let token = match ui::choose_token(&bind, token, no_token) {
                Ok(token) => token,
                Err(ui::NoToken::Refused(error)) => {
                    eprintln!("reins: {error}");
                    return ExitCode::from(run::EXIT_INVALID);
                }
                Err(ui::NoToken::Unmade(error)) => return fail(error),
            };
            match ui::serve(loaded, resuming, bind, token, stop).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => fail(error),
            }
        }
    }
}
