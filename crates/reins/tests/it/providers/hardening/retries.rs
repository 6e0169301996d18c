//! What a server's `Retry-After` cannot do: make reins panic, however long it asks to wait.

use crate::providers::fixtures::{Fixture, Settings, model_at};
use crate::providers::hostile::{Hostile, Reply};
use crate::providers::support::{call, prompt};
use reins::completion::CompletionError;
use reins::providers::RetryPolicy;
use std::time::Duration;

pub async fn a_retry_after_longer_than_the_clock_holds_ends_the_call_with_its_failure<
    F: Fixture,
>() {
    for wait in ["1e300", "18446744073709551616"] {
        let server = Hostile::always(Reply::fixed(
            429,
            &[("content-type", "application/json"), ("retry-after", wait)],
            F::error_body("slow down").to_string(),
        ))
        .await;
        // A policy that never caps a wait: the server's is taken as it is, and it would pass
        // the call's deadline, so the 429 is the answer.
        let uncapped = RetryPolicy {
            max_retries: 1,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::MAX,
        };
        let model = model_at::<F>(&server.url(), &Settings::default().retry(uncapped));
        for stream in [false, true] {
            let error = call(&model, &prompt("hi"), stream).await.unwrap_err();
            assert!(
                matches!(error, CompletionError::Http { status: 429, .. }),
                "Retry-After {wait}: {error:?}"
            );
        }
    }
}
