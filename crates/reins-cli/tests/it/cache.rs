//! `[hooks.cache]`: a run against fakellm recorded to a file, then replayed from it with no
//! model server at all, and a request the recording does not hold (or one for another model)
//! ending the replay.

use crate::common::fakellm::FakeLlm;
use crate::common::{events, notes_agent, outcome, save_note_rules, tool_results};

#[test]
fn a_recorded_run_replays_without_the_model_and_a_new_request_misses() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let url = server.openai_url();
    let agent = notes_agent(&url, "[hooks.cache]\nrecord = \"responses.jsonl\"\n");
    let run = |prompt: &str| outcome(agent.keyed(&["run", "AGENT", prompt, "--json"]));
    let (code, stdout, stderr) = run("Save a note.");
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let recording = agent.dir.path().join("responses.jsonl");
    let lines = std::fs::read_to_string(&recording).expect("the recording");
    assert_eq!(
        lines.lines().count(),
        2,
        "two model calls recorded\n{lines}"
    );

    // The model server is gone: the replay serves both turns from the recording, and the
    // tool still runs.
    drop(server);
    let replaying = notes_agent(&url, "[hooks.cache]\nreplay = \"responses.jsonl\"\n");
    std::fs::copy(&replaying.file, &agent.file).expect("the replaying file");
    let (code, stdout, stderr) = run("Save a note.");
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let done = events(&stdout).pop().expect("events");
    assert_eq!(done["answer"], "Done: the note is saved.", "{stdout}");
    assert!(
        !tool_results(&events(&stdout)).is_empty(),
        "the tool ran on the replayed call\n{stdout}"
    );

    let (code, stdout, stderr) = run("Save two notes.");
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let failed = events(&stdout).pop().expect("events");
    let message = failed["message"].as_str().unwrap_or_default();
    assert!(message.contains("response cache miss"), "{stdout}");

    // The agent's model changed since the recording: the recorded prompt misses too, instead
    // of being answered with the other model's responses.
    let file = std::fs::read_to_string(&agent.file).expect("the agent file");
    let other_model = file.replace("name = \"gpt-5-mini\"", "name = \"gpt-5-nano\"");
    assert_ne!(file, other_model, "the model's name is in the file\n{file}");
    std::fs::write(&agent.file, other_model).expect("the agent file");
    let (code, stdout, stderr) = run("Save a note.");
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let failed = events(&stdout).pop().expect("events");
    let message = failed["message"].as_str().unwrap_or_default();
    assert!(message.contains("response cache miss"), "{stdout}");

    // A recording that is not there is an invalid agent file, at its line, before anything
    // runs.
    let missing = notes_agent(&url, "[hooks.cache]\nreplay = \"missing.jsonl\"\n");
    let (code, stdout, stderr) = outcome(missing.keyed(&["run", "AGENT", "Save a note."]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("agent.toml:16:") && stderr.contains("missing.jsonl does not exist"),
        "{stderr}"
    );
}

#[test]
fn a_run_that_fell_back_replays_its_failed_calls_with_no_model_server() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    // Nothing listens on the agent's own model: every call to it fails, and the fallback
    // model (fakellm) serves each turn.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let dead_url = format!("http://{}/v1", closed.local_addr().expect("its address"));
    drop(closed);
    let fallback = |cache: &str| {
        format!(
            "[hooks.cache]\n{cache}\n[[hooks.fallback.models]]\nprovider = \"openai\"\n\
             name = \"gpt-5-nano\"\nbase_url = \"{}\"\napi_key_env = \"REINS_TEST_KEY\"\n",
            server.openai_url()
        )
    };
    let agent = notes_agent(&dead_url, &fallback("record = \"responses.jsonl\""));
    let run = || outcome(agent.keyed(&["run", "AGENT", "Save a note.", "--json"]));
    let (code, stdout, stderr) = run();
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let lines =
        std::fs::read_to_string(agent.dir.path().join("responses.jsonl")).expect("the recording");
    let failures = lines.lines().filter(|l| l.contains("\"failure\"")).count();
    assert_eq!((lines.lines().count(), failures), (4, 2), "{lines}");

    // No model server at all now: each turn's failure is replayed, and the fallback is served
    // the recorded answer.
    let replaying = notes_agent(&dead_url, &fallback("replay = \"responses.jsonl\""));
    drop(server);
    std::fs::copy(&replaying.file, &agent.file).expect("the replaying file");
    let (code, stdout, stderr) = run();
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let done = events(&stdout).pop().expect("events");
    assert_eq!(done["answer"], "Done: the note is saved.", "{stdout}");
}
