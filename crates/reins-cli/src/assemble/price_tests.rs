//! The agent file's prices as the budget reads them: `cache_price_per_million` prices the
//! input tokens a provider read from its prompt cache or wrote to it.

use super::price_table;
use crate::config::{self, check::Needs};
use reins::agent::AgentBuilder;
use reins::completion::Usage;
use reins::hooks::budget::Budget;
use reins::testing::{ScriptedModel, Turn};

/// The price table of an agent file whose `[model]` ends with `model_lines` and whose
/// `[limits]` holds `limits_lines`.
fn prices_of(model_lines: &str, limits_lines: &str) -> Budget {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("agent.toml");
    std::fs::write(
        &path,
        format!(
            "[model]\nprovider = \"openai\"\nname = \"gpt-5-mini\"\n{model_lines}\n\
             [limits]\n{limits_lines}\n"
        ),
    )
    .expect("the agent file");
    let (agent, _) = config::load(&path, Needs::Store).expect("a valid agent file");
    price_table(&agent).expect("a price table")
}

/// The cost of one model call that read `input` tokens, `cached` of them from the cache,
/// and wrote no output, priced by `prices`.
async fn cost_of_a_call(prices: &Budget, input: u64, cached: u64) -> f64 {
    let usage = Usage::new(input, 0).with_cached_input(cached, 0);
    let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("ok").usage(usage)]))
        .add_hook(Budget::new().max_model_calls(5))
        .build();
    let run = agent.prompt("hi").extended_details().await.expect("a run");
    prices.usage_in(&run.state).expect("a budget record").cost
}

#[tokio::test]
async fn cached_input_is_priced_at_the_files_cache_price() {
    // A million tokens, all read from the cache: at the read price, not the input price.
    let on_the_model = prices_of(
        "price_per_million = [2.0, 8.0]\ncache_price_per_million = [0.5, 2.5]",
        "",
    );
    assert_eq!(
        cost_of_a_call(&on_the_model, 1_000_000, 1_000_000).await,
        0.5
    );
    let for_every_model = prices_of(
        "",
        "price_per_million = [2.0, 8.0]\ncache_price_per_million = [0.25, 2.5]",
    );
    assert_eq!(
        cost_of_a_call(&for_every_model, 1_000_000, 1_000_000).await,
        0.25
    );
    // Without a cache price, cached tokens cost the input price, as before.
    let plain = prices_of("price_per_million = [2.0, 8.0]", "");
    assert_eq!(cost_of_a_call(&plain, 1_000_000, 1_000_000).await, 2.0);
}
