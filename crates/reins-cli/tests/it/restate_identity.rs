//! `[store] restate_identity_keys`: `reins serve` takes only the requests its Restate server
//! signed, so a second server that can reach the worker's port cannot drive it; without the
//! keys it listens only on loopback, unless `--unverified-callers` says the network is private.

use crate::common::{AgentDir, model_table, outcome, serve_until};
use reins_test_servers::RestateServer;
use std::process::Child;

fn agent_with_keys(ingress: &str, keys: &str) -> AgentDir {
    AgentDir::new(&format!(
        "{}\n[store]\nrestate = \"{ingress}\"\nrestate_identity_keys = [{keys}]\n",
        model_table("http://127.0.0.1:9/v1").trim_end()
    ))
}

#[test]
fn serve_with_the_servers_key_registers_with_it_and_is_refused_by_another() {
    let (server, key) = RestateServer::start_signing("cli-identity");
    let agent = agent_with_keys(&server.ingress_url(), &format!("\"{key}\""));
    let (code, _, stderr) = outcome(agent.keyed(&["check", "AGENT"]));
    assert_eq!(code, 0, "{stderr}");

    // The server's discovery request is signed: the worker answers it.
    let register = ["--register", &server.admin_url()];
    let (mut worker, _) = serve_until(&agent, "127.0.0.1:0", &register, &[], "reins: registered");
    let _ = worker.kill();
    let _ = worker.wait();

    // Another server's is not: its registration fails, and `reins serve` says so.
    let other = RestateServer::start("cli-identity-other");
    let admin = other.admin_url();
    let (code, _, stderr) = outcome(agent.keyed(&[
        "serve",
        "AGENT",
        "--listen",
        "127.0.0.1:0",
        "--register",
        &admin,
    ]));
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("registering the deployment"), "{stderr}");
}

#[test]
fn check_points_at_an_unusable_identity_key() {
    let agent = agent_with_keys("http://127.0.0.1:8080", "\"publickeyv1_nope\"");
    let (code, _, stderr) = outcome(agent.keyed(&["check", "AGENT"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("agent.toml:8:"), "{stderr}");
    assert!(
        stderr.contains("not a Restate request identity key"),
        "{stderr}"
    );
}

fn agent_without_keys() -> AgentDir {
    AgentDir::new(&format!(
        "{}\n[store]\nrestate = \"http://127.0.0.1:9\"\n",
        model_table("http://127.0.0.1:9/v1").trim_end()
    ))
}

fn stop(mut worker: Child) {
    let _ = worker.kill();
    let _ = worker.wait();
}

#[test]
fn serve_off_loopback_without_identity_keys_is_refused_before_it_listens() {
    let agent = agent_without_keys();
    // `0` is a name too: it resolves to 0.0.0.0, and the address it resolves to is judged.
    for listen in ["0.0.0.0:0", "[::]:0", "0:0"] {
        // A worker that started anyway would fail its registration (nothing listens on port
        // 9) and exit 1 rather than serve on.
        let (code, _, stderr) = outcome(agent.keyed(&[
            "serve",
            "AGENT",
            "--listen",
            listen,
            "--register",
            "http://127.0.0.1:9",
        ]));
        assert_eq!(code, 2, "{listen}: {stderr}");
        assert!(
            stderr.contains(&format!("{listen} is not a loopback address"))
                || stderr.contains(&format!("{listen} (0.0.0.0:0) is not a loopback address")),
            "{listen}: {stderr}"
        );
        for fix in [
            "restate_identity_keys = [",
            "Loaded request identity key",
            "--unverified-callers",
        ] {
            assert!(stderr.contains(fix), "{listen}: {stderr}");
        }
        assert!(!stderr.contains("reins: serving"), "{listen}: {stderr}");
    }
}

#[test]
fn serve_off_loopback_with_unverified_callers_takes_any_caller() {
    let agent = agent_without_keys();
    let args = ["--unverified-callers"];
    let (worker, printed) = serve_until(&agent, "0.0.0.0:0", &args, &[], "reins: serving");
    stop(worker);
    let started = printed.last().map(String::as_str).unwrap_or_default();
    assert!(
        started.contains("taking any caller of this port"),
        "{printed:?}"
    );
}

#[test]
fn serve_on_loopback_without_identity_keys_starts_and_says_it_takes_any_caller() {
    let agent = agent_without_keys();
    for listen in ["localhost:0", "[::1]:0", "127.0.0.1:0"] {
        let (worker, printed) = serve_until(&agent, listen, &[], &[], "reins: serving");
        stop(worker);
        let started = printed.last().map(String::as_str).unwrap_or_default();
        assert!(
            started.contains("taking any caller of this port"),
            "{printed:?}"
        );
    }
}
