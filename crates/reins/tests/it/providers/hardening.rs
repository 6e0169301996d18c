//! What a hostile or broken server must not be able to do to a client, for every protocol:
//! redirect credentials to another origin, make reins buffer without bound, keep a call alive
//! forever, pass an HTML page off as an event stream, or see a secret in logs. And a model
//! that panics must not take the caller down with it.

mod bounds;
mod echoes;
mod empty_answers;
mod fragment_ids;
mod kept;
mod panics;
mod parts;
mod percent_echoes;
mod redirects;
mod retries;
mod secrets;
mod unfinished_chat;

/// One `#[tokio::test]` per listed hardening test, for protocol `$fixture`.
macro_rules! hardening_tests {
    ($fixture:ty: $($group:ident::$test:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $test() {
                super::$group::$test::<$fixture>().await;
            }
        )*
    };
}

macro_rules! hardening {
    ($($protocol:ident => $fixture:ty),* $(,)?) => {
        $(
            mod $protocol {
                hardening_tests!($fixture:
                    redirects::a_cross_origin_redirect_fails_and_carries_no_credentials,
                    redirects::a_cross_origin_redirect_fails_even_when_redirects_are_allowed,
                    redirects::a_same_origin_redirect_is_followed_only_when_allowed,
                    bounds::a_huge_error_body_gives_a_bounded_error,
                    bounds::a_huge_reply_without_newline_gives_a_bounded_error,
                    bounds::a_blocking_body_over_the_limit_is_too_large,
                    bounds::a_streamed_line_over_the_limit_is_too_large,
                    bounds::an_event_over_the_limit_is_too_large,
                    bounds::an_answer_streamed_past_the_body_limit_is_too_large,
                    bounds::a_body_of_countless_small_objects_is_too_large,
                    bounds::an_event_of_countless_small_objects_is_too_large,
                    bounds::the_total_deadline_ends_a_call_that_never_finishes,
                    bounds::timeouts_too_long_for_the_clock_mean_no_limit,
                    bounds::a_page_that_is_not_an_event_stream_is_a_decode_error_quoting_it,
                    bounds::a_stream_broken_mid_body_says_what_was_received,
                    bounds::an_error_body_sent_as_an_event_stream_is_quoted_in_the_error,
                    retries::a_retry_after_longer_than_the_clock_holds_ends_the_call_with_its_failure,
                    secrets::credentials_never_show_in_debug_output,
                    echoes::a_content_type_echoing_the_key_does_not_show_it,
                    secrets::an_error_body_echoing_the_key_does_not_show_it,
                    secrets::an_error_body_echoing_the_key_percent_encoded_does_not_show_it,
                    secrets::an_error_quoting_only_the_start_of_a_credential_does_not_show_it,
                    secrets::an_answer_echoing_the_key_does_not_show_it,
                    percent_echoes::an_answer_echoing_the_key_percent_encoded_does_not_show_it,
                    secrets::an_error_echoing_a_credential_header_does_not_show_it,
                );
            }
        )*
    };
}

// Full paths: the macro expands them inside each protocol's module.
hardening! {
    chat => crate::providers::fixtures::chat::Chat,
    responses => crate::providers::fixtures::responses::Responses,
    anthropic => crate::providers::fixtures::anthropic::Messages,
    gemini => crate::providers::fixtures::gemini::Google,
}
