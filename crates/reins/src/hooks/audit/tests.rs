use super::*;
use crate::agent::{AgentBuilder, PromptError};
use crate::completion::{CompletionError, Usage};
use crate::hooks::approval::{ApprovalPolicy, Rule, Verdict};
use crate::message::ToolChoice;
use crate::testing::{ScriptedModel, Turn};
use crate::tool::{Tool, tool_fn};
use serde_json::json;
use std::convert::Infallible;

/// A writer whose bytes the test reads back.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buffer {
    fn lines(&self) -> Vec<Value> {
        let bytes = self.0.lock().unwrap().clone();
        String::from_utf8(bytes)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }
}

/// A writer that always fails.
struct Broken;

impl Write for Broken {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::Error::other("disk full"))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Err(std::io::Error::other("disk full"))
    }
}

mod model_outcomes;
mod rotation;
mod stopped;

fn echo(name: &'static str) -> impl Tool {
    tool_fn(name, "A test tool.", move |_: Value| async move {
        Ok::<_, Infallible>(format!("ran {name}"))
    })
}

fn failing() -> impl Tool {
    tool_fn("fails", "Always fails.", |_: Value| async {
        Err::<String, _>("boom")
    })
}

fn events(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .map(|line| {
            let tool = line["tool"]
                .as_str()
                .map(|t| format!(" {t}"))
                .unwrap_or_default();
            format!(
                "{} {}{tool}",
                line["event"].as_str().unwrap(),
                line["kind"].as_str().unwrap()
            )
        })
        .collect()
}

#[tokio::test]
async fn a_run_writes_one_line_per_dispatch_and_outcome() {
    let buffer = Buffer::default();
    let model = ScriptedModel::new([
        Turn::tool_call("search", json!({"q": "secret"})).usage(Usage::new(10, 2)),
        Turn::text("done"),
    ]);
    let agent = AgentBuilder::new(model)
        .tool(echo("search"))
        .tool_choice(ToolChoice::Auto)
        .add_hook(AuditLog::new(buffer.clone()))
        .build();
    let response = agent.prompt("go").extended_details().await.unwrap();
    let lines = buffer.lines();
    assert_eq!(
        events(&lines),
        [
            "dispatch model",
            "outcome model",
            "dispatch tool search",
            "outcome tool search",
            "dispatch model",
            "outcome model"
        ]
    );
    for line in &lines {
        assert_eq!(line["run_id"], response.run_id());
        let ts = line["ts"].as_str().unwrap();
        assert!(
            ts.len() == 24 && ts.ends_with('Z') && ts.as_bytes()[10] == b'T',
            "{ts}"
        );
        // Arguments are not written unless asked for.
        assert!(line.get("args").is_none(), "{line}");
    }
    assert_eq!(lines[0]["turn"], 1);
    assert_eq!(lines[0]["model"], "default");
    assert_eq!(lines[0]["tool_choice"], json!({"type": "auto"}));
    assert_eq!(lines[0]["decision"], "proceed");
    assert_eq!(lines[1]["usage"]["input_tokens"], 10);
    let effect_id = format!("{}/t1c0", response.run_id());
    for line in &lines[2..4] {
        assert_eq!(line["call_id"], "t1c0");
        assert_eq!(line["effect_id"], effect_id.as_str());
        assert_eq!(line["turn"], 1);
    }
    assert_eq!(lines[2]["decision"], "proceed");
    assert_eq!(lines[3]["outcome"], "success");
    assert!(lines[3].get("message").is_none());
    assert_eq!(lines[4]["turn"], 2);
}

#[tokio::test]
async fn arguments_are_written_on_request_through_the_redaction() {
    let buffer = Buffer::default();
    let model = ScriptedModel::new([
        Turn::tool_call("login", json!({"user": "ada", "password": "hunter2"})),
        Turn::text("done"),
    ]);
    let audit = AuditLog::new(buffer.clone()).redact_args(|tool, mut args| {
        assert_eq!(tool, "login");
        args["password"] = json!("***");
        args
    });
    AgentBuilder::new(model)
        .tool(echo("login"))
        .add_hook(audit)
        .build()
        .prompt("go")
        .await
        .unwrap();
    let lines = buffer.lines();
    let expected = json!({"user": "ada", "password": "***"});
    assert_eq!(lines[2]["args"], expected);
    assert_eq!(lines[3]["args"], expected);

    // Without a redaction the arguments are written as they are.
    let buffer = Buffer::default();
    let model = ScriptedModel::new([
        Turn::tool_call("login", json!({"user": "ada"})),
        Turn::text("done"),
    ]);
    AgentBuilder::new(model)
        .tool(echo("login"))
        .add_hook(AuditLog::new(buffer.clone()).with_args())
        .build()
        .prompt("go")
        .await
        .unwrap();
    assert_eq!(buffer.lines()[2]["args"], json!({"user": "ada"}));
}

#[tokio::test]
async fn a_panicking_redaction_never_writes_the_original_arguments() {
    let buffer = Buffer::default();
    let model = ScriptedModel::new([
        Turn::tool_call("login", json!({"password": "hunter2"})),
        Turn::text("done"),
    ]);
    let audit = AuditLog::new(buffer.clone()).redact_args(|_, _| panic!("redactor bug"));
    let answer = AgentBuilder::new(model)
        .tool(echo("login"))
        .add_hook(audit)
        .build()
        .prompt("go")
        .await
        .unwrap();
    assert_eq!(answer, "done");
    let lines = buffer.lines();
    assert_eq!(lines[2]["args"], "[redaction failed]");
    assert!(
        !lines
            .iter()
            .any(|line| line.to_string().contains("hunter2"))
    );
}

#[tokio::test]
async fn registered_after_a_policy_it_records_the_final_outcome() {
    let buffer = Buffer::default();
    let model = ScriptedModel::new([
        Turn::tool_calls([
            ("read", json!({})),
            ("delete", json!({})),
            ("fails", json!({})),
        ]),
        Turn::text("done"),
    ]);
    let policy = ApprovalPolicy::new()
        .rule(Rule::deny("delete", "deleting is off"))
        .rule(Rule::allow("*"));
    AgentBuilder::new(model)
        .tool(echo("read"))
        .tool(echo("delete"))
        .tool(failing())
        .add_hook(policy)
        .add_hook(AuditLog::new(buffer.clone()))
        .build()
        .prompt("go")
        .await
        .unwrap();
    let lines = buffer.lines();
    let tool_lines: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "tool").collect();
    // The denied call never reached the log's dispatch; its outcome did.
    let dispatched: Vec<&str> = tool_lines
        .iter()
        .filter(|l| l["event"] == "dispatch")
        .map(|l| l["tool"].as_str().unwrap())
        .collect();
    assert_eq!(dispatched, ["read", "fails"]);
    let outcome = |tool: &str| {
        tool_lines
            .iter()
            .find(|l| l["event"] == "outcome" && l["tool"] == tool)
            .copied()
            .cloned()
            .unwrap()
    };
    assert_eq!(outcome("read")["outcome"], "success");
    let denied = outcome("delete");
    assert_eq!(denied["outcome"], "denied");
    assert_eq!(denied["message"], "deleting is off");
    assert_eq!(denied["approval"]["verdict"], json!(Verdict::Deny));
    assert_eq!(denied["approval"]["rule"], "deny `delete`");
    let failed = outcome("fails");
    assert_eq!(failed["outcome"], "failed");
    assert!(
        failed["message"].as_str().unwrap().contains("boom"),
        "{failed}"
    );
}

#[tokio::test]
async fn suspended_calls_get_an_outcome_line_when_the_run_ends() {
    let buffer = Buffer::default();
    let model = ScriptedModel::new([Turn::tool_call("pay", json!({"amount": 5}))]);
    let result = AgentBuilder::new(model)
        .tool(echo("pay"))
        .add_hook(ApprovalPolicy::new().rule(Rule::suspend("pay", "a manager decides")))
        .add_hook(AuditLog::new(buffer.clone()).with_args())
        .build()
        .prompt("go")
        .await;
    assert!(matches!(result, Err(PromptError::Suspended { .. })));
    let lines = buffer.lines();
    let last = lines.last().unwrap();
    assert_eq!(last["event"], "outcome");
    assert_eq!(last["tool"], "pay");
    assert_eq!(last["outcome"], "suspended");
    assert_eq!(last["message"], "a manager decides");
    assert_eq!(last["args"], json!({"amount": 5}));
    assert_eq!(last["approval"]["verdict"], "suspend");
}

#[tokio::test]
async fn a_failed_model_call_gets_an_outcome_line() {
    let buffer = Buffer::default();
    let model = ScriptedModel::new([Turn::error(CompletionError::Other("overloaded".into()))]);
    let result = AgentBuilder::new(model)
        .add_hook(AuditLog::new(buffer.clone()))
        .build()
        .prompt("go")
        .await;
    assert!(matches!(result, Err(PromptError::Completion { .. })));
    let lines = buffer.lines();
    assert_eq!(events(&lines), ["dispatch model", "outcome model"]);
    assert_eq!(lines[1]["outcome"], "failed");
    assert!(lines[1]["message"].as_str().unwrap().contains("overloaded"));
}

#[tokio::test]
async fn a_failing_writer_never_stops_the_run() {
    let model = ScriptedModel::new([Turn::tool_call("search", json!({})), Turn::text("done")]);
    let answer = AgentBuilder::new(model)
        .tool(echo("search"))
        .add_hook(AuditLog::new(Broken))
        .build()
        .prompt("go")
        .await
        .unwrap();
    assert_eq!(answer, "done");
}

/// A writer that writes part of one write and then fails (a disk that fills up mid-line),
/// once, after `healthy` bytes; then it works again.
#[derive(Clone)]
struct FillsUp {
    bytes: Buffer,
    healthy: Arc<Mutex<Option<usize>>>,
}

impl Write for FillsUp {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let mut healthy = self.healthy.lock().unwrap();
        match *healthy {
            Some(0) => {
                *healthy = None;
                Err(std::io::Error::other("disk full"))
            }
            Some(room) => {
                let n = room.min(bytes.len());
                *healthy = Some(room - n);
                self.bytes.write(&bytes[..n])
            }
            None => self.bytes.write(bytes),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_line_cut_short_by_a_failed_write_does_not_swallow_the_next() {
    let bytes = Buffer::default();
    // The first line and 20 bytes of the second are written; the rest of it fails.
    let first_line = {
        let probe = Buffer::default();
        let model = ScriptedModel::new([Turn::text("done")]);
        let agent = AgentBuilder::new(model)
            .add_hook(AuditLog::new(probe.clone()))
            .build();
        agent.prompt("go").await.unwrap();
        let text = String::from_utf8(probe.0.lock().unwrap().clone()).unwrap();
        text.lines().next().unwrap().len() + 1
    };
    let writer = FillsUp {
        bytes: bytes.clone(),
        healthy: Arc::new(Mutex::new(Some(first_line + 20))),
    };
    let model = ScriptedModel::new([Turn::tool_call("search", json!({})), Turn::text("done")]);
    AgentBuilder::new(model)
        .tool(echo("search"))
        .add_hook(AuditLog::new(writer))
        .build()
        .prompt("go")
        .await
        .unwrap();
    let text = String::from_utf8(bytes.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // The torn second line stands alone; every line after it is whole.
    assert_eq!(lines.len(), 6, "{text}");
    assert!(serde_json::from_str::<Value>(lines[1]).is_err());
    let whole: Vec<Value> = [lines[0], lines[2], lines[3], lines[4], lines[5]]
        .iter()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        events(&whole),
        [
            "dispatch model",
            "dispatch tool search",
            "outcome tool search",
            "dispatch model",
            "outcome model"
        ]
    );
}

#[tokio::test]
async fn one_log_serves_concurrent_runs_and_appends_to_a_file() {
    let path = std::env::temp_dir().join(format!("reins-audit-test-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let audit = AuditLog::append_to(&path).unwrap();
    let run = |audit: AuditLog| async move {
        let model = ScriptedModel::new([Turn::text("hi")]);
        AgentBuilder::new(model)
            .add_hook(audit)
            .build()
            .prompt("go")
            .extended_details()
            .await
            .unwrap()
            .run_id()
            .to_owned()
    };
    let (a, b) = tokio::join!(run(audit.clone()), run(audit));
    // A second log on the same file appends.
    let c = run(AuditLog::append_to(&path).unwrap()).await;
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6);
    for id in [a, b, c] {
        let count = lines.iter().filter(|l| l["run_id"] == id.as_str()).count();
        assert_eq!(count, 2, "{id}");
    }
}

#[test]
fn it_observes_only_dispatches_outcomes_and_the_end_of_runs() {
    let audit = AuditLog::new(Buffer::default());
    let observed: Vec<StepEventKind> = StepEventKind::ALL
        .into_iter()
        .filter(|kind| audit.observes(*kind))
        .collect();
    assert_eq!(
        observed,
        [
            StepEventKind::CompletionDispatch,
            StepEventKind::ToolDispatch,
            StepEventKind::CompletionOutcome,
            StepEventKind::ToolOutcome,
            StepEventKind::RunSettled,
        ]
    );
}

#[tokio::test]
async fn a_secret_masked_by_an_earlier_redaction_is_never_written() {
    use crate::hooks::redaction::Redaction;
    const KEY: &str = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12";
    let buffer = Buffer::default();
    let model = ScriptedModel::new([
        Turn::tool_calls([("fetch", json!({})), ("pay", json!({}))]),
        Turn::text("done"),
    ]);
    // A tool whose error quotes the key it was given, and a policy whose reason does.
    let fetch = tool_fn("fetch", "Fetches.", |_: Value| async {
        Err::<String, _>(format!("401 Unauthorized for key {KEY}"))
    });
    let policy = ApprovalPolicy::new()
        .rule(Rule::deny(
            "pay",
            format!("paying needs a key other than {KEY}"),
        ))
        .rule(Rule::allow("*"));
    AgentBuilder::new(model.clone())
        .tool(fetch)
        .tool(echo("pay"))
        .add_hook(policy)
        .add_hook(Redaction::new())
        .add_hook(AuditLog::new(buffer.clone()))
        .build()
        .prompt("go")
        .await
        .unwrap();
    let lines = buffer.lines();
    let outcome = |tool: &str| {
        lines
            .iter()
            .find(|l| l["event"] == "outcome" && l["tool"] == tool)
            .cloned()
            .unwrap()
    };
    // The log says what the model was told, as the redaction left it.
    let told = |tool: &str| {
        model.requests()[1]
            .history
            .iter()
            .find(|m| matches!(m, crate::message::Message::Tool(r) if r.tool_name == tool))
            .map(crate::message::Message::text)
            .unwrap()
    };
    assert_eq!(outcome("fetch")["outcome"], "failed");
    assert_eq!(outcome("fetch")["message"], told("fetch").as_str());
    assert_eq!(outcome("pay")["outcome"], "denied");
    assert_eq!(outcome("pay")["message"], told("pay").as_str());
    assert!(told("fetch").contains("401 Unauthorized for key [REDACTED"));
    assert!(!buffer.lines().iter().any(|l| l.to_string().contains(KEY)));
}
