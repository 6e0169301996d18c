//! Real model providers: OpenAI (Chat Completions and Responses), Anthropic, Gemini, and any
//! server that speaks Chat Completions.
//!
//! Every provider has the same shape: `Provider::from_env()?` (or `Provider::builder()`),
//! then `.completion(model)` gives a [`CompletionModel`](crate::completion::CompletionModel).
//! API keys are held as [`ApiKey`], which never shows in `Debug` output, logs or errors.

pub mod anthropic;
pub mod gemini;
pub mod http;
#[cfg(feature = "local")]
pub mod local;
pub mod openai;
pub mod openai_compatible;
pub mod sse;

pub use http::{ApiKey, ProviderError, RetryPolicy, Timeouts};

/// Context documents as one block of text, the same for every provider.
pub(crate) fn render_documents(request: &crate::completion::CompletionRequest) -> String {
    let mut text = String::from("Context documents:\n");
    for document in &request.documents {
        text.push_str(&format!(
            "<document id=\"{}\">\n{}\n</document>\n",
            document.id, document.text
        ));
    }
    text
}
