//! What reins's built-in spans need from the tracing subscriber that records them.
//!
//! Every run is traced with `tracing` spans named after the OpenTelemetry GenAI semantic
//! conventions (`invoke_agent`, `chat {model}`, `execute_tool {tool}`), whatever subscriber is
//! installed; with none, the spans cost a disabled-callsite check. Two things need more than
//! `tracing` can say, and a subscriber provides them through a [`Telemetry`] value that it
//! exposes from `Subscriber::downcast_raw` (the `reins-otel` crate's layer does):
//!
//! - a [`SpanBridge`], which reads a span's trace context so a durable run stores it, sets a
//!   resumed run's span under the stored context (or, for a run resumed after it was cut
//!   off mid-run, links a new trace to it), and records string-array attributes;
//! - a content [`Redactor`]: system instructions, prompts, completions, tool arguments and
//!   results are recorded only when one is set, and only as it returns them. Messages are
//!   recorded in the conventions' JSON shape (a `role` and typed `parts`), which trace viewers
//!   show as a chat. Each part (a text, a tool call's arguments, a tool's result) is cut to
//!   [`Telemetry::content_part_limit`] bytes first, [`DEFAULT_CONTENT_PART_LIMIT`] unless set;
//!   a part longer than that is given to the redactor whole before it is cut, so a secret
//!   across the cut is found whole (not shortened below what a pattern matches). A span's
//!   input messages are chosen first (the newest, within a budget) and only those redacted.

pub(crate) mod messages;
mod part_limit;

pub(crate) use part_limit::{PartCut, PartLimit, shown_description, shown_name};
use std::fmt;
use std::sync::Arc;
use tracing::Span;

/// A piece of run content that may be recorded on a span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContentKind {
    /// The agent's preamble sent to the model (`gen_ai.system_instructions`), as a JSON array
    /// of parts: `[{"type":"text","content":"..."}]`.
    SystemInstructions,
    /// The messages sent to the model (`gen_ai.input.messages`), as a JSON array of
    /// messages: `[{"role":"user","parts":[{"type":"text","content":"..."}]}]`.
    InputMessages,
    /// The model's answer (`gen_ai.output.messages`), as a JSON array of one message with
    /// its `finish_reason`. As text, an answer's `output.value`, what a suspended run waits
    /// for, and a failed model call's error (what the provider answered), the message of
    /// its `chat` span's `exception` event.
    OutputMessages,
    /// A tool call's arguments (`gen_ai.tool.call.arguments`), as JSON.
    ToolArguments,
    /// A successful tool call's result (`gen_ai.tool.call.result`), as text; a failed, denied
    /// or skipped call has none (its `reins.tool.outcome` says what happened). What a failed
    /// call told the model (the tool's error) is recorded as this kind too, as the message of
    /// the `execute_tool` span's `exception` event.
    ToolResult,
}

impl ContentKind {
    /// The span attribute the content is recorded under.
    pub fn attribute(self) -> &'static str {
        match self {
            ContentKind::SystemInstructions => "gen_ai.system_instructions",
            ContentKind::InputMessages => "gen_ai.input.messages",
            ContentKind::OutputMessages => "gen_ai.output.messages",
            ContentKind::ToolArguments => "gen_ai.tool.call.arguments",
            ContentKind::ToolResult => "gen_ai.tool.call.result",
        }
    }
}

/// The most bytes of one part of recorded content (a text part, a tool call's arguments, a
/// tool's result) unless [`Telemetry::content_part_limit`] sets another: 64 KiB.
pub const DEFAULT_CONTENT_PART_LIMIT: usize = 64 * 1024;

/// Decides what of a piece of content is recorded: the text to record, or `None` to record
/// nothing. Called only when a subscriber records the span.
pub type Redactor = Arc<dyn Fn(ContentKind, String) -> Option<String> + Send + Sync>;

/// The link between reins's spans and the trace they are exported in. A subscriber that
/// exports spans implements it (the `reins-otel` crate does, over OpenTelemetry) and hands it
/// to reins in its [`Telemetry`].
///
/// ```
/// use reins::observe::{SpanBridge, Telemetry};
/// use tracing::Span;
///
/// /// A bridge for a backend that keeps one fixed trace: every run joins it.
/// struct OneTrace;
///
/// impl SpanBridge for OneTrace {
///     fn capture(&self, _span: &Span) -> Option<String> {
///         Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".to_owned())
///     }
///     fn continue_from(&self, _span: &Span, _captured: &str) {}
///     fn rename(&self, span: &Span, name: String) {
///         span.record("otel.name", name.as_str());
///     }
///     fn record_strings(&self, span: &Span, key: &'static str, values: Vec<String>) {
///         span.record(key, values.join(",").as_str());
///     }
/// }
///
/// let telemetry = Telemetry::new().with_bridge(OneTrace);
/// let bridge = telemetry.bridge().expect("the bridge just set");
/// assert!(bridge.capture(&Span::none()).unwrap().starts_with("00-"));
/// ```
pub trait SpanBridge: Send + Sync + 'static {
    /// The span's trace context in a form that survives a restart (W3C `traceparent`), or
    /// `None` when the span is not exported.
    fn capture(&self, span: &Span) -> Option<String>;

    /// Makes `span`, not yet entered, a child of the context `capture` returned (possibly in
    /// another process), so a resumed run continues the same trace.
    fn continue_from(&self, span: &Span, captured: &str);

    /// Links `span`, not yet entered, to the context `capture` returned, without joining its
    /// trace: `span` starts a trace of its own that points back at that one. A run resumed
    /// after it was cut off mid-run (its process died) starts so, as the span it would
    /// continue never ended, and was never exported: a child of it would hang under a parent
    /// no backend received. By default nothing is linked (the span starts a trace of its own
    /// all the same).
    fn link_to(&self, span: &Span, captured: &str) {
        let _ = (span, captured);
    }

    /// Renames a span that may already have started (its `otel.name` field is read only
    /// until then): a `chat` span learns its model after the hooks that choose it ran in it.
    fn rename(&self, span: &Span, name: String);

    /// Records a string-array attribute (`tracing` fields hold one value each).
    fn record_strings(&self, span: &Span, key: &'static str, values: Vec<String>);
}

/// What a subscriber tells reins's spans; see the [module docs](self).
///
/// ```
/// use reins::observe::{ContentKind, Telemetry};
///
/// // Record prompts and answers, but never tool results.
/// let telemetry = Telemetry::new().capture_content(|kind, text| {
///     (kind != ContentKind::ToolResult).then_some(text)
/// });
/// assert!(telemetry.captures_content());
/// ```
#[derive(Clone)]
pub struct Telemetry {
    bridge: Option<Arc<dyn SpanBridge>>,
    redactor: Option<Redactor>,
    part_limit: PartLimit,
}

impl Default for Telemetry {
    fn default() -> Self {
        Telemetry {
            bridge: None,
            redactor: None,
            part_limit: PartLimit(DEFAULT_CONTENT_PART_LIMIT),
        }
    }
}

impl fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Telemetry")
            .field("bridge", &self.bridge.is_some())
            .field("captures_content", &self.redactor.is_some())
            .field("content_part_limit", &self.part_limit.0)
            .finish()
    }
}

impl Telemetry {
    /// Telemetry with no bridge and no content capture.
    pub fn new() -> Self {
        Telemetry::default()
    }

    /// Sets the bridge to the exported trace.
    pub fn with_bridge(mut self, bridge: impl SpanBridge) -> Self {
        self.bridge = Some(Arc::new(bridge));
        self
    }

    /// Records message content, as `redact` returns it (return `None` to drop a piece).
    ///
    /// A part of a piece longer than the [content part limit](Self::content_part_limit) is
    /// given to `redact` on its own first (with the piece's kind; a message's text is then
    /// plain text, not the piece's JSON), and cut after: a secret across the cut is so seen
    /// whole. The piece, its parts cut, is then given to `redact` as always; a part it drops
    /// (`None`) is recorded as `…[withheld]`. Of a `chat` span's input messages, only those
    /// kept on the span (see [`content_part_limit`](Self::content_part_limit)) are given to
    /// it: the earlier ones left out never are.
    pub fn capture_content(
        mut self,
        redact: impl Fn(ContentKind, String) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.redactor = Some(Arc::new(redact));
        self
    }

    /// Whether content is recorded.
    pub fn captures_content(&self) -> bool {
        self.redactor.is_some()
    }

    /// Cuts each part of recorded content (a message's text, a tool call's arguments, a
    /// tool's result) to its first `bytes` (at a char boundary; default
    /// [`DEFAULT_CONTENT_PART_LIMIT`]), ended by a marker with its whole length:
    /// `…[truncated, 200000 bytes in all]`. A message holds a tool result again on every
    /// later `chat` span, so one huge part would otherwise be written many times over.
    /// Parts are cut before the messages' JSON is written, which stays valid; arguments cut
    /// are their JSON text as a string. A span's input messages are also kept within 16
    /// parts' worth of bytes and at least 1 MiB (1 MiB by default), the newest first, after a `system` message
    /// saying how many earlier ones were left out: every `chat` span holds the history again.
    /// `usize::MAX` records parts and inputs whole.
    ///
    /// ```
    /// use reins::observe::Telemetry;
    ///
    /// let telemetry = Telemetry::new()
    ///     .capture_content(|_, text| Some(text))
    ///     .content_part_limit(4 * 1024);
    /// assert_eq!(telemetry.max_content_part_bytes(), 4 * 1024);
    /// ```
    pub fn content_part_limit(mut self, bytes: usize) -> Self {
        self.part_limit = PartLimit(bytes);
        self
    }

    /// The most bytes of one part of recorded content (see
    /// [`content_part_limit`](Self::content_part_limit)).
    pub fn max_content_part_bytes(&self) -> usize {
        self.part_limit.0
    }

    /// The bridge, when one is set.
    pub fn bridge(&self) -> Option<&dyn SpanBridge> {
        self.bridge.as_deref()
    }

    /// Runs `f` with the telemetry of the subscriber that records `span`; `None` when the
    /// span is disabled or its subscriber exposes no telemetry.
    pub(crate) fn of<R>(span: &Span, f: impl FnOnce(&Telemetry) -> R) -> Option<R> {
        span.with_subscriber(|(_, dispatch)| dispatch.downcast_ref::<Telemetry>().map(f))
            .flatten()
    }

    /// Records `kind` on `span` when content capture is on; `content` is built only then,
    /// each of its parts cut to the limit it is given.
    pub(crate) fn record_content(
        span: &Span,
        kind: ContentKind,
        content: impl FnOnce(PartCut<'_>) -> Option<String>,
    ) {
        Telemetry::record_content_at(span, kind, kind.attribute(), content);
    }

    /// Records `kind` under `attribute` (content that some viewers read elsewhere, redacted
    /// as its kind).
    pub(crate) fn record_content_at(
        span: &Span,
        kind: ContentKind,
        attribute: &'static str,
        content: impl FnOnce(PartCut<'_>) -> Option<String>,
    ) {
        if let Some(text) = Telemetry::content(span, kind, content) {
            span.record(attribute, text.as_str());
        }
    }

    /// `kind` as recorded for `span` (cut and redacted), for content recorded elsewhere than
    /// in one of its fields (an event's); `None` when content capture is off, the span is
    /// disabled, or the redactor drops it.
    pub(crate) fn content(
        span: &Span,
        kind: ContentKind,
        content: impl FnOnce(PartCut<'_>) -> Option<String>,
    ) -> Option<String> {
        if span.is_disabled() {
            return None;
        }
        Telemetry::of(span, |telemetry| {
            let redact = telemetry.redactor.as_ref()?;
            redact(
                kind,
                content(PartCut::new(telemetry.part_limit, redact, kind))?,
            )
        })
        .flatten()
    }
}
