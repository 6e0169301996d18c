//! The command line a new user gets wrong: a misspelt or forgotten command is not taken as
//! a prompt for the built-in demo, but refused (exit 2) with the command that was meant; an
//! option clap does not know, under `--json`, ends with the `error` event scripts read.

use crate::common::{AgentDir, events, model_table, outcome};

fn agent() -> AgentDir {
    AgentDir::new(&model_table("http://127.0.0.1:9"))
}

#[test]
fn a_misspelt_command_names_the_command_meant() {
    let agent = agent();
    let (code, stdout, stderr) = outcome(agent.reins(&["chekc", "AGENT"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("unknown command `chekc`: did you mean `reins check`?"),
        "{stderr}"
    );
}

#[test]
fn an_agent_file_without_a_command_says_how_to_run_it() {
    let agent = agent();
    let (code, stdout, stderr) = outcome(agent.reins(&["agent.toml"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("run the agent file with `reins run agent.toml`"),
        "{stderr}"
    );
}

/// `reins approve agent.toml RUN` (or `list`, `show`, `resume`, ...): a command of `reins
/// runs` typed without `runs` is refused with the whole command meant, not read as the demo's
/// prompt (clap's `the subcommand 'agent.toml' cannot be used with '[PROMPT]'`, or the demo
/// asked "approve").
#[test]
fn a_runs_command_without_runs_names_the_command_meant() {
    let agent = agent();
    for (line, meant) in [
        (
            &["approve", "agent.toml", "run-41a"][..],
            "`reins runs approve agent.toml run-41a`",
        ),
        (&["list", "agent.toml"], "`reins runs list agent.toml`"),
        (
            &["resume", "agent.toml", "41a", "--json"],
            "`reins runs resume agent.toml 41a --json`",
        ),
        (&["deny"], "`reins runs deny`"),
    ] {
        let (code, stdout, stderr) = outcome(agent.reins(line));
        assert_eq!(code, 2, "{line:?}: {stderr}");
        assert!(stdout.is_empty(), "{stdout}");
        assert!(
            stderr.contains(&format!("is a command of `reins runs`: {meant}")),
            "{line:?}: {stderr}"
        );
    }
}

/// A command line clap cannot read, given to `run` or `runs resume` with `--json`: a script
/// reading the events reads the `error` event (run null, clap's message), the same as for
/// every other failure before a run starts, and the exit code is still 2 with clap's text
/// on stderr. Without `--json`, stdout stays empty.
#[test]
fn a_usage_mistake_under_json_ends_with_the_error_event() {
    let agent = agent();
    for (line, said) in [
        (
            &["run", "AGENT", "hi", "--json", "--bogus"][..],
            "'--bogus'",
        ),
        (&["runs", "resume", "AGENT", "--json"], "<RUN>"),
    ] {
        let (code, stdout, stderr) = outcome(agent.reins(line));
        assert_eq!(code, 2, "{line:?}: {stderr}");
        assert!(
            stderr.contains(said) && stderr.contains("Usage:"),
            "{stderr}"
        );
        let events = events(&stdout);
        assert_eq!(events.len(), 1, "{line:?}: {stdout}");
        let event = &events[0];
        assert_eq!(event["event"], "error", "{event}");
        assert!(event["run"].is_null(), "{event}");
        let message = event["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(said) && message.contains("Usage:"),
            "{message}"
        );

        let without: Vec<&str> = line.iter().copied().filter(|a| *a != "--json").collect();
        let (code, stdout, _) = outcome(agent.reins(&without));
        assert_eq!(code, 2);
        assert!(stdout.is_empty(), "{stdout}");
    }
}

/// `reins --help`, all a person who has never seen reins may have: it says where the agent
/// file's keys are described, where the example agents are, and what each exit code means
/// (3: a call waits for a person, and the commands that decide it).
#[test]
fn the_help_says_where_the_agent_file_is_described_and_what_the_exit_codes_mean() {
    let agent = agent();
    let (code, help, stderr) = outcome(agent.reins(&["--help"]));
    assert_eq!(code, 0, "{stderr}");
    for said in [
        "crates/reins-cli/agents",
        "README",
        "reins check",
        "3 suspended",
        "reins runs approve",
        "docs/CLI.md",
    ] {
        assert!(help.contains(said), "`{said}` is not in:\n{help}");
    }
}
