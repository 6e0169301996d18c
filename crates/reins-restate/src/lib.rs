//! reins agents as durable services on [Restate](https://restate.dev): a run is a Restate
//! workflow invocation keyed by the run id, and every model call and tool call is one
//! journaled step (`ctx.run`). A retried or failed-over invocation is replayed from its
//! journal: finished steps are not executed again, and the run continues on whichever worker
//! Restate chooses.
//!
//! # The engine boundary
//!
//! The run loop is reins' own, unchanged. The boundary sits where the embedded stores' journal
//! sits — at the model call and the tool call: [`Steps::model`] and [`Steps::tool`] wrap them,
//! and on Restate each becomes a journaled step (embedded, they pass through and the run's
//! store checkpoints as usual). So the same function builds the agent for both:
//!
//! ```no_run
//! use reins::agent::{Agent, AgentBuilder};
//! use reins::hooks::approval::{ApprovalPolicy, Rule};
//! use reins_restate::{AgentService, Steps};
//! # use reins::testing::{ScriptedModel, Turn};
//! # fn model() -> ScriptedModel {
//! #     let refund = Turn::tool_call("refund", serde_json::json!({"order": 42}));
//! #     ScriptedModel::resumable([refund, Turn::text("Refunded.")])
//! # }
//! # fn refund() -> impl reins::tool::Tool {
//! #     reins::tool::tool_fn("refund", "Refunds an order.", |order: serde_json::Value| async move {
//! #         Ok::<_, std::convert::Infallible>(format!("refunded {order}"))
//! #     })
//! # }
//!
//! fn agent(steps: &Steps) -> Agent {
//!     AgentBuilder::new(steps.model(model())) // each model call: one journaled step
//!         .tool(steps.tool(refund())) // each tool call: one journaled step
//!         .add_hook(ApprovalPolicy::new().rule(Rule::suspend("refund", "a person decides")))
//!         .build()
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! # let store = reins::store::MemoryStore::new();
//! // Embedded, with any store: the run suspends at the refund, its state in the store.
//! let suspended = agent(&Steps::embedded()).prompt("Refund order 42.").durable(store).await;
//! // On Restate (the one line that differs):
//! reins_restate::serve("127.0.0.1:9080".parse()?, AgentService::new(agent)).await?;
//! # Ok(()) }
//! ```
//!
//! # Effect ids
//!
//! A tool call's step is named by its effect id, `<run id>/t<turn>c<ordinal>`
//! ([`ToolCallContext::effect_id`](reins::tool::ToolCallContext::effect_id)), the same on
//! every replay; tools still read it from the call context as an idempotency key. A model
//! call's step is `<run id>/model/<n>`, a journaled approval `<run id>/approval/<call>`, and
//! a value read through [`Steps::record`] `<run id>/record/<name>` (its own namespace: a
//! recorded name never clashes with the others).
//!
//! # Approvals
//!
//! A hook that answers a dispatch with
//! [`DispatchAction::suspend`](reins::agent::DispatchAction::suspend) ends the loop as usual;
//! the workflow then creates one Restate awakeable per suspended call, lists them in the
//! run's `status`, and waits — suspended in Restate, holding no worker. The `decide` handler
//! (or [`RestateRuns::decide`]) resolves one, and the run resumes on whichever worker Restate
//! picks, replaying its journal up to the decision. The first decision about a call is the one
//! taken: `decide` refuses a second one (HTTP 409), and edited arguments that are not a JSON
//! object or do not fit the tool's JSON schema (400; the call keeps waiting). The schema is
//! the one the tool of that name has in the agent the service builds; a tool the agent lacks,
//! or a schema that does not compile (a `$ref` to another document, an unknown `$schema`),
//! checks nothing (the worker logs the latter), as in the CLI. A payload sent to the call's
//! awakeable directly is checked the same way (see [`MAX_UNUSABLE_DECISIONS`]).
//!
//! A decider that asks the outside world at once (a web service) is wrapped with
//! [`Steps::decider`]: each answer is then one journaled step, `<run id>/approval/<call>`, and
//! a replay reads it instead of asking again. An answer that is no decision (a webhook whose
//! service failed, a panic, a timeout) is journaled as such, and the approval policy denies
//! the call itself, on the first execution and on replay alike. A decider may also answer
//! [`Decision::suspend`](reins::hooks::approval::Decision::suspend), handing the call to a
//! person through `decide`.
//!
//! # A tool call cut off by a crash: at most once
//!
//! A worker can die while a tool executes (SIGKILL, a lost machine, an aborted long step),
//! after the tool's side effect and before its result reaches the journal. What the retried
//! invocation does then follows the tool's
//! [`retry_safety`](reins::tool::Tool::retry_safety), as on the embedded stores:
//!
//! - A tool that declares a second execution safe
//!   ([`RetrySafety::Idempotent`](reins::tool::RetrySafety::Idempotent) or
//!   [`DeduplicatesByEffectId`](reins::tool::RetrySafety::DeduplicatesByEffectId)) is one step,
//!   and a cut-off call simply runs again.
//! - Any other tool runs at most once by itself: before it runs, its call journals an unlisted
//!   start marker (`<effect id>/started`, acknowledged by Restate before the tool starts). A
//!   replay that finds the marker and no result journals the call as in doubt and lists it
//!   among the run's pending calls with [`PendingDecision::in_doubt`] set; the run waits,
//!   suspended in Restate, for `decide`: `rerun` (or `approve`) runs it again (with a marker of
//!   its own, `<effect id>/started/<n>`), `approve_with_args` with new arguments, and `skip`,
//!   `supply_result` or `deny` answer the call without running it, as on a stored run: the
//!   model reads their text, and the call's outcome is a skip, a success or a denial (what
//!   hooks see, on every replay). `decide` refuses `skip` and `supply_result` (400) for a
//!   call that waits for approval and is not in doubt: it never started, so approve or deny
//!   it, as on a stored run. One more journal entry per call is the
//!   price; declare a tool's retry safety when a second execution is harmless.
//! - The tokens a call in doubt spent before its worker died
//!   ([`ToolCallContext::add_usage`](reins::tool::ToolCallContext::add_usage), e.g. another
//!   agent's run) are not counted in the run: the tool attaches them to its call, and they
//!   reach the journal only with the call's result, which the cut-off attempt never journaled
//!   (the same goes for its extensions). A `rerun` (or an approval) counts what the new
//!   execution spends, once; `skip`, `supply_result` and `deny` count nothing for the call.
//!   The run's usage may therefore be short of what was spent; a tool that must account for
//!   every token reports it elsewhere as it spends it (keyed by its effect id).
//!
//! # Secrets in the journal
//!
//! Restate keeps every step's value in its journal, readable through its admin API (`restate
//! sql`, `sys_journal`). A tool call's step journals its result before any hook runs, so a
//! [`Redaction`](reins::hooks::redaction::Redaction) hook alone would mask what the model sees
//! and leave the secret in the journal. Register it with the run's steps as well —
//! `.add_hook(steps.redaction(Redaction::new()))` ([`Steps::redaction`]) — and the step
//! journals the text the hook shows the model instead (and an error's text, and the text of
//! an answer the tool gave in place of its own, masked). What the redaction does not mask (see
//! its docs), the prompt (the run's input) and the metadata a tool attaches for hooks
//! (`ToolCallContext::set_extension`, which the model never reads and a store persists with
//! the call) are journaled as they are.
//!
//! Two kinds of text are kept as they are, with a redaction registered or not, as the embedded
//! stores keep them:
//!
//! - **A suspended call's arguments**, in the run's `pending` state and its
//!   [`status`](RestateRuns::status) ([`PendingDecision::arguments`]), as the model wrote
//!   them: a decision approves the call as it will execute (a store binds it to a digest of
//!   those exact arguments, and lists them whole, `PendingApproval::arguments`), and an
//!   approver shown masked arguments would approve, or edit, something else. Masking the list
//!   would not take them out of Restate either: the model's answer that holds them is its
//!   step's journaled value (a `Redaction` masks what the model is sent, not what it writes).
//! - **A decision's text** — a denial's or a skip's message, a supplied result, edited
//!   arguments — in the `decide` call's input entry and in the awakeable it resolves, as sent,
//!   as a store's decision trail keeps it. Restate journals a call's input before any code of
//!   the worker runs, so no hook can mask it there. What the run makes of the decision (the
//!   call's outcome, the text the model reads) passes the agent's outcome hooks, a
//!   `Redaction` included, like any tool result.
//!
//! Guard the ingress and the admin API as you guard a store's database.
//!
//! The bearer token of [`RestateRuns::bearer_token`] is sent with every ingress call, and
//! Restate keeps a call's headers with its invocation: the `Authorization` header is in the
//! journal's input entry of the run (and of each `status` and `decide` call), readable through
//! the admin API, and forwarded to the workers. Let the proxy or gateway in front of the
//! ingress check the token and strip the header before it reaches Restate, give that token no
//! other use, and never reuse a model provider's key as it.
//!
//! # Who may call the workers
//!
//! A Restate invocation carries its journal: whoever can send one to a worker's port chooses
//! the model answers, tool results and decisions its run replays, and so runs the agent's
//! tools with arguments of its own on the agent's credentials — a second Restate server the
//! workers are registered with included. [`serve`] and [`serve_on`] take every request;
//! where anything but your Restate server can reach the workers, serve with
//! [`serve_verified`] and your server's request identity key (`publickeyv1_…`, from the
//! Ed25519 key its `[worker.invoker] request-identity-private-key-pem-file` names): every
//! other request is refused before the agent sees it.
//!
//! # Who may call the ingress
//!
//! The ingress is the runs' API and authorizes nothing per run: whoever reaches it starts
//! runs, reads any run whose id they know or guess (its `status`, with the pending calls'
//! arguments, and its output) and decides its waiting calls — through `decide`, or directly
//! through Restate's awakeable API (`/restate/awakeables/<id>/resolve`, `reject`). A
//! decision is the approver's authority, as on the embedded stores: `approve_with_args` runs
//! the tool with the new arguments without asking the dispatch hooks (an approval policy
//! included) again. Run ids are not secrets: put authentication in front of the ingress
//! ([`RestateRuns::bearer_token`]). What an ingress caller cannot do:
//!
//! - reach `ReinsAgentDecisions`, the object whose claim makes a call's first decision the
//!   only one (it is private to the ingress), so no decision is taken twice or blocked;
//! - grow a run's journal without end with payloads that are no decision: each re-arms its
//!   call on a fresh awakeable, and past [`MAX_UNUSABLE_DECISIONS`] in one wait the run ends
//!   (failure `error`), as a rejected awakeable ends it;
//! - hold a caller of [`RestateRuns::output`] for ever: it waits at most its
//!   [`output_timeout`](RestateRuns::output_timeout) ([`DEFAULT_OUTPUT_TIMEOUT`]), then
//!   answers [`ClientError::NotEnded`], and the run goes on.
//!
//! Every value a caller sends is bounded by Restate's message size limit before a worker
//! sees it.
//!
//! # Deterministic replay: what hooks may and may not do
//!
//! A replay must take the same path as the first execution, because Restate matches the
//! steps of a replay to its journal by their order. Hooks run on every replay, so:
//!
//! - A hook **may** decide from the event and the run's state (history, entries, arguments,
//!   tool results, usage): those are the same on replay, since every model response and tool
//!   result comes from the journal. So does what a tool attaches to its call through
//!   [`ToolCallContext`](reins::tool::ToolCallContext): the tokens it counts in the run
//!   (`add_usage`, e.g. a sub-agent's run), metadata for hooks (`set_extension`) and an
//!   answer in place of its own (`answer_skipped`, `answer_denied`) are journaled with the
//!   call's result and attached again on every replay, so a run's usage is the same whether
//!   Restate replayed it (after an approval, a failover) or not.
//! - A hook **must not** decide from the outside world directly — a clock, a random number,
//!   a file, an HTTP call, a person. Read such a value through [`Steps::record`] (a hook
//!   built in the same function as the agent can hold the `Steps`), which journals it as a
//!   step, put the decision inside a tool (also a journaled step), or ask the person through
//!   `DispatchAction::suspend` (journaled as an awakeable). An approval decider that calls a
//!   service is wrapped with [`Steps::decider`]. A budget hook counting tokens is
//!   fine (usage is journaled); one reading the wall clock directly is not.
//! - [`Steps::record`] is for hooks; inside a tool it is refused with a [`StepError`] (a tool
//!   call already is one step, and steps are journaled one at a time).
//! - The service drives every run with [`PromptRequest::tool_concurrency`] 1 (it builds the
//!   request, so this cannot be changed): tools run concurrently would reach the journal in
//!   completion order, which a replay need not repeat.
//! - A hook's own side effects (logs, metrics) happen again on replay; make them idempotent
//!   or tolerant of repeats.
//!
//!
//! # Long steps
//!
//! Restate asks an invocation that sends nothing for its inactivity timeout (1 minute by
//! default) to suspend, and aborts it after the abort timeout (10 minutes); a step cannot
//! suspend halfway, so a model call longer than that is aborted and executed again, and so is
//! a tool call whose tool declares that safe; any other tool call is then in doubt (above).
//! Raise both for the `ReinsAgent` service through Restate's admin API when steps are long.
//!
//! # Large steps
//!
//! A step's value (a model's answer, a tool's result, a recorded value) is journaled as one
//! entry, and Restate refuses an entry over its message size limit (32 MiB by default) as a
//! failure it retries without end. A value whose JSON passes [`MAX_STEP_BYTES`] (8 MiB) is
//! therefore not journaled. A tool call's entry keeps what the tool attached instead of its
//! result: the model reads the tool's error (`the tool's result is <n> bytes as JSON, more
//! than a journaled step may hold (8388608 bytes); …`), and the tokens the tool counted
//! ([`ToolCallContext::add_usage`](reins::tool::ToolCallContext::add_usage)) and its extensions
//! still reach the run (extensions too large beside the error give way as well, the usage
//! never). A model's answer, or a value of [`Steps::record`], that large is journaled as the
//! step's failure: the model call fails, the record is a [`StepError`]. Return large data by
//! reference (a file, an object store key), not inside the result.
//!
//! # Upgrading a deployment
//!
//! A run in flight — running, retrying, or suspended on a decision for days — is replayed
//! from its journal by whichever code serves its deployment next, and Restate fails a replay
//! whose steps differ from the journal (a journal mismatch; the invocation is retried, never
//! completed). A new version of the agent (its model, tools, hooks or prompts) or of this
//! crate may journal differently: this crate changes what a run journals between releases
//! (e.g. the names of recorded steps and the state written per step), so treat every upgrade
//! as one. Restate pins each invocation to the deployment it started on; two ways follow:
//!
//! - **A new deployment at a new address** (what Restate's versioning expects): serve the new
//!   version on another port or path (`http://worker:9081`), register it (Restate sends new
//!   runs there), and keep the old workers serving the old address until no invocation is
//!   pinned to the old deployment — `SELECT count(*) FROM sys_invocation WHERE
//!   pinned_deployment_id = '<old id>' AND status != 'completed'` through the admin API's
//!   SQL (`restate sql`), suspended runs included: decide them, or let them end. Then remove
//!   the old deployment (`restate deployments remove <old id>`) and stop its workers.
//! - **Drain, then upgrade in place**: stop starting runs, let every run end (decide the
//!   suspended ones; the same query, over all deployments, reads 0), then replace the workers
//!   and register the same address again.
//!
//! Never re-register a changed version at the address of a deployment that still has runs
//! in flight: [`register_deployment`] (and `reins serve --register`) registers with `force`,
//! which replaces the deployment under its runs, and each of them then fails its replay.
//!
//! [`PromptRequest::tool_concurrency`]: reins::agent::PromptRequest::tool_concurrency
#![deny(missing_docs)]

mod admin;
mod answer;
mod args_schema;
mod awaiting;
mod claims;
mod client;
mod client_error;
mod decider;
mod http;
mod model;
mod service;
#[cfg(test)]
mod stand_ins;
mod steps;
mod tool;
mod wire;
mod worker;

pub use admin::{REGISTRATION_TIMEOUT, register_deployment, register_deployment_with_token};
pub use answer::MAX_ANSWER_BYTES;
pub use awaiting::MAX_UNUSABLE_DECISIONS;
pub use client::{ClientError, DEFAULT_CALL_TIMEOUT, DEFAULT_OUTPUT_TIMEOUT, RestateRuns};
pub use decider::{DEFAULT_DECIDER_TIMEOUT, JournaledDecider};
pub use http::CONNECT_TIMEOUT;
pub use model::JournaledModel;
pub use service::{AgentService, SERVICE_NAME};
pub use steps::{MAX_STEP_BYTES, StepError, Steps};
pub use tool::JournaledTool;
pub use wire::{DecisionRequest, PendingDecision, RunFailure, RunInput, RunOutput, RunProgress};
pub use worker::{
    IdentityKeyError, bind, check_identity_key, listener, serve, serve_on, serve_verified,
};
