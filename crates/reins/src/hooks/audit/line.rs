//! One line of the log, and how it is written as JSON.
//!
//! A run writes a line for every dispatch and outcome, so the line is written by hand rather
//! than through `Serialize`: the keys are known text written as they are, and a value that
//! needs no escaping (ids, timestamps, names, most messages) is copied whole. Through serde
//! every key and value is escaped byte by byte, which cost several times the rest of the
//! hook. The arguments (`json_text.rs`), the usage and the approval record are written by
//! hand too; only a request's tool choice, rare on a line, still goes through serde.

use super::time::Rfc3339;
use crate::agent::HookContext;
use crate::completion::Usage;
use crate::hooks::approval::ApprovalRecord;
use crate::json_text;
use crate::message::ToolChoice;
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;
use std::time::SystemTime;

/// `,"<name>":`, written at compile time: the names are this file's own, which need no
/// escaping.
macro_rules! key {
    ($name:literal) => {
        concat!(",\"", $name, "\":")
    };
}

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
    pub args: Option<Cow<'a, Value>>,
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
        out.extend_from_slice(b"{\"ts\":\"");
        out.extend_from_slice(self.ts.as_bytes());
        out.push(b'"');
        out.extend_from_slice(key!("run_id").as_bytes());
        write_str(out, self.run_id);
        out.extend_from_slice(key!("turn").as_bytes());
        out.extend_from_slice(itoa::Buffer::new().format(self.turn).as_bytes());
        out.extend_from_slice(key!("event").as_bytes());
        write_known_str(out, self.event);
        out.extend_from_slice(key!("kind").as_bytes());
        write_known_str(out, self.kind);
        str_field(out, key!("tool"), self.tool);
        if let Some(call_id) = self.call_id {
            out.extend_from_slice(key!("call_id").as_bytes());
            write_str(out, call_id);
            // The call's idempotency key, as the tool is given it.
            out.extend_from_slice(key!("effect_id").as_bytes());
            write_str_pair(out, self.run_id, call_id);
        }
        str_field(out, key!("model"), self.model);
        write_json_field(out, key!("tool_choice"), self.tool_choice)?;
        if let Some(args) = &self.args {
            out.extend_from_slice(key!("args").as_bytes());
            json_text::write_value(out, args);
        }
        known_str_field(out, key!("decision"), self.decision);
        known_str_field(out, key!("outcome"), self.outcome);
        str_field(out, key!("message"), self.message.as_deref());
        if let Some(usage) = &self.usage {
            out.extend_from_slice(key!("usage").as_bytes());
            write_usage(out, usage);
        }
        if let Some(approval) = &self.approval {
            out.extend_from_slice(key!("approval").as_bytes());
            write_approval(out, approval);
        }
        out.push(b'}');
        Ok(())
    }
}

/// `value` as a JSON string under `key` (see [`key!`]), when there is one.
fn str_field(out: &mut Vec<u8>, key: &str, value: Option<&str>) {
    if let Some(value) = value {
        out.extend_from_slice(key.as_bytes());
        write_str(out, value);
    }
}

/// Text of this module's own under `key` (see [`key!`]), when there is one (see
/// [`write_known_str`]).
fn known_str_field(out: &mut Vec<u8>, key: &str, value: Option<&str>) {
    if let Some(value) = value {
        out.extend_from_slice(key.as_bytes());
        write_known_str(out, value);
    }
}

/// `usage` as its `Serialize` writes it.
fn write_usage(out: &mut Vec<u8>, usage: &Usage) {
    let mut digits = itoa::Buffer::new();
    out.extend_from_slice(b"{\"input_tokens\":");
    out.extend_from_slice(digits.format(usage.input_tokens).as_bytes());
    out.extend_from_slice(b",\"output_tokens\":");
    out.extend_from_slice(digits.format(usage.output_tokens).as_bytes());
    out.extend_from_slice(b",\"total_tokens\":");
    out.extend_from_slice(digits.format(usage.total_tokens).as_bytes());
    // Written only when not zero, as `Serialize` skips them.
    if usage.cache_read_input_tokens != 0 {
        out.extend_from_slice(b",\"cache_read_input_tokens\":");
        out.extend_from_slice(digits.format(usage.cache_read_input_tokens).as_bytes());
    }
    if usage.cache_creation_input_tokens != 0 {
        out.extend_from_slice(b",\"cache_creation_input_tokens\":");
        out.extend_from_slice(digits.format(usage.cache_creation_input_tokens).as_bytes());
    }
    out.push(b'}');
}

/// `approval` as its `Serialize` writes it.
fn write_approval(out: &mut Vec<u8>, approval: &ApprovalRecord) {
    out.extend_from_slice(b"{\"rule\":");
    match &approval.rule {
        Some(rule) => write_str(out, rule),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(if approval.asked {
        b",\"asked\":true,\"verdict\":"
    } else {
        b",\"asked\":false,\"verdict\":"
    });
    write_known_str(out, approval.verdict.as_str());
    out.push(b'}');
}

/// `value` through serde, under `key` (see [`key!`]), when there is one.
fn write_json_field<T: Serialize>(
    out: &mut Vec<u8>,
    key: &str,
    value: Option<&T>,
) -> Result<(), serde_json::Error> {
    if let Some(value) = value {
        out.extend_from_slice(key.as_bytes());
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
        line.args = Some(Cow::Owned(json!({"path": "a\nb", "n": 1})));
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
    fn usage_and_approval_read_as_their_serialize_writes_them() {
        let ctx = HookContext::new("r");
        let rules = [None, Some("allow `read_*` when \"x\" < 3".to_owned())];
        let verdicts = [
            Verdict::Allow,
            Verdict::AllowWithArgs,
            Verdict::Deny,
            Verdict::Suspend,
        ];
        for (rule, verdict) in rules.iter().flat_map(|r| verdicts.map(|v| (r.clone(), v))) {
            for asked in [false, true] {
                let approval = ApprovalRecord {
                    rule: rule.clone(),
                    asked,
                    verdict,
                };
                let mut usage = Usage {
                    input_tokens: u64::MAX,
                    output_tokens: 0,
                    total_tokens: 12_345,
                    ..Usage::default()
                };
                // Each cache count alone, both, and neither.
                if asked {
                    usage = usage.with_cached_input(7, 0);
                } else if matches!(verdict, Verdict::Deny) {
                    usage = usage.with_cached_input(5, u64::MAX);
                } else if matches!(verdict, Verdict::Suspend) {
                    usage = usage.with_cached_input(0, 9);
                }
                let mut line = Line::new(&ctx, "outcome", "tool");
                line.usage = Some(usage);
                line.approval = Some(approval.clone());
                let mut out = Vec::new();
                line.write_json(&mut out).unwrap();
                let text = String::from_utf8(out).unwrap();
                let usage_text = serde_json::to_string(&usage).unwrap();
                let approval_text = serde_json::to_string(&approval).unwrap();
                let tail = format!(",\"usage\":{usage_text},\"approval\":{approval_text}}}");
                assert!(text.ends_with(&tail), "{text}");
                assert_eq!(json!(verdict), verdict.as_str());
            }
        }
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
