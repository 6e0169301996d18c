//! `reins check` on `[[tools.mcp]]` entries: a server reached one way, its credentials named
//! by variables (never shown), and a call timeout a call can meet.

use crate::check::{VALID, assert_error_at};
use crate::common::check_file as check;

#[test]
fn an_mcp_server_with_both_command_and_url_is_refused() {
    assert_error_at(
        &format!(
            "{VALID}\n[[tools.mcp]]\nname = \"x\"\ncommand = \"x\"\nurl = \"http://127.0.0.1:1/mcp\"\n"
        ),
        24,
        "give either `command` (stdio) or `url` (HTTP), not both",
    );
}

/// A server's URL may carry a credential (user info, a key in its query): an error at the
/// `url` line points at it without repeating it.
#[test]
fn an_mcp_url_refused_is_pointed_at_but_never_shown() {
    let url = "alice:pass-5e1d@127.0.0.1:1/mcp?token=query-key-c04f";
    for (entry, error) in [
        (
            format!("url = \"ftp://{url}\"\n"),
            "`url` must be an http:// or https:// URL",
        ),
        (
            format!("command = \"x\"\nurl = \"https://{url}\"\n"),
            "give either `command` (stdio) or `url` (HTTP), not both",
        ),
    ] {
        let (code, stderr) = check(&format!("{VALID}\n[[tools.mcp]]\nname = \"x\"\n{entry}"));
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(error), "{stderr}");
        for secret in ["pass-5e1d", "query-key-c04f"] {
            assert!(!stderr.contains(secret), "{stderr}");
        }
    }
}

#[test]
fn an_unset_mcp_credential_variable_is_named_at_its_line_and_its_value_never_shown() {
    let toml = format!(
        "{VALID}\n[[tools.mcp]]\nname = \"x\"\nurl = \"http://127.0.0.1:1/mcp\"\n\
         bearer_token_env = \"REINS_TEST_UNSET_TOKEN\"\n\
         headers_from_env = {{ \"X-Api-Key\" = \"REINS_TEST_KEY\" }}\n"
    );
    assert_error_at(&toml, 24, "REINS_TEST_UNSET_TOKEN is not set");
    // REINS_TEST_KEY is set (to `k`): no error for the header, and the value is not shown.
    let (_, stderr) = check(&toml);
    assert!(!stderr.contains("X-Api-Key"), "{stderr}");
}

#[test]
fn an_mcp_server_needs_a_command_or_a_url() {
    let (code, stderr) = check(&format!("{VALID}\n[[tools.mcp]]\nname = \"x\"\n"));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("MCP server `x` needs `command` (stdio) or `url` (HTTP)"),
        "{stderr}"
    );
}

/// A server given no time would time out on every call before it answered.
#[test]
fn an_mcp_call_timeout_of_zero_is_refused_at_its_line() {
    let server = |timeout: u64| {
        format!(
            "{VALID}\n[[tools.mcp]]\nname = \"time\"\ncommand = \"python3\"\n\
             call_timeout_secs = {timeout}\n"
        )
    };
    assert_error_at(&server(0), 24, "`call_timeout_secs` must be at least 1");
    let (code, stderr) = check(&server(1));
    assert_eq!(code, 0, "{stderr}");
}
