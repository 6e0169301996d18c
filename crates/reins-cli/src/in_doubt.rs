//! `reins runs skip|supply`: answers to a call in doubt — one that started before its run
//! stopped and recorded no result, so its side effect may have happened — that do not run
//! its tool again. The same words on every store: the decision made, the word said once it
//! is recorded, and why a call that is not in doubt is refused (approve or deny it instead).

use reins::agent::ToolDecision;
use reins::store::PendingApproval;

/// What the model is told about a skipped call, before the person's message if any.
pub const SKIPPED_BY_THE_USER: &str = "skipped by the user";

/// How a person answers a call in doubt without running it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Not run again: the model reads this message (`--message`), the call's outcome a skip.
    Skip(Option<String>),
    /// Not run again: the call is known to have run and returned this (`--result`), which
    /// the model reads as the tool's output.
    Supply(String),
}

impl Answer {
    /// The decision recorded for the call.
    pub fn decision(&self) -> ToolDecision {
        match self {
            Answer::Skip(message) => ToolDecision::skip(skipping(message.as_deref())),
            Answer::Supply(result) => ToolDecision::supply_result(result.clone()),
        }
    }

    /// The decision recorded for `target`, which must be in doubt: a call that never started
    /// is refused ([`not_in_doubt`]) before the inbox asks the store, which refuses it too
    /// (`StoreError::NotInDoubt`, what `reins runs skip|supply` rely on).
    pub fn decision_for(&self, target: &PendingApproval) -> Result<ToolDecision, String> {
        match target.in_doubt {
            true => Ok(self.decision()),
            false => Err(not_in_doubt(&target.run_id, &target.internal_call_id)),
        }
    }

    /// The command a decision is recorded as made with (`ana via reins runs skip`).
    pub fn via(&self) -> &'static str {
        match self {
            Answer::Skip(_) => "reins runs skip",
            Answer::Supply(_) => "reins runs supply",
        }
    }

    /// What is said once it is recorded: `reins: skipped; ...`.
    pub fn done(&self) -> &'static str {
        match self {
            Answer::Skip(_) => "skipped",
            Answer::Supply(_) => "result supplied",
        }
    }
}

/// What the model is told about a skipped call: that a person skipped it, and their message.
pub fn skipping(message: Option<&str>) -> String {
    match message.map(str::trim).filter(|m| !m.is_empty()) {
        Some(message) => format!("{SKIPPED_BY_THE_USER}: {message}"),
        None => SKIPPED_BY_THE_USER.to_owned(),
    }
}

/// Why `call` of `run` is not answered by `skip|supply`: it never started, so nothing of it
/// may have happened, and approving or denying it says what to do.
pub fn not_in_doubt(run: &str, call: &str) -> String {
    format!(
        "call `{call}` of run `{run}` is not in doubt (it never started, so it had no effect): \
         `reins runs skip|supply` answer a call a stopped run may have run; approve or deny \
         this one (`reins runs approve|deny`)"
    )
}

/// How a call in doubt is answered, as `runs show` and a suspended run say it.
pub const HOW_TO_ANSWER: &str = "it may have had its effect: `reins runs approve` runs it \
     again, `reins runs skip --message TEXT` answers it without running it, `reins runs supply \
     --result TEXT` with what it returned";

#[cfg(test)]
mod tests {
    use super::{Answer, skipping};
    use reins::agent::ToolDecision;

    #[test]
    fn a_skip_tells_the_model_a_person_skipped_the_call() {
        assert_eq!(
            Answer::Skip(Some(" paid by hand ".to_owned())).decision(),
            ToolDecision::skip("skipped by the user: paid by hand")
        );
        assert_eq!(skipping(Some(" ")), "skipped by the user");
        assert_eq!(
            Answer::Supply("{\"id\": 7}".to_owned()).decision(),
            ToolDecision::supply_result("{\"id\": 7}")
        );
    }
}
