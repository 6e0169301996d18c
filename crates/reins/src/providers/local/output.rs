//! Splits the model's generated text into answer text, tool calls and stop sequences, as it
//! is generated.

use super::grammar::{Limits, ToolGrammar};
use super::template::{CALL_CLOSE, CALL_OPEN};
use crate::completion::{
    CompletionResponse, FinishReason, RawResponse, StreamAssembler, StreamChunk, Usage,
};
use serde_json::Value;

/// Whether generation goes on after a piece of text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Feed {
    /// Keep generating.
    Continue,
    /// A stop sequence was generated: stop.
    Stop,
}

/// What a turn's output is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Text (`<tool_call>` is plain text).
    Text,
    /// Text and tool calls, each opened by `<tool_call>`.
    Tools,
    /// One call: the prompt ends with the opening tag.
    ForcedCall,
    /// A JSON answer under the output schema's grammar.
    Json,
}

impl Mode {
    /// The mode of a turn under `grammar`.
    pub fn of(grammar: &ToolGrammar) -> Self {
        match grammar {
            ToolGrammar::None => Mode::Text,
            ToolGrammar::Lazy(_) => Mode::Tools,
            ToolGrammar::Forced(_) => Mode::ForcedCall,
            ToolGrammar::Json(_) => Mode::Json,
        }
    }
}

/// Reads generated text incrementally and emits stream chunks.
#[derive(Debug)]
pub(super) struct OutputParser {
    /// Whether `<tool_call>` opens a call (false: it is plain text).
    tools: bool,
    stops: Vec<String>,
    /// Answer text generated but not emitted yet: it may begin a tag or stop sequence, or be
    /// trailing whitespace.
    pending: String,
    /// Inside a call: the text since the opening tag.
    call: Option<String>,
    assembler: StreamAssembler,
    calls: usize,
    /// Everything generated, as the model wrote it.
    raw: String,
    /// The answer is JSON under the output schema's grammar.
    json: bool,
    /// The grammar's bounds on strings and arrays.
    limits: Limits,
    /// A call's arguments reached a bound of `limits`: the grammar may have cut them.
    cut: bool,
}

impl OutputParser {
    /// A parser for a turn in `mode`, stopping at any of `stops`.
    pub fn new(mode: Mode, stops: Vec<String>, limits: Limits) -> Self {
        let tools = matches!(mode, Mode::Tools | Mode::ForcedCall);
        let forced = mode == Mode::ForcedCall;
        OutputParser {
            tools,
            stops: stops.into_iter().filter(|stop| !stop.is_empty()).collect(),
            pending: String::new(),
            call: forced.then(String::new),
            assembler: StreamAssembler::new(),
            calls: 0,
            raw: if forced {
                format!("{CALL_OPEN}\n")
            } else {
                String::new()
            },
            json: mode == Mode::Json,
            limits,
            cut: false,
        }
    }

    /// Everything generated so far (with the prefilled opening tag of a forced call).
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// Reads the next piece of generated text, pushing the chunks it completes onto `out`.
    pub fn push(&mut self, delta: &str, out: &mut Vec<StreamChunk>) -> Feed {
        self.raw.push_str(delta);
        match self.call.as_mut() {
            Some(call) => call.push_str(delta),
            None => self.pending.push_str(delta),
        }
        loop {
            if let Some(call) = self.call.as_mut() {
                let Some(end) = call.find(CALL_CLOSE) else {
                    return Feed::Continue;
                };
                let rest = call.split_off(end);
                let body = std::mem::take(call);
                self.call = None;
                self.emit_call(&body, out);
                self.pending = rest.get(CALL_CLOSE.len()..).unwrap_or_default().to_owned();
                continue;
            }
            let open = self.tools.then(|| self.pending.find(CALL_OPEN)).flatten();
            let stop = self
                .stops
                .iter()
                .filter_map(|stop| self.pending.find(stop.as_str()))
                .min();
            match (open, stop) {
                (_, Some(stop)) if open.is_none_or(|open| stop < open) => {
                    let text = self.pending.get(..stop).unwrap_or_default().to_owned();
                    self.emit_text(text.trim_end(), out);
                    self.pending.clear();
                    return Feed::Stop;
                }
                (Some(open), _) => {
                    let text = self.pending.get(..open).unwrap_or_default().to_owned();
                    self.emit_text(text.trim_end(), out);
                    let after = self
                        .pending
                        .get(open + CALL_OPEN.len()..)
                        .unwrap_or_default();
                    self.call = Some(after.to_owned());
                    self.pending.clear();
                }
                _ => {
                    let keep = self.holdback();
                    let cut = self.pending.len() - keep;
                    let rest = self.pending.split_off(cut);
                    let text = std::mem::replace(&mut self.pending, rest);
                    self.emit_text(&text, out);
                    return Feed::Continue;
                }
            }
        }
    }

    /// How many trailing bytes of `pending` must wait: trailing whitespace, or a suffix that
    /// may begin the opening tag or a stop sequence.
    fn holdback(&self) -> usize {
        let text = self.pending.as_str();
        let mut keep = 0;
        let markers = self
            .tools
            .then_some(CALL_OPEN)
            .into_iter()
            .chain(self.stops.iter().map(String::as_str));
        for marker in markers {
            for (index, _) in text.char_indices() {
                let suffix = text.get(index..).unwrap_or_default();
                if marker.len() > suffix.len() && marker.starts_with(suffix) {
                    keep = keep.max(suffix.len());
                    break;
                }
            }
        }
        // Whitespace before what is held back waits too: it is dropped before a call.
        let head = text.get(..text.len() - keep).unwrap_or_default();
        text.len() - head.trim_end().len()
    }

    fn emit_text(&mut self, text: &str, out: &mut Vec<StreamChunk>) {
        if !text.is_empty() {
            self.assembler.text(text);
            out.push(StreamChunk::Text(text.to_owned()));
        }
    }

    /// Emits one call from the text between its tags. Text that is not a call object becomes a
    /// call whose arguments are that text (and whose name is empty when none can be read), so
    /// the run reports it as an invalid tool call.
    fn emit_call(&mut self, body: &str, out: &mut Vec<StreamChunk>) {
        let body = body.trim();
        let (name, arguments) = match serde_json::from_str::<Value>(body) {
            Ok(Value::Object(mut call)) => match call.remove("name") {
                Some(Value::String(name)) => {
                    let arguments = match call
                        .remove("arguments")
                        .or_else(|| call.remove("parameters"))
                    {
                        None | Some(Value::Null) => "{}".to_owned(),
                        // Arguments sent as a JSON string are read as the JSON inside it.
                        Some(Value::String(text)) => text,
                        // Read with the call: an integer beyond 64 bits in them was
                        // rounded, and the model's text is written back for the run to refuse.
                        Some(other) => crate::json_integers::exact_text(&other, body)
                            .unwrap_or_else(|| other.to_string()),
                    };
                    if serde_json::from_str(&arguments)
                        .is_ok_and(|arguments| self.limits.reached_by(&arguments))
                    {
                        self.cut = true;
                    }
                    (name, arguments)
                }
                _ => (String::new(), body.to_owned()),
            },
            _ => (read_name(body).unwrap_or_default(), body.to_owned()),
        };
        self.calls += 1;
        let id = format!("call_{}", uuid::Uuid::new_v4().simple());
        self.assembler.tool_call(&id, Some(&name), &arguments);
        out.push(StreamChunk::ToolCall {
            id,
            name: Some(name),
            delta: arguments,
        });
    }

    /// Ends the turn: emits what is still held back and assembles the response. `truncated`:
    /// generation stopped at the token limit or the end of the context. A call or JSON answer
    /// that reached a bound of the grammar is reported as truncated too.
    pub fn finish(
        mut self,
        truncated: bool,
        usage: Usage,
        raw: RawResponse,
        out: &mut Vec<StreamChunk>,
    ) -> CompletionResponse {
        if let Some(call) = self.call.take() {
            self.emit_call(&call, out);
        }
        let text = std::mem::take(&mut self.pending);
        if self.json
            && serde_json::from_str(self.raw.trim())
                .is_ok_and(|answer| self.limits.reached_by(&answer))
        {
            self.cut = true;
        }
        self.emit_text(text.trim_end(), out);
        let reason = if truncated || self.cut {
            FinishReason::Length
        } else if self.calls > 0 {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        };
        self.assembler.finish(usage, Some(reason), None, raw)
    }
}

/// The `"name": "..."` of a call object that is not valid JSON, when it can be read.
fn read_name(body: &str) -> Option<String> {
    let after = body.get(body.find("\"name\"")? + 6..)?;
    let after = after
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('"')?;
    Some(after.get(..after.find('"')?)?.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::AssistantContent;
    use serde_json::json;

    const LIMITS: Limits = Limits {
        string_length: 10,
        array_items: 3,
    };

    fn new_parser(mode: Mode, stops: &[&str]) -> OutputParser {
        OutputParser::new(mode, stops.iter().map(|s| s.to_string()).collect(), LIMITS)
    }

    fn run(parser: &mut OutputParser, pieces: &[&str]) -> (Vec<StreamChunk>, Feed) {
        let mut out = Vec::new();
        let mut feed = Feed::Continue;
        for piece in pieces {
            feed = parser.push(piece, &mut out);
            if feed == Feed::Stop {
                break;
            }
        }
        (out, feed)
    }

    fn texts(chunks: &[StreamChunk]) -> String {
        chunks
            .iter()
            .filter_map(|c| match c {
                StreamChunk::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn text_then_a_call_split_across_pieces() {
        let mut parser = new_parser(Mode::Tools, &[]);
        let pieces = [
            "Let me",
            " add.\n<tool",
            "_call>\n{\"name\": \"add\", ",
            "\"arguments\": {\"a\": 1}}\n</tool_",
            "call>",
        ];
        let (mut out, feed) = run(&mut parser, &pieces);
        assert_eq!(feed, Feed::Continue);
        assert_eq!(texts(&out), "Let me add.");
        let response = parser.finish(false, Usage::default(), RawResponse::none(), &mut out);
        let parts: Vec<_> = response.content.iter().cloned().collect();
        assert!(matches!(&parts[0], AssistantContent::Text(t) if t.text == "Let me add."));
        let AssistantContent::ToolCall(call) = &parts[1] else {
            panic!("{parts:?}")
        };
        assert_eq!(
            (call.name.as_str(), &call.arguments),
            ("add", &json!({"a": 1}))
        );
        assert_eq!(response.finish_reason, Some(FinishReason::ToolCalls));
    }

    #[test]
    fn a_stop_sequence_ends_the_text_even_across_pieces() {
        let mut parser = new_parser(Mode::Text, &["END"]);
        let (out, feed) = run(&mut parser, &["one two E", "ND three"]);
        assert_eq!(feed, Feed::Stop);
        assert_eq!(texts(&out), "one two");
    }

    #[test]
    fn without_tools_the_tag_is_text_and_partial_markers_are_flushed() {
        let mut parser = new_parser(Mode::Text, &["STOP"]);
        let (mut out, _) = run(&mut parser, &["a <tool_call> b ST"]);
        let response = parser.finish(true, Usage::default(), RawResponse::none(), &mut out);
        assert_eq!(response.text(), "a <tool_call> b ST");
        assert_eq!(response.finish_reason, Some(FinishReason::Length));
    }

    #[test]
    fn malformed_calls_keep_their_text_and_name() {
        let mut parser = new_parser(Mode::ForcedCall, &[]);
        let (mut out, _) = run(
            &mut parser,
            &["{\"name\": \"add\", \"arguments\": {\"a\": "],
        );
        let response = parser.finish(true, Usage::default(), RawResponse::none(), &mut out);
        let call = response.tool_calls().next().cloned();
        let call = call.unwrap_or_else(|| panic!("{response:?}"));
        assert_eq!(call.name, "add");
        assert!(call.arguments.is_string());
        assert_eq!(response.finish_reason, Some(FinishReason::Length));

        let mut parser = new_parser(Mode::ForcedCall, &[]);
        let (mut out, _) = run(&mut parser, &["not json at all"]);
        let response = parser.finish(false, Usage::default(), RawResponse::none(), &mut out);
        let call = response.tool_calls().next().cloned();
        assert_eq!(call.map(|c| c.name), Some(String::new()));
    }

    #[test]
    fn arguments_sent_as_a_json_string_are_read() {
        let mut parser = new_parser(Mode::ForcedCall, &[]);
        let (mut out, _) = run(
            &mut parser,
            &["{\"name\": \"add\", \"arguments\": \"{\\\"a\\\": 2}\"}"],
        );
        let response = parser.finish(false, Usage::default(), RawResponse::none(), &mut out);
        let call = response.tool_calls().next().cloned();
        assert_eq!(call.map(|c| c.arguments), Some(json!({"a": 2})));
    }

    #[test]
    fn a_call_or_answer_at_a_grammar_bound_is_truncated() {
        let mut parser = new_parser(Mode::ForcedCall, &[]);
        let (mut out, _) = run(
            &mut parser,
            &["{\"name\": \"note\", \"arguments\": {\"text\": \"0123456789\"}}"],
        );
        let response = parser.finish(false, Usage::default(), RawResponse::none(), &mut out);
        assert_eq!(response.tool_calls().count(), 1);
        assert_eq!(response.finish_reason, Some(FinishReason::Length));

        let mut parser = new_parser(Mode::Json, &[]);
        let (mut out, _) = run(&mut parser, &["{\"tags\": [1, 2, 3]}"]);
        let response = parser.finish(false, Usage::default(), RawResponse::none(), &mut out);
        assert_eq!(response.finish_reason, Some(FinishReason::Length));

        let mut parser = new_parser(Mode::Json, &[]);
        let (mut out, _) = run(&mut parser, &["{\"tags\": [1, 2], \"t\": \"short\"}"]);
        let response = parser.finish(false, Usage::default(), RawResponse::none(), &mut out);
        assert_eq!(response.finish_reason, Some(FinishReason::Stop));
    }
}
