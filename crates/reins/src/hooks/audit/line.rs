//! One line of the log, and how it is written as JSON.
//!
//! A run writes a line for every dispatch and outcome, so the line is written by hand rather
//! than through `Serialize`: the keys are known text written as they are, and a value that
//! needs no escaping (ids, timestamps, names, most messages) is copied whole. Through serde
//! every key and value is escaped byte by byte, which cost several times the rest of the
//! hook. The arguments are written by hand too (`json_text.rs`); the usage and the approval
//! record still go through serde.

use super::time::Rfc3339;
use crate::agent::HookContext;
use crate::completion::Usage;
use crate::hooks::approval::ApprovalRecord;
use crate::json_text;
use crate::message::ToolChoice;
use serde::Serialize;
use serde_json::Value;
use std::io::Write;
use std::time::SystemTime;

/// One line of the log. Field order is the order written; fields without a value are left
/// out.
pub(super) struct Line<'a> {
    pub ts: Rfc3339,
    pub run_id: &'a str,
    pub turn: usize,
    pub event: &'static str,
    pub kind: &'static str,
    pub tool: Option<&'a str>,
    pub call_id: Option<&'a str>,
    pub model: Option<&'a str>,
    pub tool_choice: Option<&'a ToolChoice>,
    pub args: Option<Value>,
    pub decision: Option<&'static str>,
    pub outcome: Option<&'static str>,
    pub message: Option<String>,
    pub usage: Option<Usage>,
    pub approval: Option<ApprovalRecord>,
}

impl<'a> Line<'a> {
    /// A line for an `event` of `kind` in the run of `ctx`, stamped now.
    pub fn new(ctx: &'a HookContext, event: &'static str, kind: &'static str) -> Self {
        Line {
            ts: Rfc3339::of(SystemTime::now()),
            run_id: ctx.run_id(),
            turn: ctx.turn(),
            event,
            kind,
            tool: None,
            call_id: None,
            model: None,
            tool_choice: None,
            args: None,
            decision: None,
            outcome: None,
            message: None,
            usage: None,
            approval: None,
        }
    }

    /// The line of a call of `tool`, reins' id `call_id`.
    pub fn call(mut self, tool: &'a str, call_id: &'a str) -> Self {
        self.tool = Some(tool);
        self.call_id = Some(call_id);
        self
    }

    /// Writes the line as one JSON object (no newline) to `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        out.extend_from_slice(b"{\"ts\":");
        write_known_str(out, self.ts.as_str());
        key(out, "run_id");
        write_str(out, self.run_id);
        key(out, "turn");
        // `Write` on a `Vec` cannot fail.
        let _ = write!(out, "{}", self.turn);
        key(out, "event");
        write_known_str(out, self.event);
        key(out, "kind");
        write_known_str(out, self.kind);
        str_field(out, "tool", self.tool);
        if let Some(call_id) = self.call_id {
            key(out, "call_id");
            write_str(out, call_id);
            // The call's idempotency key, as the tool is given it.
            key(out, "effect_id");
            write_str_pair(out, self.run_id, call_id);
        }
        str_field(out, "model", self.model);
        write_json_field(out, "tool_choice", self.tool_choice)?;
        if let Some(args) = &self.args {
            key(out, "args");
            json_text::write_value(out, args);
        }
        known_str_field(out, "decision", self.decision);
        known_str_field(out, "outcome", self.outcome);
        str_field(out, "message", self.message.as_deref());
        write_json_field(out, "usage", self.usage.as_ref())?;
        write_json_field(out, "approval", self.approval.as_ref())?;
        out.push(b'}');
        Ok(())
    }
}

/// `,"<name>":` — the names are this file's own, which need no escaping.
fn key(out: &mut Vec<u8>, name: &str) {
    out.extend_from_slice(b",\"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

/// `value` as a JSON string under `name`, when there is one.
fn str_field(out: &mut Vec<u8>, name: &str, value: Option<&str>) {
    if let Some(value) = value {
        key(out, name);
        write_str(out, value);
    }
}

/// Text of this module's own under `name`, when there is one (see [`write_known_str`]).
fn known_str_field(out: &mut Vec<u8>, name: &str, value: Option<&str>) {
    if let Some(value) = value {
        key(out, name);
        write_known_str(out, value);
    }
}

/// `value` through serde, under `name`, when there is one.
fn write_json_field<T: Serialize>(
    out: &mut Vec<u8>,
    name: &str,
    value: Option<&T>,
) -> Result<(), serde_json::Error> {
    if let Some(value) = value {
        key(out, name);
        serde_json::to_writer(&mut *out, value)?;
    }
    Ok(())
}

/// Text of this module's own (a timestamp, an event or outcome name) as a JSON string: it
/// needs no escaping, so it is not scanned.
fn write_known_str(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    out.extend_from_slice(text.as_bytes());
    out.push(b'"');
}

/// `text` as a JSON string.
fn write_str(out: &mut Vec<u8>, text: &str) {
    json_text::write_str(out, text);
}

/// `first/second` as one JSON string.
fn write_str_pair(out: &mut Vec<u8>, first: &str, second: &str) {
    out.push(b'"');
    json_text::write_str_contents(out, first);
    out.push(b'/');
    json_text::write_str_contents(out, second);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::approval::Verdict;
    use serde_json::json;

    #[test]
    fn a_line_is_one_json_object_whatever_its_text_holds() {
        let ctx = HookContext::new("run \"quoted\"\n\\ é 🦀 \u{1}");
        let mut line = Line::new(&ctx, "outcome", "tool").call("tool\t\"x\"", "t1c0");
        line.args = Some(json!({"path": "a\nb", "n": 1}));
        line.outcome = Some("denied");
        line.message = Some("not \"here\"\r\n\u{7f}".to_owned());
        line.usage = Some(Usage::new(3, 4));
        line.approval = Some(ApprovalRecord {
            rule: Some("deny `*`".to_owned()),
            asked: false,
            verdict: Verdict::Deny,
        });
        let mut out = Vec::new();
        line.write_json(&mut out).unwrap();
        assert!(!out.contains(&b'\n'), "one line");
        let read: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(read["ts"], line.ts.as_str());
        assert_eq!(read["run_id"], ctx.run_id());
        assert_eq!(read["turn"], 0);
        assert_eq!(read["event"], "outcome");
        assert_eq!(read["kind"], "tool");
        assert_eq!(read["tool"], "tool\t\"x\"");
        assert_eq!(read["call_id"], "t1c0");
        assert_eq!(read["effect_id"], format!("{}/t1c0", ctx.run_id()));
        assert_eq!(read["args"], json!({"path": "a\nb", "n": 1}));
        assert_eq!(read["outcome"], "denied");
        assert_eq!(read["message"], "not \"here\"\r\n\u{7f}");
        assert_eq!(read["usage"], json!(Usage::new(3, 4)));
        assert_eq!(read["approval"]["verdict"], "deny");
        // Fields without a value are left out, and the order is the documented one.
        let keys: Vec<_> = read.as_object().unwrap().keys().cloned().collect();
        let mut expected = [
            "ts",
            "run_id",
            "turn",
            "event",
            "kind",
            "tool",
            "call_id",
            "effect_id",
            "args",
            "outcome",
            "message",
            "usage",
            "approval",
        ];
        expected.sort_unstable();
        assert_eq!(keys, expected);
        let text = String::from_utf8(out).unwrap();
        let at = |name: &str| text.find(&format!("\"{name}\":")).unwrap();
        assert!(at("ts") < at("run_id") && at("kind") < at("tool") && at("usage") < at("approval"));
    }

    #[test]
    fn a_model_line_has_no_call_fields() {
        let ctx = HookContext::new("r");
        let mut line = Line::new(&ctx, "dispatch", "model");
        line.model = Some("default");
        line.tool_choice = Some(&ToolChoice::Required);
        line.decision = Some("proceed");
        let mut out = Vec::new();
        line.write_json(&mut out).unwrap();
        let read: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(read["model"], "default");
        assert_eq!(read["decision"], "proceed");
        assert_eq!(read["tool_choice"], json!(ToolChoice::Required));
        for absent in ["tool", "call_id", "effect_id", "args", "outcome", "usage"] {
            assert!(read.get(absent).is_none(), "{absent}");
        }
    }
}
