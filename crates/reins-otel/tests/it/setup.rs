//! Setting export up from the environment: a mistake is reported without the values that
//! may hold credentials.

use std::process::Command;

#[test]
fn an_invalid_endpoint_is_reported_without_its_credentials() {
    let dir = std::env::temp_dir().join(format!("reins-otel-setup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A space makes the URL invalid; its user info holds a password.
    let output = Command::new(env!("CARGO_BIN_EXE_reins-otel-demo"))
        .args(["start", &dir.join("runs.sqlite").to_string_lossy(), "r1"])
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://phoenix:hunter2-s3cret@collector .internal:4318",
        )
        .env("OTEL_METRICS_EXPORTER", "none")
        .output()
        .expect("the demo runs");
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("OTEL_EXPORTER_OTLP_ENDPOINT"), "{stderr}");
    assert!(!stderr.contains("hunter2-s3cret"), "{stderr}");
}
