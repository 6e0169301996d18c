//! `reins check` on the mistakes a person makes writing an agent file by hand: each message
//! is in the file's words (TOML tables, lists and numbers, not the Rust types the file is
//! read into) and says what to write instead.

use crate::common::{AgentDir, outcome};

const MODEL: &str = "[model]\nprovider = \"openai\"\nname = \"gpt-5-mini\"\n\
                     api_key_env = \"REINS_TEST_KEY\"\n";

/// `reins check` on `toml` (with REINS_TEST_KEY set): exit code and stderr.
fn check(toml: &str) -> (i32, String) {
    let agent = AgentDir::new(toml);
    let (code, _, stderr) = outcome(agent.reins(&["check", "AGENT"]).env("REINS_TEST_KEY", "k"));
    (code, stderr)
}

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
fn a_file_without_a_model_says_what_to_add() {
    for toml in ["", "name = \"notes\"\n"] {
        assert_plain_error_at(toml, 1, "add a `[model]` table with `provider`");
    }
}
