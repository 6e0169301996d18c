//! The commands a person pastes to decide the calls a run waits on and go on with it, as a
//! suspended run and `reins runs show` print them: the agent file as it was given, the run's
//! id and, when the run waits on more than one call, the call's, each one shell word. Each
//! command is on a line of its own, with nothing else on it, so a line copied whole runs as
//! it is (what to add, such as a message for the model, is said on the lines between).

/// A call a run waits on, as the commands name it.
pub struct Waiting<'a> {
    /// Its id in the run (`t1c0`).
    pub call: &'a str,
    /// Its tool.
    pub tool: &'a str,
    /// It started before the run stopped and recorded no result: it may have had its effect.
    pub in_doubt: bool,
}

/// How a run goes on once its calls are decided.
#[derive(Clone, Copy)]
pub enum Then {
    /// `reins runs resume` continues it here (an embedded store).
    Resume,
    /// It continues on its worker by itself (the Restate store); `runs resume` follows it.
    OnItsWorker,
}

/// The commands that decide `waiting` (the calls `run` of the agent file `agent` waits on,
/// `agent` already one shell word, see [`crate::shell_word::path`]), then how the run goes
/// on, and where else it can be decided: lines that follow a line saying the run waits.
pub fn lines(agent: &str, run: &str, waiting: &[Waiting<'_>], then: Then) -> Vec<String> {
    let run = crate::shell_word::quoted(run);
    let mut lines = Vec::new();
    // With one call waiting a decision needs no call id: it is the run's only one.
    let named = waiting.len() > 1;
    for call in waiting {
        let target = match named {
            true => format!("{agent} {run} {}", crate::shell_word::quoted(call.call)),
            false => format!("{agent} {run}"),
        };
        let tool = reins::text::printable(call.tool);
        match call.in_doubt {
            false => {
                lines.push(format!(
                    "call {} ({tool}): approve or deny it (`--message TEXT` after deny tells \
                     the model why):",
                    call.call
                ));
                lines.push(format!("  reins runs approve {target}"));
                lines.push(format!("  reins runs deny {target}"));
            }
            true => {
                lines.push(format!(
                    "call {} ({tool}), in doubt: it may have had its effect; run it again, skip \
                     it (`--message TEXT` tells the model why), or give what it returned in \
                     place of TEXT:",
                    call.call
                ));
                lines.push(format!("  reins runs approve {target}"));
                lines.push(format!("  reins runs skip {target}"));
                lines.push(format!("  reins runs supply {target} --result TEXT"));
            }
        }
    }
    match then {
        Then::Resume => {
            lines.push("then continue the run:".to_owned());
            lines.push(format!("  reins runs resume {agent} {run}"));
        }
        Then::OnItsWorker => lines.push(format!(
            "then the run continues on its worker (`reins runs resume {agent} {run}` follows it)"
        )),
    }
    lines.push(format!("or decide in the web inbox: `reins ui {agent}`"));
    lines
}

/// A waiting call's stored `reason` as shown above the commands [`lines`] prints: without
/// where to decide it (`waiting for a person: `reins runs approve` or `reins ui``, on either
/// store), which they say in full; `None` when nothing else is left. The stored reason stays
/// as it is: `--json`, the inbox and runs stored before read it.
pub fn reason_above_commands(reason: &str) -> Option<&str> {
    let restate = (reason == crate::assemble::RESTATE_SUSPEND_REASON).then_some("");
    let why = crate::approve::policy_reason(reason)
        .or(restate)
        .unwrap_or(reason);
    Some(why).filter(|why| !why.trim().is_empty())
}

/// Where the calls of `run` are shown in full, for the lines printed where they are not.
pub fn shown_in_full(agent: &str, run: &str) -> String {
    format!(
        "the calls in full: `reins runs show {agent} {}`",
        crate::shell_word::quoted(run)
    )
}

/// How a run whose calls are all decided goes on, as `reins runs approve|deny|edit` and
/// `runs show` say it.
pub fn resume_command(agent_file: &std::path::Path, run_id: &str) -> String {
    format!(
        "{} continues the run",
        resume_invocation(agent_file, run_id)
    )
}

/// The command that resumes `run_id` of `agent_file`, quoted for a shell, between backticks.
pub fn resume_invocation(agent_file: &std::path::Path, run_id: &str) -> String {
    format!("`{}`", resume_line(agent_file, run_id))
}

/// The command that resumes `run_id` of `agent_file`, quoted for a shell, as a person types it.
pub fn resume_line(agent_file: &std::path::Path, run_id: &str) -> String {
    format!(
        "reins runs resume {} {}",
        crate::shell_word::path(agent_file),
        crate::shell_word::quoted(run_id)
    )
}

#[cfg(test)]
mod tests {
    use super::{Then, Waiting, lines, reason_above_commands};
    use crate::approve::suspend_reason;
    use crate::assemble::RESTATE_SUSPEND_REASON;

    #[test]
    fn a_reason_above_the_commands_leaves_out_where_to_decide() {
        assert_eq!(reason_above_commands(&suspend_reason(None)), None);
        assert_eq!(
            reason_above_commands(&suspend_reason(Some("notes need your approval"))),
            Some("notes need your approval")
        );
        assert_eq!(reason_above_commands(RESTATE_SUSPEND_REASON), None);
        assert_eq!(
            reason_above_commands("stopped while it ran"),
            Some("stopped while it ran")
        );
    }

    fn call<'a>(call: &'a str, in_doubt: bool) -> Waiting<'a> {
        Waiting {
            call,
            tool: "save_note",
            in_doubt,
        }
    }

    #[test]
    fn one_waiting_call_is_decided_without_naming_it() {
        let shown = lines(
            "'my notes.toml'",
            "run-1",
            &[call("t1c0", false)],
            Then::Resume,
        );
        assert!(shown.contains(&"  reins runs approve 'my notes.toml' run-1".to_owned()));
        assert!(shown.contains(&"  reins runs deny 'my notes.toml' run-1".to_owned()));
        assert!(shown.contains(&"  reins runs resume 'my notes.toml' run-1".to_owned()));
    }

    #[test]
    fn several_waiting_calls_are_each_named_and_one_in_doubt_can_be_skipped() {
        let shown = lines(
            "a.toml",
            "run-1",
            &[call("t1c0", false), call("t1c1", true)],
            Then::OnItsWorker,
        );
        assert!(shown.contains(&"  reins runs deny a.toml run-1 t1c0".to_owned()));
        assert!(shown.contains(&"  reins runs approve a.toml run-1 t1c1".to_owned()));
        assert!(shown.contains(&"  reins runs skip a.toml run-1 t1c1".to_owned()));
        assert!(
            !shown
                .iter()
                .any(|line| line.contains("runs deny a.toml run-1 t1c1"))
        );
        assert!(
            !shown
                .iter()
                .any(|line| line == "  reins runs resume a.toml run-1")
        );
    }
}
