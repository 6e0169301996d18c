use super::*;

fn call(value: Value) -> ServerResult {
    read_leniently(
        Asked::CallTool,
        ServerResult::CustomResult(CustomResult(value)),
        "s",
        &Credentials::default(),
    )
}

#[test]
fn unreadable_blocks_become_stand_ins_and_the_rest_is_kept() {
    let ServerResult::CallToolResult(result) = call(json!({
        "content": [
            {"type": "text", "text": "before"},
            {"type": "video", "uri": "v://1"},
            {"type": "image", "mimeType": "image/png"},
            "not even an object",
            {"type": "text", "text": "after", "annotations": {"audience": ["robot"]}}
        ],
        "isError": false
    })) else {
        panic!("not read as a tools/call result");
    };
    let texts: Vec<_> = result
        .content
        .iter()
        .map(|block| block.as_text().map(|text| text.text.as_str()))
        .collect();
    assert_eq!(
        texts,
        [
            Some("before"),
            Some("[content of type \"video\" not shown]"),
            Some("[content of type \"image\" not shown]"),
            Some("[content without a type not shown]"),
            Some("after")
        ]
    );
    assert_eq!(result.is_error, Some(false));
}

#[test]
fn an_answer_that_is_still_no_result_is_passed_on() {
    let answer = json!({"content": "not a list"});
    let page = json!({"tools": [{"name": "a", "inputSchema": {}}], "nextCursor": 2});
    assert!(matches!(
        call(answer.clone()),
        ServerResult::CustomResult(CustomResult(value)) if value == answer
    ));
    assert!(matches!(
        read_leniently(Asked::ListTools, ServerResult::CustomResult(CustomResult(page.clone())), "s", &Credentials::default()),
        ServerResult::CustomResult(CustomResult(value)) if value == page
    ));
    // A typed answer is not touched, and only answers to tools/call or tools/list are read.
    let typed = ServerResult::CallToolResult(CallToolResult::success(vec![]));
    assert!(matches!(
        read_leniently(Asked::ListTools, typed, "s", &Credentials::default()),
        ServerResult::CallToolResult(_)
    ));
}

#[test]
fn a_tool_is_read_without_what_reins_does_not_use_or_left_out() {
    let page = json!({
        "tools": [
            {"name": "a", "inputSchema": {"type": "object"},
             "icons": [{"src": "i.png", "theme": "high-contrast"}]},
            {"name": "no_schema"},
            {"name": "b", "inputSchema": {"type": "object"}}
        ],
        "nextCursor": "2"
    });
    let ServerResult::ListToolsResult(page) = read_leniently(
        Asked::ListTools,
        ServerResult::CustomResult(CustomResult(page)),
        "s",
        &Credentials::default(),
    ) else {
        panic!("not read as a tools/list page");
    };
    let names: Vec<_> = page.tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(page.next_cursor.as_deref(), Some("2"));
    // rmcp itself passes over fields and annotations it does not know.
    let newer = json!({"name": "c", "inputSchema": {"type": "object"}, "category": "x",
                       "annotations": {"readOnlyHint": true, "cheapHint": true}});
    assert!(Tool::deserialize(&newer).is_ok());
}
