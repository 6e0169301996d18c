//! How a call fails: retried when the provider asks for patience, not retried when the request
//! is wrong, timed out when the server goes silent, an error (never a shorter answer) when a
//! stream is cut, and never with the key in sight.

use crate::providers::fixtures::{Fixture, Settings, model_at, model_of};
use crate::providers::hostile::{Hostile, Reply};
use crate::providers::support::{
    KEY, answering, call, drain, json_response, prompt, sse_response, timeouts, unreachable_root,
    within,
};
use reins::completion::{CompletionError, CompletionModel};
use reins::providers::RetryPolicy;
use std::time::Duration;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

pub async fn rate_limits_and_server_errors_are_retried_honoring_retry_after<F: Fixture>() {
    // The policy alone would wait a minute before each retry: only honoring the server's
    // `Retry-After: 0` lets the call finish within the guard.
    let patient = RetryPolicy {
        max_retries: 3,
        initial_backoff: Duration::from_secs(60),
        max_backoff: Duration::from_secs(60),
    };
    for stream in [false, true] {
        let server = MockServer::start().await;
        for status in [429, 500, 503] {
            Mock::given(method("POST"))
                .respond_with(
                    ResponseTemplate::new(status)
                        .insert_header("retry-after", "0")
                        .set_body_json(F::error_body("try again")),
                )
                .up_to_n_times(1)
                .mount(&server)
                .await;
        }
        let success = if stream {
            sse_response(&F::text_stream(&["fin", "ally"]))
        } else {
            json_response(F::text_reply("finally"))
        };
        Mock::given(method("POST"))
            .respond_with(success)
            .mount(&server)
            .await;
        let model = model_at::<F>(&server.uri(), &Settings::default().retry(patient));
        let response = within(20, call(&model, &prompt("hi"), stream))
            .await
            .unwrap_or_else(|error| panic!("stream: {stream}: {error:?}"));
        assert_eq!(response.text(), "finally");
        assert_eq!(server.received_requests().await.unwrap().len(), 4);
    }
}

pub async fn retries_are_bounded<F: Fixture>() {
    let server = answering(ResponseTemplate::new(500).set_body_string("boom")).await;
    let error = model_of::<F>(&server.uri())
        .completion(&prompt("hi"))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, CompletionError::Http { status: 500, body } if body == "boom"),
        "{error:?}"
    );
    let attempts = server.received_requests().await.unwrap().len();
    assert_eq!(attempts, 3, "1 try + 2 retries");
}

pub async fn client_errors_are_not_retried_and_carry_status_and_body<F: Fixture>() {
    for stream in [false, true] {
        let server = answering(
            ResponseTemplate::new(400).set_body_json(F::error_body("Invalid 'messages'")),
        )
        .await;
        let model = model_of::<F>(&server.uri());
        let error = call(&model, &prompt("hi"), stream).await.unwrap_err();
        let CompletionError::Http { status, body } = &error else {
            panic!("expected an HTTP error, got {error:?}");
        };
        assert_eq!(*status, 400);
        assert!(body.contains("Invalid 'messages'"), "{body}");
        assert!(error.to_string().contains("Invalid 'messages'"), "{error}");
        assert_eq!(server.received_requests().await.unwrap().len(), 1);
    }
}

pub async fn a_server_silent_before_the_first_byte_times_out<F: Fixture>() {
    let server = Hostile::always(Reply::silent()).await;
    let settings = Settings::default()
        .retry(RetryPolicy::none())
        .timeouts(timeouts(
            Duration::from_millis(100),
            Duration::from_secs(10),
        ));
    let model = model_at::<F>(&server.url(), &settings);
    for stream in [false, true] {
        let error = within(10, call(&model, &prompt("hi"), stream))
            .await
            .unwrap_err();
        assert!(matches!(error, CompletionError::Timeout(_)), "{error:?}");
    }
}

pub async fn a_stream_silent_after_its_first_event_times_out<F: Fixture>() {
    let events = F::text_stream(&["Hello ", "there."]);
    let reply = Reply::chunked(200, "text/event-stream")
        .chunk(events[0].as_bytes())
        .chunk(events[1].as_bytes())
        .wait(Duration::from_secs(60));
    let server = Hostile::always(reply).await;
    let settings = Settings::default()
        .retry(RetryPolicy::none())
        .timeouts(timeouts(
            Duration::from_secs(10),
            Duration::from_millis(200),
        ));
    let model = model_at::<F>(&server.url(), &settings);
    let (_, end) = within(10, drain(&model, &prompt("hi"))).await;
    let error = end.unwrap_err();
    assert!(matches!(error, CompletionError::Timeout(_)), "{error:?}");
}

pub async fn a_stream_cut_before_its_end_is_an_error_not_a_shorter_answer<F: Fixture>() {
    let mut events = F::text_stream(&["Hello ", "there."]);
    events.pop();
    let server = answering(sse_response(&events)).await;
    let (_, end) = drain(&model_of::<F>(&server.uri()), &prompt("hi")).await;
    let error = end.expect_err("a cut stream is no answer");
    assert!(
        error.to_string().contains(F::end_marker()),
        "the error names what never came: {error}"
    );
}

pub async fn a_connection_dropped_mid_stream_is_an_error<F: Fixture>() {
    let events = F::text_stream(&["Hello ", "there."]);
    let server = Hostile::always(Reply::events(&events[..2])).await;
    let settings = Settings::default().retry(RetryPolicy::none());
    let model = model_at::<F>(&server.url(), &settings);
    let (_, end) = within(10, drain(&model, &prompt("hi"))).await;
    assert!(end.is_err(), "a broken stream is no answer: {end:?}");
}

/// Nothing listens where the model is served: the error says it could not connect, where
/// (the endpoint, as the base URL points), and why, in one line; not the HTTP client's chain
/// of wrappers ("error sending request for url (…): client error (Connect): …").
pub async fn a_server_not_listening_is_named_with_why<F: Fixture>() {
    let root = unreachable_root();
    let settings = Settings {
        retry: RetryPolicy::none(),
        ..Settings::default()
    };
    let model = model_at::<F>(&root, &settings);
    for stream in [false, true] {
        let error = call(&model, &prompt("hi"), stream).await.unwrap_err();
        let CompletionError::Transport(text) = &error else {
            panic!("{error:?}");
        };
        assert!(
            text.starts_with(&format!("could not connect to {root}/")),
            "{text}"
        );
        assert!(text.to_lowercase().contains("connection refused"), "{text}");
        assert!(!text.contains("error sending request"), "{text}");
    }
}

pub async fn the_api_key_never_shows_in_debug_output_or_errors<F: Fixture>() {
    let server = answering(
        ResponseTemplate::new(401).set_body_json(F::error_body("invalid authentication")),
    )
    .await;
    let builder = F::builder(&server.uri(), &Settings::default());
    let mut shown = vec![format!("{builder:?}")];
    let client = F::build(builder).unwrap();
    let model = F::model(&client);
    shown.extend([
        format!("{client:?}"),
        format!("{model:?}"),
        format!("{model:#?}"),
    ]);

    let request = prompt("hi");
    let refused = model.completion(&request).await.unwrap_err();
    assert!(matches!(refused, CompletionError::Http { status: 401, .. }));
    let refused_stream = call(&model, &request, true).await.unwrap_err();
    let unreachable = model_at::<F>(&unreachable_root(), &Settings::default());
    let transport = unreachable.completion(&request).await.unwrap_err();
    let transport_stream = call(&unreachable, &request, true).await.unwrap_err();
    for error in [refused, refused_stream, transport, transport_stream] {
        shown.push(format!("{error} {error:?}"));
    }
    for text in shown {
        assert!(!text.contains(KEY), "{text}");
        assert!(!text.contains("very-secret"), "{text}");
    }
}
