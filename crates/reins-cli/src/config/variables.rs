//! Environment variables an agent file names (API keys, secrets, tokens): each must look like
//! a variable's name — a value pasted in its place is never echoed, it may be the secret —
//! and be set when the command at hand needs it.

use super::LoadedAgent;
use super::diagnostic::Diagnostic;
use toml::Spanned;

/// `variable` must name an environment variable that is set.
pub(super) fn check_env(
    agent: &LoadedAgent,
    variable: &Spanned<String>,
    what: &str,
    problems: &mut Vec<Diagnostic>,
) {
    check_variable(agent, variable, what, true, problems);
}

/// `variable` must name an environment variable, set when `required`.
pub(super) fn check_variable(
    agent: &LoadedAgent,
    variable: &Spanned<String>,
    what: &str,
    required: bool,
    problems: &mut Vec<Diagnostic>,
) {
    let name = variable.get_ref();
    let looks_like_a_name =
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !looks_like_a_name {
        // Not echoed, not even in the quoted line: a value pasted here instead of a
        // variable's name may be the secret.
        problems.push(
            agent
                .error_at(
                    variable.span(),
                    format!("this must name an environment variable ({what}), not hold a value"),
                )
                .concealed(),
        );
    } else if required && let Some(missing) = missing(name) {
        problems.push(agent.error_at(
            variable.span(),
            format!("environment variable {name} {missing} ({what})"),
        ));
    }
}

/// How the variable `name` fails to hold a value: `is not set`, or `is empty` (an
/// `export NAME=` with nothing after it, which looks set in `env`); `None` when it holds one.
pub fn missing(name: &str) -> Option<&'static str> {
    match std::env::var_os(name) {
        None => Some("is not set"),
        Some(value) if value.is_empty() => Some("is empty"),
        Some(_) => None,
    }
}
