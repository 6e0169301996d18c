//! `reins run` and `reins runs resume`: drive a run to its end, streaming the answer and the
//! tool calls as they happen (or one JSON event per line with `--json`), and say how it ended
//! with the exit code.

use futures::StreamExt;
use reins::agent::{PromptError, PromptStream, StreamItem};
use reins::hooks::budget::BudgetExceeded;
use reins::hooks::loop_breaker::LoopDetected;
use reins::text::{PrintableStream, printable};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

/// How a run ended, as `reins run` and `reins runs resume` exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The run answered (exit 0).
    Done,
    /// A call waits for a person (exit 3).
    Suspended,
    /// A budget, the turn limit or the loop breaker stopped the run (exit 4).
    Limit,
    /// Anything else went wrong (exit 1).
    Error,
    /// Ctrl-C or SIGTERM stopped the run, which can be resumed (exit 130, as a shell reports
    /// a command SIGINT ended).
    Interrupted,
}

impl Ending {
    /// The process exit code for this ending.
    pub fn exit_code(self) -> ExitCode {
        ExitCode::from(match self {
            Ending::Done => 0,
            Ending::Error => 1,
            Ending::Suspended => 3,
            Ending::Limit => 4,
            Ending::Interrupted => EXIT_INTERRUPTED,
        })
    }
}

/// Exit code of a usage error or an invalid agent file.
pub const EXIT_INVALID: u8 = 2;

/// Exit code of a run stopped by Ctrl-C or SIGTERM: 128 + SIGINT.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Where events go: the terminal (text on stdout, the rest on stderr) or JSON lines.
pub struct Output {
    json: bool,
    quiet: bool,
    /// The agent file as one shell word, for the commands suggested to people.
    agent_file: String,
    answering: bool,
    announced_calls: HashSet<String>,
    answer: AnswerText,
    /// The message of the error the run ended with, quiet or not (the inbox shows a failed
    /// resume's on the run's page).
    failure: Option<String>,
    /// The `started` event, printed before the next event: by then the run is stored (a
    /// durable run is written before its first model call), so a process killed right after
    /// naming its run leaves a run that `runs resume` finds.
    started: std::cell::Cell<Option<Value>>,
}

impl Output {
    /// JSON lines when `json`, else text for people.
    pub fn new(json: bool) -> Self {
        Output {
            json,
            quiet: false,
            agent_file: "AGENT".to_owned(),
            answering: false,
            announced_calls: HashSet::new(),
            answer: AnswerText::for_stdout(),
            failure: None,
            started: std::cell::Cell::new(None),
        }
    }

    /// The message of the error the run ended with, if it ended with one.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// Nothing printed but an interruption (runs resumed by the web inbox).
    pub fn quiet() -> Self {
        Output {
            quiet: true,
            ..Output::new(true)
        }
    }

    fn event(&self, value: Value) {
        if self.quiet {
            return;
        }
        let mut stdout = std::io::stdout().lock();
        if let Some(started) = self.started.take() {
            let _ = writeln!(stdout, "{started}");
        }
        let _ = writeln!(stdout, "{value}");
        let _ = stdout.flush();
    }

    /// Shows a spinner while the model thinks (people on a terminal only).
    fn thinking(&mut self) {
        if self.json || !std::io::stderr().is_terminal() {
            return;
        }
        crate::spinner::start();
    }

    fn stop_thinking(&mut self) {
        crate::spinner::stop();
    }

    /// Names the agent file in the commands suggested to people.
    pub fn agent_file(mut self, path: &std::path::Path) -> Self {
        self.agent_file = crate::shell_word::path(path);
        self
    }

    /// Says which run started: at once for people, with the next JSON event for scripts.
    pub fn started(&self, run: &str, agent: &str, model: &str) {
        if self.json {
            self.started.set(Some(
                json!({"event": "started", "run": run, "agent": agent, "model": model}),
            ));
        } else {
            errln!("reins: {run} ({agent}, {model})");
        }
    }

    fn item(&mut self, item: StreamItem) {
        match item {
            StreamItem::Text(delta) => {
                self.stop_thinking();
                if self.json {
                    self.event(json!({"event": "text", "delta": delta}));
                } else {
                    if !self.answering {
                        crate::terminal_lines::open_line("assistant: ");
                        self.answering = true;
                    }
                    self.answer.print(&delta);
                }
            }
            StreamItem::ToolCallDelta {
                internal_call_id,
                tool_name: Some(name),
                ..
            } if self.announced_calls.insert(internal_call_id.clone()) => {
                self.stop_thinking();
                self.end_text_line();
                if self.json {
                    self.event(
                        json!({"event": "tool_call", "call": internal_call_id, "tool": name}),
                    );
                } else {
                    errln!("[tool] {} ({internal_call_id})", printable(&name));
                }
            }
            StreamItem::ToolResult {
                tool_name,
                result,
                outcome,
                ..
            } => {
                self.stop_thinking();
                self.end_text_line();
                if self.json {
                    self.event(json!({
                        "event": "tool_result",
                        "tool": tool_name,
                        "result": result,
                        "outcome": outcome,
                    }));
                } else {
                    errln!(
                        "[tool] {} -> {}",
                        printable(&tool_name),
                        printable(&first_line(&result, 200))
                    );
                }
                self.thinking();
            }
            StreamItem::TurnDiscarded { turn } => {
                self.end_text_line();
                if self.json {
                    self.event(json!({"event": "turn_discarded", "turn": turn}));
                } else {
                    errln!("[turn {turn} discarded]");
                }
            }
            StreamItem::Final(response) => {
                self.stop_thinking();
                self.end_text_line();
                let usage = response.usage();
                if self.json {
                    self.event(json!({
                        "event": "done",
                        "run": response.run_id(),
                        "answer": response.output,
                        "turns": response.turns(),
                        "input_tokens": usage.input_tokens,
                        "output_tokens": usage.output_tokens,
                    }));
                } else {
                    errln!("{}", done_line(response.run_id(), response.turns(), &usage));
                }
            }
            _ => {}
        }
    }

    fn end_text_line(&mut self) {
        if self.answering {
            self.answer.end_line();
            self.answering = false;
        }
    }

    /// Says that Ctrl-C or SIGTERM stopped `run`, and how to go on with it: `resumable` is
    /// `Ok` when it can be resumed at once, else why not.
    pub fn interrupted(&mut self, run: &str, resumable: Result<(), String>) {
        self.stop_thinking();
        self.end_text_line();
        // A quiet run (one the inbox resumed) still says so, for whoever stopped the inbox.
        match (&resumable, self.json && !self.quiet) {
            (Ok(()), true) => self.event(json!({"event": "interrupted", "run": run})),
            (Err(why), true) => {
                self.event(json!({"event": "interrupted", "run": run, "message": why}));
            }
            (Ok(()), false) => errln!(
                "reins: interrupted; run {run} is saved, continue it with `reins runs resume {} \
                 {run}`",
                self.agent_file
            ),
            (Err(why), false) => errln!("reins: interrupted; run {run} {why}"),
        }
    }

    /// Reports how the run ended and returns the ending.
    fn failed(&mut self, error: &PromptError) -> Ending {
        self.stop_thinking();
        self.end_text_line();
        let run = error.run_id().unwrap_or_default().to_owned();
        if let PromptError::Suspended { run: suspended } = error {
            let pending: Vec<Value> = suspended
                .pending()
                .map(|call| {
                    let mut shown = json!({
                        "call": call.internal_call_id,
                        "tool": call.call.name,
                        "args": call.call.arguments,
                        "reason": call.suspended,
                    });
                    // Only when so: a call a stopped run may have run (`runs skip|supply`).
                    if call.is_in_doubt() {
                        shown["in_doubt"] = json!(true);
                    }
                    shown
                })
                .collect();
            if self.json {
                self.event(json!({"event": "suspended", "run": run, "pending": pending}));
            } else {
                let waiting: Vec<crate::decide_commands::Waiting<'_>> = suspended
                    .pending()
                    .map(|call| crate::decide_commands::Waiting {
                        call: &call.internal_call_id,
                        tool: &call.call.name,
                        in_doubt: call.is_in_doubt(),
                    })
                    .collect();
                errln!(
                    "[suspended] run {run} waits for {} decision(s):",
                    waiting.len()
                );
                let then = crate::decide_commands::Then::Resume;
                for line in crate::decide_commands::lines(&self.agent_file, &run, &waiting, then) {
                    errln!("{line}");
                }
                errln!(
                    "{}",
                    crate::decide_commands::shown_in_full(&self.agent_file, &run)
                );
            }
            return Ending::Suspended;
        }
        let (ending, kind) = if BudgetExceeded::from_error(error).is_some() {
            (Ending::Limit, "budget")
        } else if matches!(error, PromptError::MaxTurns { .. }) {
            (Ending::Limit, "max_turns")
        } else if LoopDetected::from_error(error).is_some() {
            (Ending::Limit, "loop")
        } else {
            (Ending::Error, "error")
        };
        let message = error.to_string();
        if self.json {
            self.event(json!({"event": kind, "run": run, "message": message}));
        } else {
            errln!("reins: {}", printable(&message));
        }
        self.failure = Some(message);
        ending
    }
}

/// The answer's text streamed to stdout: on a terminal, [`PrintableStream`]'s (an escape
/// sequence in it is shown, never acted on); piped, as the model wrote it.
pub struct AnswerText {
    on_terminal: Option<PrintableStream>,
}

impl AnswerText {
    /// For this process's stdout.
    pub fn for_stdout() -> Self {
        AnswerText {
            on_terminal: std::io::stdout()
                .is_terminal()
                .then(PrintableStream::default),
        }
    }

    /// Prints one piece of the answer at once.
    pub fn print(&mut self, delta: &str) {
        match &mut self.on_terminal {
            Some(shown) => out!("{}", shown.push(delta)),
            None => out!("{delta}"),
        }
        let _ = std::io::stdout().flush();
    }

    /// Ends the answer's line.
    pub fn end_line(&mut self) {
        if let Some(shown) = &mut self.on_terminal {
            out!("{}", shown.finish());
        }
        outln!();
    }
}

/// The first line of `text`, at most `max_chars` long, with `…` when something was cut.
pub fn first_line(text: &str, max_chars: usize) -> String {
    let text = text.trim();
    let line = text.lines().next().unwrap_or_default();
    let mut short: String = line.chars().take(max_chars).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    short
}

/// Drives `stream` to its end through `output`.
pub async fn drive(mut stream: PromptStream, output: &mut Output) -> Ending {
    output.thinking();
    while let Some(item) = stream.next().await {
        match item {
            Ok(StreamItem::Final(response)) => {
                output.item(StreamItem::Final(response));
                return Ending::Done;
            }
            Ok(item) => output.item(item),
            Err(error) => return output.failed(&error),
        }
    }
    output.stop_thinking();
    Ending::Error
}

/// A fresh run id: short enough to type.
pub fn new_run_id() -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("run-{}", &id[..12])
}

/// How a run that ended with an answer is reported to people: `[done] run r: 2 model call(s),
/// 120 prompt + 30 generated tokens`. A provider that reports no token counts (some local
/// servers) is said to, rather than shown as having used none.
pub fn done_line(run_id: &str, turns: usize, usage: &reins::completion::Usage) -> String {
    format!(
        "[done] run {run_id}: {turns} model call(s), {}",
        token_counts(usage)
    )
}

/// A run's tokens as people are told them: `3 prompt + 2 generated tokens`, or that the
/// provider gave no counts (some servers report none; "0 tokens" would be untrue).
pub fn token_counts(usage: &reins::completion::Usage) -> String {
    if usage.input_tokens == 0 && usage.output_tokens == 0 {
        "no token counts from the provider".to_owned()
    } else {
        format!(
            "{} prompt + {} generated tokens",
            usage.input_tokens, usage.output_tokens
        )
    }
}

#[cfg(test)]
mod tests {
    use super::first_line;

    #[test]
    fn a_tool_result_is_shown_on_one_line_marked_when_cut() {
        assert_eq!(first_line("saved: a note\n", 200), "saved: a note");
        assert_eq!(first_line("one\ntwo", 200), "one…");
        assert_eq!(first_line("abcdef", 3), "abc…");
    }
}
