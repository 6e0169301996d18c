//! Who answers an approval rule's `ask`: a person at the terminal (approve, deny with a
//! message, or edit the arguments in `$EDITOR`), or — with no terminal — nobody now: the run
//! suspends and the call waits in the store for `reins runs approve` or the web inbox. Ctrl-C
//! at the question leaves the call so too, to someone else ([`crate::question_ctrl_c`]), and
//! the questions after it in the process are not asked: their calls wait as well.
//!
//! A decision made at the prompt is logged in the run's decision trail, by the user "via the
//! terminal" ([`crate::run_decisions`]).
//!
//! Fail closed: end of input, an answer that is not understood twice, or edited arguments
//! that are not a JSON object or do not fit the tool's schema deny the call; the policy's
//! timeout denies a call nobody answers (logged in the trail as the policy's denial).

use crate::config::LoadedAgent;
use crate::decided_by::decided_by;
use crate::edited_args::Schemas;
use crate::editor::Unedited;
use crate::question_ctrl_c::Asking;
use crate::run_decisions::RunDecisions;
use reins::hooks::approval::terminal::{Line, MAX_LINE_BYTES, read_answer_at_most};
use reins::hooks::approval::{ApprovalDecider, ApprovalRequest, DeciderFailure, Decision};
use reins::text::printable;
use serde_json::Value;
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The reason stored with a call that waits for a person, after the policy's own reason for
/// asking when it gives one ([`suspend_reason`]).
pub const SUSPEND_REASON: &str = "waiting for a person: `reins runs approve` or `reins ui`";

/// How a decision made at the prompt is recorded as made: `ana via the terminal`.
pub const TERMINAL: &str = "the terminal";

/// Between the policy's reason for asking and what it goes with: the rule in the prompt,
/// [`SUSPEND_REASON`] in a stored reason.
const AFTER_WHY: &str = " — ";

/// The reason stored with a call that waits for a person: why the policy asks (the approval
/// rule's `message`), if it says, then where the call is decided. Kept with the call, it is
/// what `runs show` and the inbox say about it, long after the terminal that saw it.
pub fn suspend_reason(why: Option<&str>) -> String {
    match why.map(str::trim).filter(|why| !why.is_empty()) {
        Some(why) => format!("{why}{AFTER_WHY}{SUSPEND_REASON}"),
        None => SUSPEND_REASON.to_owned(),
    }
}

/// The policy's own reason in a reason made by [`suspend_reason`]: `Some("")` when it gave
/// none, `None` when `reason` was not made by it (a call in doubt, another hook's).
pub fn policy_reason(reason: &str) -> Option<&str> {
    if reason == SUSPEND_REASON {
        return Some("");
    }
    reason
        .strip_suffix(SUSPEND_REASON)
        .and_then(|rest| rest.strip_suffix(AFTER_WHY))
}

/// Asks at the terminal when there is one, else suspends the run.
#[derive(Clone)]
pub struct CliDecider {
    interactive: bool,
    /// What arguments edited at the prompt must fit.
    schemas: Arc<Schemas>,
    /// Where what a person decides at the terminal (or the approval webhook, asked instead)
    /// is logged: the trail of the run under way.
    decisions: RunDecisions,
    /// A Ctrl-C at a question left its call waiting: the person left the decisions to
    /// someone else, so no question is asked any more (clones share it).
    left_to_others: Arc<AtomicBool>,
}

impl std::fmt::Debug for CliDecider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CliDecider")
            .field("interactive", &self.interactive)
            .finish_non_exhaustive()
    }
}

impl CliDecider {
    /// Asks on the terminal if stdin and stderr are terminals, else suspends; arguments
    /// edited at the prompt must fit `agent`'s tool schemas.
    pub fn detect(agent: &LoadedAgent) -> Self {
        CliDecider {
            interactive: std::io::stdin().is_terminal() && std::io::stderr().is_terminal(),
            schemas: Arc::new(Schemas::of(agent)),
            decisions: RunDecisions::default(),
            left_to_others: Arc::default(),
        }
    }

    /// Where its decisions, and the approval webhook's, are logged: given the store of each
    /// run ([`RunDecisions::keep_in`]) once the run has one.
    pub fn decisions(&self) -> RunDecisions {
        self.decisions.clone()
    }

    /// The same decider, also checking edited arguments of `tools` (a run's MCP tools, by
    /// name with their schemas).
    pub fn checking<'a>(self, tools: impl IntoIterator<Item = (&'a str, &'a Value)>) -> Self {
        let schemas = Arc::unwrap_or_clone(self.schemas).with(tools);
        CliDecider {
            interactive: self.interactive,
            schemas: Arc::new(schemas),
            decisions: self.decisions,
            left_to_others: self.left_to_others,
        }
    }

    /// Never asks: every call a rule asks about suspends the run (the web inbox's runs).
    pub fn suspend_only() -> Self {
        CliDecider {
            interactive: false,
            schemas: Arc::default(),
            decisions: RunDecisions::default(),
            left_to_others: Arc::default(),
        }
    }
}

impl ApprovalDecider for CliDecider {
    async fn decide(&self, request: &ApprovalRequest) -> Decision {
        if !self.interactive || self.left_to_others.load(Ordering::Relaxed) {
            return waits_for_a_decision(request);
        }
        // One question at a time: concurrent calls would interleave their prompts.
        let _asking = reins::hooks::approval::terminal::question().await;
        // Its turn came after a Ctrl-C left the question before it to someone else.
        if self.left_to_others.load(Ordering::Relaxed) {
            return waits_for_a_decision(request);
        }
        let Some(decision) = ask(request, &self.schemas).await else {
            self.left_to_others.store(true, Ordering::Relaxed);
            return Decision::suspend(suspend_reason(request.reason.as_deref()));
        };
        self.decisions
            .record(request, &decision, &decided_by(TERMINAL))
            .await;
        decision
    }

    /// Nobody answered at the prompt in time: the policy's denial goes in the trail.
    async fn failed_to_answer(
        &self,
        request: &ApprovalRequest,
        failure: &DeciderFailure,
        denial: &Decision,
    ) {
        self.decisions
            .record_policy_denial(request, failure, denial)
            .await;
    }
}

/// Nobody is asked about `request` now: says that it waits for a decision, and suspends it.
fn waits_for_a_decision(request: &ApprovalRequest) -> Decision {
    errln!(
        "[approval] {} waits for a decision (run {}, call {}){}",
        printable(&request.tool_name),
        request.run_id,
        request.internal_call_id,
        request
            .reason
            .as_deref()
            .map_or_else(String::new, |why| format!("{AFTER_WHY}{why}")),
    );
    Decision::suspend(suspend_reason(request.reason.as_deref()))
}

/// Says that Ctrl-C left the call of `request` waiting for someone else's decision.
fn left_waiting(request: &ApprovalRequest) {
    crate::terminal_lines::end_open_line();
    errln!(
        "[approval] Ctrl-C: `{}` is left waiting for a decision by someone else; the run \
         suspends once its other calls are done, and says how to decide it (Ctrl-C again stops \
         the run at once)",
        printable(&request.tool_name)
    );
}

/// The question, with what Ctrl-C does at it.
const QUESTION: &str =
    "[approval] (a)pprove, (d)eny, (e)dit arguments? (Ctrl-C: leave it waiting for someone else) ";

/// The longest answer to "(a)pprove, (d)eny, (e)dit" read, in bytes: a longer one (a paste
/// gone wrong) is no answer, and only its first bytes are ever held.
const MAX_CHOICE_BYTES: usize = 1024;

/// The person's decision about `request`, or `None` when they pressed Ctrl-C: the call is
/// left waiting for someone else's.
async fn ask(request: &ApprovalRequest, schemas: &Schemas) -> Option<Decision> {
    // From before the call is shown to the decision, so that no Ctrl-C pressed while the
    // question is on the terminal stops the run instead.
    let asking = Asking::open();
    let decision = answers(&asking, request, schemas).await;
    // A Ctrl-C the question took in the instant its answer came is not lost to the answer.
    if asking.close() || decision.is_none() {
        left_waiting(request);
        return None;
    }
    decision
}

/// The decision the person's answers make, or `None` at a Ctrl-C ([`Asking::answer`]).
async fn answers(
    asking: &Asking,
    request: &ApprovalRequest,
    schemas: &Schemas,
) -> Option<Decision> {
    // A call replayed on resume comes with no streamed call to stop the spinner first.
    crate::spinner::stop();
    // What the model wrote, shown as text: a control sequence in a name or an argument must
    // not make the terminal show another call than the one approved.
    errln!(
        "\n[approval] the model wants to run `{}` with:",
        printable(&request.tool_name)
    );
    errln!("{}", printable(&pretty(&request.args)));
    errln!("[approval] {}", printable(&why_asked(request)));
    // Each answer is read only once its question is shown, and only while it waits: the
    // editor started to edit the arguments gets every key typed into it.
    // An unclear answer, an editor that would not start or edited arguments that do not fit
    // ask again: a slip is not a decision. An editor quit without saving is no slip either:
    // the person chose to go back to the question.
    let mut slips = 0;
    while slips < 3 {
        crate::terminal_lines::open_line(QUESTION);
        // `None`: Ctrl-C.
        let answer = asking.answer(read_answer_at_most(MAX_CHOICE_BYTES)).await?;
        let Some(answer) = answer else {
            // On a line of its own: the prompt's is still open.
            errln!("[approval] end of input: denied");
            return Some(Decision::deny("denied: no answer"));
        };
        crate::terminal_lines::input_read();
        let Line::Text(answer) = answer else {
            errln!("[approval] that answer is too long: please answer a, d or e (or Ctrl-C)");
            slips += 1;
            continue;
        };
        match answer.trim().to_ascii_lowercase().as_str() {
            "a" | "approve" | "y" | "yes" => return Some(Decision::approve()),
            "d" | "deny" | "n" | "no" => {
                crate::terminal_lines::open_line(
                    "[approval] message for the model (empty for none): ",
                );
                let message = asking.answer(read_answer_at_most(MAX_LINE_BYTES)).await?;
                crate::terminal_lines::input_read();
                let message = match message {
                    Some(Line::Text(message)) => Some(message),
                    Some(Line::TooLong { bytes }) => {
                        errln!(
                            "[approval] the message is {bytes} bytes, over the limit of \
                             {MAX_LINE_BYTES} bytes: denied without a message"
                        );
                        None
                    }
                    None => None,
                };
                return Some(Decision::deny(denial(message.as_deref())));
            }
            "e" | "edit" => {
                let editing = edit_in_editor(&request.args);
                let edited = asking.editor(editing, Unedited::quit_with_ctrl_c).await?;
                let edited = match edited {
                    Ok(args) => args,
                    Err(Unedited::Quit { why, .. }) => {
                        errln!("[approval] {}", printable(&why));
                        continue;
                    }
                    Err(Unedited::Failed(error)) => {
                        errln!("[approval] {}", printable(&error));
                        slips += 1;
                        continue;
                    }
                };
                match schemas.check(&request.tool_name, &edited) {
                    Ok(()) => {
                        errln!(
                            "[approval] approved with {}",
                            printable(&edited.to_string())
                        );
                        return Some(Decision::approve_with_args(edited));
                    }
                    Err(error) => {
                        errln!("[approval] {}", printable(&error));
                        slips += 1;
                    }
                }
            }
            _ => {
                errln!("[approval] please answer a, d or e (or Ctrl-C)");
                slips += 1;
            }
        }
    }
    Some(Decision::deny("denied: no clear answer"))
}

/// Which rule asks about a call, and why when the policy says: `the rule: ask `write_note` —
/// notes need your approval`. The rule's description already says that it asks.
fn why_asked(request: &ApprovalRequest) -> String {
    let rule = match &request.rule {
        Some(rule) => format!("the rule: {rule}"),
        None => format!(
            "no rule names `{}`: the policy asks by default",
            request.tool_name
        ),
    };
    match request
        .reason
        .as_deref()
        .map(str::trim)
        .filter(|why| !why.is_empty())
    {
        Some(why) => format!("{rule}{AFTER_WHY}{why}"),
        None => rule,
    }
}

/// Pretty JSON, or the raw value when it cannot be pretty-printed.
pub fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// A call waiting for a decision, as `runs show` lists it on every store (with control
/// sequences shown as text), with its `reason` when it has one; a call `in_doubt` with how
/// to answer it.
pub fn waiting_line(
    call: &str,
    tool: &str,
    arguments: &Value,
    reason: Option<&str>,
    in_doubt: bool,
) -> String {
    let answers = match in_doubt {
        true => format!("\n  {}", crate::in_doubt::HOW_TO_ANSWER),
        false => String::new(),
    };
    let reason = reason.map_or_else(String::new, |reason| format!("\n  ({reason})"));
    printable(&format!(
        "waiting: call {call} — {tool} with\n{}{reason}{answers}",
        pretty(arguments)
    ))
    .into_owned()
}

/// Opens the arguments in the editor ([`crate::editor`]) and reads them back.
pub async fn edit_in_editor(args: &Value) -> Result<Value, Unedited> {
    let text = crate::editor::edit(&pretty(args)).await?;
    parse_args(&text).map_err(Unedited::Failed)
}

/// Edited arguments: a JSON object, else an error.
pub fn parse_args(text: &str) -> Result<Value, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err("the arguments must be a JSON object".to_owned()),
        Err(error) => Err(format!("the arguments are not valid JSON: {error}")),
    }
}

/// What the model is told about a call a person denied, before their message if any.
pub const DENIED_BY_THE_USER: &str = "denied by the user";

/// What the model is told about a denied call: that a person denied it, and their message.
/// The terminal, `reins runs deny` and the inbox all say it this way.
pub fn denial(message: Option<&str>) -> String {
    match message.map(str::trim).filter(|m| !m.is_empty()) {
        Some(message) => format!("{DENIED_BY_THE_USER}: {message}"),
        None => DENIED_BY_THE_USER.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::{SUSPEND_REASON, policy_reason, suspend_reason, why_asked};
    use reins::hooks::approval::ApprovalRequest;
    use serde_json::json;

    fn request(rule: Option<&str>, reason: Option<&str>) -> ApprovalRequest {
        ApprovalRequest {
            run_id: "run-1".to_owned(),
            turn: 1,
            tool_name: "write_note".to_owned(),
            tool_call_id: "call_1".to_owned(),
            internal_call_id: "t1c0".to_owned(),
            args: json!({}),
            rule: rule.map(str::to_owned),
            reason: reason.map(str::to_owned),
            traits: None,
        }
    }

    #[test]
    fn the_prompt_names_the_rule_and_the_policys_reason() {
        let asked = request(Some("ask `write_note`"), Some("notes need your approval"));
        assert_eq!(
            why_asked(&asked),
            "the rule: ask `write_note` — notes need your approval"
        );
        assert_eq!(
            why_asked(&request(Some("ask `write_note`"), None)),
            "the rule: ask `write_note`"
        );
        assert_eq!(
            why_asked(&request(None, None)),
            "no rule names `write_note`: the policy asks by default"
        );
    }

    #[test]
    fn the_stored_reason_keeps_the_policys_reason() {
        let stored = suspend_reason(Some("notes need your approval"));
        assert_eq!(
            stored,
            format!("notes need your approval — {SUSPEND_REASON}")
        );
        assert_eq!(policy_reason(&stored), Some("notes need your approval"));
        assert_eq!(suspend_reason(None), SUSPEND_REASON);
        assert_eq!(suspend_reason(Some(" ")), SUSPEND_REASON);
        assert_eq!(policy_reason(SUSPEND_REASON), Some(""));
        assert_eq!(policy_reason("started before a crash"), None);
    }
}
