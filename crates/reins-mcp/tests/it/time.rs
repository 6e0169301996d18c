//! `mcp-server-time` (PyPI), over stdio.

use crate::servers::{connect, time_server};
use reins::tool::{Tool, ToolCallContext, ToolFailure, ToolOutcome, ToolSet};
use reins_mcp::McpError;
use serde_json::{Value, json};

#[tokio::test]
async fn lists_the_time_tools_with_their_schemas() {
    let client = connect(time_server()).await;
    let tools = client.tools().await.unwrap();
    let mut names: Vec<&str> = tools.names().collect();
    names.sort_unstable();
    assert_eq!(names, ["convert_time", "get_current_time"]);

    let current = tools.get("get_current_time").unwrap();
    assert_eq!(current.server_name(), "time");
    let schema = current.parameters();
    assert_eq!(schema["type"], "object");
    assert!(schema["properties"]["timezone"].is_object(), "{schema}");
    assert_eq!(schema["required"], json!(["timezone"]));
    assert!(!current.description().is_empty());
    assert_eq!(current.input_schema(), &schema);
}

#[tokio::test]
async fn calls_get_current_time_and_reads_the_answer() {
    let client = connect(time_server()).await;
    let tools = client.tools().await.unwrap().prefix("time_");
    let mut set = ToolSet::new();
    for tool in tools {
        set.add(tool);
    }
    assert!(set.contains("time_get_current_time"));
    assert!(set.contains("time_convert_time"));

    let execution = set
        .call(
            "time_get_current_time",
            &json!({"timezone": "Europe/Warsaw"}),
            ToolCallContext::new("run-1", "call-1", "provider-1"),
        )
        .await;
    assert_eq!(
        execution.outcome,
        ToolOutcome::Success,
        "{:?}",
        execution.output
    );
    let text = execution.output.render();
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(answer["timezone"], "Europe/Warsaw", "{text}");
    assert!(
        answer["datetime"]
            .as_str()
            .is_some_and(|d| d.starts_with("20")),
        "{text}"
    );
    assert_eq!(
        execution.extensions.get("mcp"),
        Some(&json!({"server": "time", "tool": "get_current_time"}))
    );

    let converted = set
        .call(
            "time_convert_time",
            &json!({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
            ToolCallContext::new("run-1", "call-2", "provider-2"),
        )
        .await;
    let text = converted.output.render();
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert!(
        answer["target"]["datetime"]
            .as_str()
            .unwrap()
            .contains("21:00"),
        "{text}"
    );
}

#[tokio::test]
async fn an_is_error_result_is_a_tool_failure_the_model_reads() {
    let client = connect(time_server()).await;
    let tools = client.tools().await.unwrap();
    let mut set = ToolSet::new();
    set.add(tools.get("get_current_time").unwrap().clone());
    let execution = set
        .call(
            "get_current_time",
            &json!({"timezone": "Mars/Olympus_Mons"}),
            ToolCallContext::new("run", "c", "p"),
        )
        .await;
    let ToolOutcome::Failed(ToolFailure::Execution { message }) = &execution.outcome else {
        panic!("expected an execution failure, got {:?}", execution.outcome);
    };
    assert!(message.contains("`time`"), "{message}");
    assert!(message.contains("Invalid timezone"), "{message}");
    assert!(execution.output.render().contains("Invalid timezone"));

    // The raw result says isError.
    let raw = client
        .call_tool(
            "get_current_time",
            json!({"timezone": "Mars/Olympus_Mons"}),
            None,
        )
        .await
        .unwrap();
    assert!(raw.is_error);
}

#[tokio::test]
async fn an_unknown_tool_is_a_protocol_error_naming_the_server() {
    let client = connect(time_server()).await;
    let error = client
        .call_tool("no_such_tool", json!({}), None)
        .await
        .unwrap_err();
    assert!(matches!(error, McpError::Protocol { .. }), "{error:?}");
    assert_eq!(error.server(), "time");
    assert!(error.to_string().contains("no_such_tool"), "{error}");
}
