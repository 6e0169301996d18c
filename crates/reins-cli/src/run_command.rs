//! `reins run`: a new run of the agent on a prompt, on its embedded store or on Restate.
//! Whatever stops it before the run starts is said through [`Early`] (with `--json`, as the
//! `error` event); once started, the run's own events say how it goes and ends (`run`).

use crate::config::LoadedAgent;
use crate::config::check::Needs;
use crate::early::Early;
use crate::lease_keeper::{self, LeaseKeeper};
use crate::run::{self, Output};
use crate::{approve, assemble, interrupt, restate, store, with_model};
use std::path::Path;
use std::process::ExitCode;

/// `reins run AGENT [PROMPT] [--json] [--model GGUF]`.
pub async fn run_main(
    agent: &Path,
    prompt: Option<String>,
    json: bool,
    model: Option<std::path::PathBuf>,
) -> ExitCode {
    let early = Early::new(json);
    // Without the variables only a model call needs on Restate: the worker calls it.
    let loaded = match early.load_for(agent, needs) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    if let Some(url) = restate::ingress(&loaded) {
        if model.is_some() {
            return early.fail(
                "--model is not available on the Restate store: the worker (`reins serve`) \
                 runs the agent's model",
                ExitCode::FAILURE,
            );
        }
        let prompt = match the_prompt(prompt, &loaded) {
            Ok(prompt) => prompt,
            Err(error) => return early.invalid(error),
        };
        let run_id = run::new_run_id();
        // From here on Ctrl-C stops this process, never the run on Restate: said, not
        // left to end the process the default way.
        let stop = interrupt::StopSignal::listen();
        let starting = restate::start(&loaded, url, &run_id, &prompt, json);
        let Some(started) = stop.unless_stopped(starting).await else {
            return restate::interrupted(&loaded, url, &run_id, json, false).exit_code();
        };
        if let Err(error) = started {
            return early.fail(error, ExitCode::FAILURE);
        }
        return restate::follow(&loaded, url, &run_id, json, &stop)
            .await
            .exit_code();
    }
    let loaded = match with_model(loaded, model) {
        Ok(loaded) => loaded,
        Err(error) => return early.invalid(error),
    };
    match the_prompt(prompt, &loaded) {
        Ok(prompt) => run_new(&loaded, &prompt, early, json).await,
        Err(error) => early.invalid(error),
    }
}

/// What `reins run` (and `runs resume`) needs of `agent`'s variables: a run on Restate is
/// run by the worker, which calls the model; a run on the embedded store runs here.
pub fn needs(agent: &LoadedAgent) -> Needs {
    match restate::ingress(agent) {
        Some(_) => Needs::Store,
        None => Needs::Running,
    }
}

/// The prompt given, else the file's `default_prompt`; else the usage mistake.
fn the_prompt(prompt: Option<String>, loaded: &LoadedAgent) -> Result<String, &'static str> {
    prompt
        .or_else(|| loaded.file.default_prompt.clone())
        .ok_or("give a prompt (the agent file has no `default_prompt`)")
}

/// A new run on the agent's embedded store.
async fn run_new(loaded: &LoadedAgent, prompt: &str, early: Early, json: bool) -> ExitCode {
    let store = match store::open(loaded).await {
        Ok(store) => store,
        Err(error) => return early.fail(error, ExitCode::FAILURE),
    };
    let assembled = match assemble::assemble(loaded, approve::CliDecider::detect(loaded)).await {
        Ok(assembled) => assembled,
        Err(error) => return early.fail(&error, error.exit_code()),
    };
    let run_id = run::new_run_id();
    let mut output = Output::new(json).agent_file(&loaded.path);
    output.started(&run_id, &loaded.name(), &assembled.model_label);
    let keeper = LeaseKeeper::new(store);
    assembled.decisions.keep_in(&keeper);
    let stream = assembled
        .agent
        .prompt(prompt)
        .run_id(&run_id)
        .max_turns(assembled.max_turns)
        .durable(keeper.clone())
        .worker(lease_keeper::worker_name("run"))
        .stream();
    interrupt::drive(stream, &mut output, &keeper, &run_id)
        .await
        .exit_code()
}
