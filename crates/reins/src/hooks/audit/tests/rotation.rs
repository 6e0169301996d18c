//! A log file rotated away by renaming (or deleted) is followed to the new file.

use super::*;

async fn one_run(audit: &AuditLog) {
    let model = ScriptedModel::new([Turn::text("hi")]);
    AgentBuilder::new(model)
        .add_hook(audit.clone())
        .build()
        .prompt("go")
        .await
        .unwrap();
}

fn line_count(path: &Path) -> usize {
    std::fs::read_to_string(path).unwrap().lines().count()
}

#[tokio::test]
async fn lines_after_a_rename_rotation_go_to_a_new_file_at_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let rotated = dir.path().join("audit.jsonl.1");
    let audit = AuditLog::append_to(&path).unwrap();
    one_run(&audit).await;
    std::fs::rename(&path, &rotated).unwrap();
    one_run(&audit).await;
    // Each run writes a dispatch and an outcome line for its model call.
    assert_eq!(line_count(&rotated), 2);
    assert_eq!(line_count(&path), 2);
    // A rotation that deletes the file instead is followed too.
    std::fs::remove_file(&path).unwrap();
    one_run(&audit).await;
    assert_eq!(line_count(&path), 2);
    assert_eq!(line_count(&rotated), 2);
}
