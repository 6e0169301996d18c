//! `reins runs approve|edit|deny|skip|supply`: the call they decide and who decides it, and the
//! decision recorded in the agent's store or sent to Restate's ingress.

use crate::in_doubt::Answer;
use crate::{decide, decide_commands, restate, run_in_progress};
use std::path::PathBuf;

/// The call an `approve`, `edit`, `deny`, `skip` or `supply` decides, and who decides it.
#[derive(clap::Args, Debug)]
pub struct Approval {
    /// The agent file.
    pub agent: PathBuf,
    /// The run: its id, or its start when no other run's id starts so (`run-` may
    /// be left out).
    pub run: String,
    /// The call (default: the run's only waiting call).
    call: Option<String>,
    /// Who decides (default: your user name).
    #[arg(long = "as", value_name = "NAME")]
    who: Option<String>,
    /// Why, kept in the run's decision trail.
    #[arg(long)]
    reason: Option<String>,
    /// Replace the call's decision if it has one (until the run resumes).
    #[arg(long)]
    change: bool,
}

impl Approval {
    /// Who decides, why, and whether the decision replaces an earlier one.
    fn who(&self) -> decide::Who {
        decide::Who {
            name: self.who.clone(),
            reason: self.reason.clone(),
            decided: decide::Decided::from_flag(self.change),
        }
    }

    /// `--as` and `--reason` go into an embedded store's decision trail; Restate keeps none, and
    /// dropping them silently would lose what the person meant to record. `--change` replaces a
    /// decision the run has not acted on yet; on Restate the run acts on it at once.
    fn no_trail(&self) -> Result<(), String> {
        if self.who.is_some() || self.reason.is_some() {
            return Err(
                "`--as` and `--reason` are kept in an embedded store's decision trail; the Restate \
                 store keeps none: decide without them"
                    .to_owned(),
            );
        }
        if self.change {
            return Err(
                "`--change` replaces a decision a run has not acted on yet; on the Restate store \
                 the run acts on a decision as soon as it is made: decide without it"
                    .to_owned(),
            );
        }
        Ok(())
    }
}

/// `edit`'s arguments: those given, or the call's own opened in $EDITOR.
pub fn edited(args: Option<String>) -> decide::ArgsChange {
    let in_editor = args.is_none();
    decide::ArgsChange::from_flags(args, in_editor)
}

/// Approves a waiting call in the agent's store, with its arguments changed as asked.
pub async fn approve_in_store(
    store: &reins::store::BoxedStore,
    loaded: &crate::config::LoadedAgent,
    target: Approval,
    change: decide::ArgsChange,
) -> Result<(), String> {
    let who = target.who();
    let continues = decide_commands::resume_command(&target.agent, &target.run);
    let call = (target.run.as_str(), target.call);
    if let Err(refused) = decide::approve(store, loaded, call, change, &who, &continues).await {
        return Err(run_in_progress::explained(store, &target.agent, &target.run, refused).await);
    }
    eprintln!(
        "{}",
        decide::recorded(store, &target.run, "approved", &continues).await
    );
    Ok(())
}

/// Approves a waiting call of a run on Restate (which keeps no decision trail: `--as` and
/// `--reason` are refused rather than dropped).
pub async fn approve_on_restate(
    loaded: &crate::config::LoadedAgent,
    url: &str,
    target: Approval,
    change: decide::ArgsChange,
) -> Result<(), String> {
    target.no_trail()?;
    let verdict = restate::Verdict::Approve(change);
    restate::decide(loaded, url, &target.run, target.call, verdict)
        .await
        .map(|()| eprintln!("reins: approved; the run continues on its worker"))
}

/// Denies a waiting call in the agent's store; the model is told `message`.
pub async fn deny_in_store(
    store: &reins::store::BoxedStore,
    target: Approval,
    message: Option<String>,
) -> Result<(), String> {
    let who = target.who();
    let continues = decide_commands::resume_command(&target.agent, &target.run);
    let call = target.call.clone();
    if let Err(refused) = decide::deny(store, &target.run, call, message, &who, &continues).await {
        return Err(run_in_progress::explained(store, &target.agent, &target.run, refused).await);
    }
    eprintln!(
        "{}",
        decide::recorded(store, &target.run, "denied", &continues).await
    );
    Ok(())
}

/// Denies a waiting call of a run on Restate (no decision trail there: `--as` and
/// `--reason` are refused rather than dropped).
pub async fn deny_on_restate(
    loaded: &crate::config::LoadedAgent,
    url: &str,
    target: Approval,
    message: Option<String>,
) -> Result<(), String> {
    target.no_trail()?;
    let verdict = restate::Verdict::Deny(message);
    restate::decide(loaded, url, &target.run, target.call, verdict)
        .await
        .map(|()| eprintln!("reins: denied; the run continues on its worker"))
}

/// Answers a call in doubt in the agent's store without running it again.
pub async fn answer_in_store(
    store: &reins::store::BoxedStore,
    target: Approval,
    answer: Answer,
) -> Result<(), String> {
    let who = target.who();
    let continues = decide_commands::resume_command(&target.agent, &target.run);
    let call = (target.run.as_str(), target.call);
    if let Err(refused) = decide::answer_in_doubt(store, call, &answer, &who, &continues).await {
        return Err(run_in_progress::explained(store, &target.agent, &target.run, refused).await);
    }
    eprintln!(
        "{}",
        decide::recorded(store, &target.run, answer.done(), &continues).await
    );
    Ok(())
}

/// Answers a call in doubt of a run on Restate without running it again (no decision trail
/// there: `--as` and `--reason` are refused rather than dropped).
pub async fn answer_on_restate(
    loaded: &crate::config::LoadedAgent,
    url: &str,
    target: Approval,
    answer: Answer,
) -> Result<(), String> {
    target.no_trail()?;
    let done = answer.done();
    restate::decide(
        loaded,
        url,
        &target.run,
        target.call,
        restate::Verdict::InDoubt(answer),
    )
    .await
    .map(|()| eprintln!("reins: {done}; the run continues on its worker"))
}
