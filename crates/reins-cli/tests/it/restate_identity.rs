//! `[store] restate_identity_keys`: `reins serve` takes only the requests its Restate server
//! signed, so a second server that can reach the worker's port cannot drive it.

use crate::common::{AgentDir, model_table, outcome, serve_until};
use reins_test_servers::RestateServer;

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
