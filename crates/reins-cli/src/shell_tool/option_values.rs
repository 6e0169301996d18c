//! A model's value must not become an option of the program: with `["git", "log", "{ref}"]`,
//! a `ref` of `--output=notes.txt` would make `git` write a file, though the tool may be
//! marked read-only and allowed by an approval rule without anyone asking.
//!
//! A value is refused when it starts with `-` (but is not `-` alone, which utilities read as
//! standard input, never as an option) and begins an element of the command, where a
//! program's option parser looks. An element is exempt when its text does not start with the
//! placeholder (`--output={file}`, `-n{count}`: the option is the file's, the value only its
//! argument), when it comes after a `--` element of the file's command (the end of options,
//! by convention), and when it is an argument after the script of `sh -c SCRIPT` (or
//! `bash`, `dash`, `zsh`, `ksh`, `mksh`, `ash`, `yash`, or `python3 -c SCRIPT`): those are the
//! script's positional parameters (`$0`, `$1`, ...; `sys.argv`), which the interpreter never
//! reads as options, the interpreter run by `env [-i] [NAME=value...]` or not. A script that
//! hands them on to a program must guard them itself (`git log -- "$1"`). A tool whose values
//! may be options opts out with `allow_option_values = true`.
//!
//! A negative number is refused like any other value: `head {count}` given `-5` is `head -5`,
//! an option, and whether an element is an option's argument (`head -n {count}`) cannot be
//! known from the command. The refusal says how the agent file takes such a value: in its
//! option's element (`-n{count}`, `--lines={count}`), after `--`, or by opting out.

use crate::config::shell_tool::placeholder_at;
use std::path::Path;

/// Shells whose `-c` makes the first operand a script and the rest its positional parameters.
const SHELLS: [&str; 8] = ["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash"];

/// Which elements of a command a filled-in value could turn into an option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionPositions {
    /// One flag for each element of the command: whether a value beginning it is checked.
    checked: Vec<bool>,
}

impl OptionPositions {
    /// The positions of `command` (program first) where a value could be an option; none
    /// when `allow` (the tool's `allow_option_values`).
    pub fn of(command: &[String], allow: bool) -> Self {
        let positional_from = script_arguments_from(command).unwrap_or(usize::MAX);
        let end_of_options = command
            .iter()
            .skip(1)
            .position(|element| element == "--")
            .map_or(usize::MAX, |at| at + 1);
        let checked = command
            .iter()
            .enumerate()
            .map(|(index, element)| {
                !allow
                    && index > 0
                    && index < end_of_options
                    && index < positional_from
                    && placeholder_at(element).is_some()
            })
            .collect();
        OptionPositions { checked }
    }

    /// Whether `filled`, element `index` of the command (`template`) with its placeholders
    /// filled in, may be run; else why the model's value would be read as an option there.
    pub fn check(&self, index: usize, template: &str, filled: &str) -> Result<(), String> {
        let could_be_option = filled.starts_with('-') && filled != "-";
        if !could_be_option || !self.checked.get(index).copied().unwrap_or(false) {
            return Ok(());
        }
        let name = placeholder_at(template).unwrap_or(template);
        // A negative number is refused too: many programs read one as an option (`head -5`,
        // `grep -2`, `kill -9`), and whether the element is an option's argument instead
        // (`head -n {count}`) cannot be known from the command.
        let (what, instead) = if is_negative_number(filled) {
            (format!("`{name}` is a negative number"), "")
        } else {
            (
                format!("`{name}` starts with `-`"),
                " (a file named `-x` as `./-x`)",
            )
        };
        Err(format!(
            "invalid arguments: {what}, so the program would read it as an option rather than \
             a value; the tool did not run. Give `{name}` without a leading `-`{instead}. (The \
             agent file can take such a value as its option's argument in one element, \
             `--lines={{{name}}}` or `-n{{{name}}}`, after a `--` element, or with \
             `allow_option_values = true` on the tool.)"
        ))
    }
}

/// The index of the first argument a script interpreter gives its `-c` script as a positional
/// parameter (`sh -c SCRIPT NAME ARG...`: NAME is `$0`; `python3 -c SCRIPT ARG...`), if
/// `command` is such a call, the interpreter run by `env` or not ([`program_run_by_env`]).
fn script_arguments_from(command: &[String]) -> Option<usize> {
    let interpreter = program_run_by_env(command).unwrap_or(0);
    let from = script_arguments_in(command.get(interpreter..)?)?;
    Some(interpreter + from)
}

/// The index of the program `env` runs, when `command` is `env [-i] [NAME=value...] PROGRAM
/// ...`: `env` reads no option after its first operand, nor a value in an assignment whose
/// name is the file's (`LC_ALL={locale}`). Other options of `env`'s give none.
fn program_run_by_env(command: &[String]) -> Option<usize> {
    let program = Path::new(command.first()?).file_name()?.to_str()?;
    if program != "env" {
        return None;
    }
    let mut index = 1;
    if command.get(index).is_some_and(|element| element == "-i") {
        index += 1;
    }
    while command.get(index).is_some_and(|element| {
        element
            .find('=')
            .is_some_and(|at| at > 0 && !element.starts_with('-') && !element[..at].contains('{'))
    }) {
        index += 1;
    }
    Some(index)
}

/// [`script_arguments_from`] for a `command` whose program is the interpreter. Options before
/// the script are read as the interpreter reads them; one holding a placeholder, or any form
/// not understood, gives none (every element is then checked).
fn script_arguments_in(command: &[String]) -> Option<usize> {
    let program = Path::new(command.first()?).file_name()?.to_str()?;
    let shell = SHELLS.contains(&program);
    if !shell && !is_python(program) {
        return None;
    }
    let mut index = 1;
    let mut script_option = false;
    while let Some(element) = command.get(index) {
        if element.contains('{') {
            // The script itself may be filled in; an option cannot be known before a call.
            break;
        }
        if element == "--" {
            index += 1;
            break;
        }
        let flags = match element.strip_prefix('-') {
            Some(flags) if !flags.is_empty() => flags,
            _ if shell && element.len() > 1 && element.starts_with('+') => &element[1..],
            _ => break,
        };
        if flags.starts_with('-') {
            // A long option (`--norc`): none of those the shells take reads an argument
            // beside `--rcfile` and `--init-file`, whose file is a plain word.
            index += if matches!(flags, "-rcfile" | "-init-file") {
                2
            } else {
                1
            };
            continue;
        }
        if shell {
            script_option |= flags.contains('c');
            // `-o pipefail`, `-O extglob`: the next element is the option's argument.
            index += if flags.ends_with(['o', 'O']) { 2 } else { 1 };
        } else {
            // Python: `-c` ends the options, the script its next element; `-m` runs a
            // module, which reads its arguments as it likes; `-W`, `-X` take an argument.
            if flags.contains('m') {
                return None;
            }
            if flags.ends_with('c') {
                return Some(index + 2);
            }
            if flags.contains('c') {
                return None;
            }
            index += if flags.ends_with(['W', 'X']) { 2 } else { 1 };
        }
    }
    // The shell's script is the first element after its options; the arguments follow it.
    (shell && script_option && command.get(index).is_some()).then_some(index + 1)
}

/// Whether `text` is a negative number as a model writes one: `-5`, `-0.25`.
fn is_negative_number(text: &str) -> bool {
    text.strip_prefix('-').is_some_and(|number| {
        number.starts_with(|c: char| c.is_ascii_digit())
            && number.chars().all(|c| c.is_ascii_digit() || c == '.')
            && number.matches('.').count() <= 1
    })
}

/// Whether `program` is a Python interpreter: `python`, `python3`, `python3.12`.
fn is_python(program: &str) -> bool {
    program
        .strip_prefix("python")
        .is_some_and(|version| version.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(command: &[&str]) -> Vec<bool> {
        let command: Vec<String> = command.iter().map(|s| (*s).to_owned()).collect();
        OptionPositions::of(&command, false).checked
    }

    #[test]
    fn an_element_begun_by_a_placeholder_is_checked_until_the_end_of_options() {
        assert_eq!(
            checked(&["git", "log", "{ref}", "--", "{path}"]),
            [false, false, true, false, false]
        );
        assert_eq!(
            checked(&["grep", "--regexp={pattern}", "-n{n}", "{file}"]),
            [false, false, false, true]
        );
    }

    #[test]
    fn a_scripts_positional_parameters_are_not_checked() {
        assert_eq!(
            checked(&["sh", "-c", "echo \"$1\"", "sh", "{x}"]),
            [false, false, false, false, false]
        );
        assert_eq!(
            checked(&["/bin/bash", "-o", "pipefail", "-ec", "{script}", "{x}"]),
            [false, false, false, false, true, false]
        );
        assert_eq!(
            checked(&["python3", "-I", "-c", "print(1)", "{x}"]),
            [false, false, false, false, false]
        );
        // Run by `env`, after its variables.
        assert_eq!(
            checked(&[
                "env",
                "-i",
                "LC_ALL={locale}",
                "sh",
                "-c",
                "echo \"$1\"",
                "sh",
                "{x}"
            ]),
            [false; 8]
        );
        assert_eq!(
            checked(&["/usr/bin/env", "python3", "-c", "print(1)", "{x}"]),
            [false; 5]
        );
        // `env`'s other options, and a variable named by the model, are not understood.
        assert_eq!(
            checked(&["env", "-u", "HOME", "sh", "-c", "echo", "{x}"]),
            [false, false, false, false, false, false, true]
        );
        assert_eq!(
            checked(&["env", "{name}=1", "sh", "-c", "echo", "{x}"]),
            [false, true, false, false, false, true]
        );
        // Not a `-c` script: the shell reads a script file, a module its own options.
        assert_eq!(checked(&["sh", "run.sh", "{x}"]), [false, false, true]);
        assert_eq!(
            checked(&["python3", "-m", "http.server", "{port}"]),
            [false, false, false, true]
        );
        assert_eq!(
            checked(&["sh", "{flags}", "-c", "echo", "{x}"]),
            [false, true, false, false, true]
        );
    }

    #[test]
    fn a_value_starting_with_a_dash_is_refused_where_checked() {
        let command: Vec<String> = ["git", "log", "{ref}"].map(str::to_owned).to_vec();
        let positions = OptionPositions::of(&command, false);
        let refused = positions.check(2, "{ref}", "--output=x");
        assert!(refused.is_err_and(|why| why.contains("`ref` starts with `-`")));
        assert_eq!(positions.check(2, "{ref}", "-"), Ok(()));
        assert_eq!(positions.check(2, "{ref}", "main"), Ok(()));
        let refused = positions.check(2, "{ref}", "-5");
        assert!(
            refused.is_err_and(|why| why.contains("`ref` is a negative number")
                && why.contains("allow_option_values = true")
                && !why.contains("./-x"))
        );
        let allowed = OptionPositions::of(&command, true);
        assert_eq!(allowed.check(2, "{ref}", "--output=x"), Ok(()));
    }
}
