//! What every protocol's codec does alike, written once: the system text and tool list of a
//! request, token counts and tool calls read from an answer, the response a turn's parts make,
//! and reading a stream's events.
//!
//! Where APIs differ only in their words (a key, the shape of a tool definition), the helper
//! takes the difference as a parameter; what one API alone does stays in its codec.

mod call_ids;
mod request;
mod response;
mod stream;

pub(crate) use call_ids::CallIds;
pub(crate) use request::{
    insert_some, merge_additional_params, render_documents, system_text, system_texts, tool_list,
};
pub(crate) use response::{
    AnswerKeys, arguments_from_object, arguments_from_text, arguments_text, call_id, call_name,
    nameless_call, response,
};
pub(crate) use stream::{
    Chunks, Step, check_event_weight, cut_stream, event_json, event_type, tool_call_chunk,
};

/// Implements [`Protocol`](crate::providers::Protocol) (and its seal) for a codec: a struct
/// whose `model` field is the model name. The first line names the functions that write its
/// request body (from the codec, the request, and whether it is streamed), read a whole answer,
/// and the decoder of a streamed one (started from its `Default`); the others are expressions
/// over the names they bind, for the provider's name in telemetry, the request's path and
/// whether the model takes an output schema natively:
///
/// ```text
/// protocol! {
///     Chat => request::body, response::parse, stream::ChatStreamDecoder;
///     provider(chat) => chat.provider,
///     path(_chat, _stream) => "chat/completions".to_owned(),
///     native_output(chat) => chat.quirks.native_output,
/// }
/// ```
macro_rules! protocol {
    (
        $codec:ty => $encode:path, $decode:path, $decoder:ty;
        provider($provider_codec:ident) => $provider:expr,
        path($path_codec:ident, $stream:ident) => $path:expr,
        native_output($native_codec:ident) => $native:expr $(,)?
    ) => {
        impl $crate::providers::transport::sealed::Sealed for $codec {}

        impl $crate::providers::Protocol for $codec {
            type Decoder = $decoder;

            fn provider_name(&self) -> &'static str {
                let $provider_codec = self;
                $provider
            }

            fn model(&self) -> &str {
                &self.model
            }

            fn path(&self, stream: bool) -> String {
                let ($path_codec, $stream) = (self, stream);
                $path
            }

            fn encode(
                &self,
                request: &$crate::completion::CompletionRequest,
                stream: bool,
            ) -> Result<serde_json::Value, $crate::completion::CompletionError> {
                $encode(self, request, stream)
            }

            fn decode(
                &self,
                body: serde_json::Value,
            ) -> Result<$crate::completion::CompletionResponse, $crate::completion::CompletionError>
            {
                $decode(body)
            }

            fn decoder(&self) -> Self::Decoder {
                <$decoder>::default()
            }

            fn supports_native_output(&self) -> bool {
                let $native_codec = self;
                $native
            }
        }
    };
}
pub(crate) use protocol;
