//! An address a command listens on, as `reins serve --listen` and `reins ui --bind` take it:
//! an address and port (`127.0.0.1:9080`, `[::1]:9080`) or a host name and port
//! (`localhost:9080`), resolved when the command starts; and whether only this machine can
//! reach it, which decides what each command asks for before it listens there (the
//! worker's identity keys, the inbox's token). Both judge here, so they judge alike.
//!
//! A name is loopback only when every address it resolves to is: the command binds the
//! first, but a name that also resolves elsewhere is not one to trust as this machine's
//! alone. The unspecified addresses (`0.0.0.0`, `::`, which listen on every interface) are
//! not loopback, and an IPv4-mapped IPv6 address counts as its IPv4 one
//! (`::ffff:127.0.0.1` is loopback).

use std::net::{IpAddr, SocketAddr};

/// The value as clap checks it (no name is resolved yet): `text` itself when it is an
/// address and port or a host name and port, else what is expected.
pub fn parse(text: &str) -> Result<String, String> {
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

/// A listening address as given and what it resolved to.
#[derive(Debug, Clone)]
pub struct ListenAddress {
    /// What the person wrote (`localhost:9080`).
    given: String,
    /// The first address it resolves to: the one bound.
    first: SocketAddr,
    /// The others, in the resolver's order.
    others: Vec<SocketAddr>,
}

impl ListenAddress {
    /// Resolves `given` (checked by [`parse`]): an address stands for itself, a name for
    /// every address the system's resolver gives.
    pub async fn resolve(given: &str) -> Result<ListenAddress, String> {
        let addresses: Vec<SocketAddr> = tokio::net::lookup_host(given)
            .await
            .map_err(|error| format!("cannot listen on {given}: {error}"))?
            .collect();
        ListenAddress::from_addresses(given, addresses)
    }

    /// `given` standing for `addresses` (what it resolved to).
    fn from_addresses(given: &str, addresses: Vec<SocketAddr>) -> Result<ListenAddress, String> {
        let mut addresses = addresses.into_iter();
        let Some(first) = addresses.next() else {
            return Err(format!("cannot listen on {given}: the name has no address"));
        };
        Ok(ListenAddress {
            given: given.to_owned(),
            first,
            others: addresses.collect(),
        })
    }

    /// The address to bind: the first the name resolved to.
    pub fn bind(&self) -> SocketAddr {
        self.first
    }

    /// Whether only this machine can reach it: every address it resolved to is loopback.
    pub fn loopback(&self) -> bool {
        self.addresses().all(|address| loopback_ip(address.ip()))
    }

    /// Every address it resolved to.
    fn addresses(&self) -> impl Iterator<Item = &SocketAddr> {
        std::iter::once(&self.first).chain(&self.others)
    }

    /// How a refusal names it: as given, with what it resolved to when that differs
    /// (`0:9080 (0.0.0.0:9080)`), so a name cannot hide where the command would listen.
    pub fn named(&self) -> String {
        let resolved: Vec<String> = self.addresses().map(|a| a.to_string()).collect();
        if resolved.len() == 1 && resolved[0] == self.given {
            self.given.clone()
        } else {
            format!("{} ({})", self.given, resolved.join(", "))
        }
    }

    /// Why binding it failed, for the command whose option `option` (`--bind`) chose it:
    /// a port in use (another inbox's, most often: two agents' inboxes on the default port)
    /// is said so, with the option and the next port, which a person can type as shown.
    pub fn bind_failed(&self, option: &str, error: &std::io::Error) -> String {
        if error.kind() != std::io::ErrorKind::AddrInUse {
            return format!("cannot listen on {}: {error}", self.named());
        }
        let mut next = self.first;
        next.set_port(next.port().wrapping_add(1));
        format!(
            "cannot listen on {}: the port is in use (another `reins ui`, or another \
             program, listens there): choose another port, e.g. `{option} {next}`",
            self.named()
        )
    }
}

/// Whether `ip` is a loopback address, an IPv4-mapped IPv6 one counting as its IPv4 one.
pub fn loopback_ip(ip: IpAddr) -> bool {
    ip.to_canonical().is_loopback()
}

#[cfg(test)]
mod tests {
    use super::{ListenAddress, loopback_ip, parse};
    use std::net::SocketAddr;

    fn address(text: &str) -> SocketAddr {
        text.parse()
            .unwrap_or_else(|error| panic!("{text}: {error}"))
    }

    fn resolved(given: &str, addresses: &[&str]) -> ListenAddress {
        ListenAddress::from_addresses(given, addresses.iter().map(|a| address(a)).collect())
            .unwrap_or_else(|error| panic!("{given}: {error}"))
    }

    #[test]
    fn only_loopback_addresses_count_as_loopback() {
        for text in [
            "127.0.0.1:9080",
            "127.8.9.10:1",
            "[::1]:9080",
            "[::ffff:127.0.0.1]:1",
        ] {
            assert!(loopback_ip(address(text).ip()), "{text}");
            assert!(resolved(text, &[text]).loopback(), "{text}");
        }
        for text in [
            "0.0.0.0:9080",
            "[::]:9080",
            "10.0.0.5:9080",
            "[::ffff:10.0.0.5]:1",
            "[::ffff:0.0.0.0]:1",
        ] {
            assert!(!loopback_ip(address(text).ip()), "{text}");
            assert!(!resolved(text, &[text]).loopback(), "{text}");
        }
    }

    #[test]
    fn a_name_is_loopback_only_when_all_its_addresses_are() {
        let both = resolved("localhost:1", &["[::1]:1", "127.0.0.1:1"]);
        assert!(both.loopback());
        assert_eq!(both.bind(), address("[::1]:1"));
        let mixed = resolved("box:1", &["127.0.0.1:1", "10.0.0.5:1"]);
        assert!(!mixed.loopback());
        assert_eq!(mixed.named(), "box:1 (127.0.0.1:1, 10.0.0.5:1)");
        assert_eq!(resolved("0.0.0.0:1", &["0.0.0.0:1"]).named(), "0.0.0.0:1");
        assert!(ListenAddress::from_addresses("none:1", Vec::new()).is_err());
    }

    #[tokio::test]
    async fn names_are_resolved_as_the_system_does() {
        let local = ListenAddress::resolve("localhost:0").await;
        assert!(
            local.as_ref().is_ok_and(ListenAddress::loopback),
            "{local:?}"
        );
        // `0` is 0.0.0.0 written short: every interface, a name hiding it is no loopback.
        let every = ListenAddress::resolve("0:0").await;
        assert!(every.as_ref().is_ok_and(|a| !a.loopback()), "{every:?}");
        assert!(every.is_ok_and(|a| a.named() == "0:0 (0.0.0.0:0)"));
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
            assert_eq!(parse(text).as_deref(), Ok(text));
        }
        for text in [
            "localhost",
            "::1",
            ":9080",
            "localhost:port",
            "localhost:70000",
            "",
        ] {
            assert!(parse(text).is_err(), "{text}");
        }
    }
}
