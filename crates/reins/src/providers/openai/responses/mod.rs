//! The OpenAI Responses API (`POST {base}/responses`).
//!
//! # How a request is written
//!
//! - The preamble, every system message of the history and the context documents become the
//!   `instructions` text, in that order, separated by blank lines.
//! - User messages become `{role: "user", content}` input items. An assistant message becomes,
//!   part by part and in order, `{role: "assistant", content}` items for its text,
//!   `{type: "function_call", call_id, name, arguments}` items for its tool calls (arguments as
//!   a JSON string) and, see below, reasoning items. Tool results become
//!   `{type: "function_call_output", call_id, output}` items.
//! - Tools are sent flat (`{type: "function", name, description, parameters, strict: false}`).
//!   `strict` is sent as `false` because the Responses API otherwise rewrites every schema
//!   into strict mode, which makes optional arguments mandatory.
//! - `max_tokens` is sent as `max_output_tokens`; an output schema as
//!   `text.format = {type: "json_schema", name: "output", schema}`;
//!   [`additional_params`](crate::completion::CompletionRequest::additional_params) (a JSON
//!   object) are merged over the top-level keys last, so they can set anything (e.g.
//!   `reasoning`).
//!
//! # Reasoning
//!
//! The Responses API returns reasoning as items that should be sent back on the next turn,
//! which only works when the server can decode them: either by their id from its own storage,
//! or from their `encrypted_content`. reins' [`Reasoning`] holds only a text and an opaque
//! signature, so:
//!
//! - a reasoning item's summary texts (or, when it has no summary, its reasoning texts) become
//!   [`Reasoning::text`], joined with blank lines; its `encrypted_content`, when the response
//!   carries one, becomes [`Reasoning::signature`];
//! - by default reasoning is never sent back (as with Chat Completions): the model simply does
//!   not see its earlier reasoning;
//! - with [`ResponsesModel::with_encrypted_reasoning`], requests ask for
//!   `include: ["reasoning.encrypted_content"]` with `store: false` (nothing is kept on
//!   OpenAI's side), and every reasoning part of the history that has a signature is sent back
//!   as `{type: "reasoning", summary, encrypted_content: signature}`. Only turn this on for
//!   histories whose reasoning signatures came from this API.
//!
//! # A streamed answer
//!
//! Text, reasoning and function-call arguments stream from their delta events; an item a
//! server finishes (`response.output_item.done`) streams whatever its deltas did not carry.
//! The run then acts on the output `response.completed` lists, as a blocking call would, but
//! held to what streamed, so what a hook or a UI saw in the deltas is what the run acts on:
//! what the final output adds (an item a server sent whole and never as deltas, the rest of a
//! text) streams before the answer ends, and a final output that contradicts the stream
//! (other text, a call streamed with other arguments or a name other than the one listed, a
//! call streamed but not listed) fails the turn with a [`CompletionError::Decode`] saying
//! what disagreed, rather than run a call no one saw streamed. Reasoning is only ever added
//! to: servers stream a reasoning item's text and list its summary, and no tool acts on it.
//!
//! A function call's `arguments` are JSON text; some compatible servers send a JSON object
//! instead, which is read as the same arguments, streamed or not.
//!
//! # Finish reasons
//!
//! `incomplete` with reason `max_output_tokens` is [`FinishReason::Length`], with
//! `content_filter` [`FinishReason::ContentFilter`]; a completed turn with function calls is
//! [`FinishReason::ToolCalls`]; a completed turn whose message is a refusal keeps the refusal
//! as its text and finishes with [`FinishReason::ContentFilter`]; other completed turns are
//! [`FinishReason::Stop`]. A `failed` response is a [`CompletionError`], and so is one not
//! finished yet (`queued` or `in_progress`, as `background: true` in `additional_params`
//! answers): reins does not poll a background response, and its empty output is no answer.
//!
//! [`CompletionError`]: crate::completion::CompletionError
//! [`CompletionError::Decode`]: crate::completion::CompletionError::Decode
//! [`Reasoning`]: crate::message::Reasoning
//! [`Reasoning::text`]: crate::message::Reasoning::text
//! [`Reasoning::signature`]: crate::message::Reasoning::signature
//! [`FinishReason::Length`]: crate::completion::FinishReason::Length
//! [`FinishReason::ContentFilter`]: crate::completion::FinishReason::ContentFilter
//! [`FinishReason::ToolCalls`]: crate::completion::FinishReason::ToolCalls
//! [`FinishReason::Stop`]: crate::completion::FinishReason::Stop

mod request;
mod response;
mod stream;

use crate::providers::codec;
use crate::providers::transport::HttpModel;

/// A model served through the OpenAI Responses API. Build it with
/// [`OpenAI::responses`](super::OpenAI::responses).
pub type ResponsesModel = HttpModel<Responses>;

/// The Responses protocol for one model (see [`ResponsesModel`]).
#[derive(Debug, Clone)]
pub struct Responses {
    model: String,
    native_output: bool,
    encrypted_reasoning: bool,
}

impl Responses {
    pub(crate) fn new(model: String) -> Self {
        Responses {
            model,
            native_output: true,
            encrypted_reasoning: false,
        }
    }
}

codec::protocol! {
    Responses => request::body, response::parse, stream::ResponsesStreamDecoder;
    provider(_responses) => super::PROVIDER_NAME,
    path(_responses, _stream) => "responses".to_owned(),
    native_output(responses) => responses.native_output,
}

impl HttpModel<Responses> {
    /// Declares whether the server supports `text.format: json_schema` (true by default;
    /// structured output falls back to an output tool when false).
    pub fn with_native_output(self, supported: bool) -> Self {
        self.with_protocol(|responses| responses.native_output = supported)
    }

    /// Asks for reasoning as encrypted content (`include: ["reasoning.encrypted_content"]`,
    /// `store: false`) and sends the reasoning parts of the history back with it, so a
    /// reasoning model keeps its reasoning across the turns of a run (off by default; see the
    /// [module documentation](self)).
    pub fn with_encrypted_reasoning(self, enabled: bool) -> Self {
        self.with_protocol(|responses| responses.encrypted_reasoning = enabled)
    }
}
