//! What stops a run that goes on too long, on `reins run` against fakellm: a used-up
//! `[limits]` budget stops the run (exit 4), or, with an `over_budget_model`, the run's later
//! calls go to that model until a hard limit; `[hooks.loop_breaker]` answers a repeated call
//! with feedback, then stops the run (exit 4).

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, SAVE_NOTE_TOOL, events, notes_agent, outcome, save_note_rules};

/// The save-note flow, where the model `gpt-5-nano` answers every request itself.
fn rules() -> String {
    save_note_rules(
        r#"  - name: smaller
    when:
      model_matches: "gpt-5-nano"
    respond:
      content: "Answered by the smaller model."
"#,
        "",
    )
}

fn run_json(agent: &AgentDir) -> (i32, String, String) {
    outcome(agent.keyed(&["run", "AGENT", "--json"]))
}

#[test]
fn a_budget_stop_exits_4() {
    let server = FakeLlm::start(&rules());
    let agent = notes_agent(&server.openai_url(), "[limits]\nmax_model_calls = 1\n");
    let (code, stdout, stderr) = run_json(&agent);
    assert_eq!(code, 4, "{stdout}\n{stderr}");
    let last = events(&stdout).pop().expect("events");
    assert_eq!(last["event"], "budget", "{stdout}");
}

#[test]
fn a_models_own_price_counts_toward_the_cost_limit() {
    let server = FakeLlm::start(&rules());
    // A dollar a token: the first call alone spends more than the limit. (fakellm reports
    // usage in Anthropic's streams, not in OpenAI's.)
    let agent = AgentDir::new(&format!(
        "[model]\nprovider = \"anthropic\"\nname = \"claude-haiku-4-5\"\nbase_url = \"{}\"\n\
         api_key_env = \"REINS_TEST_KEY\"\nprice_per_million = [1000000.0, 1000000.0]\n\n\
         {SAVE_NOTE_TOOL}\n[limits]\nmax_cost = 0.5\n",
        server.base_url(),
    ));
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "Save a note.", "--json"]));
    assert_eq!(code, 4, "{stdout}\n{stderr}");
    assert_eq!(events(&stdout).pop().expect("events")["event"], "budget");
}

/// `[limits]` with the over-budget model on the same server, named `name`.
fn over_budget(server: &FakeLlm, limits: &str) -> String {
    format!(
        "[limits]\n{limits}\n[limits.over_budget_model]\nprovider = \"openai\"\n\
         name = \"gpt-5-nano\"\nbase_url = \"{}\"\napi_key_env = \"REINS_TEST_KEY\"\n",
        server.openai_url()
    )
}

#[test]
fn past_a_limit_the_run_goes_on_with_the_over_budget_model_until_the_hard_limit() {
    let server = FakeLlm::start(&rules());
    // The first call uses up the limit of one model call; the second goes to the smaller
    // model, within the hard limit of three.
    let agent = notes_agent(
        &server.openai_url(),
        &over_budget(&server, "max_model_calls = 1\nhard_limit_factor = 3"),
    );
    let (code, stdout, stderr) = run_json(&agent);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let done = events(&stdout).pop().expect("events");
    assert_eq!(done["event"], "done", "{stdout}");
    assert_eq!(done["answer"], "Answered by the smaller model.", "{stdout}");

    // A hard limit of one call (1 x 1.5, rounded down) stops the run before the switch. (A
    // server of its own: fakellm tells conversations apart by their first message.)
    let server = FakeLlm::start(&rules());
    let agent = notes_agent(
        &server.openai_url(),
        &over_budget(&server, "max_model_calls = 1"),
    );
    let (code, stdout, stderr) = run_json(&agent);
    assert_eq!(code, 4, "{stdout}\n{stderr}");
    assert_eq!(events(&stdout).pop().expect("events")["event"], "budget");
}

/// A model that calls `save_note` with the same arguments until its feedback says to stop.
const STUCK_RULES: &str = r#"version: 1
rules:
  - name: changed
    when:
      tool_result_contains: "Try something else."
    respond:
      content: "Changed my approach."
  - name: again
    when:
      messages_contain: "note"
    respond:
      tool_calls:
        - name: save_note
          arguments: {text: "draft"}
"#;

#[test]
fn the_loop_breaker_answers_a_repeated_call_with_its_feedback_then_stops_the_run() {
    let server = FakeLlm::start(STUCK_RULES);
    let agent = notes_agent(
        &server.openai_url(),
        "[hooks.loop_breaker]\nfeedback_after = 2\nstop_after = 3\nfeedback = \"Try something else.\"\n",
    );
    let (code, stdout, stderr) = run_json(&agent);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let done = events(&stdout).pop().expect("events");
    assert_eq!(done["answer"], "Changed my approach.", "{stdout}");

    // Without the feedback the model understands, the second identical call stops the run.
    let server = FakeLlm::start(STUCK_RULES);
    let agent = notes_agent(
        &server.openai_url(),
        "[hooks.loop_breaker]\nstop_after = 2\n",
    );
    let (code, stdout, stderr) = run_json(&agent);
    assert_eq!(code, 4, "{stdout}\n{stderr}");
    let stopped = events(&stdout).pop().expect("events");
    assert_eq!(stopped["event"], "loop", "{stdout}");
    let message = stopped["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`save_note` was called 2 times in a row"),
        "{stdout}"
    );
}
