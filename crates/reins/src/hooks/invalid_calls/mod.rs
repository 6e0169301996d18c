//! [`InvalidCalls`]: a tool call the model misnamed is repaired to the tool it plainly means
//! (`SaveNote`, `save-note` or `functions.save_note` for `save_note`), and any other call to
//! a tool it may not call is answered with the tools it may, and the model asked again.
//!
//! Small models misname tools often: in another case or style, with the `functions.` or
//! `default_api.` prefix of the format they were trained on, or a tool that does not exist.
//! Without a hook such a call ends the run with
//! [`PromptError::UnknownToolCall`](crate::agent::PromptError::UnknownToolCall).

mod names;
#[cfg(test)]
mod tests;

use crate::agent::{
    AgentHook, HookContext, InvalidToolCallAction, InvalidToolCallContext, InvalidToolCallReason,
    StepEventKind,
};
use names::{listed_tools, meant_tool, quoted};

/// Repairs misnamed tool calls and answers the others with feedback naming the tools the
/// model may call.
///
/// For a call to a tool that is unknown or not allowed this turn:
///
/// - **Repair.** A name that means exactly one tool the model may call this turn is
///   rewritten to it ([`InvalidToolCallAction::repair`]): the same name in another case
///   (`save_NOTE`), with `-` for `_` (`save-note`), in camel case for snake case or back
///   (`SaveNote`, `saveNote`, `getHTTPStatus` for `get_http_status`), or behind a
///   `functions.`, `function.`, `tools.`, `tool.` or `default_api.` prefix. There is no
///   guessing by edit distance: `save_notes` is not `save_note`, which might be another
///   tool. A name that would match two tools (`SaveNote` with both `save_note` and
///   `saveNote` available) is not repaired, and neither is a call to a tool this turn does
///   not allow (its [`ToolChoice`](crate::message::ToolChoice), `active_tools`): that tool
///   is not among the model's choices, so it is never "repaired" to itself.
/// - **Feedback.** Any other such call drops the model's turn and asks the model again
///   ([`InvalidToolCallAction::retry`]), telling it the name it called is not a tool it may
///   call and listing the ones it may (those sharing a word with the name it called first,
///   at most 50 of them, each name as a JSON string, so that no name an MCP server chose
///   reads as part of the sentence); when its arguments were not a JSON object either, it
///   says so too.
///
/// Arguments that are not a JSON object, sent to a tool the model may call, are left to the
/// run (the hook returns `None`): the run answers that call with what is wrong with them
/// (not JSON, cut off at the token limit, nested too deep, an integer too large) and runs the
/// turn's other calls, which is better than dropping the turn.
///
/// **Retries must be allowed.** A run asks the model again only as often as its
/// [`max_invalid_tool_call_retries`](crate::agent::PromptRequest::max_invalid_tool_call_retries)
/// allows (by default the agent's
/// [`default_max_invalid_tool_call_retries`](crate::agent::AgentBuilder::default_max_invalid_tool_call_retries),
/// 0 unless set); past it, the call fails the run with `UnknownToolCall` as it would without
/// the hook. Each retry is a model call, counted against `max_turns`. Repairs need no retry.
///
/// **Composing.** `on_invalid_tool_call` goes to the first hook with a decision: hooks
/// registered before this one that return `None` leave the call to it, and one that decides
/// wins; hooks after it never see the calls it decides about (every unknown or disallowed
/// call). Register yours first to handle some names your way.
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::hooks::invalid_calls::InvalidCalls;
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::tool_fn;
/// use serde_json::json;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Note {
///     text: String,
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let save_note = tool_fn("save_note", "Saves a note.", |note: Note| async move {
///     Ok::<_, std::convert::Infallible>(format!("saved: {}", note.text))
/// });
/// let model = ScriptedModel::new([
///     // Repaired to `save_note`, and run.
///     Turn::tool_call("functions.SaveNote", json!({"text": "milk"})),
///     // No such tool: the model is told which there are, and asked again.
///     Turn::tool_call("remember", json!({"text": "eggs"})),
///     Turn::text("Saved."),
/// ]);
/// let agent = AgentBuilder::new(model.clone())
///     .tool(save_note)
///     .add_hook(InvalidCalls::new())
///     .default_max_invalid_tool_call_retries(2)
///     .build();
///
/// assert_eq!(agent.prompt("Note milk and eggs.").await.unwrap(), "Saved.");
/// let requests = model.requests();
/// assert_eq!(requests[1].history.last().unwrap().text(), "saved: milk");
/// let feedback = requests[2].history.last().unwrap().text();
/// assert_eq!(
///     feedback,
///     r#"There is no tool named "remember". Call one of these by its exact name: "save_note"."#
/// );
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct InvalidCalls {
    repair: bool,
    feedback_prefix: Option<String>,
}

impl Default for InvalidCalls {
    fn default() -> Self {
        InvalidCalls::new()
    }
}

impl InvalidCalls {
    /// Repairs names that mean one tool, and answers every other unknown or disallowed call
    /// with feedback.
    pub fn new() -> Self {
        InvalidCalls {
            repair: true,
            feedback_prefix: None,
        }
    }

    /// Whether a name that means one tool is repaired to it (`true` by default); with
    /// `false`, every unknown or disallowed call is answered with feedback, so that the model
    /// itself writes the name again.
    pub fn repair(mut self, repair: bool) -> Self {
        self.repair = repair;
        self
    }

    /// Text put before the feedback (a space between them), such as an instruction your
    /// model follows better than the feedback alone.
    pub fn feedback_prefix(mut self, text: impl Into<String>) -> Self {
        self.feedback_prefix = Some(text.into()).filter(|text| !text.trim().is_empty());
        self
    }

    /// What this hook decides about `call`: the same answer its
    /// [`on_invalid_tool_call`](AgentHook::on_invalid_tool_call) gives, for a hook of your
    /// own that combines it with other policies. `None` for arguments that are not a JSON
    /// object sent to a tool the model may call (the run answers those).
    pub fn decide(&self, call: &InvalidToolCallContext) -> Option<InvalidToolCallAction> {
        if call.reason == InvalidToolCallReason::MalformedArguments {
            return None;
        }
        if self.repair && call.reason == InvalidToolCallReason::UnknownTool {
            let meant = meant_tool(&call.tool_name, &call.available_tools)
                .filter(|&tool| tool != call.tool_name);
            if let Some(tool) = meant {
                return Some(InvalidToolCallAction::repair(tool));
            }
        }
        Some(InvalidToolCallAction::retry(self.feedback(call)))
    }

    /// What the model is told about `call`, a call to a tool it may not call.
    fn feedback(&self, call: &InvalidToolCallContext) -> String {
        let mut text = String::new();
        if let Some(prefix) = &self.feedback_prefix {
            text.push_str(prefix);
            text.push(' ');
        }
        let called = quoted(&call.tool_name);
        text.push_str(&match call.reason {
            InvalidToolCallReason::NotAllowed => {
                format!("The tool {called} may not be called now.")
            }
            _ => format!("There is no tool named {called}."),
        });
        match listed_tools(&call.tool_name, &call.available_tools) {
            Some(listed) => {
                text.push_str(" Call one of these by its exact name: ");
                text.push_str(&listed);
                text.push('.');
            }
            None => text.push_str(" No tool may be called now: answer without calling one."),
        }
        let object = serde_json::from_str::<serde_json::Value>(&call.args)
            .is_ok_and(|args| args.is_object());
        if !object {
            text.push_str(" A call's arguments must be a JSON object.");
        }
        text
    }
}

impl AgentHook for InvalidCalls {
    fn observes(&self, kind: StepEventKind) -> bool {
        kind == StepEventKind::InvalidToolCall
    }

    async fn on_invalid_tool_call(
        &self,
        _: &HookContext,
        call: &InvalidToolCallContext,
    ) -> Option<InvalidToolCallAction> {
        self.decide(call)
    }
}
