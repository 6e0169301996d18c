//! A server that quotes its credentials in its tool list (`hostile_server.py
//! tools-quote-secrets`): every tool's title, description and input schema go to the model
//! provider with every request, and into a durable run's record, so the credentials are
//! replaced there as they are in a tool's result.

use crate::hostile::hostile_server;
use crate::hostile_http::HostileHttp;
use crate::notifications::Captured;
use crate::servers::connect;
use reins::tool::Tool;
use reins_mcp::{McpClient, McpError};
use serde_json::json;

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

/// What an error says of a tool whose name quotes the server's credentials, 8 KiB long
/// (`hostile_server.py secret-names`): the tool's error, the server's JSON-RPC error
/// (its operation names the tool) and arguments refused before sending.
async fn errors_naming_the_tool(client: McpClient) -> Vec<String> {
    let tools = client.tools().await.expect("the tools are listed");
    let tool = tools.iter().next().expect("the tool");
    let name = tool.remote_name();
    let reported = tool.call(json!({})).await.expect_err("a tool error");
    assert!(matches!(reported, McpError::Tool { .. }), "{reported:?}");
    let refused = client
        .call_tool(name, json!({"text": "rpc"}), None)
        .await
        .expect_err("a JSON-RPC error");
    assert!(matches!(refused, McpError::Protocol { .. }), "{refused:?}");
    let invalid = client
        .call_tool(name, json!([1]), None)
        .await
        .expect_err("not an object");
    assert!(
        matches!(invalid, McpError::InvalidArguments { .. }),
        "{invalid:?}"
    );
    [reported, refused, invalid]
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// Each error quotes the start of the name, without the credential, cut.
fn shown_cut_without(errors: &[String], secret: &str) {
    for error in errors {
        assert!(!error.contains(secret), "{error}");
        assert!(error.contains("echo "), "{error}");
        assert!(error.len() < 1024, "{} bytes: {error}", error.len());
    }
}

#[tokio::test]
async fn a_tool_name_quoting_a_credential_is_cut_and_scrubbed_in_errors() {
    const TOKEN: &str = "tok-0123456789abcdef";
    let server = hostile_server("secret-names").env("SERVICE_TOKEN", TOKEN);
    shown_cut_without(&errors_naming_the_tool(connect(server).await).await, TOKEN);
}

#[tokio::test]
async fn a_tool_name_quoting_the_bearer_token_is_cut_and_scrubbed_in_errors() {
    const TOKEN: &str = "tok-secret-42";
    let server = HostileHttp::start_with("secret-names", &[]);
    let client = connect(server.server().bearer_token(TOKEN)).await;
    shown_cut_without(&errors_naming_the_tool(client).await, TOKEN);
}

/// The warnings logged while listing `client`'s tools (`hostile_server.py secret-names`):
/// one for each tool left out or changed, each naming it.
async fn warnings_listing(client: McpClient, captured: &Captured) -> Vec<String> {
    let tools = client.tools().await.expect("the tools are listed");
    assert_eq!(tools.len(), 1, "only the first tool is kept");
    let warned = captured.0.lock().unwrap().clone();
    for why in [
        "cannot be read",
        "has no `type`",
        "another tool called this",
        "larger than the limit",
        "does not compile",
    ] {
        assert!(
            warned
                .iter()
                .any(|line| line.contains(why) && line.contains("tool=")),
            "no warning naming the tool says {why:?}: {warned:#?}"
        );
    }
    warned
}

/// Each warning quotes no credential, and the 8 KiB names in it are cut.
fn logged_cut_without(warned: &[String], secret: &str) {
    for line in warned {
        assert!(!line.contains(secret), "{line}");
        assert!(line.len() < 1024, "{} bytes: {line}", line.len());
    }
}

// The test's runtime runs every task on this thread, so the thread's default subscriber
// sees the client's transport.
#[tokio::test(flavor = "current_thread")]
async fn warnings_naming_a_tool_quoting_a_credential_are_cut_and_scrubbed() {
    const TOKEN: &str = "tok-0123456789abcdef";
    let captured = Captured::default();
    let _guard = tracing::subscriber::set_default(captured.clone());
    let server = hostile_server("secret-names").env("SERVICE_TOKEN", TOKEN);
    let warned = warnings_listing(connect(server).await, &captured).await;
    logged_cut_without(&warned, TOKEN);
}

#[tokio::test(flavor = "current_thread")]
async fn warnings_naming_a_tool_quoting_the_bearer_token_are_cut_and_scrubbed() {
    const TOKEN: &str = "tok-secret-42";
    let captured = Captured::default();
    let _guard = tracing::subscriber::set_default(captured.clone());
    let server = HostileHttp::start_with("secret-names", &[]);
    let client = connect(server.server().bearer_token(TOKEN)).await;
    logged_cut_without(&warnings_listing(client, &captured).await, TOKEN);
}
