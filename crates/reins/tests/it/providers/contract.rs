//! The contract every protocol keeps, written once over [`Fixture`] and run for each
//! protocol: `cargo test -p reins --test it providers::contract::gemini::` runs one protocol's.

mod agent;
mod big_integers;
mod failures;
mod replies;

/// One `#[tokio::test]` per listed contract test, for protocol `$fixture`.
macro_rules! contract_tests {
    ($fixture:ty: $($group:ident::$test:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $test() {
                super::$group::$test::<$fixture>().await;
            }
        )*
    };
}

/// The whole contract, as a module named after the protocol.
macro_rules! contract {
    ($($protocol:ident => $fixture:ty),* $(,)?) => {
        $(
            mod $protocol {
                contract_tests!($fixture:
                    replies::text_reply_blocking_and_streamed_agree,
                    replies::requests_reach_the_protocol_paths_with_the_auth_header,
                    replies::parallel_tool_calls_are_read_in_order,
                    replies::parallel_tool_calls_stream_in_order,
                    replies::two_calls_given_one_id_stay_two_calls,
                    replies::reasoning_is_read_blocking_and_streamed,
                    replies::usage_is_reported_for_every_reply,
                    replies::a_body_that_is_not_json_is_a_decode_error_quoting_it,
                    replies::a_malformed_stream_event_is_a_decode_error_quoting_it,
                    replies::an_empty_stream_is_an_error,
                    failures::rate_limits_and_server_errors_are_retried_honoring_retry_after,
                    failures::retries_are_bounded,
                    failures::client_errors_are_not_retried_and_carry_status_and_body,
                    failures::a_server_silent_before_the_first_byte_times_out,
                    failures::a_stream_silent_after_its_first_event_times_out,
                    failures::a_stream_cut_before_its_end_is_an_error_not_a_shorter_answer,
                    failures::a_connection_dropped_mid_stream_is_an_error,
                    failures::a_server_not_listening_is_named_with_why,
                    failures::the_api_key_never_shows_in_debug_output_or_errors,
                    agent::an_agent_runs_a_tool_loop,
                    agent::an_agent_streams_a_tool_loop,
                    agent::a_provider_error_reaches_the_agent_as_a_completion_error,
                    big_integers::an_integer_beyond_64_bits_keeps_the_models_text,
                    big_integers::a_run_tells_the_model_to_send_a_huge_integer_as_a_string,
                );
            }
        )*
    };
}

// Full paths: the macro expands them inside each protocol's module.
contract! {
    chat => crate::providers::fixtures::chat::Chat,
    responses => crate::providers::fixtures::responses::Responses,
    anthropic => crate::providers::fixtures::anthropic::Messages,
    gemini => crate::providers::fixtures::gemini::Google,
}
