use super::*;
use crate::agent::{Agent, AgentBuilder};
use crate::testing::{ScriptedModel, Turn};
use crate::tool::tool_fn;
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

fn named(tool: &str) -> ToolChoice {
    ToolChoice::Specific(tool.to_owned())
}

/// A model that calls `now` once and then answers.
fn model() -> ScriptedModel {
    ScriptedModel::new([Turn::tool_call("now", json!({})), Turn::text("Noon.")])
}

/// An agent with a `now` tool, built by `configure`.
fn agent(model: &ScriptedModel, configure: impl FnOnce(AgentBuilder) -> AgentBuilder) -> Agent {
    let now = tool_fn("now", "The current time.", |_: NoArgs| async {
        Ok::<_, std::convert::Infallible>("12:00".to_owned())
    });
    configure(AgentBuilder::new(model.clone()).tool(now)).build()
}

/// The tool choice of every request the model received.
fn choices(model: &ScriptedModel) -> Vec<Option<ToolChoice>> {
    model
        .requests()
        .iter()
        .map(|request| request.tool_choice.clone())
        .collect()
}

/// Sets `patch` on every turn.
struct Patches(RequestPatch);

impl AgentHook for Patches {
    async fn on_completion_call(
        &self,
        _: &HookContext,
        _: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        CompletionCallAction::patch(self.0.clone())
    }
}

fn small_model_hook() -> ToolChoiceByTurn {
    ToolChoiceByTurn::new()
        .first_turn(ToolChoice::Required)
        .later_turns(ToolChoice::None)
}

#[tokio::test]
async fn turn_one_and_later_turns_get_their_own_choice() {
    let model = model();
    agent(&model, |b| b.add_hook(small_model_hook()))
        .prompt("what now?")
        .await
        .unwrap();
    assert_eq!(
        choices(&model),
        [Some(ToolChoice::Required), Some(ToolChoice::None)]
    );
}

#[test]
fn the_first_route_whose_word_the_prompt_mentions_wins_ignoring_case() {
    let hook = small_model_hook()
        .route(["weather", "rain"], named("forecast"))
        .route(["Time", "clock"], named("now"))
        .route(["time"], named("never_reached"));
    assert_eq!(
        hook.choice_for(1, "Will it RAIN?"),
        Some(&named("forecast"))
    );
    assert_eq!(hook.choice_for(1, "what TIME is it"), Some(&named("now")));
    // No route matches: the first-turn choice.
    assert_eq!(hook.choice_for(1, "hello"), Some(&ToolChoice::Required));
    // Routes pick the first turn only.
    assert_eq!(
        hook.choice_for(2, "what time is it"),
        Some(&ToolChoice::None)
    );
}

#[test]
fn a_route_with_no_words_matches_nothing() {
    let hook = ToolChoiceByTurn::new().route([""], named("now"));
    assert_eq!(hook.choice_for(1, "anything"), None);
}

#[tokio::test]
async fn a_turn_with_nothing_configured_keeps_the_agent_choice() {
    let model = model();
    let hook = ToolChoiceByTurn::new().later_turns(ToolChoice::None);
    agent(&model, |b| b.tool_choice(ToolChoice::Auto).add_hook(hook))
        .prompt("what time is it?")
        .await
        .unwrap();
    assert_eq!(
        choices(&model),
        [Some(ToolChoice::Auto), Some(ToolChoice::None)]
    );
}

#[tokio::test]
async fn routes_send_turn_one_to_the_tool_the_prompt_mentions() {
    let model = model();
    let hook = small_model_hook().route(["clock"], named("now"));
    agent(&model, |b| b.add_hook(hook))
        .prompt("Check the Clock")
        .await
        .unwrap();
    assert_eq!(
        choices(&model),
        [Some(named("now")), Some(ToolChoice::None)]
    );
}

#[tokio::test]
async fn a_later_hook_choice_wins_and_other_fields_of_both_patches_apply() {
    let model = model();
    let later = Patches(
        RequestPatch::new()
            .tool_choice(ToolChoice::Auto)
            .temperature(0.5),
    );
    agent(&model, |b| b.add_hook(small_model_hook()).add_hook(later))
        .prompt("what time is it?")
        .await
        .unwrap();
    assert_eq!(
        choices(&model),
        [Some(ToolChoice::Auto), Some(ToolChoice::Auto)]
    );
    assert!(
        model
            .requests()
            .iter()
            .all(|request| request.temperature == Some(0.5))
    );
}

#[tokio::test]
async fn registered_after_another_hook_its_choice_wins() {
    let model = model();
    let earlier = Patches(
        RequestPatch::new()
            .tool_choice(ToolChoice::Auto)
            .max_tokens(64),
    );
    agent(&model, |b| b.add_hook(earlier).add_hook(small_model_hook()))
        .prompt("what time is it?")
        .await
        .unwrap();
    assert_eq!(
        choices(&model),
        [Some(ToolChoice::Required), Some(ToolChoice::None)]
    );
    assert!(
        model
            .requests()
            .iter()
            .all(|request| request.max_tokens == Some(64))
    );
}

/// Asks the model again, with feedback, after every invalid tool call.
struct RetryInvalidCalls;

impl AgentHook for RetryInvalidCalls {
    async fn on_invalid_tool_call(
        &self,
        _: &HookContext,
        _: &crate::agent::InvalidToolCallContext,
    ) -> Option<crate::agent::InvalidToolCallAction> {
        Some(crate::agent::InvalidToolCallAction::retry("Use `now`."))
    }
}

/// Runs "What time is it?" on an agent `configure` sets up, whose model first calls a tool
/// that does not exist and is asked again (the first turn retried), then calls `now` and
/// answers; returns the tool choice of each of the three requests.
async fn choices_of_a_retried_first_turn(
    configure: impl FnOnce(AgentBuilder) -> AgentBuilder,
) -> Vec<Option<ToolChoice>> {
    let model = ScriptedModel::new([
        Turn::tool_call("default_api", json!({})),
        Turn::tool_call("now", json!({})),
        Turn::text("Noon."),
    ]);
    let answer = agent(&model, |b| configure(b).add_hook(RetryInvalidCalls))
        .prompt("What time is it?")
        .max_invalid_tool_call_retries(1)
        .await
        .unwrap();
    assert_eq!(answer, "Noon.");
    choices(&model)
}

#[tokio::test]
async fn a_first_call_asked_again_keeps_the_first_turn_choice() {
    // The retry of the first turn must still go out with the route's choice, chosen by the
    // prompt and not by the feedback.
    let hook = small_model_hook().route(["time"], named("now"));
    assert_eq!(
        choices_of_a_retried_first_turn(|b| b.add_hook(hook)).await,
        [
            Some(named("now")),
            Some(named("now")),
            Some(ToolChoice::None)
        ]
    );
}

/// Two such hooks in a run each keep their own first-turn choice: the later one, which
/// chooses nothing for the first turn, does not make the earlier one forget its own.
#[tokio::test]
async fn a_second_hook_leaves_the_first_one_s_first_turn_choice_alone() {
    let routes = ToolChoiceByTurn::new().route(["time"], named("now"));
    let later = ToolChoiceByTurn::new().later_turns(ToolChoice::Auto);
    assert_eq!(
        choices_of_a_retried_first_turn(|b| b.add_hook(routes).add_hook(later)).await,
        [
            Some(named("now")),
            Some(named("now")),
            Some(ToolChoice::Auto)
        ]
    );
}

#[tokio::test]
async fn a_first_turn_in_a_conversation_with_earlier_tool_results_is_still_the_first() {
    use crate::message::Message;
    let model = model();
    let earlier = vec![
        Message::user("what now?"),
        Message::tool_result("c0", "now", "12:00"),
        Message::assistant("Noon."),
    ];
    agent(&model, |b| b.add_hook(small_model_hook()))
        .prompt("and now?")
        .with_history(earlier)
        .await
        .unwrap();
    assert_eq!(
        choices(&model),
        [Some(ToolChoice::Required), Some(ToolChoice::None)]
    );
}

#[test]
fn routes_match_whole_words_only() {
    let hook = ToolChoiceByTurn::new()
        .route(["time"], named("now"))
        .route(["what day"], named("calendar"));
    assert_eq!(hook.choice_for(1, "Is it sometimes sunny?"), None);
    assert_eq!(hook.choice_for(1, "time?"), Some(&named("now")));
    assert_eq!(hook.choice_for(1, "At what time"), Some(&named("now")));
    assert_eq!(
        hook.choice_for(1, "So, WHAT DAY is it"),
        Some(&named("calendar"))
    );
    assert_eq!(hook.choice_for(1, "somewhat daylight"), None);
}
