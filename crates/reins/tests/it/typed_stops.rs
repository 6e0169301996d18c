//! A hook's typed stop reaches the caller as a value: through a nested hook stack, on an
//! awaited run and on a streamed one, and never from another hook's identical text.

use futures::StreamExt;
use reins::agent::*;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use serde_json::json;

/// What the hook stops with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("refund of {cents} cents is over the limit")]
struct RefundTooLarge {
    cents: u64,
}

/// Stops any call to `refund` whose `cents` argument is over 100, with a typed reason.
struct RefundLimit;

impl AgentHook for RefundLimit {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        let cents = event
            .tool_args_as::<serde_json::Value>()
            .and_then(|args| args.ok())
            .and_then(|args| args["cents"].as_u64());
        match cents {
            Some(cents) if cents > 100 => {
                DispatchAction::stop(StopReason::because(RefundTooLarge { cents }))
            }
            _ => DispatchAction::proceed(),
        }
    }
}

/// Stops the run at the same point with the same text, but no typed value.
struct SameTextOnly;

impl AgentHook for SameTextOnly {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.tool_name() {
            Some("refund") => DispatchAction::stop("refund of 500 cents is over the limit"),
            _ => DispatchAction::proceed(),
        }
    }
}

fn agent(hooks: HookStack) -> Agent {
    let model = ScriptedModel::new([
        Turn::tool_call("refund", json!({"cents": 500})),
        Turn::text("refunded"),
    ]);
    let refund = tool_fn(
        "refund",
        "Refunds an order.",
        |_: serde_json::Value| async { Ok::<_, std::convert::Infallible>("done") },
    );
    AgentBuilder::new(model)
        .tool(refund)
        .add_hook(hooks)
        .build()
}

#[tokio::test]
async fn a_typed_stop_passes_through_a_nested_stack_to_an_awaited_run() {
    let inner = HookStack::new().with(RefundLimit);
    let error = agent(HookStack::new().with(inner))
        .prompt("refund order 7")
        .await
        .unwrap_err();
    assert_eq!(
        error.stopped_by::<RefundTooLarge>(),
        Some(&RefundTooLarge { cents: 500 })
    );
    let reason = error.stop_reason().expect("a hook stopped the run");
    assert_eq!(*reason, "refund of 500 cents is over the limit");
    assert!(error.history().is_some_and(|history| !history.is_empty()));
}

#[tokio::test]
async fn a_typed_stop_ends_a_streamed_run_as_a_value() {
    let mut stream = agent(HookStack::new().with(RefundLimit))
        .prompt("refund order 7")
        .stream();
    let mut last = None;
    while let Some(item) = stream.next().await {
        last = Some(item);
    }
    let Some(Err(error)) = last else {
        panic!("the stream ends with the stop: {last:?}");
    };
    assert_eq!(
        error.stopped_by::<RefundTooLarge>().map(|stop| stop.cents),
        Some(500)
    );
}

#[tokio::test]
async fn the_same_text_without_the_value_is_not_taken_for_it() {
    let error = agent(HookStack::new().with(SameTextOnly))
        .prompt("refund order 7")
        .await
        .unwrap_err();
    assert_eq!(
        error.stop_reason().map(|reason| reason.as_str()),
        Some("refund of 500 cents is over the limit")
    );
    assert_eq!(error.stopped_by::<RefundTooLarge>(), None);
}
