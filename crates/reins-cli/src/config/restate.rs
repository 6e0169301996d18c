//! The Restate store's own checks: a valid http(s) ingress URL with no credentials in it, no
//! other store beside it, no setting a replayed run could not repeat, and request identity
//! keys that are keys, given with the store they belong to.

use super::diagnostic::Diagnostic;
use super::{LoadedAgent, StoreConfig};
use toml::Spanned;

/// The Restate store: a valid http(s) ingress URL, no other store beside it, and no setting
/// a replayed run could not repeat.
pub(super) fn check_restate(
    agent: &LoadedAgent,
    store: &StoreConfig,
    url: &Spanned<String>,
    problems: &mut Vec<Diagnostic>,
) {
    let text = url.get_ref();
    let is_http = text.starts_with("http://") || text.starts_with("https://");
    match reins_restate::RestateRuns::new(text) {
        Ok(_) if is_http => {}
        Ok(_) => problems.push(agent.error_at(
            url.span(),
            "`restate` must be the http:// or https:// URL of a Restate ingress (e.g. \
             \"http://127.0.0.1:8080\")",
        )),
        Err(error) => problems.push(agent.error_at(
            url.span(),
            format!(
                "`restate` is not a valid URL ({error}): give the http:// or https:// URL of a \
                 Restate ingress, e.g. \"http://127.0.0.1:8080\""
            ),
        )),
    }
    let authority = text.split_once("://").map_or("", |(_, rest)| {
        rest.split(['/', '?', '#']).next().unwrap_or_default()
    });
    if authority.contains('@') {
        // Neither the message nor the quoted line shows the URL: the part before `@` is a
        // credential.
        problems.push(
            agent
                .error_at(
                    url.span(),
                    "`restate` must not hold credentials (`user:password@`): name the variable \
                     holding a bearer token in `restate_token_env` instead",
                )
                .concealed(),
        );
    }
    if let Some(keep) = &store.keep_checkpoints {
        problems.push(agent.error_at(
            keep.span(),
            "`keep_checkpoints` applies to `sqlite` and `postgres_url_env`: Restate keeps a \
             run's journal itself",
        ));
    }
    if let Some(lease) = &store.lease_secs {
        problems.push(agent.error_at(
            lease.span(),
            "`lease_secs` applies to `sqlite` and `postgres_url_env`: runs on Restate hold no \
             lease",
        ));
    }
    if store.sqlite.is_some() || store.postgres_url_env.is_some() {
        problems.push(agent.error_at(
            url.span(),
            "give one store: `restate`, `sqlite` or `postgres_url_env`",
        ));
    }
    if agent.file.limits.max_wall_time_secs.is_some() {
        problems.push(agent.error_at(
            url.span(),
            "`limits.max_wall_time_secs` reads the clock, which a run replayed by Restate \
             cannot repeat: remove it, or use `sqlite` or `postgres_url_env`",
        ));
    }
    // A recording cache grows as runs go: a replayed run would find a response its first
    // execution called the model for, ask for no model step, and no longer match its journal
    // (which Restate retries without end). Replaying a fixed recording is the same each time.
    let recording = agent
        .file
        .hooks
        .cache
        .as_ref()
        .and_then(|cache| cache.get_ref().record.as_ref());
    if recording.is_some() {
        problems.push(agent.error_at(
            url.span(),
            "`hooks.cache.record` answers a replayed run from responses its first execution \
             recorded, which Restate cannot repeat: use `replay` with a fixed recording, or \
             `sqlite` or `postgres_url_env`",
        ));
    }
}

/// `restate_identity_keys`: each a Restate server's public key (`publickeyv1_...`), given
/// only beside `restate`, whose server's requests they verify.
pub(super) fn check_identity_keys(
    agent: &LoadedAgent,
    store: &StoreConfig,
    problems: &mut Vec<Diagnostic>,
) {
    for key in &store.restate_identity_keys {
        if store.restate.is_none() {
            problems.push(agent.error_at(
                key.span(),
                "`restate_identity_keys` needs `restate = \"<ingress URL>\"`: they are the \
                 Restate server's keys",
            ));
        } else if let Err(error) = reins_restate::check_identity_key(key.get_ref()) {
            problems.push(agent.error_at(key.span(), error.to_string()));
        }
    }
}
