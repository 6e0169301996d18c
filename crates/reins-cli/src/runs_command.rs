//! `reins runs ...`: the runs of an agent's store, and decisions about their waiting calls.
//! On the Restate store, `show`, `approve`, `deny`, `skip`, `supply` and `resume` go through
//! its ingress; the others read an embedded store's records and say they are not available
//! there.

use crate::config::check::Needs;
use crate::early::Early;
use crate::in_doubt::Answer;
use crate::lease_keeper::{self, LeaseKeeper};
use crate::run::{Ending, Output};
use crate::runs_decide::{
    Approval, answer_in_store, answer_on_restate, approve_in_store, approve_on_restate,
    deny_in_store, deny_on_restate, edited,
};
use crate::{approve, assemble, decide, fail, fork, interrupt, restate, runs, store};
use clap::Subcommand;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand, Debug)]
pub enum RunsCommand {
    /// List the runs.
    List {
        /// The agent file.
        agent: PathBuf,
        /// One JSON object per run.
        #[arg(long)]
        json: bool,
    },
    /// A run's timeline and the calls waiting for a decision.
    Show {
        /// The agent file.
        agent: PathBuf,
        /// The run: its id, or its start when no other run's id starts so (`run-` may
        /// be left out).
        run: String,
        /// As one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Approve a waiting call (then `runs resume`).
    Approve {
        #[command(flatten)]
        target: Approval,
        /// Run it with these arguments (a JSON object) instead.
        #[arg(long, conflicts_with = "edit")]
        args: Option<String>,
        /// Edit the arguments in $EDITOR first.
        #[arg(long)]
        edit: bool,
    },
    /// Edit a waiting call's arguments in $EDITOR (or give them with `--args`), then approve
    /// the call with them (then `runs resume`). The same as `approve --edit`.
    Edit {
        #[command(flatten)]
        target: Approval,
        /// The new arguments (a JSON object) instead of opening $EDITOR.
        #[arg(long)]
        args: Option<String>,
    },
    /// Deny a waiting call; the model is told `--message`.
    Deny {
        #[command(flatten)]
        target: Approval,
        /// What the model is told (`--reason` stays in the run's decision trail).
        #[arg(long)]
        message: Option<String>,
    },
    /// Answer a call in doubt (it started before the run stopped and recorded no result, so
    /// it may have had its effect) without running it again; the model is told `--message`
    /// (then `runs resume`).
    Skip {
        #[command(flatten)]
        target: Approval,
        /// What the model is told (after "skipped by the user").
        #[arg(long)]
        message: Option<String>,
    },
    /// Answer a call in doubt with what it returned (you checked: it ran), without running it
    /// again; the model reads `--result` as the tool's output (then `runs resume`).
    Supply {
        #[command(flatten)]
        target: Approval,
        /// The call's result, text or JSON, as the model reads it.
        #[arg(long)]
        result: String,
    },
    /// The run's checkpoints (one per write of its state), oldest first.
    Checkpoints {
        /// The agent file.
        agent: PathBuf,
        /// The run: its id, or its start when no other run's id starts so (`run-` may
        /// be left out).
        run: String,
        /// One JSON object per checkpoint.
        #[arg(long)]
        json: bool,
    },
    /// A new run from one of the run's checkpoints (the run itself is kept); prints its id.
    Fork {
        /// The agent file.
        agent: PathBuf,
        /// The run: its id, or its start when no other run's id starts so (`run-` may
        /// be left out).
        run: String,
        /// The checkpoint's version (default: the latest; see `runs checkpoints`).
        #[arg(long, value_name = "VERSION")]
        at: Option<i64>,
        /// The waiting call whose arguments change (default: the checkpoint's only one).
        #[arg(long)]
        call: Option<String>,
        /// The waiting call's new arguments (a JSON object).
        #[arg(long, conflicts_with = "edit")]
        args: Option<String>,
        /// Edit the waiting call's arguments in $EDITOR.
        #[arg(long)]
        edit: bool,
    },
    /// Continue a suspended run with the decisions recorded for it (on the Restate store, the
    /// run continues by itself once decided: follow it until it ends or waits again).
    Resume {
        /// The agent file.
        agent: PathBuf,
        /// The run: its id, or its start when no other run's id starts so (`run-` may
        /// be left out).
        run: String,
        /// One JSON event per line on stdout.
        #[arg(long)]
        json: bool,
    },
}

impl RunsCommand {
    /// The run the command names (`None` for `list`).
    fn run_mut(&mut self) -> Option<&mut String> {
        match self {
            RunsCommand::List { .. } => None,
            RunsCommand::Approve { target, .. }
            | RunsCommand::Edit { target, .. }
            | RunsCommand::Skip { target, .. }
            | RunsCommand::Supply { target, .. }
            | RunsCommand::Deny { target, .. } => Some(&mut target.run),
            RunsCommand::Show { run, .. }
            | RunsCommand::Checkpoints { run, .. }
            | RunsCommand::Fork { run, .. }
            | RunsCommand::Resume { run, .. } => Some(run),
        }
    }
}

pub async fn runs_main(command: RunsCommand) -> ExitCode {
    let agent = match &command {
        RunsCommand::List { agent, .. }
        | RunsCommand::Show { agent, .. }
        | RunsCommand::Approve {
            target: Approval { agent, .. },
            ..
        }
        | RunsCommand::Edit {
            target: Approval { agent, .. },
            ..
        }
        | RunsCommand::Skip {
            target: Approval { agent, .. },
            ..
        }
        | RunsCommand::Supply {
            target: Approval { agent, .. },
            ..
        }
        | RunsCommand::Deny {
            target: Approval { agent, .. },
            ..
        }
        | RunsCommand::Checkpoints { agent, .. }
        | RunsCommand::Fork { agent, .. }
        | RunsCommand::Resume { agent, .. } => agent.clone(),
    };
    // `resume --json` says a failure before the run resumes as its `error` event too.
    let early = Early::new(matches!(command, RunsCommand::Resume { json: true, .. }));
    // `resume` runs the agent here, unless on Restate (the worker runs the model there): the
    // variables a run needs must be set. The file is read once.
    let resumes = matches!(command, RunsCommand::Resume { .. });
    let needs = |agent: &_| match resumes {
        true => crate::run_command::needs(agent),
        false => Needs::Store,
    };
    let loaded = match early.load_for(&agent, needs) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    if let Some(url) = restate::ingress(&loaded) {
        let url = url.to_owned();
        return on_restate(&loaded, &url, command).await;
    }
    // The commands that only read runs work for a user who may only read the store.
    let reads_only = matches!(
        command,
        RunsCommand::List { .. } | RunsCommand::Show { .. } | RunsCommand::Checkpoints { .. }
    );
    let opened = if reads_only {
        store::open_for_reading(&loaded).await
    } else {
        store::open(&loaded).await
    };
    let store = match opened {
        Ok(store) => store,
        Err(error) => return early.fail(error, ExitCode::FAILURE),
    };
    // A run is named by its id or the start of it: every command below gets the whole id.
    let mut command = command;
    if let Some(run) = command.run_mut() {
        match crate::run_id::resolve(&store, run, &loaded.path).await {
            Ok(id) => *run = id,
            Err(error) => return early.fail(error, ExitCode::FAILURE),
        }
    }
    let own_model = assemble::model_label(loaded.file.model.get_ref());
    // A decision is checked against this file's tools and schemas, and the resume command it
    // prints names this file; so is a fork's: a run of another agent (sharing the store) is
    // refused first.
    let changes = match &command {
        RunsCommand::Approve {
            target: Approval { run, .. },
            ..
        }
        | RunsCommand::Edit {
            target: Approval { run, .. },
            ..
        }
        | RunsCommand::Skip {
            target: Approval { run, .. },
            ..
        }
        | RunsCommand::Supply {
            target: Approval { run, .. },
            ..
        }
        | RunsCommand::Deny {
            target: Approval { run, .. },
            ..
        } => Some((run, "decide")),
        RunsCommand::Fork { run, .. } => Some((run, "fork")),
        _ => None,
    };
    let name = loaded.name();
    if let Some((run, action)) = changes
        && let Err(code) = own_run(&store, &name, &loaded.path, run, action, early).await
    {
        return code;
    }
    let result = match command {
        RunsCommand::List { agent, json } => runs::list(&store, &agent, json, &own_model).await,
        RunsCommand::Show {
            agent, run, json, ..
        } => runs::show(&store, &agent, &run, json, &own_model).await,
        RunsCommand::Approve { target, args, edit } => {
            let change = decide::ArgsChange::from_flags(args, edit);
            approve_in_store(&store, &loaded, target, change).await
        }
        RunsCommand::Edit { target, args } => {
            approve_in_store(&store, &loaded, target, edited(args)).await
        }
        RunsCommand::Skip { target, message } => {
            answer_in_store(&store, target, Answer::Skip(message)).await
        }
        RunsCommand::Supply { target, result } => {
            answer_in_store(&store, target, Answer::Supply(result)).await
        }
        RunsCommand::Deny { target, message } => deny_in_store(&store, target, message).await,
        RunsCommand::Checkpoints { run, json, .. } => fork::checkpoints(&store, &run, json).await,
        RunsCommand::Fork {
            run,
            at,
            call,
            args,
            edit,
            ..
        } => {
            let change = decide::ArgsChange::from_flags(args, edit);
            let edit = fork::ForkEdit { call, change };
            fork::fork_run(&store, &loaded, &run, at, edit)
                .await
                .map(|state| {
                    outln!("{}", state.run_id);
                    eprintln!(
                        "reins: forked {run} into {} ({}); continue it with `reins runs resume`",
                        state.run_id,
                        runs::status_name(state.status)
                    );
                })
        }
        RunsCommand::Resume { run, json, .. } => {
            if let Err(code) = own_run(&store, &name, &loaded.path, &run, "resume", early).await {
                return code;
            }
            let assembled =
                match assemble::assemble(&loaded, approve::CliDecider::detect(&loaded)).await {
                    Ok(assembled) => assembled,
                    Err(error) => return early.fail(&error, error.exit_code()),
                };
            let mut output = Output::new(json).agent_file(&loaded.path);
            output.started(&run, &loaded.name(), &assembled.model_label);
            let keeper = LeaseKeeper::new(store);
            assembled.decisions.keep_in(&keeper);
            let stream = assembled
                .agent
                .resume_stored(keeper.clone(), &run)
                .worker(lease_keeper::worker_name("runs resume"))
                .max_turns(assembled.max_turns)
                .stream();
            let ending: Ending = interrupt::drive(stream, &mut output, &keeper, &run).await;
            return ending.exit_code();
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(error),
    }
}

/// The state of `run`, unless it is a run of another agent than `agent_name` (of
/// `agent_file`): that is refused as what `action` would do with it (`resume`, `decide`,
/// `fork`, `chat on from`). Agents beside each other share the default store
/// (`.reins/runs.sqlite`): resumed, another agent's run would go on with this file's model
/// and tools, and fail on a waiting call to a tool this agent does not have; decided or
/// forked with new arguments, those would be checked against this file's schemas, and the
/// resume command printed would be refused (a fork is the other agent's run too); a
/// conversation would go on with this file's model, tools and preamble. Exits 2, as the web
/// inbox refuses it (`ui::ownership`); a run that is not stored, 1. Said through `early`.
pub(crate) async fn own_run(
    store: &reins::store::BoxedStore,
    agent_name: &str,
    agent_file: &std::path::Path,
    run: &str,
    action: &str,
    early: Early,
) -> Result<reins::agent::RunState, ExitCode> {
    use reins::store::RunStore;
    let state = store
        .load(run)
        .await
        .map_err(|error| early.fail(error, ExitCode::FAILURE))?;
    match &state.agent_name {
        Some(owner) if owner != agent_name => Err(early.invalid(format!(
            "`{run}` is a run of the agent `{owner}`, not `{agent_name}` ({}): {action} it with \
             the agent file of `{owner}`",
            agent_file.display()
        ))),
        _ => Ok(state),
    }
}

/// `reins runs ...` for an agent on the Restate store.
async fn on_restate(
    loaded: &crate::config::LoadedAgent,
    url: &str,
    command: RunsCommand,
) -> ExitCode {
    let result = match command {
        RunsCommand::Show { run, json, .. } => restate::show(loaded, url, &run, json).await,
        RunsCommand::Approve { target, args, edit } => {
            let change = decide::ArgsChange::from_flags(args, edit);
            approve_on_restate(loaded, url, target, change).await
        }
        RunsCommand::Edit { target, args } => {
            approve_on_restate(loaded, url, target, edited(args)).await
        }
        RunsCommand::Skip { target, message } => {
            answer_on_restate(loaded, url, target, Answer::Skip(message)).await
        }
        RunsCommand::Supply { target, result } => {
            answer_on_restate(loaded, url, target, Answer::Supply(result)).await
        }
        RunsCommand::Deny { target, message } => {
            deny_on_restate(loaded, url, target, message).await
        }
        RunsCommand::Resume { run, json, .. } => {
            // The run continues on its worker once decided: resuming is following it.
            let stop = interrupt::StopSignal::listen();
            return restate::follow(loaded, url, &run, json, &stop)
                .await
                .exit_code();
        }
        RunsCommand::List { .. } => Err(unsupported(loaded, "runs list")),
        RunsCommand::Checkpoints { .. } => Err(unsupported(loaded, "runs checkpoints")),
        RunsCommand::Fork { .. } => Err(unsupported(loaded, "runs fork")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(error),
    }
}

fn unsupported(loaded: &crate::config::LoadedAgent, command: &str) -> String {
    restate::unsupported(loaded, command).unwrap_or_default()
}
