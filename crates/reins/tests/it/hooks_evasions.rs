//! The ready-made hooks against a model (or a tool's content) trying to slip something past
//! them: a secret in another spelling past the redaction, a denied phrase past a
//! tool-argument guardrail, a line break that a log reader honours into the audit log.

use reins::agent::AgentBuilder;
use reins::hooks::audit::AuditLog;
use reins::hooks::guardrail::{DenyList, Guardrails};
use reins::hooks::redaction::Redaction;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[test]
fn a_percent_encoded_address_or_secret_is_masked() {
    // A URL's query string spells `@` as `%40` (and `/`, `+` and `!` alike): an HTTP tool's
    // answer or error quoting the URL would otherwise carry them to the model.
    let redaction = Redaction::new().secret("p@ss/w+rd!");
    assert_eq!(
        redaction.redact("GET https://x.test/u?email=ada%40example.com&pw=p%40ss%2Fw%2Brd%21 404"),
        "GET https://x.test/u?email=[REDACTED:email]&pw=[REDACTED:secret] 404"
    );
    // Lower-case hex, and encoded twice (`%25` is `%`).
    assert_eq!(
        redaction.redact("next=%2Fu%3Femail%3Dbob%2540example.com"),
        "next=%2Fu%3Femail%3D[REDACTED:email]"
    );
    // A percent sign that encodes nothing is text as it is.
    assert_eq!(redaction.redact("up 5%40 today"), "up 5%40 today");
}

/// A writer whose bytes the test reads back.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn an_audit_line_stays_one_line_for_readers_that_split_on_unicode_line_breaks() {
    let buffer = Buffer::default();
    let fails = tool_fn("fetch", "Fetches a page.", |args: Value| async move {
        Err::<String, _>(format!("bad url {}", args["url"]))
    });
    // Python's `str.splitlines` (and other readers) also end lines at these characters,
    // which JSON writers leave unescaped: a model's text in a line would cut it in two.
    let sneaky = "x\u{2028}{}\u{2029}[1]\u{85}2";
    let model = ScriptedModel::new([
        Turn::tool_call("fetch", json!({ "url": sneaky })),
        Turn::text("done"),
    ]);
    let agent = AgentBuilder::new(model)
        .tool(fails)
        .add_hook(AuditLog::new(buffer.clone()).with_args())
        .build();
    agent.prompt("go").await.unwrap();
    let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<Value> = text
        .split_terminator(['\n', '\u{2028}', '\u{2029}', '\u{85}'])
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 6, "{text}");
    let outcome = lines
        .iter()
        .find(|line| line["event"] == "outcome" && line["kind"] == "tool")
        .unwrap();
    // Still the model's text, read back.
    assert_eq!(outcome["args"]["url"], sneaky);
    assert!(outcome["message"].as_str().unwrap().contains("{}"));
}

#[tokio::test]
async fn a_denied_phrase_with_a_backslash_or_quote_is_found_in_tool_arguments() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let open = tool_fn("open", "Opens a file.", move |_: Value| {
        counted.fetch_add(1, Ordering::SeqCst);
        async { Ok::<_, std::convert::Infallible>("opened") }
    });
    // The arguments are checked as JSON text, where a backslash is written `\\` and a
    // quote `\"`: the phrases as written must still be found.
    let model = ScriptedModel::new([
        Turn::tool_calls([
            ("open", json!({"path": r"C:\Windows\System32\config"})),
            ("open", json!({"path": r#"say "rm -rf" now"#})),
        ]),
        Turn::text("done"),
    ]);
    let agent = AgentBuilder::new(model)
        .tool(open)
        .add_hook(
            Guardrails::new().tool_args("paths", DenyList::new([r"c:\windows", r#""rm -rf""#])),
        )
        .build();
    agent.prompt("go").await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}
