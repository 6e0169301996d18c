//! Stopping `reins ui` (Ctrl-C or SIGTERM) while it resumes a run: the inbox stops the run,
//! gives its lease back and exits cleanly, so `reins runs resume` continues the run at once
//! instead of being refused until the lease expires. Stopped while it still starts, it exits
//! as cleanly.

use crate::common::fakellm::FakeLlm;
use crate::common::inbox::Inbox;
use crate::common::{AgentDir, events, model_table, outcome};
use crate::interrupt::{
    RULES, WAIT_TOOL, resumed_at_once_the_cut_off_call_waits_then_runs_once_approved,
};
use std::time::{Duration, Instant};

/// Stops the inbox with `signal` while the run it resumed after an approval runs a tool
/// that blocks, then resumes the run from the command line.
fn stopping_the_inbox_gives_the_lease_back(signal: &str) {
    let llm = FakeLlm::start(RULES);
    let agent = AgentDir::new(&format!(
        "{model}\n{WAIT_TOOL}\n[hooks.approval]\nrules = [{{ tool = \"wait\", action = \"ask\" }}]\n",
        model = model_table(&llm.openai_url())
    ));
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "Please wait.", "--json"]));
    assert_eq!(code, 3, "the call waits for a person\n{stdout}\n{stderr}");
    let run = events(&stdout).pop().expect("events")["run"]
        .as_str()
        .expect("a run id")
        .to_owned();

    // Approved in the inbox, the run is resumed there and its tool blocks.
    let inbox = Inbox::start(&agent, &[]);
    let page = inbox.run_page(&run);
    let approved = inbox.decide(&page, &run, "t1c0", "approve", "args=");
    assert_eq!(approved.status(), 303);
    let waiting = agent.dir.path().join("waiting");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !waiting.exists() {
        assert!(Instant::now() < deadline, "the inbox never ran the tool");
        std::thread::sleep(Duration::from_millis(50));
    }

    let (status, stderr) = inbox.stop(signal);
    assert!(
        status.success(),
        "the inbox exits cleanly: {status}\n{stderr}"
    );
    assert!(
        stderr.contains(&format!("interrupted; run {run} is saved")),
        "the inbox says the run it stopped can be resumed\n{stderr}"
    );

    // No lease is in the way, and the call it cut short waits for a person again, as after
    // a crash: the approval was used up when it started.
    resumed_at_once_the_cut_off_call_waits_then_runs_once_approved(&agent, &run);
}

#[test]
fn sigterm_stops_the_inbox_and_the_run_it_resumed_can_be_resumed_at_once() {
    stopping_the_inbox_gives_the_lease_back("TERM");
}

#[test]
fn ctrl_c_stops_the_inbox_and_the_run_it_resumed_can_be_resumed_at_once() {
    stopping_the_inbox_gives_the_lease_back("INT");
}

/// SIGTERM while the inbox opens its store, before it listens: it exits 0, as when it is
/// stopped later, instead of being killed by the signal.
#[cfg(feature = "postgres")]
#[test]
fn sigterm_while_the_inbox_starts_exits_cleanly() {
    use std::io::Read;
    use std::net::TcpListener;
    use std::process::{Command, Stdio};

    // A "PostgreSQL server" that takes the connection and never answers: the inbox is
    // known to be opening its store once its connection is taken, and stays there.
    let server = TcpListener::bind("127.0.0.1:0").expect("listen");
    server.set_nonblocking(true).expect("non-blocking accept");
    let port = server.local_addr().expect("address").port();
    let llm = FakeLlm::start(RULES);
    let agent = AgentDir::new(&format!(
        "{model}\n[store]\npostgres_url_env = \"REINS_TEST_POSTGRES\"\n",
        model = model_table(&llm.openai_url())
    ));
    let mut child = Command::new(env!("CARGO_BIN_EXE_reins"))
        .args(["ui", &agent.file.to_string_lossy(), "--bind", "127.0.0.1:0"])
        .current_dir(agent.dir.path())
        .env("REINS_TEST_KEY", "k")
        .env(
            "REINS_TEST_POSTGRES",
            format!("postgres://reins@127.0.0.1:{port}/reins"),
        )
        .env_remove("REINS_UI_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start reins ui");
    let _connection = loop {
        match server.accept() {
            Ok((connection, _)) => break connection,
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                if let Some(status) = child.try_wait().expect("poll reins ui") {
                    let mut stderr = String::new();
                    if let Some(mut pipe) = child.stderr.take() {
                        let _ = pipe.read_to_string(&mut stderr);
                    }
                    panic!("reins ui ended before it opened its store: {status}\n{stderr}");
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(error) => panic!("accept: {error}"),
        }
    };

    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill -TERM");
    assert!(sent.success());
    let output = child.wait_with_output().expect("reins ui ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the inbox exits cleanly: {}\n{stderr}",
        output.status
    );
    assert!(
        !stderr.contains("inbox on"),
        "it stopped before it listened\n{stderr}"
    );
}

/// A client that sent half a request and then nothing — any process on the machine can, the
/// token is read only with the whole request — does not keep Ctrl-C from stopping the inbox
/// (it waited for every open connection to finish).
#[test]
fn a_half_sent_request_does_not_keep_the_inbox_from_stopping() {
    use std::io::Write;
    let llm = FakeLlm::start(crate::ui::RULES);
    let agent = crate::ui::agent(&llm);
    let inbox = Inbox::start(&agent, &[]);
    let address = inbox.url.trim_start_matches("http://").to_owned();
    let mut half_headers = std::net::TcpStream::connect(&address).expect("connect");
    half_headers
        .write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .expect("send");
    let mut half_body = std::net::TcpStream::connect(&address).expect("connect");
    half_body
        .write_all(
            b"POST /runs/r/resume HTTP/1.1\r\nHost: 127.0.0.1\r\n\
              Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ncsrf=",
        )
        .expect("send");
    // Both are being read when the stop comes.
    let page = inbox.http().get(format!("{}/", inbox.url)).send();
    assert_eq!(page.expect("the runs page").status(), 200);

    let (status, stderr) = inbox.stop("INT");
    assert!(status.success(), "{status}\n{stderr}");
}
