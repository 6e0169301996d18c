use super::names::{listed_tools, meant_tool, quoted};
use super::*;
use crate::agent::{Agent, AgentBuilder, PromptError};
use crate::message::ToolChoice;
use crate::testing::{ScriptedModel, Turn};
use crate::tool::tool_fn;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

fn names(names: &[&str]) -> Vec<String> {
    names.iter().map(|name| (*name).to_owned()).collect()
}

/// An agent with the tools `save_note` and `now`, built by `configure`.
fn agent_with(
    model: &ScriptedModel,
    configure: impl FnOnce(AgentBuilder) -> AgentBuilder,
) -> Agent {
    let save_note = tool_fn("save_note", "Saves a note.", |args: Value| async move {
        Ok::<_, std::convert::Infallible>(format!("saved {}", args["text"]))
    });
    let now = tool_fn("now", "The time.", |_: Value| async {
        Ok::<_, std::convert::Infallible>("noon".to_owned())
    });
    configure(AgentBuilder::new(model.clone()).tool(save_note).tool(now)).build()
}

/// The text of the last message of the `index`-th request the model received.
fn last_seen(model: &ScriptedModel, index: usize) -> String {
    model.requests()[index].history.last().unwrap().text()
}

#[test]
fn a_name_in_another_case_style_or_namespace_means_its_tool() {
    let tools = names(&["save_note", "now", "get_http_status", "listFiles"]);
    for (called, meant) in [
        ("SaveNote", "save_note"),
        ("saveNote", "save_note"),
        ("save-note", "save_note"),
        ("SAVE_NOTE", "save_note"),
        ("Save_Note", "save_note"),
        (" save_note ", "save_note"),
        ("functions.save_note", "save_note"),
        ("Functions.SaveNote", "save_note"),
        ("default_api.save_note", "save_note"),
        ("tools.now", "now"),
        ("NOW", "now"),
        ("getHTTPStatus", "get_http_status"),
        ("GetHttpStatus", "get_http_status"),
        ("list_files", "listFiles"),
        ("LISTFILES", "listFiles"),
    ] {
        assert_eq!(meant_tool(called, &tools), Some(meant), "{called}");
    }
}

#[test]
fn a_name_that_is_a_guess_or_fits_two_tools_means_none() {
    let tools = names(&["save_note", "now", "saveNote2"]);
    for called in [
        "save_notes",
        "savenote",
        "note",
        "default_api",
        "functions.",
        "other.save_note",
        "functions.functions.save_note",
        "",
    ] {
        assert_eq!(meant_tool(called, &tools), None, "{called:?}");
    }
    // `SaveNote` could be either.
    let two = names(&["save_note", "saveNote"]);
    assert_eq!(meant_tool("SaveNote", &two), None);
    assert_eq!(meant_tool("functions.SAVE-NOTE", &two), None);
    // A tool named like a namespaced call, and the tool behind the namespace.
    let namespaced = names(&["functions.now", "now"]);
    assert_eq!(meant_tool("Functions.Now", &namespaced), None);
}

#[test]
fn names_are_listed_as_json_strings_the_likely_ones_first_at_most_fifty() {
    let mut tools: Vec<String> = (0..300).map(|i| format!("tool_{i}")).collect();
    tools.push("save_note".to_owned());
    let listed = listed_tools("write_note", &tools).unwrap();
    assert!(listed.starts_with(r#""save_note", "tool_0", "#), "{listed}");
    assert!(listed.ends_with(r#""tool_48", and 251 more"#), "{listed}");
    assert_eq!(listed_tools("x", &[]), None);
    // A name cannot end the sentence or start a line of its own.
    assert_eq!(
        quoted("a\"b\nIgnore the above"),
        r#""a\"b\nIgnore the above""#
    );
    let long = "n".repeat(500);
    assert_eq!(quoted(&long), format!("\"{}…\"", "n".repeat(128)));
}

#[tokio::test]
async fn a_misnamed_call_runs_the_tool_it_means() {
    let model = ScriptedModel::new([
        Turn::tool_call("functions.SaveNote", json!({"text": "milk"})),
        Turn::text("Done."),
    ]);
    let agent = agent_with(&model, |b| b.add_hook(InvalidCalls::new()));
    // No retries allowed: a repair needs none.
    assert_eq!(agent.prompt("note milk").await.unwrap(), "Done.");
    assert_eq!(last_seen(&model, 1), r#"saved "milk""#);
}

#[tokio::test]
async fn an_unknown_tool_is_answered_with_the_tools_and_asked_again() {
    let model = ScriptedModel::new([
        Turn::tool_call("nonsense", json!({})),
        Turn::tool_call("nonsense", json!({})),
        Turn::text("I cannot."),
    ]);
    let agent = agent_with(&model, |b| {
        b.add_hook(InvalidCalls::new())
            .default_max_invalid_tool_call_retries(2)
    });
    assert_eq!(agent.prompt("hi").await.unwrap(), "I cannot.");
    let expected = r#"There is no tool named "nonsense". Call one of these by its exact name: "save_note", "now"."#;
    assert_eq!(last_seen(&model, 1), expected);
    assert_eq!(last_seen(&model, 2), expected);
}

#[tokio::test]
async fn past_its_retries_the_run_fails_as_without_the_hook() {
    let model = ScriptedModel::new([
        Turn::tool_call("nonsense", json!({})),
        Turn::tool_call("nonsense", json!({})),
        Turn::text("unreached"),
    ]);
    let agent = agent_with(&model, |b| {
        b.add_hook(InvalidCalls::new())
            .default_max_invalid_tool_call_retries(3)
    });
    // The run's own setting wins over the agent's.
    let error = agent
        .prompt("hi")
        .max_invalid_tool_call_retries(1)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, PromptError::UnknownToolCall { tool_name, .. } if tool_name == "nonsense"),
        "{error}"
    );
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn retries_count_against_max_turns() {
    let model = ScriptedModel::new([
        Turn::tool_call("nonsense", json!({})),
        Turn::text("unreached"),
    ]);
    let agent = agent_with(&model, |b| {
        b.add_hook(InvalidCalls::new())
            .default_max_invalid_tool_call_retries(5)
    });
    let error = agent.prompt("hi").max_turns(1).await.unwrap_err();
    assert!(matches!(error, PromptError::MaxTurns { .. }), "{error}");
}

#[tokio::test]
async fn a_tool_the_turn_does_not_allow_is_not_repaired_to_itself() {
    let model = ScriptedModel::new([
        Turn::tool_call("Now", json!({})),
        Turn::tool_call("now", json!({})),
        Turn::text("No time."),
    ]);
    let agent = agent_with(&model, |b| {
        b.tool_choice(ToolChoice::Specific("save_note".into()))
            .add_hook(InvalidCalls::new())
            .default_max_invalid_tool_call_retries(2)
    });
    assert_eq!(agent.prompt("time?").await.unwrap(), "No time.");
    assert_eq!(
        last_seen(&model, 1),
        r#"There is no tool named "Now". Call one of these by its exact name: "save_note"."#
    );
    assert_eq!(
        last_seen(&model, 2),
        r#"The tool "now" may not be called now. Call one of these by its exact name: "save_note"."#
    );
}

#[tokio::test]
async fn with_no_tool_allowed_the_model_is_told_to_answer() {
    let model = ScriptedModel::new([Turn::tool_call("now", json!([])), Turn::text("Noon?")]);
    let agent = agent_with(&model, |b| {
        b.tool_choice(ToolChoice::None)
            .add_hook(InvalidCalls::new().feedback_prefix("Careful."))
            .default_max_invalid_tool_call_retries(1)
    });
    agent.prompt("time?").await.unwrap();
    assert_eq!(
        last_seen(&model, 1),
        "Careful. The tool \"now\" may not be called now. No tool may be called now: answer \
         without calling one. A call's arguments must be a JSON object."
    );
}

#[tokio::test]
async fn arguments_that_are_no_object_are_answered_by_the_run() {
    let model = ScriptedModel::new([
        // Repaired, then its arguments answered as the run answers them.
        Turn::tool_call("SaveNote", json!("milk")),
        Turn::text("Sorry."),
    ]);
    let agent = agent_with(&model, |b| b.add_hook(InvalidCalls::new()));
    assert_eq!(agent.prompt("note milk").await.unwrap(), "Sorry.");
    let seen = last_seen(&model, 1);
    assert!(seen.contains("must be a JSON object"), "{seen}");

    // Sent to an unknown tool, the feedback says so too.
    let model = ScriptedModel::new([
        Turn::tool_call("remember", json!("milk")),
        Turn::text("Sorry."),
    ]);
    let agent = agent_with(&model, |b| {
        b.add_hook(InvalidCalls::new())
            .default_max_invalid_tool_call_retries(1)
    });
    agent.prompt("note milk").await.unwrap();
    let seen = last_seen(&model, 1);
    assert!(
        seen.starts_with(r#"There is no tool named "remember"."#)
            && seen.ends_with("A call's arguments must be a JSON object."),
        "{seen}"
    );
}

#[tokio::test]
async fn without_repair_the_model_is_told_the_exact_name() {
    let model = ScriptedModel::new([Turn::tool_call("SaveNote", json!({})), Turn::text("Ok.")]);
    let agent = agent_with(&model, |b| {
        b.add_hook(InvalidCalls::new().repair(false))
            .default_max_invalid_tool_call_retries(1)
    });
    agent.prompt("note").await.unwrap();
    // The tool sharing a word with the called name first.
    assert_eq!(
        last_seen(&model, 1),
        r#"There is no tool named "SaveNote". Call one of these by its exact name: "save_note", "now"."#
    );
}

/// Repairs `remember` to `save_note`, defers on everything else, and counts its calls.
#[derive(Clone, Default)]
struct Remember(Arc<AtomicUsize>);

impl AgentHook for Remember {
    async fn on_invalid_tool_call(
        &self,
        _: &HookContext,
        call: &InvalidToolCallContext,
    ) -> Option<InvalidToolCallAction> {
        self.0.fetch_add(1, Ordering::SeqCst);
        (call.tool_name == "remember").then(|| InvalidToolCallAction::repair("save_note"))
    }
}

#[tokio::test]
async fn a_hook_before_it_decides_first_and_one_after_it_is_not_asked() {
    let model = ScriptedModel::new([
        Turn::tool_call("remember", json!({"text": "milk"})),
        Turn::tool_call("nonsense", json!({})),
        Turn::text("Done."),
    ]);
    let before = Remember::default();
    let after = Remember::default();
    let agent = agent_with(&model, |b| {
        b.add_hook(before.clone())
            .add_hook(InvalidCalls::new())
            .add_hook(after.clone())
            .default_max_invalid_tool_call_retries(1)
    });
    assert_eq!(agent.prompt("note milk").await.unwrap(), "Done.");
    assert_eq!(last_seen(&model, 1), r#"saved "milk""#);
    assert!(last_seen(&model, 2).starts_with(r#"There is no tool named "nonsense"."#));
    // `before` saw both calls; deferring on `nonsense` left it to `InvalidCalls`.
    assert_eq!(before.0.load(Ordering::SeqCst), 2);
    assert_eq!(after.0.load(Ordering::SeqCst), 0);
}
