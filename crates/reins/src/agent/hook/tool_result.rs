//! [`ToolResult`]: a finished tool call as outcome hooks see it.

use super::args_text::ArgsText;
use crate::completion::Usage;
use crate::tool::{ToolOutcome, ToolOutput, ToolResultExtensions, ToolTraits};
use std::borrow::Cow;
use std::sync::OnceLock;

/// A finished tool call as hooks see it: the model-visible output (with earlier hooks'
/// rewrites) and the structured outcome (with earlier hooks' masks, see
/// [`OutcomeAction::mask_tool_result`](crate::agent::OutcomeAction::mask_tool_result)).
///
/// It borrows the call from the run, so an outcome hook costs the run no copy of the call's
/// names, ids, arguments, output or outcome. [`into_owned`](ToolResult::into_owned) keeps
/// one past the hook call:
///
/// ```
/// use reins::agent::{AgentHook, HookContext, OutcomeAction, OutcomeEvent, ToolResult};
/// use std::sync::{Arc, Mutex};
///
/// /// Keeps every finished tool call, to look at after the run.
/// #[derive(Clone, Default)]
/// struct Finished(Arc<Mutex<Vec<ToolResult<'static>>>>);
///
/// impl AgentHook for Finished {
///     async fn on_outcome(&self, _: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
///         if let Some(result) = event.tool_outcome() {
///             self.0.lock().unwrap().push(result.clone().into_owned());
///         }
///         OutcomeAction::proceed()
///     }
/// }
/// ```
///
/// (Two words for the call, four for the output, four for its written text and one for a
/// masked outcome: the run builds one for every observed tool call, and its outcome hooks'
/// rule keeps it across their awaits.)
#[derive(Clone)]
pub struct ToolResult<'a> {
    call: Call<'a>,
    /// The output the model sees: the tool's own, until a hook rewrites it.
    output: Cow<'a, ToolOutput>,
    /// The text of a JSON `output`, written the first time something asks for it (every
    /// hook reading [`output_text`](ToolResult::output_text), then the run's history, share
    /// it); emptied when a hook rewrites the output.
    written: OnceLock<String>,
    /// The outcome with its text masked by a hook, in place of the call's own.
    masked: Option<Box<ToolOutcome>>,
}

/// The call a result is of: lent by the run, or owned once the result is kept.
#[derive(Clone)]
enum Call<'a> {
    Lent(&'a CallParts<'a>),
    Owned(Box<OwnedCall>),
}

/// What a [`ToolResult`] lent by the run refers to, kept by the run while its outcome hooks
/// are called.
pub(crate) struct CallParts<'a> {
    pub tool_name: &'a str,
    pub tool_call_id: &'a str,
    pub internal_call_id: &'a str,
    /// The arguments the tool ran with (with every dispatch hook's rewrite), and their text,
    /// written when something asked for it.
    pub args: &'a ArgsText<'a>,
    pub outcome: &'a ToolOutcome,
    pub extensions: &'a ToolResultExtensions,
    pub traits: Option<ToolTraits>,
    pub origin: Option<&'a str>,
    /// The tokens the tool reported spending ([`ToolCallContext::add_usage`](crate::tool::ToolCallContext::add_usage)).
    pub usage: Usage,
}

/// A [`ToolResult`]'s call, owned.
#[derive(Clone)]
struct OwnedCall {
    tool_name: String,
    tool_call_id: String,
    internal_call_id: String,
    /// The arguments' text ([`ArgsText::Written`]), which reads as the arguments would.
    args_text: ArgsText<'static>,
    outcome: ToolOutcome,
    extensions: ToolResultExtensions,
    traits: Option<ToolTraits>,
    origin: Option<String>,
    usage: Usage,
}

impl std::fmt::Debug for ToolResult<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolResult")
            .field("tool_name", &self.tool_name())
            .field("tool_call_id", &self.tool_call_id())
            .field("internal_call_id", &self.internal_call_id())
            .field("args", &self.args())
            .field("output", &self.output)
            .field("outcome", self.outcome())
            .field("extensions", self.extensions())
            .field("traits", &self.tool_traits())
            .field("origin", &self.tool_origin())
            .field("usage", &self.usage())
            .finish()
    }
}

impl<'a> ToolResult<'a> {
    /// The result of the call `parts` describes, whose tool returned `output`.
    #[inline]
    pub(crate) fn lent(parts: &'a CallParts<'a>, output: &'a ToolOutput) -> Self {
        ToolResult {
            call: Call::Lent(parts),
            output: Cow::Borrowed(output),
            written: OnceLock::new(),
            masked: None,
        }
    }

    /// Replaces the output the model sees (a hook's rewrite).
    #[inline]
    pub(crate) fn rewrite(&mut self, output: ToolOutput) {
        self.output = Cow::Owned(output);
        self.written = OnceLock::new();
    }

    /// Replaces the outcome's own text ([`ToolOutcome::text`]) with `text` (a hook's mask);
    /// an outcome without text is kept.
    pub(crate) fn mask_outcome(&mut self, text: Box<str>) {
        if self.outcome().text().is_some() {
            let masked = self.outcome().clone().with_text(text.into());
            self.masked = Some(Box::new(masked));
        }
    }

    /// The output a hook rewrote, if one did, and the outcome's text a hook masked, if one
    /// did.
    pub(crate) fn into_rewritten(self) -> (Option<ToolOutput>, Option<Box<str>>) {
        let output = match self.output {
            Cow::Owned(output) => Some(output),
            Cow::Borrowed(_) => None,
        };
        let outcome_text = self.masked.and_then(|masked| masked.text().map(Box::from));
        (output, outcome_text)
    }

    /// What the model will be shown in place of the tool's own output, if anything (the
    /// output's text if something had it written, so it is not written again, else the
    /// output a hook rewrote), and the outcome a hook masked, if one did.
    #[inline(always)]
    pub(crate) fn into_shown(self) -> (Option<ToolOutput>, Option<ToolOutcome>) {
        let ToolResult {
            call,
            output,
            written,
            masked,
        } = self;
        // The run's own result lends its call, which owns nothing: forgotten rather than
        // dropped through the enum's drop glue, out of line, once a tool call.
        if let Call::Lent(_) = call {
            std::mem::forget(call);
        }
        let shown = match (written.into_inner(), output) {
            (Some(text), _) => Some(ToolOutput::Text(text)),
            (None, Cow::Owned(output)) => Some(output),
            (None, Cow::Borrowed(_)) => None,
        };
        (shown, masked.map(|masked| *masked))
    }

    /// The same result, owning everything it borrowed from the run, to keep after the hook
    /// call returns.
    pub fn into_owned(self) -> ToolResult<'static> {
        // The masked outcome replaces the call's own: the copy keeps no unmasked text.
        let masked = self.masked.map(|masked| *masked);
        let call = match self.call {
            Call::Owned(mut call) => {
                if let Some(masked) = masked {
                    call.outcome = masked;
                }
                call
            }
            Call::Lent(parts) => Box::new(OwnedCall {
                tool_name: parts.tool_name.to_owned(),
                tool_call_id: parts.tool_call_id.to_owned(),
                internal_call_id: parts.internal_call_id.to_owned(),
                args_text: ArgsText::Written(parts.args.text().to_owned()),
                outcome: masked.unwrap_or_else(|| parts.outcome.clone()),
                extensions: parts.extensions.clone(),
                traits: parts.traits,
                origin: parts.origin.map(str::to_owned),
                usage: parts.usage,
            }),
        };
        ToolResult {
            call: Call::Owned(call),
            output: Cow::Owned(self.output.into_owned()),
            written: self.written,
            masked: None,
        }
    }

    /// Where the called tool comes from ([`Tool::origin`](crate::tool::Tool::origin): an MCP
    /// tool's server name); `None` for a tool of the application's own.
    pub fn tool_origin(&self) -> Option<&str> {
        match &self.call {
            Call::Lent(parts) => parts.origin,
            Call::Owned(call) => call.origin.as_deref(),
        }
    }

    /// What the called tool declares about itself ([`Tool::traits`](crate::tool::Tool::traits):
    /// an MCP tool's annotations, or what a [`tool_fn`](crate::tool::tool_fn) was given);
    /// `None` when it declares nothing or the model called a tool the agent does not have.
    pub fn tool_traits(&self) -> Option<ToolTraits> {
        match &self.call {
            Call::Lent(parts) => parts.traits,
            Call::Owned(call) => call.traits,
        }
    }
    /// The tool that was called.
    pub fn tool_name(&self) -> &str {
        match &self.call {
            Call::Lent(parts) => parts.tool_name,
            Call::Owned(call) => &call.tool_name,
        }
    }
    /// The provider's id of the call.
    pub fn tool_call_id(&self) -> &str {
        match &self.call {
            Call::Lent(parts) => parts.tool_call_id,
            Call::Owned(call) => &call.tool_call_id,
        }
    }
    /// reins' id of the call.
    pub fn internal_call_id(&self) -> &str {
        match &self.call {
            Call::Lent(parts) => parts.internal_call_id,
            Call::Owned(call) => &call.internal_call_id,
        }
    }
    /// The arguments the tool ran with, as JSON text.
    pub fn args(&self) -> &str {
        self.args_text().text()
    }
    /// The arguments the tool ran with, read as `T`.
    pub fn args_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        self.args_text().read_as()
    }
    /// The arguments the tool ran with as a JSON value: the model's own value borrowed when
    /// it has one, for the ready-made hooks.
    pub(crate) fn args_value(&self) -> Result<Cow<'_, serde_json::Value>, serde_json::Error> {
        self.args_text().read_value()
    }
    /// The model-visible output; [`output_text`](Self::output_text) is the text the model
    /// will see.
    pub fn output(&self) -> &ToolOutput {
        &self.output
    }
    /// The text the model will see for this result: the output's own text, or its JSON
    /// written once, however many hooks ask (and reused for the run's history).
    pub fn output_text(&self) -> &str {
        match &*self.output {
            ToolOutput::Text(text) | ToolOutput::Json(serde_json::Value::String(text)) => text,
            ToolOutput::Json(value) => self
                .written
                .get_or_init(|| crate::message::json_text(value)),
        }
    }
    /// The structured outcome: the call's own, unaffected by rewrites of the output, with its
    /// text masked where an earlier hook masked it
    /// ([`OutcomeAction::mask_tool_result`](crate::agent::OutcomeAction::mask_tool_result),
    /// as the [`Redaction`](crate::hooks::redaction::Redaction) hook does).
    pub fn outcome(&self) -> &ToolOutcome {
        if let Some(masked) = &self.masked {
            return masked;
        }
        match &self.call {
            Call::Lent(parts) => parts.outcome,
            Call::Owned(call) => &call.outcome,
        }
    }
    /// The tokens the tool reported spending on this call
    /// ([`ToolCallContext::add_usage`](crate::tool::ToolCallContext::add_usage): a tool that
    /// runs an agent of its own reports that agent's usage); zero for a tool that reports
    /// none, and for a call that did not run (skipped, denied, or answered by a decision).
    /// The run's usage counts them once; the [`Budget`](crate::hooks::budget::Budget) hook
    /// counts them against its token and cost limits.
    pub fn usage(&self) -> Usage {
        match &self.call {
            Call::Lent(parts) => parts.usage,
            Call::Owned(call) => call.usage,
        }
    }
    /// Metadata the tool attached, never sent to the model.
    pub fn extensions(&self) -> &ToolResultExtensions {
        match &self.call {
            Call::Lent(parts) => parts.extensions,
            Call::Owned(call) => &call.extensions,
        }
    }

    fn args_text(&self) -> &ArgsText<'_> {
        match &self.call {
            Call::Lent(parts) => parts.args,
            Call::Owned(call) => &call.args_text,
        }
    }
}
