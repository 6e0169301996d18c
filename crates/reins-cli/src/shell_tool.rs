//! A tool that runs a program: `command = ["grep", "-rn", "{pattern}", "."]` with the model's
//! arguments put in the `{placeholders}`. No shell is involved, so an argument is always one
//! argument of the program whatever it contains; and it cannot be an option of the program
//! unless the tool allows it (`option_values`).

mod option_values;

use crate::config::ShellToolConfig;
use crate::config::shell_tool::placeholder_at;
use crate::keys::ModelKeys;
use crate::process_group::{self, GroupGuard};
use crate::tool_supervisor;
use option_values::OptionPositions;
use reins::tool::Tool;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};

/// The most bytes of a program's output handed to the model.
const MAX_OUTPUT: usize = 16 * 1024;

/// A program run with the model's arguments.
#[derive(Debug, Clone)]
pub struct ShellTool {
    name: String,
    description: String,
    /// The program's argv, its placeholders to be filled in.
    argv: Argv,
    schema: Value,
    /// `schema` compiled once, or why it cannot be (`reins check` refuses such a schema).
    validator: Result<Arc<reins::tool::schema_check::CompiledSchema>, String>,
    timeout: Duration,
    cwd: Option<PathBuf>,
    /// The model key variables the program does not inherit.
    withheld: Vec<String>,
}

impl ShellTool {
    /// The tool of a checked `[[tools.shell]]` entry; relative paths are resolved by `resolve`
    /// (the program too, when it is named by a path: see [`program_path`]). The program gets
    /// none of `keys`' variables but those the entry's `env_passthrough` names.
    pub fn new(
        config: &ShellToolConfig,
        resolve: impl Fn(&str) -> PathBuf,
        keys: &ModelKeys,
    ) -> Self {
        let cwd = config.cwd.as_ref().map(|cwd| resolve(cwd.get_ref()));
        let mut command = config.command.get_ref().clone();
        if let Some(program) = command.first_mut().filter(|program| !program.contains('{')) {
            let base = cwd.clone().unwrap_or_else(|| resolve("."));
            *program = program_path(program, &base);
        }
        let schema = serde_json::to_value(config.schema.get_ref()).unwrap_or(Value::Null);
        ShellTool {
            name: config.name.get_ref().clone(),
            description: config.description.clone(),
            argv: Argv::new(command, config.allow_option_values),
            validator: reins::tool::schema_check::CompiledSchema::compile(&schema).map(Arc::new),
            schema,
            timeout: Duration::from_secs(
                config
                    .timeout_secs
                    .as_ref()
                    .map_or(60, |secs| *secs.get_ref()),
            ),
            cwd,
            withheld: keys
                .withheld(&config.env_passthrough)
                .map(str::to_owned)
                .collect(),
        }
    }

    /// The program's argv, which a call's arguments fill in: what `ArgsCheck` checks them
    /// against as the call is dispatched, before an approval rule asks about it.
    pub fn argv(&self) -> &Argv {
        &self.argv
    }
}

/// A shell tool's command, its `{placeholders}` to be filled in with a call's arguments, and
/// where a value filling one could be read as an option of the program (`option_values`).
#[derive(Debug, Clone)]
pub struct Argv {
    command: Vec<String>,
    /// Where in `command` a value could be read as an option, and is refused.
    option_positions: OptionPositions,
}

impl Argv {
    /// The argv template `command` (program first); `allow_option_values` as the tool's.
    pub fn new(command: Vec<String>, allow_option_values: bool) -> Self {
        Argv {
            option_positions: OptionPositions::of(&command, allow_option_values),
            command,
        }
    }

    /// The program's argv with `args` filled in, or why the program must not run with them.
    /// Each element is filled in one pass: an argument's value is put in as it is, never
    /// searched for placeholders itself (a value holding `{other}` stays `{other}`, and cannot
    /// grow by being filled again). A value that would be read as an option of the program is
    /// refused (`option_values`).
    pub fn fill(&self, args: &Value) -> Result<Vec<String>, String> {
        self.command
            .iter()
            .enumerate()
            .map(|(index, element)| {
                let filled = fill(element, args)?;
                self.option_positions.check(index, element, &filled)?;
                Ok(filled)
            })
            .collect()
    }
}

/// `element` with each `{placeholder}` replaced by its argument in `args` (a string as it is,
/// another value as JSON); text that is no placeholder is kept.
fn fill(element: &str, args: &Value) -> Result<String, String> {
    let mut filled = String::with_capacity(element.len());
    let mut rest = element;
    while let Some(open) = rest.find('{') {
        filled.push_str(&rest[..open]);
        let after = &rest[open..];
        let Some(name) = placeholder_at(after) else {
            filled.push('{');
            rest = &after[1..];
            continue;
        };
        match args.get(name) {
            Some(Value::String(text)) => filled.push_str(text),
            Some(Value::Null) | None => return Err(format!("missing argument `{name}`")),
            Some(other) => filled.push_str(&other.to_string()),
        }
        rest = &after[name.len() + 2..];
    }
    filled.push_str(rest);
    Ok(filled)
}

/// A program as an agent file names it: a relative path with a directory part (`./save.sh`,
/// `bin/tool`) starts at `base` (the program's working directory as the file gives it, else
/// the agent file's directory), so the agent runs the same from any directory; a bare name
/// (`python3`) is looked up on `PATH`, and an absolute path is kept.
pub fn program_path(program: &str, base: &std::path::Path) -> String {
    let path = std::path::Path::new(program);
    if path.is_absolute() || path.components().count() < 2 {
        return program.to_owned();
    }
    // A directory that is not Unicode keeps the name as written, found as before.
    base.join(path)
        .into_os_string()
        .into_string()
        .unwrap_or_else(|_| program.to_owned())
}

impl Tool for ShellTool {
    type Args = Value;
    type Output = String;
    type Error = String;

    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        self.schema.clone()
    }

    fn timeout(&self) -> Option<Duration> {
        Some(self.timeout)
    }

    /// Runs the program with `args`: its output, or why it failed. Arguments that do not fit
    /// the tool's schema run nothing (a string where a number is wanted could be a flag of
    /// the program's, an object would be spelt into one argument as JSON), nor does a value
    /// that would be an option of the program (`option_values`): the model is told what is
    /// wrong, and can call again. The model's calls are refused so as they are dispatched
    /// already (`args_check`); these checks are for a call a person approved with edited
    /// arguments, which is not dispatched again. A schema that does not compile, which
    /// `reins check` refuses, runs nothing either: the program is never run unchecked. (A key
    /// the program prints is masked in both by the agent's redaction hooks, as in any tool's
    /// result and failure.)
    async fn call(&self, args: Value) -> Result<String, String> {
        let validator = self.validator.as_ref().map_err(|reason| {
            crate::tool_schema::not_run(&crate::tool_schema::unchecked(&self.name, reason))
        })?;
        crate::tool_schema::check(&self.name, validator, &args)
            .map_err(|mismatch| crate::tool_schema::not_run(&mismatch))?;
        let argv = self.argv.fill(&args)?;
        let (program, rest) = argv.split_first().ok_or("the command is empty")?;
        // Started by a supervisor that ends the program's group if reins itself is killed.
        let mut supervised = tool_supervisor::command(program.as_ref(), rest);
        // A call cut off is the supervisor's to end (its lifeline dropped): killed by reins
        // first, it would leave what escaped the group running.
        let supervises = supervised.supervises();
        let command = &mut supervised.command;
        command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(!supervises);
        for variable in &self.withheld {
            command.env_remove(variable);
        }
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd);
        }
        process_group::own_group(command);
        let cannot_run = |error: std::io::Error| format!("cannot run `{program}`: {error}");
        let mut child = command.spawn().map_err(cannot_run)?;
        let lifeline = supervised.started();
        // Killed whole if the call is cut off (Ctrl-C, a timeout) while it runs: by the
        // supervisor once `lifeline` is dropped, or by this guard where there is none.
        let group = GroupGuard::of(&child, supervises);
        let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
        // Once the program exits, what it left running in its group is ended: a background
        // child holding stdout open (`sleep 600 & echo ok`) would otherwise keep the call
        // waiting to its timeout. Its output up to then is read to the pipes' end.
        let program_exits = async {
            let status = child.wait().await;
            group.end_rest();
            status
        };
        let (status, stdout, stderr) =
            tokio::try_join!(program_exits, kept_output(stdout), kept_output(stderr))
                .map_err(cannot_run)?;
        let status = lifeline
            .outcome(status)
            .map_err(|why| format!("cannot run `{program}`: {why}"))?;
        let stdout = truncate(String::from_utf8_lossy(&stdout).into_owned());
        if status.success() {
            Ok(stdout)
        } else {
            let stderr = truncate(String::from_utf8_lossy(&stderr).into_owned());
            Err(format!(
                "`{program}` failed ({}): {}{}",
                status,
                stderr.trim(),
                if stdout.is_empty() {
                    String::new()
                } else {
                    format!("\n{stdout}")
                }
            ))
        }
    }
}

/// The first bytes a program writes to `pipe`, enough for [`truncate`] to cut its text at
/// [`MAX_OUTPUT`] (a character's last bytes beyond it included); the rest is read and
/// dropped, so a program writing gigabytes neither fills reins's memory nor blocks on a full
/// pipe, and ends as it would have.
async fn kept_output(pipe: Option<impl AsyncRead + Unpin>) -> std::io::Result<Vec<u8>> {
    const KEPT: usize = MAX_OUTPUT + 4;
    let mut kept = Vec::new();
    let Some(mut pipe) = pipe else {
        return Ok(kept);
    };
    let mut buffer = vec![0; 64 * 1024];
    loop {
        let read = pipe.read(&mut buffer).await?;
        if read == 0 {
            return Ok(kept);
        }
        let room = KEPT.saturating_sub(kept.len());
        kept.extend_from_slice(&buffer[..read.min(room)]);
    }
}

fn truncate(mut text: String) -> String {
    if text.len() > MAX_OUTPUT {
        let mut end = MAX_OUTPUT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("\n[output truncated]");
    }
    text
}
