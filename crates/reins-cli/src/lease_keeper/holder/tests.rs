use super::*;

/// The name a worker of `pid` on `host`, in `pid_space`, claims runs under.
fn name(pid: u32, host: &str, pid_space: Option<PidSpace>) -> String {
    WorkerName {
        command: "run",
        pid,
        host,
        pid_space,
    }
    .to_string()
}

#[test]
fn a_worker_name_reads_back_as_made() {
    let made = worker_name("runs resume");
    let worker = parse_worker_name(&made).expect("a worker's name");
    assert_eq!(worker.command, "runs resume");
    assert_eq!(worker.pid, std::process::id());
    assert_eq!(worker.host, host());
    assert_eq!(worker.pid_space, this_pid_space());
    #[cfg(target_os = "linux")]
    assert!(worker.pid_space.is_some(), "Linux says: {made}");

    let space = PidSpace {
        namespace: 4_026_531_836,
        boot: 0x05f4_90e2_7606,
    };
    let shown = name(4242, "build-7", Some(space));
    assert_eq!(
        shown,
        "reins run, pid 4242 on build-7 (pid ns 4026531836, boot 05f490e27606)"
    );
    let odd_host = "a on b (c)";
    let odd = name(7, odd_host, Some(space));
    let read = parse_worker_name(&odd).expect("parsed");
    assert_eq!(
        (read.pid, read.host, read.pid_space),
        (7, odd_host, Some(space))
    );

    // An earlier reins's name, or one whose pid space is not as written: it does not say.
    for (earlier, host) in [
        ("reins run, pid 7 on a on b", "a on b"),
        (
            "reins run, pid 7 on h (pid ns x, boot 05f490e27606)",
            "h (pid ns x, boot 05f490e27606)",
        ),
        (
            "reins run, pid 7 on h (pid ns 1, boot 5f490e27606)",
            "h (pid ns 1, boot 5f490e27606)",
        ),
        (
            "reins run, pid 7 on h (pid ns 1, boot 05f490e27606",
            "h (pid ns 1, boot 05f490e27606",
        ),
    ] {
        let read = parse_worker_name(earlier).expect("parsed");
        assert_eq!(
            (read.pid, read.host, read.pid_space),
            (7, host, None),
            "{earlier}"
        );
    }
    for other in [
        "worker-a",
        "reins run, pid +7 on h",
        "reins run, pid  on h",
        "reins run, pid 7",
        "reins run pid 7 on h",
    ] {
        assert_eq!(parse_worker_name(other), None, "{other}");
    }
}

/// The id of a process that ended (and was reaped) just now.
#[cfg(unix)]
fn ended_pid() -> u32 {
    let mut child = std::process::Command::new("true")
        .spawn()
        .expect("start true");
    let pid = child.id();
    child.wait().expect("reaped");
    pid
}

#[cfg(target_os = "linux")]
#[test]
fn only_a_process_of_this_host_namespace_and_boot_that_ended_is_gone() {
    let pid = ended_pid();
    let (here, space) = (host(), this_pid_space().expect("Linux says"));
    assert!(holder_is_gone(&name(pid, &here, Some(space))));
    let other_namespace = PidSpace {
        namespace: space.namespace + 1,
        ..space
    };
    let other_boot = PidSpace {
        boot: space.boot ^ 1,
        ..space
    };
    for holder in [
        // A container given this host's name: its pid is not one of ours, whatever ours do.
        name(pid, &here, Some(other_namespace)),
        // Another machine of this name, or this one before it restarted: nothing tells which.
        name(pid, &here, Some(other_boot)),
        // An earlier reins said neither.
        name(pid, &here, None),
        name(pid, &format!("not-{here}"), Some(space)),
        // This process runs.
        worker_name("run"),
        // Process 1 runs, whoever it belongs to (EPERM counts as running).
        name(1, &here, Some(space)),
        name(0, &here, Some(space)),
        format!("other, pid {pid} on {here}"),
    ] {
        assert!(!holder_is_gone(&holder), "{holder}");
    }
}

#[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
#[test]
fn without_a_pid_space_nothing_is_gone() {
    let pid = ended_pid();
    assert!(!holder_is_gone(&name(pid, &host(), None)));
}
