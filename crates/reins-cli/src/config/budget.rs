//! Checks of `[limits]`: the turn limit, the invalid tool calls' retries, and the budget's settings (the over-budget model and
//! its hard limit factor, and the prices a cost limit needs).

use super::diagnostic::Diagnostic;
use super::{LoadedAgent, MAX_INVALID_TOOL_CALL_RETRIES};
use toml::Spanned;

/// `[limits]`: the turn limit and the invalid tool calls' retries; the budget's model it switches to, its hard limit factor, and
/// prices.
pub(super) fn check_budget(agent: &LoadedAgent, problems: &mut Vec<Diagnostic>) {
    check_turns(agent, problems);
    check_invalid_call_retries(agent, problems);
    check_over_budget(agent, problems);
    check_prices(agent, problems);
}

/// A run of no turns cannot answer: it would stop at its limit before its first model call.
fn check_turns(agent: &LoadedAgent, problems: &mut Vec<Diagnostic>) {
    if let Some(turns) = &agent.file.limits.max_turns
        && *turns.get_ref() == 0
    {
        problems.push(agent.error_at(
            turns.span(),
            "`max_turns` must be at least 1 (it is the most model calls of a run)",
        ));
    }
}

/// A run asks a model that keeps calling tools it may not call again at most
/// [`MAX_INVALID_TOOL_CALL_RETRIES`] times.
fn check_invalid_call_retries(agent: &LoadedAgent, problems: &mut Vec<Diagnostic>) {
    if let Some(retries) = &agent.file.limits.max_invalid_tool_call_retries
        && *retries.get_ref() > MAX_INVALID_TOOL_CALL_RETRIES
    {
        problems.push(agent.error_at(
            retries.span(),
            format!(
                "`max_invalid_tool_call_retries` must be at most \
                 {MAX_INVALID_TOOL_CALL_RETRIES} (each is a model call asking again after a \
                 call to a tool the model may not call; 0 fails the run at such a call)"
            ),
        ));
    }
}

/// The model a budget switches to, with a limit to exceed (the model itself is checked with
/// the others); and a hard limit factor only with it, at least 1.
fn check_over_budget(agent: &LoadedAgent, problems: &mut Vec<Diagnostic>) {
    let limits = &agent.file.limits;
    if let Some(model) = &limits.over_budget_model
        && !limits.any_budget()
    {
        problems.push(agent.error_at(
            model.span(),
            "`over_budget_model` needs a budget limit to exceed (`max_total_tokens`, \
             `max_model_calls`, `max_cost`, ...)",
        ));
    }
    if let Some(factor) = &limits.hard_limit_factor {
        if limits.over_budget_model.is_none() {
            problems.push(agent.error_at(
                factor.span(),
                "`hard_limit_factor` applies only with an `over_budget_model`",
            ));
        }
        let value = *factor.get_ref();
        if !value.is_finite() || value < 1.0 {
            problems.push(agent.error_at(
                factor.span(),
                "`hard_limit_factor` must be a number of at least 1 (the hard limits are the \
                 limits times it)",
            ));
        }
    }
}

/// Every price is a pair of finite numbers, none negative (a price the budget cannot use
/// would leave a cost limit counting nothing); and a cost limit has a price for every model.
fn check_prices(agent: &LoadedAgent, problems: &mut Vec<Diagnostic>) {
    let file = &agent.file;
    let models = file.labeled_models();
    let prices = std::iter::once(&file.limits.price_per_million).chain(
        models
            .iter()
            .map(|(_, model)| &model.get_ref().price_per_million),
    );
    for price in prices.flatten() {
        if !valid_price(price) {
            problems.push(agent.error_at(
                price.span(),
                "`price_per_million` must be two numbers, none negative: [input, output] per \
                 million tokens",
            ));
        }
    }
    // A cache price is a part of an input price: beside one, never alone.
    let cache_prices = std::iter::once((
        &file.limits.cache_price_per_million,
        file.limits.price_per_million.is_some(),
    ))
    .chain(models.iter().map(|(_, model)| {
        let model = model.get_ref();
        (
            &model.cache_price_per_million,
            model.price_per_million.is_some(),
        )
    }));
    for (price, beside_a_price) in cache_prices {
        let Some(price) = price else { continue };
        if !valid_price(price) {
            problems.push(agent.error_at(
                price.span(),
                "`cache_price_per_million` must be two numbers, none negative: [read, write] \
                 per million input tokens read from or written to the provider's prompt cache",
            ));
        } else if !beside_a_price {
            problems.push(agent.error_at(
                price.span(),
                "`cache_price_per_million` prices part of the input tokens: give \
                 `price_per_million = [input, output]` beside it",
            ));
        }
    }
    let Some(cost) = &file.limits.max_cost else {
        return;
    };
    if file.limits.price_per_million.is_some() {
        return;
    }
    let unpriced: Vec<String> = models
        .into_iter()
        .filter(|(_, model)| model.get_ref().price_per_million.is_none())
        .map(|(label, _)| format!("`{label}`"))
        .collect();
    if !unpriced.is_empty() {
        problems.push(agent.error_at(
            cost.span(),
            format!(
                "`max_cost` needs a price for every model, and {} has none: give \
                 `price_per_million = [input, output]` under `[limits]` (for all models) or \
                 on each model",
                unpriced.join(", ")
            ),
        ));
    }
}

/// Two finite numbers, none negative.
fn valid_price(price: &Spanned<[f64; 2]>) -> bool {
    price.get_ref().iter().all(|p| p.is_finite() && *p >= 0.0)
}
