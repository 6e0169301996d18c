//! The warnings and errors reins's libraries log (`tracing::warn!`, `tracing::error!`), shown
//! on stderr as the CLI's own lines are: `reins: warning: MESSAGE (TARGET: FIELD=VALUE ...)`.
//! Without this, a tool an MCP server lists that is left out (its `outputSchema` does not
//! compile, it is too large), a server's own log messages, a model call retried, would all
//! go unsaid.
//!
//! A line of reins's own words (its crates' events, not a server's log line they pass on)
//! leaves out its target, and the fields its message says in words ([`SAID_IN_WORDS`]),
//! unless `REINS_LOG` is set to something other than the default: a person reads `the
//! model call failed (could not reach the server); trying again in 0.5 s (attempt 2 of 4)`,
//! not the module it came from and its `wait_ms`. A dependency's line keeps its target: it
//! says whose line it is.
//!
//! `REINS_LOG` chooses what is shown, in `RUST_LOG`'s syntax (`reins_mcp=info`, `off`);
//! `warn` when it is unset or invalid. It is not `RUST_LOG` because that already chooses
//! what is exported over OTLP (reins-otel): a debug trace exported should not also flood the
//! terminal. Cargo does the same with `CARGO_LOG`.
//!
//! What a line shows came, in part, from a server or a model (a server's log message, an
//! error's text): it is escaped with [`reins::text::printable`], and its line breaks too, so
//! it can neither act on the terminal nor pass for a line of the CLI's own. A field whose
//! name says it holds a credential (a session id, a token, a header) is never shown; the
//! libraries log no secrets, and this keeps a dependency's from reaching the screen. A line
//! is written on a line of its own ([`crate::terminal_lines`]): while the "thinking" spinner
//! is hidden, and after a line feed when the answer streaming to the terminal left its line
//! open. With `--json`, stdout keeps its JSON lines: these go to stderr,
//! which holds people's text.

use reins::text::printable;
use std::fmt::{self, Write as _};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::FilterExt as _;
use tracing_subscriber::filter::combinator::And;
use tracing_subscriber::layer::{Context, Layer};

/// The variable that chooses what is shown, in `RUST_LOG`'s syntax.
pub const ENV: &str = "REINS_LOG";

/// What is shown when [`ENV`] is unset, empty or invalid: every crate's warnings and errors,
/// none of their information or debugging lines.
const DEFAULT: &str = "warn";

/// The most characters of one message or field value shown: a server's log message can be
/// as long as it likes, and a terminal screen cannot.
const MAX_CHARS: usize = 2000;

/// Parts of field names that hold credentials, never shown (see the [module](self)). An
/// empty field (a server log's unnamed `logger`) is not shown either.
const SECRET_FIELDS: [&str; 7] = [
    "session", "token", "auth", "header", "cookie", "secret", "password",
];

/// Fields reins's own events carry for tracing's other consumers (an OTLP collector, a log
/// of the application's) and say in their message in words: the retried model call's kind
/// of failure, attempt and wait (`... trying again in 0.5 s (attempt 2 of 4)`), a fallback's
/// kind of failure. Not repeated after the message unless [`ENV`] asks for detail.
const SAID_IN_WORDS: [&str; 4] = ["error.type", "attempt", "max_attempts", "wait_ms"];

/// The targets of reins's crates whose messages are another program's words (an MCP
/// server's log line): their target says whose words they are, and is always shown.
const THEIR_WORDS: [&str; 1] = ["reins_mcp::server_log"];

/// Dependencies quieter than [`DEFAULT`], each a target and its directive, added to
/// [`ENV`]'s directives unless one of them names the target (`rmcp=warn` shows rmcp's).
///
/// rmcp (the MCP SDK under reins-mcp): its warnings and errors repeat what reins-mcp says
/// itself, in its own words (a server that cannot be reached or went away: `worker quit with
/// fatal: Transport channel closed`), and some carry a request's error with the server's
/// whole URL, whose query or user information can hold a key that reins-mcp keeps out of
/// everything it shows.
///
/// llama.cpp (the local model, logging through `llama-cpp-2`; the crate's own lines are
/// `llama_cpp_2`'s): it warns while loading a model that then runs as it should (a context
/// shorter than the model was trained for, a tokenizer's end-of-generation tokens); its
/// errors say why a model did not load, which the error reins reports does not.
const QUIET_DEPENDENCIES: [(&str, &str); 3] = [
    ("rmcp", "rmcp=off"),
    ("llama-cpp-2", "llama-cpp-2=error"),
    ("llama_cpp_2", "llama_cpp_2=error"),
];

/// The filter of [`StderrLayer`] for [`ENV`]'s value `value`: its directives, or
/// [`DEFAULT`]'s when it is unset, empty or not a filter ([`unreadable`] says why), and
/// [`QUIET_DEPENDENCIES`]' directives for the targets they name none of: both must let an
/// event through, so a quiet dependency is never shown more than `value` asks (`off` shows
/// nothing).
pub fn filter<S: Subscriber>(value: Option<&str>) -> And<EnvFilter, EnvFilter, S> {
    let directives = match EnvFilter::try_new(directives(value)) {
        Ok(_) => directives(value),
        Err(_) => DEFAULT,
    };
    let targets: Vec<&str> = directives
        .split(',')
        .map(|directive| {
            directive
                .split(['[', '='])
                .next()
                .unwrap_or_default()
                .trim()
        })
        .collect();
    let mut quiet = "trace".to_owned();
    for (target, directive) in QUIET_DEPENDENCIES {
        if !targets.iter().any(|named| named.starts_with(target)) {
            quiet.push(',');
            quiet.push_str(directive);
        }
    }
    let asked = EnvFilter::try_new(directives).unwrap_or_else(|_| EnvFilter::new(DEFAULT));
    let quiet = EnvFilter::try_new(quiet).unwrap_or_else(|_| EnvFilter::new("trace"));
    asked.and(quiet)
}

/// Why [`ENV`]'s value `value` is not a filter, if it is not.
pub fn unreadable(value: Option<&str>) -> Option<String> {
    EnvFilter::try_new(directives(value))
        .err()
        .map(|error| format!("{ENV} is not a filter ({error}); showing warnings and errors"))
}

/// `value`'s directives, or [`DEFAULT`] when it is unset or empty.
fn directives(value: Option<&str>) -> &str {
    value
        .map(str::trim)
        .filter(|value| !value.is_empty())
        .unwrap_or(DEFAULT)
}

/// Whether [`ENV`]'s value `value` asks for more than the default: it is set to a filter
/// other than [`DEFAULT`] (`info`, `warn,reins=debug`, even `error`: whoever set it is
/// looking at the logs), so reins's own lines say their target and every field.
fn asks_for_detail(value: Option<&str>) -> bool {
    unreadable(value).is_none() && directives(value) != DEFAULT
}

/// The layer that writes each event it is given on stderr (filter it with [`filter`]).
pub struct StderrLayer {
    /// Whether reins's own lines say their target and every field ([`asks_for_detail`]).
    detailed: bool,
}

impl StderrLayer {
    /// The layer for [`ENV`]'s value `value`.
    pub fn new(value: Option<&str>) -> Self {
        StderrLayer {
            detailed: asks_for_detail(value),
        }
    }
}

impl<S: Subscriber> Layer<S> for StderrLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let metadata = event.metadata();
        let line = line(*metadata.level(), metadata.target(), &fields, self.detailed);
        crate::terminal_lines::write_line(&line);
    }
}

/// Whether `target` is of reins's own words: one of its crates' (`reins`, `reins::tools`,
/// `reins_mcp`, ...), not one passing on [`THEIR_WORDS`].
fn reins_own_words(target: &str) -> bool {
    let of_reins = target
        .strip_prefix("reins")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with("::") || rest.starts_with('_'));
    of_reins && !THEIR_WORDS.contains(&target)
}

/// An event's message and its other fields, in order, as text.
#[derive(Default)]
struct Fields {
    message: String,
    others: Vec<(&'static str, String)>,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.keep(field, value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.keep(field, format!("{value:?}"));
    }
}

impl Fields {
    fn keep(&mut self, field: &Field, value: String) {
        let name = field.name();
        if name == "message" {
            self.message = value;
        } else if !value.is_empty() && !SECRET_FIELDS.iter().any(|part| name.contains(part)) {
            self.others.push((name, value));
        }
    }
}

/// The line shown for an event at `level` of `target` with `fields`, line feed included;
/// of reins's own words, its target and the fields [`SAID_IN_WORDS`] only when `detailed`.
fn line(level: Level, target: &str, fields: &Fields, detailed: bool) -> String {
    let level = match level {
        Level::ERROR => "error",
        Level::WARN => "warning",
        Level::INFO => "info",
        Level::DEBUG => "debug",
        Level::TRACE => "trace",
    };
    let brief = !detailed && reins_own_words(target);
    let said: Vec<String> = fields
        .others
        .iter()
        .filter(|(name, _)| !(brief && SAID_IN_WORDS.contains(name)))
        .map(|(name, value)| {
            let value = shown(value);
            if value.contains([' ', ',', '(', ')', '"']) {
                format!("{name}=\"{}\"", value.replace('"', "\\\""))
            } else {
                format!("{name}={value}")
            }
        })
        .collect();
    let mut line = format!("reins: {level}: {}", shown(&fields.message));
    let _ = match (brief, said.is_empty()) {
        (true, true) => Ok(()),
        (true, false) => write!(line, " ({})", said.join(", ")),
        (false, true) => write!(line, " ({target})"),
        (false, false) => write!(line, " ({target}: {})", said.join(", ")),
    };
    line.push('\n');
    line
}

/// `text` as one line safe to show, without the line break it may end with: at most [`MAX_CHARS`] characters, line breaks written
/// `\n` and `\r`, everything else [`printable`] escapes escaped.
fn shown(text: &str) -> String {
    // llama.cpp ends its messages with a line feed.
    let text = text.trim_end_matches(['\n', '\r']);
    let cut = match text.char_indices().nth(MAX_CHARS) {
        Some((at, _)) => format!("{}… ({} bytes)", &text[..at], text.len()),
        None => text.to_owned(),
    };
    let one_line = cut.replace('\n', "\\n").replace('\r', "\\r");
    printable(&one_line).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::layer::SubscriberExt;

    /// Records the line of each event it is given, as [`StderrLayer`] shows it (with or
    /// without detail).
    #[derive(Clone, Default)]
    struct Recording(Arc<Mutex<Vec<String>>>, bool);

    impl<S: Subscriber> Layer<S> for Recording {
        fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
            let mut fields = Fields::default();
            event.record(&mut fields);
            let metadata = event.metadata();
            if let Ok(mut lines) = self.0.lock() {
                lines.push(line(*metadata.level(), metadata.target(), &fields, self.1));
            }
        }
    }

    impl Recording {
        fn lines(&self) -> Vec<String> {
            self.0.lock().map(|lines| lines.clone()).unwrap_or_default()
        }
    }

    /// The lines a subscriber filtered by `REINS_LOG=value` shows of a reins warning, a
    /// dependency's information, a reins debugging line, an rmcp error, and a warning and an
    /// error of llama.cpp.
    fn shown_for(value: Option<&str>) -> Vec<String> {
        let recording = Recording(Arc::default(), StderrLayer::new(value).detailed);
        let layer = recording.clone().with_filter(filter(value));
        tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
            tracing::warn!(target: "reins_mcp", server = "dict", "left out");
            tracing::info!(target: "hyper", "connected");
            tracing::debug!(target: "reins", "turn");
            tracing::error!(target: "rmcp::transport::worker", "worker quit");
            tracing::warn!(target: "llama-cpp-2", module = "llama_context", "n_ctx < n_ctx_train\n");
            tracing::error!(target: "llama-cpp-2", module = "llama_model_load", "no such file\n");
        });
        recording.lines()
    }

    const LEFT_OUT: &str = "reins: warning: left out (server=dict)\n";
    const LEFT_OUT_IN_DETAIL: &str = "reins: warning: left out (reins_mcp: server=dict)\n";
    const CONNECTED: &str = "reins: info: connected (hyper)\n";
    const TURN: &str = "reins: debug: turn (reins)\n";
    const NO_FILE: &str = "reins: error: no such file (llama-cpp-2: module=llama_model_load)\n";
    const N_CTX: &str = "reins: warning: n_ctx < n_ctx_train (llama-cpp-2: module=llama_context)\n";
    const QUIT: &str = "reins: error: worker quit (rmcp::transport::worker)\n";

    #[test]
    fn warnings_are_shown_unless_reins_log_says_otherwise() {
        assert_eq!(shown_for(None), [LEFT_OUT, NO_FILE]);
        assert_eq!(shown_for(Some(" ")), [LEFT_OUT, NO_FILE]);
        assert_eq!(shown_for(Some("not a [filter")), [LEFT_OUT, NO_FILE]);
        assert!(unreadable(Some("not a [filter")).is_some_and(|why| why.contains("REINS_LOG")));
        assert_eq!(unreadable(None), None);
        assert_eq!(unreadable(Some("reins_mcp=debug")), None);
        assert!(shown_for(Some("off")).is_empty());
        assert_eq!(shown_for(Some("warn")), [LEFT_OUT, NO_FILE]);
        assert_eq!(
            shown_for(Some("info")),
            [LEFT_OUT_IN_DETAIL, CONNECTED, NO_FILE]
        );
        // A target matches by prefix: `reins` names reins_mcp too.
        assert_eq!(
            shown_for(Some("warn,reins=debug")),
            [LEFT_OUT_IN_DETAIL, TURN, NO_FILE]
        );
    }

    #[test]
    fn quiet_dependencies_say_more_only_when_asked_by_name() {
        assert_eq!(shown_for(Some("error")), [NO_FILE]);
        assert!(shown_for(Some("trace,reins=off,hyper=off,llama-cpp-2=off")).is_empty());
        assert_eq!(shown_for(Some("rmcp=error")), [QUIT]);
        assert_eq!(
            shown_for(Some("warn,rmcp::transport=warn")),
            [LEFT_OUT_IN_DETAIL, QUIT, NO_FILE]
        );
        assert_eq!(shown_for(Some("off,llama-cpp-2=warn")), [N_CTX, NO_FILE]);
    }

    #[test]
    fn a_line_is_one_escaped_line_naming_level_target_and_fields() {
        let fields = Fields {
            message: "disk full\r\n\u{1b}[2Jreins: approved".to_owned(),
            others: vec![
                ("server", "files".to_owned()),
                ("why", "no \"space\"".to_owned()),
            ],
        };
        assert_eq!(
            line(Level::WARN, "reins_mcp::server_log", &fields, false),
            "reins: warning: disk full\\r\\n\\u001b[2Jreins: approved \
             (reins_mcp::server_log: server=files, why=\"no \\\"space\\\"\")\n"
        );
        let long = Fields {
            message: "x".repeat(MAX_CHARS + 5),
            others: Vec::new(),
        };
        let shown = line(Level::ERROR, "rmcp", &long, false);
        assert!(shown.starts_with("reins: error: xxx"), "{shown}");
        assert!(shown.ends_with("x… (2005 bytes) (rmcp)\n"), "{shown}");
        assert_eq!(shown.chars().filter(|c| *c == 'x').count(), MAX_CHARS);
    }

    /// The lines a subscriber shows with `REINS_LOG=value` of a retried model call, as
    /// reins logs it, and of a server's log line reins-mcp passes on.
    fn retry_shown_for(value: Option<&str>) -> Vec<String> {
        let recording = Recording(Arc::default(), StderrLayer::new(value).detailed);
        let subscriber = tracing_subscriber::registry().with(recording.clone());
        tracing::subscriber::with_default(subscriber, || {
            tracing::event!(
                target: "reins::providers::transport::send",
                Level::WARN,
                error.type = "transport",
                attempt = 1,
                max_attempts = 4,
                wait_ms = 479,
                "the model call failed (could not reach the server); trying again in 0.5 s \
                 (attempt 2 of 4)"
            );
            tracing::warn!(target: "reins_mcp::server_log", server = "dict", "cache stale");
        });
        recording.lines()
    }

    #[test]
    fn reins_own_lines_say_their_target_and_fields_in_words_only_when_asked() {
        let retried = "reins: warning: the model call failed (could not reach the server); \
                       trying again in 0.5 s (attempt 2 of 4)";
        let server = "reins: warning: cache stale (reins_mcp::server_log: server=dict)\n";
        for value in [None, Some(""), Some("warn"), Some("not a [filter")] {
            assert_eq!(
                retry_shown_for(value),
                [format!("{retried}\n"), server.to_owned()],
                "{value:?}"
            );
        }
        assert_eq!(
            retry_shown_for(Some("warn,reins_mcp=debug")),
            [
                format!(
                    "{retried} (reins::providers::transport::send: error.type=transport, \
                     attempt=1, max_attempts=4, wait_ms=479)\n"
                ),
                server.to_owned()
            ]
        );
        assert!(!reins_own_words("reinsurance") && reins_own_words("reins_otel"));
    }

    #[test]
    fn fields_naming_credentials_are_not_shown() {
        let recording = Recording::default();
        let subscriber = tracing_subscriber::registry().with(recording.clone());
        tracing::subscriber::with_default(subscriber, || {
            tracing::error!(
                target: "rmcp",
                session_id = "s3cr3t",
                auth_header = "Bearer k",
                status = 500,
                "fail to delete session"
            );
        });
        assert_eq!(
            recording.lines(),
            ["reins: error: fail to delete session (rmcp: status=500)\n"]
        );
    }
}
