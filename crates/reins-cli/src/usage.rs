//! A first argument that was meant as a command but reads as the built-in demo's prompt.
//!
//! `reins` with no subcommand runs the demo on its positional `PROMPT`, so a misspelt
//! command (`reins chekc agent.toml`) or a forgotten one (`reins agent.toml`) would be a
//! prompt: clap then reports `the subcommand 'agent.toml' cannot be used with '[PROMPT]'`,
//! or, with one argument, the demo starts (fetching its model) and asks the model about the
//! file's name. So would a command of `reins runs` typed without `runs` (`reins approve
//! agent.toml RUN`). These are refused before parsing, with the command that was meant.

use std::ffi::OsString;

/// The commands a misspelt one is compared with (`ui` and `help` are too short to tell a
/// typo from a one-word prompt); `runs` first, as `runz` is more likely it than `run`.
const COMMANDS: [&str; 5] = ["check", "runs", "run", "chat", "serve"];

/// The commands of `reins runs`, which a person who decides calls from another terminal
/// types as `reins approve` as often as `reins runs approve`.
const RUNS_COMMANDS: [&str; 10] = [
    "list",
    "show",
    "approve",
    "edit",
    "deny",
    "skip",
    "supply",
    "checkpoints",
    "fork",
    "resume",
];

/// Why the command line `args` (the program's name first) looks like a mistaken command,
/// with what to type instead; `None` for a command line clap should read.
pub fn misread(args: &[OsString]) -> Option<String> {
    let first = args.get(1)?.to_str()?;
    let command = COMMANDS.contains(&first) || first == "ui" || first == "help";
    if command || first.starts_with('-') || first.chars().any(char::is_whitespace) {
        return None;
    }
    if first.to_ascii_lowercase().ends_with(".toml") {
        return Some(format!(
            "`{first}` is not a command: run the agent file with `reins run {first}` (or \
             validate it with `reins check {first}`); `reins --help` lists the commands"
        ));
    }
    if RUNS_COMMANDS.contains(&first) {
        let line: Vec<String> = args[1..]
            .iter()
            .map(|arg| crate::shell_word::quoted(&arg.to_string_lossy()).into_owned())
            .collect();
        return Some(format!(
            "`{first}` is a command of `reins runs`: `reins runs {}` (`reins runs --help` \
             lists them)",
            line.join(" ")
        ));
    }
    let meant = COMMANDS
        .iter()
        .find(|command| one_edit_apart(first, command))?;
    Some(format!(
        "unknown command `{first}`: did you mean `reins {meant}`? (`reins --help` lists the \
         commands; a prompt for the built-in demo is a quoted sentence)"
    ))
}

/// Whether `a` becomes `b` by one insertion, deletion, substitution or swap of neighbours.
fn one_edit_apart(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    match (a, b) {
        ([], [_]) | ([_], []) => true,
        ([x, y, rest_a @ ..], [p, q, rest_b @ ..]) if x == q && y == p && rest_a == rest_b => true,
        ([_, rest_a @ ..], [_, rest_b @ ..]) => rest_a == rest_b || a == rest_b || rest_a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn misread_line(line: &[&str]) -> Option<String> {
        let args: Vec<OsString> = std::iter::once("reins")
            .chain(line.iter().copied())
            .map(OsString::from)
            .collect();
        misread(&args)
    }

    #[test]
    fn a_misspelt_command_is_named() {
        for (typo, meant) in [
            ("chekc", "check"),
            ("chek", "check"),
            ("rnu", "run"),
            ("serv", "serve"),
            ("runz", "runs"),
        ] {
            let message = misread_line(&[typo, "agent.toml"]).unwrap_or_default();
            assert!(
                message.contains(&format!("`reins {meant}`")),
                "{typo}: {message}"
            );
        }
    }

    #[test]
    fn an_agent_file_as_the_first_argument_is_named() {
        let message = misread_line(&["notes.toml"]).unwrap_or_default();
        assert!(message.contains("`reins run notes.toml`"), "{message}");
    }

    #[test]
    fn a_runs_command_without_runs_is_named_with_its_arguments() {
        let message = misread_line(&["approve", "my agent.toml", "41a"]).unwrap_or_default();
        assert!(
            message.contains("`reins runs approve 'my agent.toml' 41a`"),
            "{message}"
        );
    }

    #[test]
    fn commands_options_and_prompts_are_left_to_clap() {
        for line in [
            &["check", "a.toml"][..],
            &["run", "a.toml"],
            &["--provider", "openai"],
            &["What is 2 + 3?"],
            &["hello"],
            &["hi"],
            &[],
        ] {
            assert_eq!(misread_line(line), None, "{line:?}");
        }
    }
}
