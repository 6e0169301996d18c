//! Who a decision is recorded as made by, wherever it is made (`runs approve|deny`, the
//! inbox, the terminal's prompt): the operating-system user and the command or page.

/// Who a decision is recorded as made by: the operating-system user (`$USER`, `$LOGNAME`, or
/// the account the process runs as, where a container or a service sets neither), and the
/// command or page that made it (`alice via reins runs approve`).
pub fn decided_by(via: &str) -> String {
    format!("{} via {via}", user_name())
}

/// The operating-system user this process runs for (`$USER`, `$LOGNAME`, or the account the
/// process runs as, where a container or a service sets neither).
pub fn user_name() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .ok()
        .filter(|user| !user.trim().is_empty())
        .or_else(account_name)
        .unwrap_or_else(|| "an unnamed user".to_owned())
}

/// The name of the account this process runs as, from `/etc/passwd`.
#[cfg(unix)]
fn account_name() -> Option<String> {
    let uid = rustix::process::getuid().as_raw().to_string();
    let accounts = std::fs::read_to_string("/etc/passwd").ok()?;
    accounts.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        (fields.nth(1)? == uid && !name.is_empty()).then(|| name.to_owned())
    })
}

#[cfg(not(unix))]
fn account_name() -> Option<String> {
    None
}
