//! Agents whose store is Restate (`[store] restate = "<ingress URL>"`): `reins serve` runs the
//! agent's worker (the Restate deployment), and `reins run`, `reins runs show|approve|deny|
//! resume` go through the ingress with [`RestateRuns`]. The run loop itself executes in the
//! worker; this process only starts, follows and decides runs.
//!
//! The commands that read an embedded store's run records (`runs list`, `runs checkpoints`,
//! `runs fork`, `chat`, `ui`) have no Restate counterpart and say so.

mod follow;
mod listen;
mod serve;

pub use follow::{Verdict, decide, follow, interrupted, show, start};
pub use serve::{ServeOptions, serve};

use crate::config::LoadedAgent;
use reins_restate::{ClientError, RestateRuns};

/// The agent's Restate ingress URL, when its store is Restate.
pub fn ingress(agent: &LoadedAgent) -> Option<&str> {
    agent
        .file
        .store
        .as_ref()
        .and_then(|store| store.get_ref().restate.as_ref())
        .map(|url| url.get_ref().as_str())
}

/// `url` as it may be shown: user info (`user:password@`, sent as basic authentication) is
/// a credential, so it reads `***@`; so may a query be (a gateway's `?token=…`), so it reads
/// `?***`, and a fragment is left out. Done on the text, so a URL that does not parse is
/// masked too. (The agent file's ingress URL cannot hold user info, `check` refuses it; the
/// admin URL given to `reins serve --register` can.)
pub(crate) fn shown(url: &str) -> String {
    let authority_start = url.find("://").map_or(0, |at| at + 3);
    let rest = &url[authority_start..];
    // Up to the path: a password may hold a `?` or `#` of its own.
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (mut shown, after_user) = match rest[..authority_end].rfind('@') {
        Some(at) => (format!("{}***@", &url[..authority_start]), &rest[at + 1..]),
        None => (url[..authority_start].to_owned(), rest),
    };
    match after_user.find(['?', '#']) {
        Some(at) => {
            shown.push_str(&after_user[..at]);
            if after_user[at..].starts_with('?') {
                shown.push_str("?***");
            }
        }
        None => shown.push_str(after_user),
    }
    shown
}

/// Why `command` cannot run on the agent's store, when that store is Restate.
pub fn unsupported(agent: &LoadedAgent, command: &str) -> Option<String> {
    let url = shown(ingress(agent)?);
    Some(format!(
        "`reins {command}` is not available for agents on the Restate store (`[store] restate = \
         \"{url}\"` in {}): Restate keeps no run records to read; use `reins runs show` on a \
         run id",
        agent.path.display()
    ))
}

/// The bearer token for the agent's ingress, from the variable `[store] restate_token_env`
/// names; `None` when the file names none.
pub(crate) fn token(agent: &LoadedAgent) -> Result<Option<String>, String> {
    let variable = agent
        .file
        .store
        .as_ref()
        .and_then(|store| store.get_ref().restate_token_env.as_ref());
    secret(variable, "the Restate ingress token")
}

/// The bearer token for the admin API (`reins serve --register`): from the variable
/// `[store] restate_admin_token_env` names, else the ingress's; `None` when the file names
/// neither.
pub(crate) fn admin_token(agent: &LoadedAgent) -> Result<Option<String>, String> {
    let store = agent.file.store.as_ref().map(toml::Spanned::get_ref);
    match store.and_then(|store| store.restate_admin_token_env.as_ref()) {
        Some(variable) => secret(Some(variable), "the Restate admin API token"),
        None => token(agent),
    }
}

/// What an admin API that refused `reins serve --register` (HTTP 401 or 403) wants of the
/// agent file: which variable's token it refused, or the key that names one.
pub(crate) fn admin_refusal(agent: &LoadedAgent) -> &'static str {
    let store = agent.file.store.as_ref().map(toml::Spanned::get_ref);
    let named = |key: fn(&crate::config::StoreConfig) -> bool| store.is_some_and(key);
    if named(|store| store.restate_admin_token_env.is_some()) {
        "it refused the bearer token of `restate_admin_token_env`"
    } else if named(|store| store.restate_token_env.is_some()) {
        "it refused the bearer token of `restate_token_env` (an admin API with a token of its \
         own takes it from the variable `[store] restate_admin_token_env` names)"
    } else {
        "it wants credentials: name the variable holding its bearer token in `[store] \
         restate_admin_token_env`"
    }
}

/// The value of `variable`, if named; an unset one is an error saying `what` it holds.
fn secret(variable: Option<&toml::Spanned<String>>, what: &str) -> Result<Option<String>, String> {
    let Some(variable) = variable else {
        return Ok(None);
    };
    crate::assemble::secret_from_env(variable.get_ref())
        .map(Some)
        .map_err(|missing| format!("{missing} ({what})"))
}

/// A client of the agent's ingress, with its bearer token if the file names one.
pub(crate) fn client(agent: &LoadedAgent, url: &str) -> Result<RestateRuns, String> {
    let runs = RestateRuns::new(url).map_err(|error| {
        format!(
            "the Restate ingress URL of {} is not valid: {error}",
            agent.path.display()
        )
    })?;
    match token(agent)? {
        Some(token) => runs.bearer_token(&token).map_err(|error| error.to_string()),
        None => Ok(runs),
    }
}

/// What is said of a run id the server has no run under.
pub(crate) fn unknown(run_id: &str, url: &str) -> String {
    let url = shown(url);
    format!("run `{run_id}` is not known to the Restate server at {url}")
}

/// An ingress failure, said for people: an unreachable server or an unregistered worker gets
/// the command that fixes it.
pub(crate) fn explain(agent: &LoadedAgent, url: &str, error: &ClientError) -> String {
    let file = crate::shell_word::path(&agent.path);
    let url = shown(url);
    match error {
        ClientError::Transport(_) => format!(
            "cannot reach the Restate ingress at {url} (is restate-server running?): {error}"
        ),
        // The server took the call: it is the worker that is missing, not the server.
        ClientError::Timeout(waited) => format!(
            "the Restate ingress at {url} answered nothing in {} s: is a worker running, and \
             its deployment registered? Start one with `reins serve {file} --register <admin \
             URL>`",
            waited.as_secs()
        ),
        ClientError::AlreadyExists { run_id } => format!(
            "run `{run_id}` already exists on the Restate server at {url}: a run id runs once, \
             and the new prompt was not taken (see `reins runs show {run_id}`)"
        ),
        ClientError::Http { status: 404, body } if body.to_lowercase().contains("service") => {
            format!(
                "the Restate server at {url} does not know the agent's service: start its worker \
             with `reins serve {file} --register <admin URL>` ({body})"
            )
        }
        ClientError::UnknownRun { run_id } => unknown(run_id, &url),
        ClientError::Http {
            status: status @ (401 | 403),
            body,
        } => {
            let what = if token(agent).ok().flatten().is_some() {
                "refused the bearer token of `restate_token_env`"
            } else {
                "wants credentials: name the variable holding a bearer token in `[store] \
                 restate_token_env`"
            };
            format!("the Restate ingress at {url} {what} (HTTP {status}: {body})")
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn user_info_and_query_in_a_url_are_masked_and_the_rest_kept() {
        assert_eq!(
            shown("http://ops:hunter2@restate.internal:8080/path?q=a@b"),
            "http://***@restate.internal:8080/path?***"
        );
        // A query's credential, and a password holding a `?`, show neither.
        assert_eq!(
            shown("https://restate.example.com/?token=q-secret-55#f"),
            "https://restate.example.com/?***"
        );
        assert_eq!(shown("http://ops:pa?ss@host/x"), "http://***@host/x");
        assert_eq!(shown("https://token@host"), "https://***@host");
        assert_eq!(shown("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
        assert_eq!(shown("not a url:pw@host"), "***@host");
    }
}
