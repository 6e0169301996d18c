//! Who answers [`RuleOutcome::Ask`](super::RuleOutcome::Ask): the [`ApprovalDecider`] trait
//! and the ready deciders (the webhook one has its own file).

use super::terminal::Line;
use crate::text::printable;
use crate::tool::ToolTraits;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::future::Future;
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// A tool call waiting for a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The run's id.
    pub run_id: String,
    /// The one-based index of the model call that made the tool call.
    pub turn: usize,
    /// The tool called.
    pub tool_name: String,
    /// The provider's id of the call.
    pub tool_call_id: String,
    /// reins' id of the call, unique in the run (also the key of a suspended call).
    pub internal_call_id: String,
    /// The arguments (with earlier hooks' rewrites); a JSON string holding the raw text when
    /// they are not JSON.
    pub args: Value,
    /// The description of the rule that asked; `None` when the policy's default asked.
    pub rule: Option<String>,
    /// Why the rule asks, in the policy's own words ([`Rule::because`](super::Rule::because));
    /// `None` when it gives none. Left out of the JSON when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What the tool says about itself, if the policy was told.
    pub traits: Option<ToolTraits>,
}

/// A decider's answer, given while the run waits for it. (A decision about a call a
/// suspended run left in a store is a [`crate::store::Decision`] instead.)
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Run the call as it is.
    Approve,
    /// Run the call with these arguments instead (later hooks see them). Arguments that are
    /// not a JSON object deny the call instead, with a message saying so: a tool's arguments
    /// are an object, as the run requires of the model's own calls.
    ApproveWithArgs(Value),
    /// Don't run the call; the model receives this message as its result.
    Deny(String),
    /// End the run as suspended, holding the call for a durable decision.
    Suspend(String),
}

impl Decision {
    /// Run the call as it is.
    pub fn approve() -> Self {
        Decision::Approve
    }
    /// Run the call with `args` instead (a JSON object; anything else denies the call).
    pub fn approve_with_args(args: Value) -> Self {
        Decision::ApproveWithArgs(args)
    }
    /// Don't run the call; the model receives `message`.
    pub fn deny(message: impl Into<String>) -> Self {
        Decision::Deny(message.into())
    }
    /// Suspend the run for a decision that may come from another process, hours later.
    pub fn suspend(reason: impl Into<String>) -> Self {
        Decision::Suspend(reason.into())
    }
}

/// Decides about tool calls a policy rule asks about. Implement it as an `async fn`:
///
/// ```
/// use reins::hooks::approval::{ApprovalDecider, ApprovalRequest, Decision};
///
/// struct OnlyOnWeekdays;
///
/// impl ApprovalDecider for OnlyOnWeekdays {
///     async fn decide(&self, request: &ApprovalRequest) -> Decision {
///         Decision::deny(format!("{} waits until Monday", request.tool_name))
///     }
/// }
/// ```
///
/// A decider that panics, or takes longer than the policy's timeout, denies the call. It
/// must answer something: fail closed, and treat an unclear answer as a denial.
pub trait ApprovalDecider: Send + Sync + 'static {
    /// The decision about `request`.
    fn decide(&self, request: &ApprovalRequest) -> impl Future<Output = Decision> + Send;

    /// The decision about `request`, or why this decider could not make one
    /// ([`DeciderFailure::NoDecision`]: an approval service that could not be reached). The
    /// policy asks through this method: on a failure it denies the call itself and tells the
    /// decider ([`failed_to_answer`](Self::failed_to_answer)), as for a timeout, so the
    /// denial is recorded as the policy's rather than as a decision this decider made. Calls
    /// [`decide`](Self::decide) unless implemented.
    fn try_decide(
        &self,
        request: &ApprovalRequest,
    ) -> impl Future<Output = Result<Decision, DeciderFailure>> + Send {
        async move { Ok(self.decide(request).await) }
    }

    /// Told that the policy denied `request`'s call itself, with `denial`, because this
    /// decider did not answer (`failure`: it timed out or panicked). A decider that records
    /// what it decides (a run's decision trail) records this denial here too, as the
    /// policy's: otherwise the trail would have no entry for a call that was refused. The
    /// run waits for it before going on, within the policy's timeout (a panic in it is caught
    /// and logged). Does nothing unless implemented.
    fn failed_to_answer(
        &self,
        request: &ApprovalRequest,
        failure: &DeciderFailure,
        denial: &Decision,
    ) -> impl Future<Output = ()> + Send {
        let _ = (request, failure, denial);
        std::future::ready(())
    }
}

impl<D: ApprovalDecider> ApprovalDecider for Arc<D> {
    fn decide(&self, request: &ApprovalRequest) -> impl Future<Output = Decision> + Send {
        (**self).decide(request)
    }

    fn try_decide(
        &self,
        request: &ApprovalRequest,
    ) -> impl Future<Output = Result<Decision, DeciderFailure>> + Send {
        (**self).try_decide(request)
    }

    fn failed_to_answer(
        &self,
        request: &ApprovalRequest,
        failure: &DeciderFailure,
        denial: &Decision,
    ) -> impl Future<Output = ()> + Send {
        (**self).failed_to_answer(request, failure, denial)
    }
}

/// Why an [`ApprovalPolicy`](super::ApprovalPolicy) decided a call itself after asking its
/// decider ([`ApprovalDecider::failed_to_answer`]). Shown, it says what happened: "the
/// decider timed out after 30 s".
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeciderFailure {
    /// The decider did not answer within the time it was given (this long): the policy's
    /// timeout, or a wrapper's own (a durable engine's step timeout).
    TimedOut(Duration),
    /// The decider panicked.
    Panicked,
    /// The decider said it could not decide, and why, in words the model and a person may
    /// read (no URL or secret): "the approval service gave no decision (it answered with
    /// status 500)". Shown as these words; the model is told that the call was not run,
    /// and why.
    NoDecision(String),
}

impl fmt::Display for DeciderFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeciderFailure::TimedOut(timeout) => {
                write!(f, "the decider timed out after {}", describe(*timeout))
            }
            DeciderFailure::Panicked => f.write_str("the decider panicked"),
            DeciderFailure::NoDecision(why) => f.write_str(why),
        }
    }
}

/// `5 min`, `90 s`, `250 ms`: a timeout as a person reads it.
pub(super) fn describe(duration: Duration) -> String {
    let secs = duration.as_secs();
    if secs == 0 {
        format!("{} ms", duration.as_millis())
    } else if secs % 60 == 0 {
        format!("{} min", secs / 60)
    } else {
        format!("{secs} s")
    }
}

/// A decider made of an async closure; see [`decider_fn`].
#[derive(Clone)]
pub struct DeciderFn<F>(F);

impl<F> std::fmt::Debug for DeciderFn<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeciderFn")
    }
}

/// A decider from an async closure that receives a copy of the request.
pub fn decider_fn<F, Fut>(decide: F) -> DeciderFn<F>
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Decision> + Send + 'static,
{
    DeciderFn(decide)
}

impl<F, Fut> ApprovalDecider for DeciderFn<F>
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Decision> + Send + 'static,
{
    fn decide(&self, request: &ApprovalRequest) -> impl Future<Output = Decision> + Send {
        (self.0)(request.clone())
    }
}

/// Sends each request over a tokio channel, to be answered elsewhere (a UI, a chat bot, a
/// test) through [`PendingApproval::respond`].
///
/// A closed channel, or a request dropped without an answer, denies the call.
///
/// The receiving side is usually a task of its own that shows each request to a person and
/// sends back what they chose:
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::hooks::approval::{ApprovalPolicy, ChannelDecider, Decision, Rule};
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::tool_fn;
/// use serde_json::{Value, json};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let (decider, mut requests) = ChannelDecider::new(8);
/// // A UI or a chat bot would ask a person here; this one refuses payments over 100.
/// let approver = tokio::spawn(async move {
///     while let Some(pending) = requests.recv().await {
///         let request = pending.request();
///         let decision = match request.args["amount"].as_u64() {
///             Some(amount) if amount <= 100 => Decision::approve(),
///             _ => Decision::deny(format!("{} needs a manager", request.tool_name)),
///         };
///         pending.respond(decision);
///     }
/// });
///
/// let pay = tool_fn("pay", "Pays an invoice.", |_: Value| async move {
///     Ok::<_, std::convert::Infallible>("paid")
/// });
/// let model = ScriptedModel::new([
///     Turn::tool_call("pay", json!({"amount": 5000})),
///     Turn::text("The payment needs a manager."),
/// ]);
/// let policy = ApprovalPolicy::new().rule(Rule::ask("pay")).decider(decider);
/// let agent = AgentBuilder::new(model.clone()).tool(pay).add_hook(policy).build();
/// agent.prompt("Pay invoice 7.").await?;
/// // The model read the denial as the call's result.
/// assert_eq!(model.requests()[1].history.last().unwrap().text(), "pay needs a manager");
///
/// drop(agent); // the policy's sender goes with it, and the approver's loop ends
/// approver.await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ChannelDecider {
    sender: mpsc::Sender<PendingApproval>,
}

impl ChannelDecider {
    /// A decider and the receiver its requests arrive on; `buffer` requests may wait
    /// unreceived (at least one).
    pub fn new(buffer: usize) -> (Self, mpsc::Receiver<PendingApproval>) {
        let (sender, receiver) = mpsc::channel(buffer.max(1));
        (ChannelDecider { sender }, receiver)
    }

    /// A decider sending on an existing channel.
    pub fn from_sender(sender: mpsc::Sender<PendingApproval>) -> Self {
        ChannelDecider { sender }
    }
}

impl ApprovalDecider for ChannelDecider {
    async fn decide(&self, request: &ApprovalRequest) -> Decision {
        let name = request.tool_name.clone();
        let (reply, answer) = oneshot::channel();
        let pending = PendingApproval {
            request: request.clone(),
            reply,
        };
        if self.sender.send(pending).await.is_err() {
            return Decision::deny(format!(
                "`{name}` was not run: no approver is listening for requests"
            ));
        }
        answer.await.unwrap_or_else(|_| {
            Decision::deny(format!(
                "`{name}` was not run: the approver dropped the request without answering"
            ))
        })
    }
}

/// A request received from a [`ChannelDecider`], to be answered once. (A call a suspended
/// run left waiting in a store is listed as a [`crate::store::PendingApproval`] instead.)
#[derive(Debug)]
pub struct PendingApproval {
    request: ApprovalRequest,
    reply: oneshot::Sender<Decision>,
}

impl PendingApproval {
    /// The call to decide about.
    pub fn request(&self) -> &ApprovalRequest {
        &self.request
    }

    /// Answers the request. Returns `false` when nobody waits for the answer any more (the
    /// policy timed out, or the run ended).
    pub fn respond(self, decision: Decision) -> bool {
        self.reply.send(decision).is_ok()
    }
}

/// Asks on the terminal: prints the call to stderr and reads the answer from stdin. Only `y`
/// or `yes` approves; any other answer (one longer than 1 KiB too, never held whole), end of
/// input, or no terminal on stdin denies.
///
/// Prompts of concurrent calls are asked one after the other. The answer is read through
/// [`terminal::read_answer`](super::terminal::read_answer), only while a question waits for
/// it: a program that reads its own input (a chat's next message) between questions reads it
/// with [`terminal::read_line`](super::terminal::read_line), so that neither takes the
/// other's lines. Lines typed before a question is shown are not taken as its answer.
#[derive(Debug, Clone, Default)]
pub struct TerminalDecider {
    input: Input,
}

/// The longest answer [`TerminalDecider`] reads, in bytes: `yes` with room to spare. A longer
/// one is no answer (a paste gone wrong), and only its first bytes are ever held.
const MAX_ANSWER_BYTES: usize = 1024;

/// Where answers come from.
#[derive(Debug, Clone, Default)]
enum Input {
    /// The process's stdin, if it is a terminal.
    #[default]
    Stdin,
    /// Scripted input, for tests, read as stdin is; `None` as if there were no terminal.
    #[cfg(test)]
    Scripted(Option<String>),
}

impl TerminalDecider {
    /// A decider asking on this process's terminal.
    pub fn new() -> Self {
        TerminalDecider::default()
    }

    #[cfg(test)]
    pub(super) fn scripted(input: Option<&str>) -> Self {
        TerminalDecider {
            input: Input::Scripted(input.map(str::to_owned)),
        }
    }

    fn has_terminal(&self) -> bool {
        match &self.input {
            Input::Stdin => std::io::stdin().is_terminal(),
            #[cfg(test)]
            Input::Scripted(input) => input.is_some(),
        }
    }

    /// The next line typed after the question, or `None` at end of input.
    async fn read_answer(&self) -> Option<Line> {
        match &self.input {
            Input::Stdin => {
                eprint!("[approval] allow it? [y/N] ");
                let _ = std::io::stderr().flush();
                super::terminal::read_answer_at_most(MAX_ANSWER_BYTES).await
            }
            #[cfg(test)]
            Input::Scripted(input) => {
                let mut input = input.as_deref().unwrap_or_default().as_bytes();
                super::terminal::read_bounded(&mut input, MAX_ANSWER_BYTES)
                    .ok()
                    .flatten()
            }
        }
    }
}

impl ApprovalDecider for TerminalDecider {
    async fn decide(&self, request: &ApprovalRequest) -> Decision {
        // One question at a time: concurrent calls would interleave their prompts.
        let _turn = super::terminal::question().await;
        let name = &request.tool_name;
        eprint!("{}", question(request));
        if !self.has_terminal() {
            eprintln!("[approval] no terminal to ask on: denied");
            return Decision::deny(format!("{name} was not run: nobody could approve it"));
        }
        // Tells the person when the policy gave up waiting (the future is dropped then).
        let mut pending = Unanswered(true);
        let answer = self.read_answer().await;
        pending.0 = false;
        let approved = match answer {
            Some(Line::Text(line)) => {
                matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
            }
            // Not read whole, it is no answer: denied, as any answer but yes is.
            Some(Line::TooLong { .. }) => {
                eprintln!("[approval] answer longer than {MAX_ANSWER_BYTES} bytes: not read");
                false
            }
            None => false,
        };
        if approved {
            eprintln!("[approval] approved");
            Decision::approve()
        } else {
            eprintln!("[approval] denied");
            Decision::deny(format!("the user did not approve {name}; it was not run"))
        }
    }
}

/// What the terminal shows of a call before asking about it: the arguments as the model
/// wrote them, with any control sequence shown as text rather than acted on (a model must not
/// make the terminal show another call than the one approved).
pub(super) fn question(request: &ApprovalRequest) -> String {
    let mut text = format!(
        "\n[approval] the model wants to run {} {}\n",
        printable(&request.tool_name),
        printable(&request.args.to_string())
    );
    if let Some(rule) = &request.rule {
        text.push_str(&format!(
            "[approval] because of the rule: {}\n",
            printable(rule)
        ));
    }
    text
}

/// Prints a notice if the question is abandoned (the policy's timeout dropped the future).
struct Unanswered(bool);

impl Drop for Unanswered {
    fn drop(&mut self) {
        if self.0 {
            eprintln!("\n[approval] no answer in time: denied");
        }
    }
}
