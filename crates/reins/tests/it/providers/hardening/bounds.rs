//! Bounds a server cannot push reins past: how much it buffers (a body, a line, an event),
//! how much of a bad reply an error quotes, how long a call may take in all; and errors that
//! say what arrived when the reply was not an event stream or broke off.

use crate::providers::fixtures::{Fixture, Settings, model_at};
use crate::providers::hostile::{Hostile, Reply};
use crate::providers::support::{call, drain, prompt, test_timeouts, within};
use reins::completion::{CompletionError, CompletionModel};
use reins::providers::{Limits, RetryPolicy, Timeouts};
use std::time::Duration;

/// The most an error's text may take, however large the reply that caused it.
const MAX_ERROR_TEXT: usize = 16 * 1024;

const MIB: usize = 1024 * 1024;

fn small_limits() -> Limits {
    Limits {
        body: MIB,
        event: 64 * 1024,
        line: 64 * 1024,
    }
}

fn limited<F: Fixture>(server: &Hostile) -> F::Model {
    let settings = Settings::default()
        .retry(RetryPolicy::none())
        .limits(small_limits());
    model_at::<F>(&server.url(), &settings)
}

fn assert_too_large(error: &CompletionError, expected_limit: usize) {
    match error {
        CompletionError::TooLarge { limit, .. } => assert_eq!(*limit, expected_limit),
        other => panic!("expected TooLarge, got {other:?}"),
    }
}

pub async fn a_huge_error_body_gives_a_bounded_error<F: Fixture>() {
    let body = F::error_body(&"x".repeat(4 * MIB)).to_string();
    let server = Hostile::always(Reply::fixed(
        400,
        &[("content-type", "application/json")],
        body,
    ))
    .await;
    let model = model_of_hostile::<F>(&server);
    for stream in [false, true] {
        let error = within(30, call(&model, &prompt("hi"), stream))
            .await
            .unwrap_err();
        assert!(
            matches!(error, CompletionError::Http { status: 400, .. }),
            "the error still says what failed"
        );
        let shown = error.to_string().len();
        assert!(shown <= MAX_ERROR_TEXT, "{shown} bytes of error text");
    }
}

pub async fn a_huge_reply_without_newline_gives_a_bounded_error<F: Fixture>() {
    // 50 MiB of garbage, written as fast as reins reads it.
    let reply = Reply::chunked(200, "application/json")
        .repeat(&[b'x'; 64 * 1024], Duration::ZERO, 800)
        .finish();
    let server = Hostile::always(reply).await;
    let error = within(60, model_of_hostile::<F>(&server).completion(&prompt("hi")))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            CompletionError::TooLarge { .. } | CompletionError::Decode(_)
        ),
        "{error:?}"
    );
    let shown = error.to_string().len();
    assert!(shown <= MAX_ERROR_TEXT, "{shown} bytes of error text");
}

pub async fn a_blocking_body_over_the_limit_is_too_large<F: Fixture>() {
    let big = Hostile::always(Reply::json(&F::text_reply(&"a".repeat(2 * MIB)))).await;
    let error = within(30, limited::<F>(&big).completion(&prompt("hi")))
        .await
        .unwrap_err();
    assert_too_large(&error, MIB);

    // The same limits let an ordinary reply through.
    let small = Hostile::always(Reply::json(&F::text_reply("fits"))).await;
    let response = limited::<F>(&small).completion(&prompt("hi")).await;
    assert_eq!(response.unwrap().text(), "fits");
}

pub async fn a_streamed_line_over_the_limit_is_too_large<F: Fixture>() {
    // One `data:` line of 1 MiB, never ended by a newline.
    let reply = Reply::chunked(200, "text/event-stream")
        .chunk(b"data: ")
        .repeat(&[b'x'; 16 * 1024], Duration::ZERO, 64)
        .finish();
    let server = Hostile::always(reply).await;
    let (_, end) = within(30, drain(&limited::<F>(&server), &prompt("hi"))).await;
    assert_too_large(&end.unwrap_err(), 64 * 1024);
}

pub async fn an_event_over_the_limit_is_too_large<F: Fixture>() {
    // One event of 200 short `data:` lines: every line fits, the event does not.
    let line = format!("data: {}\n", "x".repeat(1000));
    let reply = Reply::chunked(200, "text/event-stream")
        .repeat(line.as_bytes(), Duration::ZERO, 200)
        .chunk(b"\n")
        .finish();
    let server = Hostile::always(reply).await;
    let (_, end) = within(30, drain(&limited::<F>(&server), &prompt("hi"))).await;
    assert_too_large(&end.unwrap_err(), 64 * 1024);
}

pub async fn an_answer_streamed_past_the_body_limit_is_too_large<F: Fixture>() {
    // Every event fits, but together they make an answer of 2 MiB: as much as reins would
    // hold, assembling it, had the server gone on for ever.
    let piece = "x".repeat(1024);
    let events = F::text_stream(&vec![piece.as_str(); 2 * 1024]);
    let reply = Reply::events(&events).finish();
    let server = Hostile::always(reply).await;
    let (_, end) = within(30, drain(&limited::<F>(&server), &prompt("hi"))).await;
    assert_too_large(&end.unwrap_err(), MIB);
}

/// About 4 MiB of JSON (`[{"a":0},…]`): within every byte limit, hundreds of megabytes once
/// parsed into a tree of values.
fn countless_small_objects() -> String {
    format!("[{}]", vec![r#"{"a":0}"#; 512 * 1024].join(","))
}

fn assert_structure_too_large(error: &CompletionError) {
    match error {
        CompletionError::TooLarge { what, .. } => {
            assert!(what.contains("JSON structure"), "{what}");
        }
        other => panic!("expected the reply to be refused as too large, got {other:?}"),
    }
}

pub async fn a_body_of_countless_small_objects_is_too_large<F: Fixture>() {
    let reply = F::text_reply("fits").to_string();
    let body = format!(r#"{{"pad":{},{}"#, countless_small_objects(), &reply[1..]);
    let json = [("content-type", "application/json")];
    let server = Hostile::always(Reply::fixed(200, &json, body)).await;
    let model = model_of_hostile::<F>(&server);
    let error = within(60, model.completion(&prompt("hi")))
        .await
        .unwrap_err();
    assert_structure_too_large(&error);
}

pub async fn an_event_of_countless_small_objects_is_too_large<F: Fixture>() {
    let mut events = vec![format!(
        "data: {{\"pad\":{}}}\n\n",
        countless_small_objects()
    )];
    events.extend(F::text_stream(&["fits"]));
    let server = Hostile::always(Reply::events(&events).finish()).await;
    let (_, end) = within(60, drain(&model_of_hostile::<F>(&server), &prompt("hi"))).await;
    assert_structure_too_large(&end.unwrap_err());
}

#[test]
fn default_limits_take_large_replies() {
    assert!(Limits::default().body >= 8 * MIB);
}

pub async fn the_total_deadline_ends_a_call_that_never_finishes<F: Fixture>() {
    let deadline = Timeouts {
        total: Duration::from_millis(800),
        ..test_timeouts()
    };
    let settings = Settings::default()
        .retry(RetryPolicy::none())
        .timeouts(deadline);

    // Keep-alive comments every 100 ms keep the idle timeout from ever firing.
    let pings = Reply::chunked(200, "text/event-stream").repeat(
        b": ping\n\n",
        Duration::from_millis(100),
        600,
    );
    let server = Hostile::always(pings).await;
    let model = model_at::<F>(&server.url(), &settings);
    let (_, end) = within(10, drain(&model, &prompt("hi"))).await;
    let error = end.unwrap_err();
    assert!(matches!(error, CompletionError::Timeout(_)), "{error:?}");

    // A blocking body trickling in (JSON whitespace) the same way.
    let trickle =
        Reply::chunked(200, "application/json").repeat(b" ", Duration::from_millis(100), 600);
    let server = Hostile::always(trickle).await;
    let model = model_at::<F>(&server.url(), &settings);
    let error = within(10, model.completion(&prompt("hi")))
        .await
        .unwrap_err();
    assert!(matches!(error, CompletionError::Timeout(_)), "{error:?}");

    // Retries count too: the policy alone would go on for minutes.
    let server = Hostile::always(Reply::fixed(503, &[("retry-after", "0")], "busy")).await;
    let endless = RetryPolicy {
        max_retries: 10_000,
        initial_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_millis(50),
    };
    let model = model_at::<F>(&server.url(), &settings.clone().retry(endless));
    let result = within(10, model.completion(&prompt("hi"))).await;
    assert!(result.is_err());
}

pub async fn timeouts_too_long_for_the_clock_mean_no_limit<F: Fixture>() {
    // `Duration::MAX` is how a caller says "no limit"; it must not overflow the clock.
    let unbounded = Timeouts {
        connect: Duration::from_secs(10),
        first_byte: Duration::MAX,
        idle: Duration::MAX,
        total: Duration::MAX,
    };
    let settings = Settings::default()
        .retry(RetryPolicy::none())
        .timeouts(unbounded);
    let server = Hostile::always(Reply::json(&F::text_reply("still here"))).await;
    let model = model_at::<F>(&server.url(), &settings);
    let response = within(10, model.completion(&prompt("hi"))).await;
    assert_eq!(response.unwrap().text(), "still here");
    let events = F::text_stream(&["streamed"]);
    let reply = Reply::events(&events).finish();
    let server = Hostile::always(reply).await;
    let model = model_at::<F>(&server.url(), &settings);
    let (_, end) = within(10, drain(&model, &prompt("hi"))).await;
    assert_eq!(end.unwrap().text(), "streamed");
}

pub async fn a_page_that_is_not_an_event_stream_is_a_decode_error_quoting_it<F: Fixture>() {
    let pages = [
        (
            "text/html",
            "<html><body>502 Bad Gateway</body></html>",
            "<html>",
        ),
        (
            "application/json",
            r#"{"error": {"message": "streaming is off"}}"#,
            r#"{"error""#,
        ),
    ];
    for (content_type, body, start) in pages {
        let server =
            Hostile::always(Reply::fixed(200, &[("content-type", content_type)], body)).await;
        let (_, end) = within(10, drain(&model_of_hostile::<F>(&server), &prompt("hi"))).await;
        match end {
            Err(CompletionError::Decode(message)) => {
                assert!(message.contains(content_type), "{message}");
                assert!(message.contains(start), "{message}");
            }
            other => panic!("expected a decode error for {content_type}, got {other:?}"),
        }
    }
}

pub async fn an_error_body_sent_as_an_event_stream_is_quoted_in_the_error<F: Fixture>() {
    // A proxy answers 200 with an event-stream type, then a JSON error instead of events.
    let body = F::error_body("quota exceeded for this project").to_string();
    let reply = Reply::chunked(200, "text/event-stream")
        .chunk(format!("{body}\n").as_bytes())
        .finish();
    let server = Hostile::always(reply).await;
    let (_, end) = within(10, drain(&model_of_hostile::<F>(&server), &prompt("hi"))).await;
    match end {
        Err(CompletionError::Decode(message)) => {
            assert!(
                message.contains("quota exceeded for this project"),
                "{message}"
            );
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
}

pub async fn a_stream_broken_mid_body_says_what_was_received<F: Fixture>() {
    let events = F::text_stream(&["Hello ", "there."]);
    let server = Hostile::always(Reply::events(&events[..2])).await;
    let (_, end) = within(10, drain(&model_of_hostile::<F>(&server), &prompt("hi"))).await;
    let message = end.unwrap_err().to_string();
    assert!(
        message.contains("event") || message.contains("received"),
        "a bare transport error does not say what arrived: {message}"
    );
}

/// The default model of `F` at a hostile server, without retries (each reply is final).
fn model_of_hostile<F: Fixture>(server: &Hostile) -> F::Model {
    model_at::<F>(
        &server.url(),
        &Settings::default().retry(RetryPolicy::none()),
    )
}
