//! `@modelcontextprotocol/server-everything` (npm), over stdio.

use crate::servers::{call, connect, everything_script, everything_server};
use reins::tool::ToolTraits;
use reins::tool::{Tool, ToolCallContext, ToolFailure, ToolOutcome, ToolSet};
use reins_mcp::{EFFECT_ID_META_KEY, McpContent, McpError, McpServer, McpToolAnnotations};
use serde_json::{Value, json};
use std::time::Duration;

#[tokio::test]
async fn lists_every_tool_with_annotations() {
    let client = connect(everything_server()).await;
    let tools = client.tools().await.unwrap();
    let names: Vec<&str> = tools.names().collect();
    for expected in [
        "echo",
        "get-sum",
        "get-tiny-image",
        "get-structured-content",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }

    let echo = tools.get("echo").unwrap();
    assert_eq!(
        echo.annotations(),
        &McpToolAnnotations {
            read_only_hint: Some(true),
            destructive_hint: Some(false),
            idempotent_hint: Some(true),
            open_world_hint: Some(false),
        }
    );
    assert_eq!(
        echo.traits(),
        ToolTraits::read_only().with_open_world(false)
    );
    assert!(!echo.annotations().open_world());
    assert_eq!(echo.parameters()["properties"]["message"]["type"], "string");

    let gzip = tools.get("gzip-file-as-resource").unwrap();
    assert_eq!(gzip.traits(), ToolTraits::additive().with_idempotent(true));

    let structured = tools.get("get-structured-content").unwrap();
    assert!(structured.output_schema().is_some());

    // Filtering and prefixing.
    let only = tools.clone().only(["echo", "get-sum"]).prefix("ev_");
    assert_eq!(only.names().collect::<Vec<_>>(), ["ev_echo", "ev_get-sum"]);
    assert_eq!(only.get("ev_echo").unwrap().remote_name(), "echo");
    let except = tools.clone().filter(|name| name != "echo");
    assert_eq!(except.len(), tools.len() - 1);
    assert!(except.get("echo").is_none());
}

#[test]
fn missing_hints_take_mcps_defaults() {
    let none = McpToolAnnotations::default();
    assert_eq!(none.traits(), ToolTraits::default());
    assert!(none.open_world());
    let read_only = McpToolAnnotations {
        read_only_hint: Some(true),
        destructive_hint: Some(true),
        ..McpToolAnnotations::default()
    };
    assert_eq!(read_only.traits(), ToolTraits::read_only());
}

async fn everything_set() -> ToolSet {
    let client = connect(everything_server()).await;
    let mut set = ToolSet::new();
    for tool in client.tools().await.unwrap() {
        set.add(tool);
    }
    set
}

#[tokio::test]
async fn content_maps_to_text_the_model_can_read() {
    let set = everything_set().await;

    let echo = call(&set, "echo", json!({"message": "hi"})).await;
    assert_eq!(echo.output.render(), "Echo: hi");

    let sum = call(&set, "get-sum", json!({"a": 2, "b": 40})).await;
    assert!(sum.output.render().contains("42"), "{:?}", sum.output);

    let image = call(&set, "get-tiny-image", json!({})).await;
    let text = image.output.render();
    assert!(text.contains("[image: image/png, "), "{text}");
    assert!(text.contains(" bytes]"), "{text}");

    let structured = call(
        &set,
        "get-structured-content",
        json!({"location": "Chicago"}),
    )
    .await;
    assert_eq!(structured.outcome, ToolOutcome::Success);
    let value: Value = serde_json::from_str(&structured.output.render()).unwrap();
    assert!(value["temperature"].is_number(), "{value}");
    assert!(value["conditions"].is_string(), "{value}");

    let resource = call(
        &set,
        "get-resource-reference",
        json!({"resourceType": "Text", "resourceId": 2}),
    )
    .await;
    let text = resource.output.render();
    assert!(text.contains("[resource: "), "{text}");
}

#[tokio::test]
async fn raw_results_keep_the_content_kinds() {
    let client = connect(everything_server()).await;
    let result = client
        .call_tool("get-tiny-image", json!({}), None)
        .await
        .unwrap();
    assert!(!result.is_error);
    let image = result
        .content
        .iter()
        .find(|c| matches!(c, McpContent::Image { .. }))
        .unwrap();
    let McpContent::Image { mime_type, bytes } = image else {
        unreachable!()
    };
    assert_eq!(mime_type, "image/png");
    assert!(*bytes > 50, "{bytes}");
}

#[tokio::test]
async fn invalid_arguments_come_back_as_a_failure_naming_the_server() {
    let set = everything_set().await;
    let execution = call(&set, "get-sum", json!({"a": "two", "b": 3})).await;
    let ToolOutcome::Failed(failure) = &execution.outcome else {
        panic!("expected a failure, got {:?}", execution.outcome);
    };
    let text = failure.to_string();
    assert!(text.contains("everything"), "{text}");

    let not_an_object = call(&set, "echo", json!(["hi"])).await;
    let ToolOutcome::Failed(ToolFailure::Execution { message }) = &not_an_object.outcome else {
        panic!(
            "expected an execution failure, got {:?}",
            not_an_object.outcome
        );
    };
    assert!(message.contains("must be a JSON object"), "{message}");
}

#[tokio::test]
async fn a_call_past_its_timeout_fails_and_the_client_goes_on() {
    let client = connect(everything_server().call_timeout(Duration::from_millis(500))).await;
    let tools = client.tools().await.unwrap();
    let mut set = ToolSet::new();
    for tool in tools {
        set.add(tool);
    }
    let execution = call(
        &set,
        "trigger-long-running-operation",
        json!({"duration": 10, "steps": 2}),
    )
    .await;
    assert_eq!(
        execution.outcome,
        ToolOutcome::Failed(ToolFailure::Timeout {
            after: Duration::from_millis(500)
        })
    );

    // Called directly, the timeout names the server.
    let error = client
        .call_tool(
            "trigger-long-running-operation",
            json!({"duration": 10, "steps": 2}),
            None,
        )
        .await
        .unwrap_err();
    assert!(matches!(error, McpError::Timeout { .. }), "{error:?}");
    assert!(error.to_string().contains("`everything`"), "{error}");
    assert!(
        error.to_string().contains("timed out after 500 ms"),
        "{error}"
    );

    // The server still answers.
    let echo = call(&set, "echo", json!({"message": "still here"})).await;
    assert_eq!(echo.output.render(), "Echo: still here");
}

#[tokio::test]
async fn the_effect_id_travels_in_meta() {
    // The real server, behind `tee`: what the client sends is written to a file.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("reins-mcp-meta-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("requests.jsonl");
    let script = everything_script();
    let server = McpServer::stdio(
        "sh",
        [
            "-c".into(),
            "tee \"$0\" | exec node \"$1\" stdio".into(),
            log.clone().into_os_string(),
            script.into_os_string(),
        ],
    )
    .name("everything-teed");
    let client = connect(server).await;
    let tools = client.tools().await.unwrap();
    let mut set = ToolSet::new();
    set.add(tools.get("echo").unwrap().clone());
    let context = ToolCallContext::new("run-7", "call-3", "provider-call");
    let effect_id = context.effect_id();
    let execution = set.call("echo", &json!({"message": "once"}), context).await;
    assert_eq!(execution.output.render(), "Echo: once");

    // `tee` writes each chunk to the server's pipe and to the file one after the other, so
    // the answer can arrive before the request reaches the file: wait for it there.
    let find_call = |sent: &str| {
        sent.lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .find(|message| message["method"] == "tools/call")
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let call = loop {
        let sent = std::fs::read_to_string(&log).unwrap();
        if let Some(call) = find_call(&sent) {
            break call;
        }
        if std::time::Instant::now() > deadline {
            panic!("no tools/call in {sent}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        call["params"]["_meta"][EFFECT_ID_META_KEY],
        json!(effect_id),
        "{call}"
    );
    assert_eq!(call["params"]["arguments"], json!({"message": "once"}));
    drop(client);
    drop(set);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_list_changed_notification_marks_the_tools_for_a_refresh() {
    let client = connect(everything_server()).await;
    // server-everything registers more tools once initialized, and announces it with
    // `notifications/tools/list_changed`.
    let mut announced = false;
    for _ in 0..200 {
        if client.tools_changed() {
            announced = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(announced, "no notifications/tools/list_changed arrived");

    let narrowed = client
        .tools()
        .await
        .unwrap()
        .filter(|name| name.starts_with("get-"))
        .except(["get-env"])
        .prefix("ev_");
    assert!(!client.tools_changed(), "listing again clears the mark");
    let refreshed = narrowed.refresh().await.unwrap();
    let names: Vec<&str> = refreshed.names().collect();
    assert_eq!(names, narrowed.names().collect::<Vec<_>>());
    assert!(names.contains(&"ev_get-sum"), "{names:?}");
    assert!(!names.contains(&"ev_get-env"), "{names:?}");
    assert!(
        names.iter().all(|name| name.starts_with("ev_get-")),
        "{names:?}"
    );
}
