//! One [`Fixture`] per protocol: how to build a model of it, and the wire data of its replies.
//! The contract tests are written once against this trait, so every protocol is held to the
//! same behaviour with its own bytes on the wire.

pub mod anthropic;
pub mod chat;
pub mod gemini;
pub mod responses;

use crate::providers::support::{KEY, fast_retries, test_timeouts};
use reins::completion::{CompletionModel, Usage};
use reins::providers::{Limits, ProviderError, Redirects, RetryPolicy, Timeouts};
use serde_json::Value;
use std::fmt::Debug;

/// What a test builds its client with.
#[derive(Clone, Debug)]
pub struct Settings {
    pub key: Option<String>,
    pub headers: Vec<(String, String)>,
    pub timeouts: Timeouts,
    pub retry: RetryPolicy,
    pub limits: Limits,
    pub redirects: Redirects,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            key: Some(KEY.to_owned()),
            headers: Vec::new(),
            timeouts: test_timeouts(),
            retry: fast_retries(),
            limits: Limits::default(),
            redirects: Redirects::default(),
        }
    }
}

impl Settings {
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    pub fn timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    pub fn key(mut self, key: &str) -> Self {
        self.key = Some(key.to_owned());
        self
    }

    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    pub fn redirects(mut self, redirects: Redirects) -> Self {
        self.redirects = redirects;
        self
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }
}

/// The text every reasoning reply reasons with, and the answer it gives.
pub const REASONING: &str = "6 times 7";
pub const REASONED_ANSWER: &str = "42";

/// One protocol: its client, and its wire data. Every reply of a fixture reports the same
/// token counts ([`Fixture::usage`]); tool-call replies call `add(1, 2)` then `add(3, 4)`.
pub trait Fixture: 'static {
    type Builder: Debug;
    type Client: Debug;
    type Model: CompletionModel + Clone + Debug;

    /// A builder pointed at the server at `root` (`http://host:port`, no path), with
    /// `settings` applied.
    fn builder(root: &str, settings: &Settings) -> Self::Builder;
    fn build(builder: Self::Builder) -> Result<Self::Client, ProviderError>;
    fn model(client: &Self::Client) -> Self::Model;

    /// The path of a blocking call, and of a streamed one (without its query).
    fn blocking_path() -> &'static str;
    fn stream_path() -> &'static str;
    /// The header that carries the key, and its value for `key`.
    fn auth(key: &str) -> (&'static str, String);
    /// What a cut stream's error names as the end that never came.
    fn end_marker() -> &'static str;

    /// A blocking reply answering `text`.
    fn text_reply(text: &str) -> Value;
    /// The same reply streamed, its text split into `pieces`; the last event ends the turn
    /// (drop it and the stream is cut).
    fn text_stream(pieces: &[&str]) -> Vec<String>;
    /// A blocking reply with two parallel calls of `add`.
    fn tool_calls_reply() -> Value;
    /// The same reply streamed.
    fn tool_calls_stream() -> Vec<String>;
    /// The ids of the two calls, in order.
    fn tool_call_ids() -> [&'static str; 2];
    /// A blocking reply reasoning [`REASONING`] then answering [`REASONED_ANSWER`].
    fn reasoning_reply() -> Value;
    /// The same reply streamed.
    fn reasoning_stream() -> Vec<String>;
    /// The token counts every reply reports.
    fn usage() -> Usage;
    /// The provider's error body for `message`.
    fn error_body(message: &str) -> Value;
    /// The tool results a request body sends back: `(call id, result)`, in order.
    fn sent_tool_results(body: &Value) -> Vec<(String, String)>;
}

/// A model of protocol `F` talking to the server at `root`.
pub fn model_at<F: Fixture>(root: &str, settings: &Settings) -> F::Model {
    F::model(&client_at::<F>(root, settings))
}

/// A client of protocol `F` talking to the server at `root`.
pub fn client_at<F: Fixture>(root: &str, settings: &Settings) -> F::Client {
    F::build(F::builder(root, settings)).expect("the test client builds")
}

/// The default model of protocol `F` talking to the server at `root`.
pub fn model_of<F: Fixture>(root: &str) -> F::Model {
    model_at::<F>(root, &Settings::default())
}

/// An event of `data` alone, as OpenAI Chat Completions and Gemini write them.
pub fn data_event(data: &str) -> String {
    format!("data: {data}\n\n")
}

/// An event named by its JSON `type`, as Anthropic and the Responses API write them.
pub fn typed_event(event: &Value) -> String {
    let name = event["type"].as_str().expect("an event with a type");
    format!("event: {name}\ndata: {event}\n\n")
}
