//! `@modelcontextprotocol/server-filesystem` (npm) under an agent whose approval policy lets
//! it read anywhere the server may, but write only inside one directory.

use crate::servers::{connect, filesystem_server, fresh_dir};
use reins::agent::AgentBuilder;
use reins::hooks::approval::{ApprovalPolicy, Rule};
use reins::message::Message;
use reins::testing::{ScriptedModel, Turn};
use serde_json::{Value, json};
use std::path::{Component, Path, PathBuf};

/// Whether every path argument of a call (`path`, `source`, `destination`) lies inside
/// `dir`, judged on the text: a path with `..` is never inside.
fn paths_inside(args: &Value, dir: &Path) -> bool {
    let paths: Vec<&str> = ["path", "source", "destination"]
        .iter()
        .filter_map(|key| args.get(*key).and_then(Value::as_str))
        .collect();
    !paths.is_empty()
        && paths.iter().all(|path| {
            let path = PathBuf::from(path);
            path.components().all(|part| part != Component::ParentDir) && path.starts_with(dir)
        })
}

#[tokio::test]
async fn an_approval_policy_denies_writes_outside_a_directory() {
    let root = fresh_dir("filesystem");
    let inside = root.join("inside");
    std::fs::create_dir_all(&inside).unwrap();
    std::fs::write(root.join("notes.txt"), "read me").unwrap();

    let client = connect(filesystem_server(&root)).await;
    let tools = client.tools().await.unwrap().prefix("fs_");
    assert!(tools.get("fs_read_text_file").unwrap().traits().read_only);
    assert!(tools.get("fs_write_file").unwrap().traits().destructive);

    let writable = inside.clone();
    let policy = tools
        .register_traits(ApprovalPolicy::new())
        .rule(Rule::allow("*").when_traits(|traits| traits.read_only))
        .rule(Rule::allow("*").when_args(move |args| paths_inside(args, &writable)))
        .rule(Rule::deny(
            "*",
            "writes are allowed only inside the `inside` directory",
        ));

    let in_file = inside.join("ok.txt");
    let out_file = root.join("escaped.txt");
    let sneaky = inside.join("../sneaky.txt");
    let model = ScriptedModel::new([
        Turn::tool_calls([
            (
                "fs_write_file",
                json!({"path": in_file, "content": "written inside"}),
            ),
            (
                "fs_write_file",
                json!({"path": out_file, "content": "written outside"}),
            ),
            (
                "fs_write_file",
                json!({"path": sneaky, "content": "dot-dot"}),
            ),
            (
                "fs_move_file",
                json!({"source": in_file, "destination": out_file}),
            ),
            ("fs_read_text_file", json!({"path": root.join("notes.txt")})),
        ]),
        Turn::text("Done."),
    ]);
    let agent = AgentBuilder::new(model.clone())
        .tools(tools)
        .add_hook(policy)
        .build();
    assert_eq!(agent.prompt("Write some files.").await.unwrap(), "Done.");

    let results: Vec<String> = model.requests()[1]
        .history
        .iter()
        .filter(|message| matches!(message, Message::Tool(_)))
        .map(Message::text)
        .collect();
    assert_eq!(results.len(), 5, "{results:#?}");
    assert!(results[0].contains("Successfully wrote"), "{results:#?}");
    let denied = "writes are allowed only inside the `inside` directory";
    assert_eq!(results[1], denied);
    assert_eq!(results[2], denied);
    assert_eq!(results[3], denied);
    assert!(results[4].contains("read me"), "{results:#?}");

    assert_eq!(std::fs::read_to_string(&in_file).unwrap(), "written inside");
    assert!(!out_file.exists(), "a denied write reached the disk");
    assert!(!root.join("sneaky.txt").exists(), "a `..` path escaped");
    let _ = std::fs::remove_dir_all(&root);
}
