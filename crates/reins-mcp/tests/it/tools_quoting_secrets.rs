//! A server that quotes its credentials in its tool list (`hostile_server.py
//! tools-quote-secrets`): every tool's title, description and input schema go to the model
//! provider with every request, and into a durable run's record, so the credentials are
//! replaced there as they are in a tool's result.

use crate::hostile::hostile_server;
use crate::hostile_http::HostileHttp;
use crate::servers::connect;
use reins::tool::Tool;
use reins_mcp::McpClient;

/// Lists `client`'s tools and checks that nothing the model is shown of them holds `secret`,
/// and that where it was, `[redacted]` is.
async fn listed_without(client: McpClient, secret: &str) {
    let tools = client.tools().await.expect("the tools are listed");
    let echo = tools.get("echo").expect("the echo tool");
    let shown = [
        echo.title().unwrap_or_default().to_owned(),
        Tool::description(echo).to_owned(),
        echo.parameters().to_string(),
    ];
    for text in shown {
        assert!(!text.contains(secret), "{text}");
        assert!(text.contains("[redacted]"), "{text}");
    }
    // Calls still go to the tool by its name on the server.
    let said = client
        .call_tool(echo.remote_name(), serde_json::json!({"text": "hi"}), None)
        .await
        .expect("a call");
    assert_eq!(said.text(), "hi");
}

#[tokio::test]
async fn a_credential_in_the_server_s_environment_is_not_shown_in_its_tools() {
    const TOKEN: &str = "tok-0123456789abcdef";
    let server = hostile_server("tools-quote-secrets").env("SERVICE_TOKEN", TOKEN);
    listed_without(connect(server).await, TOKEN).await;
}

#[tokio::test]
async fn the_bearer_token_is_not_shown_in_the_tools_of_an_http_server() {
    const TOKEN: &str = "tok-secret-42";
    let server = HostileHttp::start_with("tools-quote-secrets", &[]);
    listed_without(connect(server.server().bearer_token(TOKEN)).await, TOKEN).await;
}
