//! `[model] timeout_secs` and `idle_timeout_secs`: a hosted model's call given the time the
//! file says, not the library's defaults (600 s in all, 120 s of silence), and the values
//! checked at their line.

use crate::common::approval_service::silent_service;
use crate::common::{AgentDir, outcome};

/// An agent whose OpenAI-compatible server takes each request and never answers, with
/// `settings` added under `[model]`.
fn agent_of_a_silent_server(settings: &str) -> AgentDir {
    let server = silent_service();
    let base_url = server.trim_end_matches("/approve");
    AgentDir::new(&format!(
        "name = \"waiter\"\n\n[model]\nprovider = \"openai-compatible\"\nname = \"m\"\n\
         base_url = \"{base_url}/v1\"\n{settings}"
    ))
}

/// Runs an agent of a silent server with `settings`; asserts the run fails saying `why`.
fn assert_the_run_times_out(settings: &str, why: &str) {
    let agent = agent_of_a_silent_server(settings);
    let (code, _, stderr) = outcome(agent.reins(&["run", "AGENT", "Hello?"]));
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains(&format!("timed out: {why}")), "{stderr}");
}

#[test]
fn a_call_ends_at_the_file_s_whole_call_timeout() {
    assert_the_run_times_out(
        "timeout_secs = 2\n",
        "the call passed its total deadline of 2000 ms",
    );
}

#[test]
fn a_silence_ends_the_call_at_the_file_s_idle_timeout() {
    assert_the_run_times_out(
        "idle_timeout_secs = 1\n",
        "no response headers within 1000 ms",
    );
}

#[test]
fn timeouts_out_of_range_or_on_the_local_model_are_refused_at_their_line() {
    let agent = AgentDir::new(
        "name = \"waiter\"\n\n[model]\nprovider = \"openai-compatible\"\nname = \"m\"\n\
         base_url = \"http://127.0.0.1:9/v1\"\ntimeout_secs = 0\nidle_timeout_secs = 999999999\n",
    );
    let (code, _, stderr) = outcome(agent.reins(&["check", "AGENT"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("agent.toml:7:")
            && stderr.contains("`timeout_secs` is 0: give seconds from 1 to 604800 (a week)")
            && stderr.contains("default (600 seconds)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("agent.toml:8:")
            && stderr.contains("`idle_timeout_secs` is 999999999")
            && stderr.contains("default (120 seconds)"),
        "{stderr}"
    );

    let local = AgentDir::new(
        "name = \"waiter\"\n\n[model]\nprovider = \"local\"\nidle_timeout_secs = 30\n",
    );
    let (code, _, stderr) = outcome(local.reins(&["check", "AGENT"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("agent.toml:5:")
            && stderr.contains("`idle_timeout_secs` is for a model reached over HTTP"),
        "{stderr}"
    );
}
