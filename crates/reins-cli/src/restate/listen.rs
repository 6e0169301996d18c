//! `reins serve --listen`: where the worker listens, and whether it may listen there.
//!
//! Every request to the worker carries the journal it replays, so whoever can reach its port
//! can make it run the agent's tools (approve a waiting call, say). Off loopback, the worker
//! therefore starts only with the Restate server's request identity keys
//! (`[store] restate_identity_keys`, then it takes only requests the server signed) or with
//! `--unverified-callers`, the operator's word that only the server can reach the address.

use crate::config::LoadedAgent;
use crate::listen_address::ListenAddress;

/// Why the worker may not listen on `listen`: an address other than loopback (judged by
/// [`ListenAddress::loopback`], as `reins ui --bind` is) needs the server's
/// `restate_identity_keys` in the agent file, or `--unverified-callers`.
pub fn unguarded(
    agent: &LoadedAgent,
    listen: &ListenAddress,
    has_identity_keys: bool,
    unverified_callers: bool,
) -> Option<String> {
    if listen.loopback() || has_identity_keys || unverified_callers {
        return None;
    }
    let named = listen.named();
    Some(format!(
        "{named} is not a loopback address, and {path} has no `[store] \
         restate_identity_keys`: anyone who can reach the port could send the worker a journal \
         of their own and make it run the agent's tools (an approval of a waiting call \
         included). Set `restate_identity_keys = [\"publickeyv1_…\"]` to the public key of \
         the Restate server's request identity (its `[worker.invoker] \
         request-identity-private-key-pem-file`, or RESTATE_REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE; \
         the server logs the key as `Loaded request identity key` with `kid: \
         \"publickeyv1_…\"` when it starts), and the worker takes only the requests the server \
         signed; or listen on loopback (127.0.0.1, [::1], localhost); or, when nothing but the \
         Restate server can reach this address (a private network), pass --unverified-callers",
        path = agent.path.display()
    ))
}
