//! What the servers tests start leave in the system's temporary directory once they are
//! dropped: nothing, whether the test passed or panicked. A user running `cargo test` should
//! not find the servers' directories, keys and sockets in /tmp afterwards.

use reins_test_servers::{RestateServer, Tmux};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The names in `dir` that contain `part`.
fn entries_naming(dir: &Path, part: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|name| name.contains(part))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_signing_restate_server_leaves_nothing_behind() {
    let label = format!("leftovers-signing-{}", std::process::id());
    let (server, _public_key) = RestateServer::start_signing(&label);
    let dir = server.dir().to_owned();
    // restate-server makes a temporary directory per partition for its invokers (once its
    // partitions are led, a moment after it answers): they must land in the server's own
    // directory, not in the one every program shares.
    let deadline = Instant::now() + Duration::from_secs(60);
    while entries_naming(&dir, "invoker-").is_empty() {
        assert!(
            Instant::now() < deadline,
            "restate-server made no invokers' directories in {}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(server);
    assert!(!dir.exists(), "{} outlived its server", dir.display());
    assert_eq!(
        entries_naming(&std::env::temp_dir(), &label),
        Vec::<String>::new(),
        "the server (or its signing key) left these in the temporary directory"
    );
}

#[test]
fn a_restate_server_of_a_failing_test_leaves_nothing_behind() {
    let label = format!("leftovers-failing-{}", std::process::id());
    let mut started_in: Option<PathBuf> = None;
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let server = RestateServer::start(&label);
        started_in = Some(server.dir().to_owned());
        panic!("the test fails while its server runs");
    }));
    assert!(failed.is_err());
    let dir = started_in.expect("the server started");
    assert!(
        !dir.exists(),
        "{} outlived the failed test's server",
        dir.display()
    );
}

/// tmux's socket directory for this user: `$TMUX_TMPDIR/tmux-UID`, `/tmp` when unset.
fn tmux_socket_dir() -> PathBuf {
    let uid = std::process::Command::new("id")
        .arg("-u")
        .output()
        .expect("id runs");
    let uid = String::from_utf8_lossy(&uid.stdout).trim().to_owned();
    let base = std::env::var_os("TMUX_TMPDIR").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    base.join(format!("tmux-{uid}"))
}

#[test]
fn a_tmux_terminal_leaves_no_socket_behind() {
    let tmux = Tmux::start("sleep 60");
    drop(tmux);
    let ours = format!("reins-test-{}-", std::process::id());
    assert_eq!(
        entries_naming(&tmux_socket_dir(), &ours),
        Vec::<String>::new(),
        "the terminal's tmux socket was left behind"
    );
}
