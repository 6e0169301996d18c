//! The token the inbox asks of every request, and where it comes from. On loopback without
//! `--token`, the inbox makes one at start and prints the address to open with it: whatever
//! else runs on this machine — a tool the agent itself runs, with `curl` — cannot open the
//! page and approve its own waiting calls, as it could if loopback were trusted. Only
//! `--no-token` trusts loopback, and only there. Off loopback the person chooses the token
//! (`--token`, `REINS_UI_TOKEN`), of [`MIN_REMOTE_TOKEN_CHARS`] or more.

use crate::listen_address::ListenAddress;

/// What a request must carry to use the inbox. No `Debug`: it holds a secret.
pub enum InboxToken {
    /// `--no-token`, on loopback only: a request must only name a loopback host.
    Off,
    /// Made at start and shown once, in the address printed to the person running the
    /// inbox: its holder is that person.
    Generated(String),
    /// `--token` or `REINS_UI_TOKEN`: whoever it was given to holds it.
    Supplied(String),
}

impl InboxToken {
    /// The token a request must carry, if any.
    pub(super) fn secret(&self) -> Option<&str> {
        match self {
            InboxToken::Off => None,
            InboxToken::Generated(token) | InboxToken::Supplied(token) => Some(token),
        }
    }
}

/// Why there is no token to start the inbox with.
pub enum NoToken {
    /// A usage mistake (exit 2): `--no-token` or no token off loopback, and what
    /// [`unguarded`] refuses.
    Refused(String),
    /// The system's random source failed.
    Unmade(String),
}

/// The inbox's token on `bind`: the one `supplied` (an empty one counts as none), none with
/// `no_token`, else one made now.
pub fn choose(
    bind: &ListenAddress,
    supplied: Option<String>,
    no_token: bool,
) -> Result<InboxToken, NoToken> {
    let token = match supplied.filter(|token| !token.is_empty()) {
        Some(token) => InboxToken::Supplied(token),
        None if no_token && !bind.loopback() => {
            return Err(NoToken::Refused(format!(
                "--no-token is for loopback addresses only, and {} is not one: any \
                 machine that reaches it could decide the calls (set a token with --token \
                 or REINS_UI_TOKEN)",
                bind.named()
            )));
        }
        None if no_token => InboxToken::Off,
        // Off loopback the person chooses the token (and so knows it will be asked for).
        None if !bind.loopback() => InboxToken::Off,
        None => InboxToken::Generated(generated().map_err(NoToken::Unmade)?),
    };
    match unguarded(bind, &token) {
        Some(error) => Err(NoToken::Refused(error)),
        None => Ok(token),
    }
}

/// Why the inbox may not listen on `bind` with `token`: an address other than loopback
/// (judged by [`ListenAddress::loopback`], as `reins serve --listen` is) needs a token of at
/// least [`MIN_REMOTE_TOKEN_CHARS`] characters. The refusal names the address, never the
/// token.
pub fn unguarded(bind: &ListenAddress, token: &InboxToken) -> Option<String> {
    if bind.loopback() {
        return None;
    }
    let bind = bind.named();
    match token {
        InboxToken::Off => Some(format!(
            "{bind} is not a loopback address: set a token with --token or REINS_UI_TOKEN"
        )),
        // Reachable from other machines, a short token is guessed (wrong guesses cost an
        // attacker nothing but a 401).
        InboxToken::Supplied(token) if token.chars().count() < MIN_REMOTE_TOKEN_CHARS => {
            Some(format!(
                "{bind} is not a loopback address: its token must be at least \
                 {MIN_REMOTE_TOKEN_CHARS} characters (`openssl rand -hex 16` makes one)"
            ))
        }
        InboxToken::Supplied(_) | InboxToken::Generated(_) => None,
    }
}

/// The warning for a token given as `--token` on the command line, which every user of the
/// machine reads (`ps`, `/proc/PID/cmdline`): any of them could open the inbox and decide
/// its calls. Not for one in `REINS_UI_TOKEN`, which only the user's own processes read.
/// Names the option and the variable, never the token.
pub(super) fn seen_by_every_user(token: &InboxToken) -> Option<String> {
    let InboxToken::Supplied(_) = token else {
        return None;
    };
    on_command_line(std::env::args_os().skip(1)).then(|| {
        format!(
            "reins: warning: --token shows the token to every user of this machine (`ps` \
             lists the command line), who could then decide the inbox's calls: give it in \
             {} instead",
            crate::keys::UI_TOKEN_ENV
        )
    })
}

/// Whether `args` (the command line after the program) give `--token` (`--token T` or
/// `--token=T`); what follows `--` is no option.
fn on_command_line(args: impl IntoIterator<Item = std::ffi::OsString>) -> bool {
    args.into_iter()
        .map(|arg| arg.to_string_lossy().into_owned())
        .take_while(|arg| arg != "--")
        .any(|arg| arg == "--token" || arg.starts_with("--token="))
}

/// The shortest token guarding an inbox other machines can reach.
const MIN_REMOTE_TOKEN_CHARS: usize = 16;

/// Random bytes in a generated token: 192 bits, as many as Jupyter's.
const GENERATED_TOKEN_BYTES: usize = 24;

/// A token from the system's random source, in hex (it goes in an address as it is).
fn generated() -> Result<String, String> {
    random_hex("the inbox's token")
}

/// The secret the session cookie carries once the token was given, made at start, of this
/// inbox alone: a browser sends the cookie to every port of the host, so whatever else listens
/// there receives it, and it must not be the token (which, given with `--token`, may open
/// other inboxes and the next start of this one too).
pub(super) fn session_secret() -> Result<String, String> {
    random_hex("the inbox's session secret")
}

/// [`GENERATED_TOKEN_BYTES`] random bytes in hex; `what` names them in the error.
fn random_hex(what: &str) -> Result<String, String> {
    let mut bytes = [0u8; GENERATED_TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(|error| format!("cannot make {what}: {error}"))?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_on_the_command_line_only_as_the_option() {
        let given = |args: &[&str]| on_command_line(args.iter().map(Into::into));
        assert!(given(&["ui", "a.toml", "--token", "t"]));
        assert!(given(&["ui", "a.toml", "--token=t"]));
        assert!(!given(&["ui", "a.toml"]));
        assert!(!given(&["ui", "a.toml", "--no-token"]));
        assert!(!given(&["ui", "--", "--token"]));
    }

    #[test]
    fn generated_tokens_are_long_and_differ() {
        let first = generated().expect("a token");
        let second = generated().expect("a token");
        assert_eq!(first.len(), GENERATED_TOKEN_BYTES * 2);
        assert!(first.bytes().all(|b| b.is_ascii_hexdigit()), "{first}");
        assert_ne!(first, second);
    }
}
