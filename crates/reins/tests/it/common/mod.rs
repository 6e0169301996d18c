//! Helpers shared by the integration tests.

use reins::agent::{
    AgentHook, DispatchAction, DispatchEvent, Flow, HookContext, RequestPatch, StepEvent,
};
use reins::message::Message;
use reins::tool::{Tool, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::{Arc, Mutex};

pub mod fakellm;
pub mod subscriber;
pub mod warnings;

/// Records every event it sees, in order, as a short line.
#[derive(Clone, Default)]
pub struct Recorder {
    pub lines: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// The lines without streaming-only events.
    pub fn without_deltas(&self) -> Vec<String> {
        self.lines()
            .into_iter()
            .filter(|line| {
                !line.starts_with("text_delta")
                    && !line.starts_with("reasoning_delta")
                    && !line.starts_with("tool_call_delta")
                    && !line.starts_with("stream_finish")
                    && !line.starts_with("completion_response")
            })
            .collect()
    }
}

impl AgentHook for Recorder {
    async fn on_event(&self, ctx: &HookContext, event: StepEvent<'_>) -> Flow {
        let line = match event {
            StepEvent::RunStart { prompt, .. } => format!("run_start {}", prompt.text()),
            StepEvent::CompletionCall { turn, .. } => format!("completion_call {turn}"),
            StepEvent::CompletionDispatch { turn, model, .. } => {
                format!("completion_dispatch {turn} {model}")
            }
            StepEvent::CompletionResponse { .. } => format!("completion_response {}", ctx.turn()),
            StepEvent::ModelTurnFinished { turn, .. } => format!("turn_finished {turn}"),
            StepEvent::InvalidToolCall(c) => format!("invalid {} {:?}", c.tool_name, c.reason),
            StepEvent::ToolCall {
                tool_name, args, ..
            } => format!("tool_call {tool_name} {args}"),
            StepEvent::ToolResult {
                tool_name, result, ..
            } => format!("tool_result {tool_name} {result}"),
            StepEvent::TextDelta { delta, .. } => format!("text_delta {delta}"),
            StepEvent::ReasoningDelta { delta, .. } => format!("reasoning_delta {delta}"),
            StepEvent::ToolCallDelta { delta, .. } => format!("tool_call_delta {delta}"),
            StepEvent::StreamResponseFinish { .. } => format!("stream_finish {}", ctx.turn()),
            StepEvent::RunSettled(settled) => match settled.result {
                Ok(text) => format!("settled ok {text}"),
                Err(error) => format!("settled err {error}"),
            },
            other => format!("other {:?}", other.kind()),
        };
        self.lines.lock().unwrap().push(line);
        Flow::Continue
    }
}

#[derive(Deserialize, JsonSchema)]
pub struct AddArgs {
    pub a: i64,
    pub b: i64,
}

/// `add(a, b)`.
pub fn add_tool() -> impl Tool {
    tool_fn("add", "Adds two integers.", |args: AddArgs| async move {
        Ok::<_, std::convert::Infallible>(args.a + args.b)
    })
}

#[derive(Deserialize, JsonSchema)]
pub struct EchoArgs {
    pub text: String,
}

/// `echo(text)`, recording each call in `calls`.
pub fn echo_tool(name: &'static str, calls: Arc<Mutex<Vec<String>>>) -> impl Tool {
    tool_fn(name, "Echoes its text.", move |args: EchoArgs| {
        let calls = calls.clone();
        async move {
            calls.lock().unwrap().push(args.text.clone());
            Ok::<_, std::convert::Infallible>(args.text)
        }
    })
}

/// Runs `check` in an environment without `var`, leaving this process's environment alone:
/// every test of the binary shares it, and changing it races with the threads reading it (C
/// code included). When `var` is set here, the calling test (`test`, named in `module`, i.e.
/// `module_path!()`) is run again in a child process of this binary without `var`, and must
/// pass there; otherwise `check` runs here.
pub fn without_env_var(var: &str, module: &str, test: &str, check: impl FnOnce()) {
    if std::env::var_os(var).is_none() {
        check();
        return;
    }
    // `module_path!()` starts with the binary's crate name, which test names leave out.
    let module = module.split_once("::").map_or("", |(_, path)| path);
    let name = format!("{module}::{test}");
    let output = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args([name.as_str(), "--exact", "--test-threads=1"])
        .env_remove(var)
        .output()
        .expect("run the test binary again");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("test result: ok. 1 passed"),
        "`{name}` without {var} in a child process:\n{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Patches the first model call's request at its dispatch: a summary for the history, one
/// tool advertised, a low temperature.
pub struct SummariseFirstDispatch;
impl AgentHook for SummariseFirstDispatch {
    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if event.request().is_some() && ctx.turn() == 1 {
            DispatchAction::patch(
                RequestPatch::new()
                    .temperature(0.1)
                    .active_tools(["add"])
                    .history(vec![Message::user("summary")]),
            )
        } else {
            DispatchAction::proceed()
        }
    }
}
