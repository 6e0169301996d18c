//! `reins check` on the mistakes a person makes writing an agent file by hand: each message
//! is in the file's words (TOML tables, lists and numbers, not the Rust types the file is
//! read into) and says what to write instead.

use crate::common::check_file as check;
use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, SAVE_NOTE_TOOL, notes_agent, outcome, save_note_rules};

const MODEL: &str = "[model]\nprovider = \"openai\"\nname = \"gpt-5-mini\"\n\
                     api_key_env = \"REINS_TEST_KEY\"\n";

/// Asserts exit 2 and a message at `line` containing `needle`, naming no Rust type.
fn assert_plain_error_at(toml: &str, line: usize, needle: &str) {
    let (code, stderr) = check(toml);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("agent.toml:{line}:")) && stderr.contains(needle),
        "expected `{needle}` at line {line}, got:\n{stderr}"
    );
    for rust in ["usize", "u64", "u32", "f64", "struct", "Config", "sequence"] {
        assert!(!stderr.contains(rust), "`{rust}` in:\n{stderr}");
    }
}

#[test]
fn a_word_where_a_count_belongs_asks_for_a_whole_number() {
    assert_plain_error_at(
        &format!("{MODEL}[limits]\nmax_turns = \"six\"\n"),
        6,
        "expected a whole number",
    );
}

#[test]
fn a_word_where_a_price_belongs_asks_for_a_number() {
    assert_plain_error_at(
        &format!("{MODEL}temperature = \"hot\"\n"),
        5,
        "expected a number",
    );
}

#[test]
fn a_model_given_as_a_string_asks_for_a_table() {
    assert_plain_error_at("model = \"gpt-5-mini\"\n", 1, "expected a table");
}

#[test]
fn a_command_given_as_one_string_asks_for_a_list() {
    let toml = format!(
        "{MODEL}[[tools.shell]]\nname = \"a\"\ndescription = \"d\"\ncommand = \"echo hi\"\n\
         schema = {{ type = \"object\" }}\n"
    );
    assert_plain_error_at(&toml, 8, "expected a list");
}

#[test]
fn a_command_given_as_one_string_is_shown_as_the_list_meant() {
    let toml = format!(
        "{MODEL}[[tools.shell]]\nname = \"a\"\ndescription = \"d\"\n\
         command = \"python3 save.py {{text}}\"\nschema = {{ type = \"object\" }}\n"
    );
    assert_plain_error_at(
        &toml,
        8,
        r#"one string for each argument: `command = ["python3", "save.py", "{text}"]`"#,
    );
}

/// `[tools.shell]` (one pair of brackets, a table) where each tool is an entry of a list of
/// tables: TOML's `[[tools.shell]]`, which the message names.
#[test]
fn a_tool_under_single_brackets_asks_for_double_brackets() {
    for table in ["tools.shell", "tools.mcp"] {
        let toml = format!(
            "{MODEL}[{table}]\nname = \"a\"\ndescription = \"d\"\ncommand = [\"ls\"]\n\
             schema = {{ type = \"object\" }}\n"
        );
        assert_plain_error_at(
            &toml,
            5,
            &format!("write `[[{table}]]` (two brackets: each tool is its own table)"),
        );
    }
}

#[test]
fn a_file_without_a_model_says_what_to_add() {
    for toml in ["", "name = \"notes\"\n"] {
        assert_plain_error_at(toml, 1, "add a `[model]` table with `provider`");
    }
}

#[test]
fn a_recording_to_replay_that_does_not_exist_is_shown_at_its_line() {
    assert_plain_error_at(
        &format!("{MODEL}[hooks.cache]\nreplay = \"responses.jsonl\"\n"),
        6,
        "responses.jsonl does not exist",
    );
}

#[test]
fn a_working_directory_that_does_not_exist_is_shown_at_its_line() {
    let toml = format!(
        "{MODEL}[[tools.shell]]\nname = \"a\"\ndescription = \"d\"\ncommand = [\"ls\"]\n\
         schema = {{ type = \"object\" }}\ncwd = \"work\"\n\
         [[tools.mcp]]\nname = \"time\"\ncommand = \"python3\"\ncwd = \"servers\"\n"
    );
    let (code, stderr) = check(&toml);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("agent.toml:10:") && stderr.contains("/work is not a directory"),
        "{stderr}"
    );
    assert!(
        stderr.contains("agent.toml:14:") && stderr.contains("/servers is not a directory"),
        "{stderr}"
    );
}

#[test]
fn paths_are_found_beside_the_agent_file_from_any_directory() {
    let agent = AgentDir::new(&format!(
        "{MODEL}[hooks.cache]\nreplay = \"responses.jsonl\"\n[[tools.shell]]\nname = \"a\"\n\
         description = \"d\"\ncommand = [\"ls\"]\nschema = {{ type = \"object\" }}\n\
         cwd = \"work\"\n"
    ));
    std::fs::write(agent.dir.path().join("responses.jsonl"), "").expect("a recording");
    std::fs::create_dir(agent.dir.path().join("work")).expect("a working directory");
    let elsewhere = tempfile::tempdir().expect("a temporary directory");
    let (code, stdout, stderr) = outcome(
        agent
            .keyed(&["check", "AGENT"])
            .current_dir(elsewhere.path()),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("ok"), "{stdout}");
}

#[test]
fn the_store_s_commands_need_no_path_a_run_needs() {
    let agent = AgentDir::new(&format!(
        "{MODEL}[hooks.cache]\nreplay = \"responses.jsonl\"\n"
    ));
    let (code, _, stderr) = outcome(agent.reins(&["runs", "list", "AGENT"]));
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn an_audit_log_s_directory_is_created_as_the_store_s_is() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    // The store is not in `.reins`, so only the audit log needs that directory.
    let agent = notes_agent(
        &server.openai_url(),
        "[hooks.audit]\npath = \".reins/audit.jsonl\"\n[store]\nsqlite = \"runs.sqlite\"\n",
    );
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "Save a note."]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Done: the note is saved.");
    let log = std::fs::read_to_string(agent.dir.path().join(".reins/audit.jsonl"))
        .expect("the audit log");
    assert!(log.contains("save_note"), "{log}");
}

#[test]
fn a_base_url_that_is_no_web_address_is_shown_at_its_line_and_not_echoed() {
    let toml = format!("{MODEL}base_url = \"api.example.com/v1?key=sk-123\"\n");
    assert_plain_error_at(
        &toml,
        5,
        "`base_url` must be an absolute http:// or https:// URL",
    );
    let (_, stderr) = check(&toml);
    assert!(!stderr.contains("sk-123"), "{stderr}");
}

#[test]
fn an_approval_rule_naming_no_tool_of_the_agent_is_shown_at_its_line() {
    // The misspelt `ask` rule would let every `save_note` call through to the `*` rule.
    let toml = format!(
        "{MODEL}{SAVE_NOTE_TOOL}[hooks.approval]\nrules = [\n  {{ tool = \"save_notes\", \
         action = \"ask\" }},\n  {{ tool = \"save_*\", action = \"ask\" }},\n  \
         {{ tool = \"*\", action = \"allow\" }},\n]\n"
    );
    let (code, stderr) = check(&toml);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("agent.toml:12:")
            && stderr.contains("the approval rule for `save_notes` matches no tool")
            && stderr.contains("its tools are `save_note`"),
        "{stderr}"
    );
    assert!(stderr.contains("has 1 error(s)"), "{stderr}");
}

/// The first matching rule decides: an `ask` after a `*` allow would let every call through
/// without asking. A `*` rule limited by `when` shadows nothing.
#[test]
fn an_approval_rule_after_one_matching_every_call_is_shown_at_its_line() {
    let toml = format!(
        "{MODEL}{SAVE_NOTE_TOOL}[hooks.approval]\nrules = [\n  {{ tool = \"*\", action = \
         \"allow\", when = \"read_only\" }},\n  {{ tool = \"*\", action = \"allow\" }},\n  \
         {{ tool = \"save_note\", action = \"ask\" }},\n]\n"
    );
    let (code, stderr) = check(&toml);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("agent.toml:14:")
            && stderr.contains("the approval rule for `save_note` is never reached")
            && stderr.contains("(the last: `allow`) match every call"),
        "{stderr}"
    );
    assert!(stderr.contains("has 1 error(s)"), "{stderr}");

    // A `*` rule for read-only tools and one for the others match every call together.
    let toml = format!(
        "{MODEL}{SAVE_NOTE_TOOL}[hooks.approval]\nrules = [\n  {{ tool = \"*\", action = \
         \"allow\", when = \"read_only\" }},\n  {{ tool = \"*\", action = \"ask\", when = \
         \"writes\" }},\n  {{ tool = \"save_note\", action = \"deny\" }},\n]\n"
    );
    let (code, stderr) = check(&toml);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("the approval rule for `save_note` is never reached"),
        "{stderr}"
    );
}

#[test]
fn a_schema_mistake_is_reported_once_not_again_on_each_placeholder() {
    let toml = format!(
        "{MODEL}{}",
        SAVE_NOTE_TOOL.replace("type = \"object\"", "type = \"objekt\"")
    );
    let (code, stderr) = check(&toml);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("agent.toml:9:") && stderr.contains("must have `type = \"object\"`"),
        "{stderr}"
    );
    assert!(!stderr.contains("is not a property"), "{stderr}");
    assert!(stderr.contains("has 1 error(s)"), "{stderr}");
}

#[test]
fn an_empty_key_variable_is_called_empty_and_the_message_says_what_to_do() {
    // `export OPENAI_API_KEY=` looks set in `env`: "is not set" would send the person
    // looking in the wrong place.
    let toml = MODEL.replace("api_key_env = \"REINS_TEST_KEY\"\n", "");
    let agent = AgentDir::new(&toml);
    let (code, _, stderr) = outcome(agent.reins(&["check", "AGENT"]).env("OPENAI_API_KEY", ""));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("agent.toml:2:")
            && stderr.contains("OPENAI_API_KEY is empty (the API key for `openai`)")
            && stderr.contains("name the variable that holds the key with `api_key_env`"),
        "{stderr}"
    );
    let (code, _, stderr) = outcome(agent.reins(&["check", "AGENT"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("OPENAI_API_KEY is not set (the API key for `openai`): export it"),
        "{stderr}"
    );

    // A variable the file names itself, likewise.
    let agent = AgentDir::new(MODEL);
    let (code, _, stderr) = outcome(agent.reins(&["check", "AGENT"]).env("REINS_TEST_KEY", ""));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("environment variable REINS_TEST_KEY is empty (the API key)"),
        "{stderr}"
    );
}

/// What a person may paste into an agent file by mistake: a URL's user info and query, an API
/// key, a header's value.
const SECRETS: [&str; 4] = ["pw-secret-1", "tok-secret-2", "sk-secret-3", "hdr-secret-4"];
const URL: &str = "https://alice:pw-secret-1@h/mcp?token=tok-secret-2";

/// Asserts exit 2, an error at `line` whose message holds `needle` and whose quoted line
/// shows `shown`, with a caret under it, and no secret anywhere on stderr.
fn assert_pointed_at_without_secrets(toml: &str, line: usize, needle: &str, shown: &str) {
    let (code, stderr) = check(toml);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("agent.toml:{line}:")) && stderr.contains(needle),
        "expected `{needle}` at line {line}, got:\n{stderr}"
    );
    assert!(
        stderr.contains(&format!("{line} | {shown}")),
        "expected the line `{shown}`, got:\n{stderr}"
    );
    assert!(stderr.contains('^'), "no caret in:\n{stderr}");
    for secret in SECRETS {
        assert!(!stderr.contains(secret), "`{secret}` shown in:\n{stderr}");
    }
}

#[test]
fn a_syntax_error_on_a_line_with_credentials_points_at_it_without_them() {
    // Two keys on one line: a TOML syntax error, reported before anything is read.
    let toml = format!(
        "{MODEL}[[tools.mcp]]\nname = \"x\"\n\
         url = \"{URL}\" api_key = \"sk-secret-3\"\n"
    );
    assert_pointed_at_without_secrets(
        &toml,
        7,
        "error:",
        "url = \"https://*****************@h/mcp?token=************\" api_key = \"***********\"",
    );
    // An unterminated header value, likewise.
    let toml = format!("{MODEL}headers = {{ Authorization = \"Bearer hdr-secret-4 }}\n");
    assert_pointed_at_without_secrets(&toml, 5, "error:", "headers = { Authorization = \"*");
}

#[test]
fn an_unknown_key_with_a_credential_points_at_it_without_the_credential() {
    let mcp = format!("{MODEL}[[tools.mcp]]\nname = \"x\"\n");
    assert_pointed_at_without_secrets(
        &format!("{mcp}urll = \"{URL}\"\n"),
        7,
        "unknown field `urll`",
        "urll = \"https://*****************@h/mcp?token=************\"",
    );
    assert_pointed_at_without_secrets(
        &format!("{MODEL}api_key = \"sk-secret-3\"\n"),
        5,
        "unknown field `api_key`",
        "api_key = \"***********\"",
    );
    assert_pointed_at_without_secrets(
        &format!("{mcp}headers = {{ Authorization = \"Bearer hdr-secret-4\" }}\n"),
        7,
        "unknown field `headers`",
        "headers = { Authorization = \"*******************\" }",
    );
}

#[test]
fn a_credential_of_the_wrong_type_is_pointed_at_without_it() {
    // The message quotes the value read (`invalid type: string "…"`): not this one.
    let toml = format!(
        "{MODEL}[[tools.mcp]]\nname = \"x\"\nurl = \"http://127.0.0.1:1/mcp\"\n\
         headers_from_env = \"Bearer hdr-secret-4\"\n"
    );
    assert_pointed_at_without_secrets(&toml, 8, "expected a table", "headers_from_env = ");
    let toml = format!("{MODEL}[[tools.mcp]]\nname = \"x\"\nurl = [\"{URL}\"]\n");
    assert_pointed_at_without_secrets(&toml, 7, "invalid type", "url = [\"https://****");
}

#[test]
fn an_error_on_a_line_of_ordinary_values_still_shows_them() {
    // A model's name, a variable's name, a path: nothing to hide, everything to fix by.
    let (code, stderr) = check(&format!(
        "{MODEL}[cache]\nrecord = \"runs/cache.jsonl\" name = \"gpt-5-mini\"\n"
    ));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("6 | record = \"runs/cache.jsonl\" name = \"gpt-5-mini\""),
        "{stderr}"
    );
    let (code, stderr) = check(&MODEL.replace(
        "api_key_env = \"REINS_TEST_KEY\"",
        "api_key_env = \"REINS_TEST_KEY\" max_tokens = 5",
    ));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("4 | api_key_env = \"REINS_TEST_KEY\" max_tokens = 5"),
        "{stderr}"
    );
}
