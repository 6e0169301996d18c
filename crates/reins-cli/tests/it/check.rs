//! `reins check`: every bad-input case of an agent file is a clear error at its line (exit 2),
//! never a panic or a half-started agent.

use crate::common::check_file as check;
use crate::common::{AgentDir, outcome};

/// A valid hosted agent, with its key taken from a variable the test sets.
pub(crate) const VALID: &str = r#"name = "helper"
preamble = "You help."

[model]
provider = "openai"
name = "gpt-5-mini"
api_key_env = "REINS_TEST_KEY"

[limits]
max_turns = 4

[[tools.shell]]
name = "echo_text"
description = "Echoes text."
command = ["echo", "{text}"]
schema = { type = "object", properties = { text = { type = "string" } }, required = ["text"] }

[hooks.approval]
rules = [{ tool = "echo_*", action = "ask" }]
"#;

/// Asserts exit 2 and a message at `line` containing `needle`.
pub(crate) fn assert_error_at(toml: &str, line: usize, needle: &str) {
    let (code, stderr) = check(toml);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("agent.toml:{line}:")) && stderr.contains(needle),
        "expected `{needle}` at line {line}, got:\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_valid_agent_file_passes() {
    let agent = AgentDir::new(VALID);
    let (code, stdout, stderr) = outcome(agent.keyed(&["check", "AGENT"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("ok (agent `helper`)"), "{stdout}");
}

#[test]
fn an_unknown_top_level_key_is_shown_at_its_line() {
    assert_error_at(
        &format!("{VALID}\nmax_turn = 3\n"),
        21,
        "unknown field `max_turn`",
    );
}

#[test]
fn a_misspelt_key_in_a_table_is_shown_at_its_line_with_the_key_meant() {
    let toml = VALID.replace("name = \"gpt-5-mini\"", "nmae = \"gpt-5-mini\"");
    assert_error_at(&toml, 6, "unknown field `nmae`");
    assert_error_at(&toml, 6, "(did you mean `name`?)");
    let toml = VALID.replace("provider = \"openai\"", "provider = \"opanai\"");
    assert_error_at(&toml, 5, "(did you mean `openai`?)");
}

#[test]
fn a_tool_name_a_provider_refuses_is_shown_at_its_line() {
    let toml = VALID.replace("name = \"echo_text\"", "name = \"echo text\"");
    assert_error_at(&toml, 13, "`echo text` cannot be a tool's name");
    assert_error_at(&toml, 13, "e.g. `echo_text`");
    // A digit first is fine, with Gemini too (it is sent `_1echo`)...
    let digit = VALID
        .replace("name = \"echo_text\"", "name = \"1echo\"")
        .replace("\"echo_*\"", "\"1echo\"");
    for toml in [
        digit.clone(),
        digit.replace("provider = \"openai\"", "provider = \"gemini\""),
    ] {
        let (code, stderr) = check(&toml);
        assert_eq!(code, 0, "{stderr}");
    }
    // ...unless that `_` takes the name over Gemini's 64 characters.
    let longest = format!("1{}", "e".repeat(63));
    let gemini = VALID
        .replace("name = \"echo_text\"", &format!("name = \"{longest}\""))
        .replace("\"echo_*\"", &format!("\"{longest}\""));
    let (code, stderr) = check(&gemini);
    assert_eq!(code, 0, "{stderr}");
    assert_error_at(
        &gemini.replace("provider = \"openai\"", "provider = \"gemini\""),
        13,
        "one character over Gemini's 64",
    );
}

#[test]
fn a_value_of_the_wrong_type_is_shown_at_its_line() {
    let toml = VALID.replace("max_turns = 4", "max_turns = \"four\"");
    assert_error_at(&toml, 10, "invalid type");
}

#[test]
fn a_toml_syntax_error_is_shown_at_its_line() {
    let toml = VALID.replace("preamble = \"You help.\"", "preamble = \"You help.");
    assert_error_at(&toml, 2, "");
}

#[test]
fn an_unknown_provider_is_named() {
    let toml = VALID.replace("provider = \"openai\"", "provider = \"opnai\"");
    assert_error_at(&toml, 5, "unknown provider `opnai`");
}

#[test]
fn a_missing_api_key_variable_is_named_at_its_line() {
    let toml = VALID.replace("REINS_TEST_KEY", "REINS_TEST_UNSET_KEY");
    assert_error_at(
        &toml,
        7,
        "environment variable REINS_TEST_UNSET_KEY is not set",
    );
}

#[test]
fn a_hosted_provider_without_its_default_key_says_which_variable() {
    let toml = VALID.replace("api_key_env = \"REINS_TEST_KEY\"\n", "");
    assert_error_at(&toml, 5, "OPENAI_API_KEY is not set");
}

#[test]
fn a_schema_that_is_not_an_object_schema_is_refused() {
    let toml = VALID.replace(
        "schema = { type = \"object\"",
        "schema = { type = \"array\"",
    );
    assert_error_at(&toml, 16, "`schema` must have `type = \"object\"`");
}

#[test]
fn a_property_without_a_known_type_is_refused() {
    let toml = VALID.replace("text = { type = \"string\" }", "text = { type = \"text\" }");
    assert_error_at(&toml, 16, "property `text` has unknown type `text`");
}

#[test]
fn a_required_property_must_be_declared() {
    let toml = VALID.replace("required = [\"text\"]", "required = [\"body\"]");
    assert_error_at(&toml, 16, "required property `body` is not in `properties`");
}

#[test]
fn a_template_placeholder_must_be_a_schema_property() {
    let toml = VALID.replace("[\"echo\", \"{text}\"]", "[\"echo\", \"{message}\"]");
    assert_error_at(
        &toml,
        15,
        "`{message}` is not a property of the tool's `schema`",
    );
}

#[test]
fn an_unknown_approval_action_is_refused() {
    let toml = VALID.replace("action = \"ask\"", "action = \"maybe\"");
    assert_error_at(&toml, 19, "`maybe` is not one of `allow`, `ask`, `deny`");
}

#[test]
fn a_cost_limit_needs_prices() {
    let toml = VALID.replace("max_turns = 4", "max_turns = 4\nmax_cost = 0.5");
    assert_error_at(&toml, 11, "`max_cost` needs a price for every model");
}

#[test]
fn an_unset_postgres_variable_is_named() {
    assert_error_at(
        &format!("{VALID}\n[store]\npostgres_url_env = \"REINS_TEST_UNSET_DB\"\n"),
        22,
        "REINS_TEST_UNSET_DB is not set",
    );
}

#[test]
fn a_missing_local_model_file_is_named() {
    let toml = "[model]\nprovider = \"local\"\npath = \"missing.gguf\"\n";
    assert_error_at(toml, 3, "missing.gguf does not exist");
    let toml = "[model]\nprovider = \"local\"\npath = \".\"\n";
    assert_error_at(toml, 3, "is a directory: name the .gguf file inside it");
}

#[test]
fn local_model_threads_and_context_size_are_checked() {
    let local = "[model]\nprovider = \"local\"\n";
    assert_error_at(
        &format!("{local}threads = 0\n"),
        3,
        "`threads` is 0: give the CPU threads to run the model on, from 1 to 1024",
    );
    assert_error_at(
        &format!("{local}threads = 1\ncontext_size = 10\n"),
        4,
        "`context_size` is 10: give the context in tokens, from 64",
    );
    if cfg!(feature = "local") {
        let (code, stderr) = check(&format!("{local}threads = 1\ncontext_size = 512\n"));
        assert_eq!(code, 0, "{stderr}");
    }
    let hosted = VALID.replace(
        "provider = \"openai\"",
        "provider = \"openai\"\nthreads = 2",
    );
    assert_error_at(&hosted, 6, "`threads` is for `provider = \"local\"` only");
}

#[test]
fn several_mistakes_are_all_reported() {
    let toml = VALID
        .replace("provider = \"openai\"", "provider = \"opnai\"")
        .replace("action = \"ask\"", "action = \"maybe\"");
    let (code, stderr) = check(&toml);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("agent.toml:5:") && stderr.contains("agent.toml:19:"),
        "{stderr}"
    );
    assert!(stderr.contains("has 2 error(s)"), "{stderr}");
}

#[test]
fn a_missing_agent_file_is_a_clear_error() {
    let agent = AgentDir::new(VALID);
    let (code, _, stderr) = outcome(agent.reins(&["check", "nowhere.toml"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot read the agent file"), "{stderr}");
}

/// The example agents in crates/reins-cli/agents are valid (with placeholder keys).
#[test]
fn the_example_agents_are_valid() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("agents");
    let mut names = vec!["coding-helper.toml", "hosted-assistant.toml"];
    if cfg!(feature = "local") {
        names.push("offline-assistant.toml");
    }
    for name in names {
        let agent = AgentDir::new("");
        let (code, stdout, stderr) = outcome(
            agent
                .reins(&["check", &dir.join(name).to_string_lossy()])
                .env("OPENAI_API_KEY", "placeholder")
                .env("ANTHROPIC_API_KEY", "placeholder"),
        );
        assert_eq!(code, 0, "{name}: {stderr}");
        assert!(stdout.contains(": ok"), "{stdout}");
    }
}

#[test]
fn a_key_pasted_where_a_variable_name_belongs_is_not_echoed() {
    let toml = VALID.replace("REINS_TEST_KEY", "sk-live-abc123/xyz");
    let (code, stderr) = check(&toml);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("agent.toml:7:"), "{stderr}");
    assert!(
        stderr.contains("must name an environment variable"),
        "{stderr}"
    );
    // Neither the message nor the file's line quoted under it shows the value: the line
    // has it masked, the caret still under it.
    assert!(!stderr.contains("sk-live"), "{stderr}");
    assert!(stderr.contains("api_key_env = ****"), "{stderr}");
}

#[test]
fn a_trace_link_must_be_a_web_url_with_the_run() {
    assert_error_at(
        &format!("{VALID}\n[ui]\ntrace_link = \"javascript:alert(1)//{{run}}\"\n"),
        22,
        "`trace_link` must be an http:// or https:// URL",
    );
    assert_error_at(
        &format!("{VALID}\n[ui]\ntrace_link = \"http://127.0.0.1:16686/search\"\n"),
        22,
        "`trace_link` must contain `{run}`",
    );
}

#[test]
fn a_tool_choice_naming_no_defined_tool_is_shown_at_its_line() {
    let toml = format!(
        "{VALID}\n[hooks.tool_choice]\nfirst_turn = \"required\"\nlater_turns = \"echo_txt\"\n\n\
         [[hooks.tool_choice.routes]]\nprompt_mentions = [\"time\"]\nfirst_turn = \"now\"\n"
    );
    let (code, stderr) = check(&toml);
    assert_eq!(code, 2, "{stderr}");
    for (line, needle) in [
        (23, "`later_turns` names the tool `echo_txt`"),
        (
            27,
            "route 1 (prompt mentions \"time\") names the tool `now`",
        ),
    ] {
        assert!(
            stderr.contains(&format!("agent.toml:{line}:")) && stderr.contains(needle),
            "expected `{needle}` at line {line}, got:\n{stderr}"
        );
    }
    assert!(stderr.contains("its tools are `echo_text`"), "{stderr}");
    // `required` is a choice, not a tool.
    assert!(!stderr.contains("agent.toml:22:"), "{stderr}");

    let defined = toml
        .replace("\"echo_txt\"", "\"none\"")
        .replace("\"now\"", "\"echo_text\"");
    let (code, stderr) = check(&defined);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn tool_choices_of_an_agent_with_mcp_servers_are_left_to_the_run() {
    // The server's tools are only known after connecting: `reins check` cannot judge them.
    let toml = format!(
        "{VALID}\n[[tools.mcp]]\nname = \"time\"\ncommand = \"python3\"\n\n\
         [hooks.tool_choice]\nfirst_turn = \"time_get_current_time\"\n"
    );
    let (code, stderr) = check(&toml);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn an_approval_webhook_needs_a_url_and_a_token_variable() {
    let webhook = |extra: &str| format!("{VALID}webhook = \"http://127.0.0.1:9/approve\"\n{extra}");
    let (code, stderr) = check(&webhook(""));
    assert_eq!(code, 0, "{stderr}");

    // A token without a webhook to send it to, and a value where a variable's name belongs
    // (not echoed: it may be the token itself).
    assert_error_at(
        &format!("{VALID}webhook_token_env = \"APPROVAL_TOKEN\"\n"),
        20,
        "`webhook_token_env` needs a `webhook` to send requests to",
    );
    let (code, stderr) = check(&webhook("webhook_token_env = \"Bearer s3cret\"\n"));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("agent.toml:21:") && !stderr.contains("s3cret"),
        "{stderr}"
    );
    // On Restate the worker asks it, each answer a journaled step.
    let (code, stderr) = check(&webhook("\n[store]\nrestate = \"http://127.0.0.1:8080\"\n"));
    assert_eq!(code, 0, "{stderr}");
}

/// A run of no turns would stop at its limit before asking the model anything.
#[test]
fn a_turn_limit_of_zero_is_refused_at_its_line() {
    assert_error_at(
        &VALID.replace("max_turns = 4", "max_turns = 0"),
        10,
        "`max_turns` must be at least 1",
    );
}

/// A shell tool given no time would time out on every call before its program ran.
#[test]
fn a_shell_tool_timeout_of_zero_is_refused_at_its_line() {
    let toml = VALID.replace(
        "required = [\"text\"] }\n",
        "required = [\"text\"] }\ntimeout_secs = 0\n",
    );
    assert_error_at(&toml, 17, "`timeout_secs` must be at least 1");
    // `reins run` refuses the file as `check` does, before calling any model.
    let agent = AgentDir::new(&toml);
    let (code, _, stderr) = outcome(agent.keyed(&["run", "AGENT", "hello"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("agent.toml:17:") && stderr.contains("`timeout_secs` must be at least 1"),
        "{stderr}"
    );
    let (code, stderr) = check(&VALID.replace(
        "required = [\"text\"] }\n",
        "required = [\"text\"] }\ntimeout_secs = 1\n",
    ));
    assert_eq!(code, 0, "{stderr}");
}

/// A store keeping no checkpoint would keep no state.
#[test]
fn keeping_no_checkpoint_is_refused_at_its_line() {
    assert_error_at(
        &format!("{VALID}\n[store]\nkeep_checkpoints = 0\n"),
        22,
        "`keep_checkpoints` must be at least 1",
    );
}

#[test]
fn an_over_budget_model_needs_a_limit_and_a_hard_limit_factor_needs_the_model() {
    let limits = |extra: &str| VALID.replace("max_turns = 4\n", &format!("max_turns = 4\n{extra}"));
    let nano = "over_budget_model = { provider = \"openai\", name = \"gpt-5-nano\", \
                api_key_env = \"REINS_TEST_KEY\" }\n";
    let (code, stderr) = check(&limits(&format!(
        "max_model_calls = 2\n{nano}hard_limit_factor = 2\n"
    )));
    assert_eq!(code, 0, "{stderr}");

    assert_error_at(
        &limits("hard_limit_factor = 2\n"),
        11,
        "`hard_limit_factor` applies only with an `over_budget_model`",
    );
    assert_error_at(&limits(nano), 11, "needs a budget limit to exceed");
    assert_error_at(
        &limits(&format!(
            "max_model_calls = 2\n{nano}hard_limit_factor = 0.5\n"
        )),
        13,
        "must be a number of at least 1",
    );
    // The model itself is checked like the agent's.
    assert_error_at(
        &limits("max_model_calls = 2\nover_budget_model = { provider = \"nope\" }\n"),
        12,
        "nope",
    );
}

#[test]
fn a_loop_breaker_counts_from_two() {
    assert_error_at(
        &format!("{VALID}\n[hooks.loop_breaker]\nfeedback_after = 1\n"),
        22,
        "`feedback_after` must be at least 2",
    );
    let (code, stderr) = check(&format!(
        "{VALID}\n[hooks.loop_breaker]\nfeedback_after = 2\nstop_after = 4\nfeedback = \"Stop.\"\n"
    ));
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_response_cache_records_or_replays() {
    for table in [
        "[hooks.cache]\n",
        "[hooks.cache]\nrecord = \"a.jsonl\"\nreplay = \"a.jsonl\"\n",
    ] {
        assert_error_at(
            &format!("{VALID}\n{table}"),
            21,
            "`[hooks.cache]` needs one of `record",
        );
    }
    let (code, stderr) = check(&format!("{VALID}\n[hooks.cache]\nrecord = \"a.jsonl\"\n"));
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn prices_are_not_negative_and_a_cost_limit_prices_every_model() {
    let limits = |extra: &str| VALID.replace("max_turns = 4\n", &format!("max_turns = 4\n{extra}"));
    assert_error_at(
        &limits("price_per_million = [-1.0, 2.0]\n"),
        11,
        "`price_per_million` must be two numbers, none negative",
    );
    assert_error_at(
        &VALID.replace(
            "api_key_env",
            "price_per_million = [1.0, -0.5]\napi_key_env",
        ),
        7,
        "`price_per_million` must be two numbers, none negative",
    );
    // The agent's model has its price; the over-budget model has none.
    let priced = VALID.replace("api_key_env", "price_per_million = [1.0, 4.0]\napi_key_env");
    let with_limits =
        |extra: &str| priced.replace("max_turns = 4\n", &format!("max_turns = 4\n{extra}"));
    let (code, stderr) = check(&with_limits("max_cost = 2.0\n"));
    assert_eq!(code, 0, "{stderr}");
    assert_error_at(
        &with_limits(
            "max_cost = 2.0\nover_budget_model = { provider = \"openai\", name = \"gpt-5-nano\", \
             api_key_env = \"REINS_TEST_KEY\" }\n",
        ),
        12,
        "`max_cost` needs a price for every model, and `over-budget` has none",
    );
}

#[test]
fn a_cache_price_is_two_prices_beside_an_input_price() {
    let limits = |extra: &str| VALID.replace("max_turns = 4\n", &format!("max_turns = 4\n{extra}"));
    assert_error_at(
        &limits("cache_price_per_million = [0.1, 1.25]\n"),
        11,
        "`cache_price_per_million` prices part of the input tokens: give `price_per_million",
    );
    assert_error_at(
        &limits("price_per_million = [1.0, 4.0]\ncache_price_per_million = [-0.1, 1.25]\n"),
        12,
        "`cache_price_per_million` must be two numbers, none negative",
    );
    let (code, stderr) = check(&limits(
        "price_per_million = [1.0, 4.0]\ncache_price_per_million = [0.1, 1.25]\n",
    ));
    assert_eq!(code, 0, "{stderr}");
    let (code, stderr) = check(&VALID.replace(
        "api_key_env",
        "price_per_million = [1.0, 4.0]\ncache_price_per_million = [0.1, 1.25]\napi_key_env",
    ));
    assert_eq!(code, 0, "{stderr}");
}
