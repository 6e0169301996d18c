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
    } else if required && std::env::var_os(name).is_none_or(|value| value.is_empty()) {
        problems.push(agent.error_at(
            variable.span(),
            format!("environment variable {name} is not set ({what})"),
        ));
    }
}
