//! The tokens a tool reports spending (an agent it runs) count against the budget.

use super::*;
use crate::tool::ToolCallContext;

/// A tool that runs "an agent of its own": it reports 40,000 input and 10,000 output tokens.
fn researcher() -> impl Tool {
    tool_fn("research", "Researches a question.", |_: Args| async {
        if let Some(call) = ToolCallContext::current() {
            call.add_usage(Usage::new(40_000, 10_000));
        }
        Ok::<_, std::convert::Infallible>("notes")
    })
}

/// Two research calls, each turn reading 1,000 tokens and writing 100, then an answer.
fn research_script() -> ScriptedModel {
    let call =
        |q: &str| Turn::tool_call("research", json!({ "q": q })).usage(Usage::new(1_000, 100));
    ScriptedModel::new([
        call("a"),
        call("b"),
        Turn::text("done").usage(Usage::new(1_000, 100)),
    ])
}

fn agent(model: &ScriptedModel, budget: Budget) -> Agent {
    AgentBuilder::new(model.clone())
        .tool(researcher())
        .add_hook(budget)
        .build()
}

#[tokio::test]
async fn a_tools_reported_tokens_count_against_the_token_limits() {
    let model = research_script();
    let error = agent(&model, Budget::new().max_output_tokens(15_000))
        .prompt("Research")
        .await
        .unwrap_err();
    // The first research call's 10,000 and its turn's 100: under the limit. The second
    // turn's 100 more, then the second call's 10,000: past it, so the answer is never asked.
    let stop = BudgetExceeded::from_error(&error).expect("the budget stopped the run");
    assert_eq!(stop.limit, BudgetLimit::OutputTokens);
    assert_eq!(stop.used, 20_200.0);
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn a_tools_tokens_are_filed_and_priced_under_its_name() {
    let model = research_script();
    let budget = Budget::new()
        .max_cost(100.0)
        .price("default", 1.0, 2.0)
        .price("tool:research", 10.0, 20.0);
    let response = agent(&model, budget.clone())
        .prompt("Research")
        .extended_details()
        .await
        .unwrap();
    let used = budget.usage_in(&response.state).unwrap();
    assert_eq!(used.by_model["tool:research"], Usage::new(80_000, 20_000));
    assert_eq!(used.by_model["default"], Usage::new(3_000, 300));
    assert_eq!((used.input_tokens, used.output_tokens), (83_000, 20_300));
    // 0.8 + 0.4 for the tool's tokens, 0.003 + 0.0006 for the model's.
    assert!((used.cost - 1.2036).abs() < 1e-9, "{}", used.cost);
    assert_eq!(used.tool_calls, 2);
}

#[tokio::test]
async fn a_cost_limit_without_a_price_for_a_tools_tokens_stops_and_says_how_to_price_them() {
    let model = research_script();
    let budget = Budget::new().max_cost(100.0).price("default", 1.0, 2.0);
    let error = agent(&model, budget).prompt("Research").await.unwrap_err();
    let reason = cancelled_reason(&error);
    assert!(
        reason.contains("the tool `research`") && reason.contains("price(\"tool:research\""),
        "{reason}"
    );
    // It stops before the call that would read the first result.
    assert_eq!(model.requests().len(), 1);
}

/// Denies every call of `research`.
struct DenyResearch;

impl AgentHook for DenyResearch {
    async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if event.tool_name() == Some("research") {
            DispatchAction::deny("not now")
        } else {
            DispatchAction::proceed()
        }
    }
}

#[tokio::test]
async fn a_denied_call_reports_no_tokens() {
    let model = research_script();
    let budget = Budget::new();
    let response = AgentBuilder::new(model.clone())
        .tool(researcher())
        .add_hook(DenyResearch)
        .add_hook(budget.clone())
        .build()
        .prompt("Research")
        .extended_details()
        .await
        .unwrap();
    let used = budget.usage_in(&response.state).unwrap();
    assert!(!used.by_model.contains_key("tool:research"));
    assert_eq!(used.tool_calls, 0);
}
