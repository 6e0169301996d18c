//! `reins serve --listen`: where the worker listens, and whether it may listen there.
//!
//! Every request to the worker carries the journal it replays, so whoever can reach its port
//! can make it run the agent's tools (approve a waiting call, say). Off loopback, the worker
//! therefore starts only with the Restate server's request identity keys
//! (`[store] restate_identity_keys`, then it takes only requests the server signed) or with
//! `--unverified-callers`, the operator's word that only the server can reach the address.

use crate::config::LoadedAgent;
use std::net::SocketAddr;

/// `--listen`'s value as clap checks it: an address and port (`127.0.0.1:9080`,
/// `[::1]:9080`) or a host name and port (`localhost:9080`), resolved when the worker starts.
pub fn listen_address(text: &str) -> Result<String, String> {
    if text.parse::<SocketAddr>().is_ok() {
        return Ok(text.to_owned());
    }
    let expected = "expected ADDRESS:PORT or HOST:PORT (127.0.0.1:9080, [::1]:9080, \
                    localhost:9080)";
    let Some((host, port)) = text.rsplit_once(':') else {
        return Err(expected.to_owned());
    };
    if host.contains(':') {
        return Err(format!("{expected}: an IPv6 address goes in brackets"));
    }
    if host.is_empty() || port.parse::<u16>().is_err() {
        return Err(expected.to_owned());
    }
    Ok(text.to_owned())
}

/// The address the worker binds for `listen`: itself, or the first address a host name
/// resolves to (the one whose reach [`unguarded`] judges, so a name cannot hide where the
/// worker listens).
pub async fn resolve(listen: &str) -> Result<SocketAddr, String> {
    let mut addresses = tokio::net::lookup_host(listen)
        .await
        .map_err(|error| format!("cannot listen on {listen}: {error}"))?;
    addresses
        .next()
        .ok_or_else(|| format!("cannot listen on {listen}: the name has no address"))
}

/// Why the worker may not listen on `address` (what `listen` resolved to): an address other
/// than loopback needs the server's `restate_identity_keys` in the agent file, or
/// `--unverified-callers`.
pub fn unguarded(
    agent: &LoadedAgent,
    listen: &str,
    address: SocketAddr,
    has_identity_keys: bool,
    unverified_callers: bool,
) -> Option<String> {
    if loopback(address) || has_identity_keys || unverified_callers {
        return None;
    }
    let named = if listen == address.to_string() {
        listen.to_owned()
    } else {
        format!("{listen} ({address})")
    };
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

/// Whether only this machine can reach `address` (an IPv4-mapped IPv6 address counts as
/// its IPv4 one).
fn loopback(address: SocketAddr) -> bool {
    address.ip().to_canonical().is_loopback()
}

#[cfg(test)]
mod tests {
    use super::{listen_address, loopback};
    use std::net::SocketAddr;

    fn address(text: &str) -> SocketAddr {
        text.parse()
            .unwrap_or_else(|error| panic!("{text}: {error}"))
    }

    #[test]
    fn only_loopback_addresses_count_as_loopback() {
        for text in [
            "127.0.0.1:9080",
            "127.8.9.10:1",
            "[::1]:9080",
            "[::ffff:127.0.0.1]:1",
        ] {
            assert!(loopback(address(text)), "{text}");
        }
        for text in [
            "0.0.0.0:9080",
            "[::]:9080",
            "10.0.0.5:9080",
            "[::ffff:10.0.0.5]:1",
        ] {
            assert!(!loopback(address(text)), "{text}");
        }
    }

    #[test]
    fn listen_takes_addresses_and_host_names_with_a_port() {
        for text in [
            "127.0.0.1:9080",
            "[::1]:0",
            "0.0.0.0:9080",
            "localhost:9080",
            "a.b:1",
        ] {
            assert_eq!(listen_address(text).as_deref(), Ok(text));
        }
        for text in [
            "localhost",
            "::1",
            ":9080",
            "localhost:port",
            "localhost:70000",
            "",
        ] {
            assert!(listen_address(text).is_err(), "{text}");
        }
    }
}
