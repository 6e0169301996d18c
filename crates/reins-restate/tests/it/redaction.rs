//! What the agent's `Redaction` masks never reaches Restate's journal: a tool call's step
//! journals its result masked, as the hook shows it to the model.

use crate::harness::Cluster;

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_result_is_journaled_masked() {
    let mut cluster = Cluster::start("redaction").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    runs.start("secret-1", "secret")
        .await
        .expect("the run starts");
    let output = runs.output("secret-1").await.expect("the run finishes");
    // The model read the masked result (the demo answers with it).
    assert!(
        output.answer.contains("[REDACTED:email]"),
        "{}",
        output.answer
    );

    let journal = cluster
        .query(
            "SELECT j.* FROM sys_journal j JOIN sys_invocation i ON j.id = i.id WHERE \
             i.target_service_name = 'ReinsAgent' AND i.target_service_key = 'secret-1'",
        )
        .await;
    // Each entry as Restate stores it (`raw`, hex-encoded): the payloads' bytes as they are.
    let text: String = journal
        .iter()
        .map(|row| {
            String::from_utf8_lossy(&unhex(row["raw"].as_str().unwrap_or_default())).into_owned()
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(text.contains("secret-1/t1c0"), "{text}");
    for secret in [
        "ada@example.com",
        "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        "4111 1111 1111 1111",
    ] {
        assert!(
            !text.contains(secret),
            "`{secret}` is in the journal: {text}"
        );
    }
    assert!(text.contains("REDACTED:email"), "{text}");
}

/// The bytes of a hex string.
fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len() / 2)
        .filter_map(|at| u8::from_str_radix(hex.get(at * 2..at * 2 + 2)?, 16).ok())
        .collect()
}
