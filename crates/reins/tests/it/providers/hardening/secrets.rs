//! Secrets in logs: whatever the header is called, a credential does not show in `Debug`
//! output, and a provider echoing the key back does not put it in an error, nor in an answer
//! (which a run keeps in its history, its store and its traces).

use crate::providers::fixtures::{Fixture, Settings, model_at};
use crate::providers::hostile::{Hostile, Reply};
use crate::providers::support::{call, drain, prompt};
use reins::completion::{CompletionError, CompletionModel, StreamChunk};
use reins::providers::RetryPolicy;

const LIVE_KEY: &str = "sk-live-XYZ0123456789abcdef";

pub async fn credentials_never_show_in_debug_output<F: Fixture>() {
    let secrets = [
        LIVE_KEY,
        "sekrit-value",
        "abc123secret",
        "sk-proj-otherkey987",
    ];
    let settings = Settings::default()
        .key(LIVE_KEY)
        // A name reins knows is a credential,
        .header("x-custom-token", "sekrit-value")
        // and names it cannot know, with values that look like credentials.
        .header("x-weird", "Bearer abc123secret")
        .header("x-other", "sk-proj-otherkey987");
    let builder = F::builder("http://127.0.0.1:9", &settings);
    let mut shown = vec![format!("{builder:?}"), format!("{builder:#?}")];
    let client = F::build(builder).unwrap();
    let model = F::model(&client);
    shown.extend([
        format!("{client:?}"),
        format!("{client:#?}"),
        format!("{model:?}"),
    ]);
    for text in &shown {
        for secret in secrets {
            assert!(!text.contains(secret), "`{secret}` shows in {text}");
        }
    }
}

pub async fn an_error_body_echoing_the_key_does_not_show_it<F: Fixture>() {
    // Whole, and spelled with a JSON escape (`\u002d` for its first `-`).
    let escaped = LIVE_KEY.replacen('-', "\\u002d", 1);
    let body = format!(r#"{{"error": "bad key {LIVE_KEY}", "echo": "{escaped}"}}"#);
    let (_, tail) = LIVE_KEY.split_once('-').unwrap();
    let server = Hostile::always(Reply::fixed(
        401,
        &[("content-type", "application/json")],
        body,
    ))
    .await;
    let settings = Settings::default().key(LIVE_KEY).retry(RetryPolicy::none());
    let model = model_at::<F>(&server.url(), &settings);
    for shown in shown_401s(&model).await {
        assert!(!shown.contains(LIVE_KEY), "{shown}");
        assert!(!shown.contains(tail), "{shown}");
    }
}

pub async fn an_error_body_echoing_the_key_percent_encoded_does_not_show_it<F: Fixture>() {
    // A key with characters a URL encodes, echoed as a URL or query string would carry it:
    // its reserved characters encoded (upper- and lower-case hex), and every byte encoded.
    const KEY: &str = "sk-live-QR7/w9+Zt=mnPX42";
    let encoded = KEY
        .replace('/', "%2F")
        .replace('+', "%2B")
        .replace('=', "%3D");
    let lower_hex = KEY
        .replace('/', "%2f")
        .replace('+', "%2b")
        .replace('=', "%3d");
    let every_byte: String = KEY
        .bytes()
        .enumerate()
        .map(|(at, byte)| {
            if at % 2 == 0 {
                format!("%{byte:02X}")
            } else {
                format!("%{byte:02x}")
            }
        })
        .collect();
    let body = format!(
        r#"{{"error": "invalid key", "request": "https://api.test/v1?key={encoded}", "also": "key={lower_hex}&k={every_byte}"}}"#
    );
    let server = Hostile::always(Reply::fixed(
        401,
        &[("content-type", "application/json")],
        body,
    ))
    .await;
    let settings = Settings::default().key(KEY).retry(RetryPolicy::none());
    let model = model_at::<F>(&server.url(), &settings);
    for shown in shown_401s(&model).await {
        assert!(shown.contains("invalid key"), "{shown}");
        let shown = shown.to_ascii_lowercase();
        for spelling in [&encoded, &lower_hex, &every_byte] {
            assert!(!shown.contains(&spelling.to_ascii_lowercase()), "{shown}");
        }
        // Not even the key's end, in any spelling.
        assert!(!shown.contains("mnpx42"), "{shown}");
        assert!(!shown.contains("%6d%6e%50%58%34%32"), "{shown}");
    }
}

/// What the error of a call of `model`, blocking and streamed, shows (`Display` and `Debug`),
/// once checked to be the HTTP 401 the server answered.
async fn shown_401s(model: &impl CompletionModel) -> Vec<String> {
    let mut shown = Vec::new();
    for stream in [false, true] {
        let error = call(model, &prompt("hi"), stream).await.unwrap_err();
        assert!(
            matches!(error, CompletionError::Http { status: 401, .. }),
            "{error:?}"
        );
        shown.push(format!("{error} {error:?}"));
    }
    shown
}

pub async fn an_error_echoing_a_credential_header_does_not_show_it<F: Fixture>() {
    let body = r#"{"error": "bad headers: x-custom-token=sekrit-value, token abc123secret"}"#;
    let server = Hostile::always(Reply::fixed(
        403,
        &[("content-type", "application/json")],
        body,
    ))
    .await;
    let settings = Settings::default()
        .header("x-custom-token", "sekrit-value")
        .header("x-weird", "Bearer abc123secret")
        .retry(RetryPolicy::none());
    let model = model_at::<F>(&server.url(), &settings);
    for stream in [false, true] {
        let error = call(&model, &prompt("hi"), stream).await.unwrap_err();
        let shown = format!("{error} {error:?}");
        assert!(shown.contains("bad headers"), "{shown}");
        for secret in ["sekrit-value", "abc123secret"] {
            assert!(!shown.contains(secret), "`{secret}` shows in {shown}");
        }
    }
}

pub async fn an_error_quoting_only_the_start_of_a_credential_does_not_show_it<F: Fixture>() {
    const HEADER_SECRET: &str = "sekrit-header-value-0123456789";
    let with_key = Settings::default().key(LIVE_KEY);
    let with_header = Settings::default().header("x-custom-token", HEADER_SECRET);
    for (secret, settings) in [(LIVE_KEY, with_key), (HEADER_SECRET, with_header)] {
        // The quoted start of a long body ends inside the secret: no part of it may show.
        let padding = "x".repeat(2_048 - 10);
        let body = format!("{padding}{secret} and more after it");
        let reply = Reply::fixed(401, &[("content-type", "text/plain")], body);
        let server = Hostile::always(reply).await;
        let model = model_at::<F>(&server.url(), &settings.retry(RetryPolicy::none()));
        for shown in shown_401s(&model).await {
            assert!(!shown.contains(&secret[..10]), "{shown}");
        }
    }
}

pub async fn an_answer_echoing_the_key_does_not_show_it<F: Fixture>() {
    // The key split across the streamed fragments, as a server that means to slip it past a
    // fragment-by-fragment check would send it.
    let pieces = [
        "Your key is sk-li",
        "ve-XYZ01234",
        "56789abcdef",
        ", keep it safe.",
    ];
    let whole = pieces.concat();
    assert!(whole.contains(LIVE_KEY));
    let server = Hostile::start(vec![
        Reply::json(&F::text_reply(&whole)),
        Reply::fixed(
            200,
            &[("content-type", "text/event-stream")],
            F::text_stream(&pieces).concat(),
        ),
    ])
    .await;
    let settings = Settings::default().key(LIVE_KEY).retry(RetryPolicy::none());
    let model = model_at::<F>(&server.url(), &settings);
    let scrubbed = "Your key is <redacted>, keep it safe.";
    let answer = model.completion(&prompt("hi")).await.unwrap();
    assert_eq!(answer.text(), scrubbed);
    let (chunks, end) = drain(&model, &prompt("hi")).await;
    let end = end.unwrap();
    assert_eq!(end.text(), scrubbed);
    // Nor in the provider's own JSON kept with the response (its `Debug` output shows it).
    for response in [&answer, &end] {
        let shown = format!("{response:?}");
        assert!(!shown.contains(LIVE_KEY), "{shown}");
    }
    let streamed: String = chunks
        .iter()
        .map(|chunk| match chunk {
            StreamChunk::Text(text) => text.as_str(),
            _ => "",
        })
        .collect();
    assert_eq!(streamed, scrubbed);
    // No fragment shows even the start of the key.
    for chunk in &chunks {
        assert!(!format!("{chunk:?}").contains("sk-li"), "{chunk:?}");
    }
}

#[tokio::test]
async fn a_credential_in_the_query_shows_in_no_debug_output_or_error() {
    use crate::providers::support::unreachable_root;
    use reins::completion::CompletionModel;
    use reins::providers::openai::OpenAI;

    // Some gateways (and Gemini's older form) take the key, or a signature, in the URL.
    let secret = "AIzaQuerySecret0123456789";
    let builder = OpenAI::builder()
        .base_url(unreachable_root())
        .query("key", secret)
        .query("api-version", "2024-10-21")
        .retry(RetryPolicy::none());
    let mut shown = vec![format!("{builder:?}")];
    let model = builder.build().unwrap().completion("gpt-4o-mini");
    shown.push(format!("{model:?}"));
    let error = model.completion(&prompt("hi")).await.unwrap_err();
    shown.push(format!("{error} {error:?}"));
    for text in &shown {
        assert!(!text.contains(secret), "the query's key shows in {text}");
    }
    // What is not a credential still shows, for debugging.
    assert!(shown[0].contains("2024-10-21"), "{}", shown[0]);
}

#[tokio::test]
async fn a_transport_error_names_the_endpoint_without_the_url_s_credentials() {
    use crate::providers::hostile::{Hostile, Reply};
    use crate::providers::support::unreachable_root;
    use reins::providers::openai::OpenAI;

    // A password in the user info, a credential in the base URL's own query, and a query
    // parameter whose name says nothing of what it holds (Azure Functions' `code`).
    let secrets = [
        "hunter2-userinfo",
        "base-query-secret-42",
        "azfn-code-0123456789",
    ];
    let reset = Hostile::always(Reply::reset()).await;
    for root in [unreachable_root(), reset.url()] {
        let address = root.trim_start_matches("http://");
        let base_url =
            format!("http://alice:hunter2-userinfo@{address}/v1?state=base-query-secret-42&x=1");
        let model = OpenAI::builder()
            .base_url(base_url)
            .query("code", "azfn-code-0123456789")
            .retry(RetryPolicy::none())
            .build()
            .unwrap()
            .completion("gpt-4o-mini");
        for stream in [false, true] {
            let error = call(&model, &prompt("hi"), stream).await.unwrap_err();
            assert!(matches!(error, CompletionError::Transport(_)), "{error:?}");
            let shown = format!("{error} {error:?}");
            for secret in secrets {
                assert!(!shown.contains(secret), "`{secret}` shows in {shown}");
            }
            // Where the call went still shows, for whoever reads the error.
            assert!(shown.contains(&format!("http://{address}/v1")), "{shown}");
        }
    }
}

#[test]
fn a_refused_base_url_is_named_without_its_credentials() {
    use reins::providers::openai::OpenAI;

    // Not http(s), and a port out of range (which does not parse at all).
    for base_url in [
        "ftp://alice:hunter2-userinfo@example.com/v1?key=base-query-secret-42",
        "http://alice:hunter2-userinfo@example.com:99999/v1?key=base-query-secret-42",
    ] {
        let error = OpenAI::builder().base_url(base_url).build().unwrap_err();
        let shown = format!("{error} {error:?}");
        for secret in ["hunter2-userinfo", "base-query-secret-42"] {
            assert!(!shown.contains(secret), "`{secret}` shows in {shown}");
        }
        assert!(shown.contains("example.com"), "{shown}");
    }
}

#[test]
fn a_key_in_the_base_url_s_path_shows_in_no_debug_output_or_refusal() {
    use reins::providers::openai::OpenAI;

    // Some gateways take the key as a part of the path.
    let builder = OpenAI::builder()
        .api_key(LIVE_KEY)
        .base_url(format!("https://gateway.example.com/{LIVE_KEY}/v1"));
    let mut shown = vec![format!("{builder:?}"), format!("{builder:#?}")];
    let refused = OpenAI::builder()
        .api_key(LIVE_KEY)
        .base_url(format!("ftp://gateway.example.com/{LIVE_KEY}/v1"))
        .build()
        .unwrap_err();
    shown.push(format!("{refused} {refused:?}"));
    for text in &shown {
        assert!(!text.contains(LIVE_KEY), "the key shows in {text}");
        // Where the URL points still shows, for debugging.
        assert!(text.contains("gateway.example.com"), "{text}");
    }
}
