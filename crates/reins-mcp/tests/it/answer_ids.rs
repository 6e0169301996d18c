//! Answers naming their request in another form than it was sent (`recording_server.py`).

use crate::servers::connect;
use crate::traced_secrets::recording_server;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn an_answer_under_its_request_s_id_as_a_string_is_taken_as_that_request_s() {
    // rmcp reads the id `"3"` as 3: a server that writes ids back as strings is understood
    // rather than left waiting for its timeout.
    let server = recording_server(&[]).call_timeout(Duration::from_secs(20));
    let client = connect(server).await;
    let result = client.call_tool("stringly", json!({}), None).await.unwrap();
    assert_eq!(result.text(), "late");
    assert_eq!(client.tools().await.unwrap().len(), 3);
}
