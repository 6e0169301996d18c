//! Ctrl-C and SIGTERM on the Restate store: `reins serve` stops cleanly while it still
//! registers, as it does once it serves; `reins run` and `runs resume` stop following a run,
//! which goes on on the Restate server, and say how to pick it up.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, model_table, outcome};
use crate::interrupt::{RULES, interrupted_run, wait_for};
use crate::restate::Worker;
use reins_test_servers::{RestateServer, free_port};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// A `wait` tool that finishes once the file `go` exists beside the agent file, creating
/// `waiting` first.
const WAIT_UNTIL_GO: &str = r#"[[tools.shell]]
name = "wait"
description = "Waits."
command = ["sh", "-c", "touch waiting; while ! test -e go; do sleep 0.1; done; echo finished"]
schema = { type = "object", properties = {} }
"#;

/// An admin API that takes the registration and never answers holds `reins serve` in its
/// registration (for up to two minutes). SIGTERM or Ctrl-C then stops it as it does once it
/// serves: `reins: stopped`, exit 0 — not killed the default way.
#[test]
fn a_signal_while_registering_stops_the_worker_cleanly() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let admin = format!("http://{}", silent.local_addr().expect("its address"));
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for connection in silent.incoming() {
            held.push(connection);
        }
    });
    let agent = AgentDir::new(&format!(
        "{}\n[store]\nrestate = \"http://127.0.0.1:9\"\n",
        model_table("http://127.0.0.1:9/v1")
    ));
    for signal in ["-TERM", "-INT"] {
        let mut worker = Command::new(env!("CARGO_BIN_EXE_reins"))
            .args(["serve", &agent.file.to_string_lossy()])
            .args(["--listen", "127.0.0.1:0", "--register", &admin])
            .current_dir(agent.dir.path())
            .env("REINS_TEST_KEY", "k")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("reins serve starts");
        let mut stderr = BufReader::new(worker.stderr.take().expect("its stderr"));
        let mut printed = String::new();
        // Printed once it listens, right before it registers.
        while !printed.contains("reins: serving") {
            let read = stderr.read_line(&mut printed).expect("read its stderr");
            assert!(read > 0, "reins serve ended first: {printed}");
        }
        let sent = Command::new("kill")
            .args([signal, &worker.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success());
        let code = worker.wait().expect("the worker ends").code();
        std::io::Read::read_to_string(&mut stderr, &mut printed).expect("the rest of stderr");
        assert_eq!(code, Some(0), "{signal}: {printed}");
        assert!(printed.contains("reins: stopped"), "{signal}: {printed}");
        assert!(!printed.contains("registered"), "{signal}: {printed}");
    }
}

/// Ctrl-C stops `reins run` following a run on Restate, not the run: exit 130, with the
/// commands that follow it again and show it; `runs resume` then follows it to its answer.
#[test]
fn ctrl_c_stops_following_a_restate_run_which_goes_on() {
    let server = RestateServer::start("cli-stop-follow");
    let llm = FakeLlm::start(RULES);
    let agent = AgentDir::new(&format!(
        "name = \"waiter\"\n{model}\n{WAIT_UNTIL_GO}\n[store]\nrestate = \"{ingress}\"\n",
        model = model_table(&llm.openai_url()),
        ingress = server.ingress_url()
    ));
    let listen = format!("127.0.0.1:{}", free_port());
    let _worker = Worker::start(&agent, &server, &listen);
    let mut run = Command::new(env!("CARGO_BIN_EXE_reins"))
        .args(["run", &agent.file.to_string_lossy(), "Please wait."])
        .current_dir(agent.dir.path())
        .env_remove("REINS_TEST_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("reins run starts");
    wait_for(&agent.dir.path().join("waiting"), &mut run);
    let pid = run.id().to_string();
    let stderr = crate::interrupt::interrupt(run, &pid);
    let (line, id) = interrupted_run(&stderr);
    assert!(line.contains("goes on on the Restate server"), "{stderr}");
    assert!(line.contains("reins runs resume"), "{stderr}");
    assert!(line.contains("reins runs show"), "{stderr}");

    std::fs::write(agent.dir.path().join("go"), "").expect("let the tool finish");
    let (code, stdout, stderr) = outcome(agent.reins(&["runs", "resume", "AGENT", &id]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Waited.", "{stderr}");
}
