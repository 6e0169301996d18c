//! Secrets an agent file names by their environment variable: API keys, MCP servers'
//! credentials, the approval webhook's token and signing secret.

/// The value of `variable`, or an error naming the variable (never a value) when it is unset
/// or empty. `reins check` reports the same before a run; this is the run's own read.
pub fn secret_from_env(variable: &str) -> Result<String, String> {
    std::env::var(variable)
        .ok()
        .filter(|value| !value.is_empty())
        .ok_or_else(|| format!("{variable} is not set"))
}
