//! A shell tool's program or an MCP server's `command` that is not there (a misspelt name
//! not on PATH, a relative path to no file or to a file that cannot be run): `reins check`
//! and `reins run` warn at once, naming the tool and the program, instead of the model's
//! first call failing. A warning, not an error: the agent may be checked where its tools are
//! not installed.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, model_table, outcome};
use std::os::unix::fs::PermissionsExt;

/// An agent with a shell tool running `program` and an MCP server started by `server`
/// (with `env`, a TOML inline table).
fn agent(model: &str, program: &str, server: &str, env: &str) -> AgentDir {
    AgentDir::new(&format!(
        "name = \"tools\"\n{model}\n[[tools.shell]]\nname = \"search\"\n\
         description = \"Searches.\"\ncommand = [\"{program}\", \"{{pattern}}\"]\n\
         schema = {{ type = \"object\", properties = {{ pattern = {{ type = \"string\" }} }} }}\n\n\
         [[tools.mcp]]\nname = \"files\"\ncommand = \"{server}\"\nenv = {env}\n"
    ))
}

fn hosted_model() -> String {
    "[model]\nprovider = \"openai\"\nname = \"gpt-5-mini\"\napi_key_env = \"REINS_TEST_KEY\"\n"
        .to_owned()
}

#[test]
fn check_warns_of_each_program_not_found_and_still_passes() {
    let agent = agent(
        &hosted_model(),
        "grpe-reins-missing",
        "./servers/files.sh",
        "{}",
    );
    let servers = agent.dir.path().join("servers");
    std::fs::create_dir(&servers).expect("the servers directory");
    // There, but not executable.
    std::fs::write(servers.join("files.sh"), "#!/bin/sh\n").expect("the script");
    std::fs::set_permissions(
        servers.join("files.sh"),
        std::fs::Permissions::from_mode(0o644),
    )
    .expect("chmod");

    let (code, stdout, stderr) = outcome(agent.keyed(&["check", "AGENT"]));
    assert_eq!(code, 0, "a warning, not an error:\n{stderr}");
    assert!(
        stdout.contains("ok, with the 2 warnings above (agent `tools`)"),
        "{stdout}"
    );
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("warning:"))
        .collect();
    assert_eq!(warnings.len(), 2, "one line per program:\n{stderr}");
    assert!(
        warnings[0].contains("agent.toml:")
            && warnings[0].contains("tool `search`")
            && warnings[0].contains("`grpe-reins-missing` is not found on PATH"),
        "{stderr}"
    );
    assert!(
        warnings[1].contains("MCP server `files`")
            && warnings[1].contains("servers/files.sh")
            && warnings[1].contains("is not executable"),
        "{stderr}"
    );
}

#[test]
fn a_program_on_the_path_an_mcp_server_s_env_gives_is_found() {
    let bin = tempfile::tempdir().expect("a directory of programs");
    let server = bin.path().join("files-server-reins");
    std::fs::write(&server, "#!/bin/sh\n").expect("the server");
    std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let with_path = format!("{{ PATH = \"{}\" }}", bin.path().display());

    // `sh` is on reins's PATH: found. The server is on the PATH its `env` gives: found.
    let found = agent(&hosted_model(), "sh", "files-server-reins", &with_path);
    let (code, _, stderr) = outcome(found.keyed(&["check", "AGENT"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("warning:"), "{stderr}");

    // Not on reins's own PATH: that is not where the server is looked for.
    let own_path = agent(&hosted_model(), "sh", "files-server-reins", "{}");
    let (code, _, stderr) = outcome(own_path.keyed(&["check", "AGENT"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("MCP server `files`")
            && stderr.contains("`files-server-reins` is not found on PATH"),
        "{stderr}"
    );
}

#[test]
fn run_warns_of_a_missing_program_as_it_starts() {
    let server = FakeLlm::start(
        "version: 1\nrules:\n  - name: answer\n    when:\n      messages_contain: \"hi\"\n    \
         respond:\n      content: \"Hello.\"\n",
    );
    let agent = AgentDir::new(&format!(
        "name = \"tools\"\n{}\n[[tools.shell]]\nname = \"search\"\n\
         description = \"Searches.\"\ncommand = [\"grpe-reins-missing\", \"{{pattern}}\"]\n\
         schema = {{ type = \"object\", properties = {{ pattern = {{ type = \"string\" }} }} }}\n",
        model_table(&server.openai_url())
    ));
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "hi"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(stdout.trim(), "Hello.", "{stderr}");
    assert!(
        stderr.contains("warning:")
            && stderr.contains("tool `search`")
            && stderr.contains("`grpe-reins-missing` is not found on PATH"),
        "{stderr}"
    );
}
