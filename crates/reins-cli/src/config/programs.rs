//! The programs an agent file starts (each shell tool's, each stdio MCP server's `command`),
//! looked for as they will be started: a misspelt name, or a script that is not there or
//! cannot be run, is said when the file is checked instead of when the model first calls the
//! tool. Each is a warning, not an error: a file may be checked (in CI, say) where its tools
//! are not installed, and it runs where they are.
//!
//! A program named by a path (`./save.sh`) is found as [`crate::shell_tool::program_path`]
//! resolves it; a bare name is looked for in the directories of the `PATH` the program is
//! started with: reins's own, or the one an MCP server's `env` gives it. An empty or relative
//! entry of `PATH` is the program's working directory, as the operating system reads it.

use super::diagnostic::Diagnostic;
use super::{LoadedAgent, McpConfig, ShellToolConfig};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Where a program is looked for when `PATH` is unset: the C library's default.
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// Said after a shell tool's warning: what happens if it is left as it is.
const TOOL_FAILS: &str = "the tool fails when the model calls it, unless the program is there \
                          when the agent runs";

/// Said after an MCP server's warning: what happens if it is left as it is.
const RUN_FAILS: &str = "a run fails as it starts the server, unless the program is there when \
                         the agent runs";

/// Why a program would not start.
enum Missing {
    /// A bare name in none of `PATH`'s directories; `from_env` when an MCP server's `env`
    /// gives the `PATH`.
    NotOnPath { from_env: bool },
    /// A path to nothing.
    NoFile(PathBuf),
    /// A path to a directory.
    Directory(PathBuf),
    /// A file without permission to run.
    NotExecutable(PathBuf),
}

/// A warning for each program the agent starts that would not start.
pub fn missing_programs(agent: &LoadedAgent) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    for tool in &agent.file.tools.shell {
        let tool = tool.get_ref();
        if let Some(missing) = shell_program(agent, tool) {
            let program = tool.command.get_ref().first().map_or("", String::as_str);
            warnings.push(warning(
                agent,
                tool.command.span(),
                &format!("tool `{}`: program", tool.name.get_ref()),
                program,
                &missing,
                TOOL_FAILS,
            ));
        }
    }
    for server in &agent.file.tools.mcp {
        let server = server.get_ref();
        let Some(command) = &server.command else {
            continue;
        };
        if let Some(missing) = mcp_program(agent, server, command.get_ref()) {
            warnings.push(warning(
                agent,
                command.span(),
                &format!("MCP server `{}`: command", server.name),
                command.get_ref(),
                &missing,
                RUN_FAILS,
            ));
        }
    }
    warnings
}

/// Why a shell tool's program would not start, if it would not. A program made of a
/// call's arguments (`{placeholder}`) is known only then.
fn shell_program(agent: &LoadedAgent, tool: &ShellToolConfig) -> Option<Missing> {
    let program = tool.command.get_ref().first()?;
    if program.is_empty() || program.contains('{') {
        return None;
    }
    let cwd = tool.cwd.as_ref().map(|cwd| agent.resolve(cwd.get_ref()));
    find(program, cwd, agent, None)
}

/// Why an MCP server's command would not start, if it would not.
fn mcp_program(agent: &LoadedAgent, server: &McpConfig, command: &str) -> Option<Missing> {
    if command.trim().is_empty() {
        return None;
    }
    let cwd = server.cwd.as_ref().map(|cwd| agent.resolve(cwd.get_ref()));
    find(
        command,
        cwd,
        agent,
        server.env.get("PATH").map(OsString::from),
    )
}

/// Looks for `program` as it will be started in `cwd` (the tool's, else where reins runs),
/// with `env_path` as its `PATH` if given (else reins's own).
fn find(
    program: &str,
    cwd: Option<PathBuf>,
    agent: &LoadedAgent,
    env_path: Option<OsString>,
) -> Option<Missing> {
    if Path::new(program).components().count() > 1 || Path::new(program).is_absolute() {
        let base = cwd.unwrap_or_else(|| agent.base_dir());
        let path = PathBuf::from(crate::shell_tool::program_path(program, &base));
        // Said as a whole path: `./save.sh` beside an agent file named by a relative path
        // would otherwise be shown as `././save.sh`.
        let path = std::path::absolute(&path).unwrap_or(path);
        return runnable(&path).err();
    }
    let from_env = env_path.is_some();
    let path = env_path
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_else(|| OsString::from(DEFAULT_PATH));
    // Where a relative `PATH` entry starts: the program's working directory.
    let working = cwd.or_else(|| std::env::current_dir().ok());
    let found = std::env::split_paths(&path).any(|dir| {
        let dir = match &working {
            Some(working) if dir.is_relative() => working.join(dir),
            _ => dir,
        };
        runnable(&dir.join(program)).is_ok()
    });
    (!found).then_some(Missing::NotOnPath { from_env })
}

/// Whether `path` is a file that may be run, else why not.
fn runnable(path: &Path) -> Result<(), Missing> {
    let Ok(metadata) = std::fs::metadata(path) else {
        return Err(Missing::NoFile(path.to_path_buf()));
    };
    if metadata.is_dir() {
        return Err(Missing::Directory(path.to_path_buf()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        if metadata.permissions().mode() & 0o111 == 0 {
            return Err(Missing::NotExecutable(path.to_path_buf()));
        }
    }
    Ok(())
}

/// The warning at `span`: `what` (the tool and which of its settings) `program`, why it
/// would not start, and `then` what happens.
fn warning(
    agent: &LoadedAgent,
    span: std::ops::Range<usize>,
    what: &str,
    program: &str,
    missing: &Missing,
    then: &str,
) -> Diagnostic {
    let why = match missing {
        Missing::NotOnPath { from_env: false } => {
            format!("`{program}` is not found on PATH: install it, or fix its name")
        }
        Missing::NotOnPath { from_env: true } => format!(
            "`{program}` is not found on PATH (the `PATH` its `env` gives): install it, or fix \
             its name"
        ),
        Missing::NoFile(path) => format!(
            "`{program}` does not exist ({}; a relative path starts at the `cwd` given, else \
             at the agent file's directory)",
            path.display()
        ),
        Missing::Directory(path) => {
            format!("`{program}` is a directory ({})", path.display())
        }
        Missing::NotExecutable(path) => format!(
            "`{program}` is not executable: make it so with `chmod +x {}`",
            path.display()
        ),
    };
    agent
        .error_at(span, format!("{what} {why}; {then}"))
        .into_warning()
}
