//! Redirects: a credential sent to another origin is a leaked credential, so reins follows
//! no redirect by default, and at most same-origin ones when asked to.

use crate::providers::fixtures::{Fixture, Settings, model_at};
use crate::providers::hostile::{Hostile, Recorded, Reply};
use crate::providers::support::{KEY, call, prompt, sse_body, within};
use reins::completion::CompletionError;
use reins::providers::Redirects;

const CUSTOM_TOKEN: &str = "custom-token-value-42";

/// Every header that carries a credential in some provider, and the custom one the tests add.
const CREDENTIAL_HEADERS: [&str; 5] = [
    "authorization",
    "x-api-key",
    "x-goog-api-key",
    "api-key",
    "x-custom-token",
];

fn settings() -> Settings {
    Settings::default().header("x-custom-token", CUSTOM_TOKEN)
}

fn following_same_origin() -> Settings {
    settings().redirects(Redirects::SameOrigin { max: 3 })
}

fn path_of<F: Fixture>(stream: bool) -> &'static str {
    if stream {
        F::stream_path()
    } else {
        F::blocking_path()
    }
}

/// A successful reply of protocol `F`, blocking or streamed.
fn success<F: Fixture>(stream: bool, text: &str) -> Reply {
    if stream {
        let (head, tail) = text.split_at(text.len() / 2);
        Reply::chunked(200, "text/event-stream")
            .chunk(sse_body(&F::text_stream(&[head, tail])).as_bytes())
            .finish()
    } else {
        Reply::json(&F::text_reply(text))
    }
}

/// `requests` carry no credential, under any header name or in the URL.
pub fn assert_no_credentials(requests: &[Recorded]) {
    for request in requests {
        for name in CREDENTIAL_HEADERS {
            assert!(
                request.header(name).is_none(),
                "`{name}` reached another origin: {request:?}"
            );
        }
        let everything = format!("{} {:?}", request.target, request.headers);
        assert!(!everything.contains(KEY), "{everything}");
        assert!(!everything.contains(CUSTOM_TOKEN), "{everything}");
    }
}

/// `error` is a refused redirect whose location names `to`.
fn assert_redirected(error: &CompletionError, to: &str) {
    match error {
        CompletionError::Redirected { status, location } => {
            assert_eq!(*status, 307);
            assert!(location.contains(to), "{location} does not name {to}");
        }
        other => panic!("expected a refused redirect, got {other:?}"),
    }
}

pub async fn a_cross_origin_redirect_fails_and_carries_no_credentials<F: Fixture>() {
    for stream in [false, true] {
        let other = Hostile::always(success::<F>(stream, "stolen")).await;
        let target = format!("{}{}", other.url(), path_of::<F>(stream));
        let origin = Hostile::always(Reply::redirect(307, &target)).await;
        // Default builder: no redirect is followed at all.
        let model = model_at::<F>(&origin.url(), &settings());
        let error = within(10, call(&model, &prompt("hi"), stream))
            .await
            .unwrap_err();
        assert_redirected(&error, &other.url());
        assert_no_credentials(&other.requests());
        assert!(!origin.requests().is_empty());
    }
}

pub async fn a_cross_origin_redirect_fails_even_when_redirects_are_allowed<F: Fixture>() {
    for stream in [false, true] {
        let other = Hostile::always(success::<F>(stream, "stolen")).await;
        let target = format!("{}{}", other.url(), path_of::<F>(stream));
        let origin = Hostile::always(Reply::redirect(307, &target)).await;
        let model = model_at::<F>(&origin.url(), &following_same_origin());
        let error = within(10, call(&model, &prompt("hi"), stream))
            .await
            .unwrap_err();
        assert_redirected(&error, &other.url());
        assert_no_credentials(&other.requests());
    }
}

pub async fn a_same_origin_redirect_is_followed_only_when_allowed<F: Fixture>() {
    for stream in [false, true] {
        let script = |url: &str| {
            vec![
                Reply::redirect(307, &format!("{url}/moved/here")),
                success::<F>(stream, "moved"),
            ]
        };

        let refusing = Hostile::start_with(script).await;
        let model = model_at::<F>(&refusing.url(), &settings());
        let error = within(10, call(&model, &prompt("hi"), stream))
            .await
            .unwrap_err();
        assert_redirected(&error, "/moved/here");
        assert_eq!(
            refusing.requests().len(),
            1,
            "a default client does not follow"
        );

        let following = Hostile::start_with(script).await;
        let model = model_at::<F>(&following.url(), &following_same_origin());
        let response = within(10, call(&model, &prompt("hi"), stream))
            .await
            .unwrap_or_else(|error| panic!("stream: {stream}: {error:?}"));
        assert_eq!(response.text(), "moved");
        let requests = following.requests();
        assert_eq!(requests.len(), 2);
        let (first, moved) = (&requests[0], &requests[1]);
        assert_eq!(moved.target, "/moved/here");
        // A 307 repeats the request as it was: method, body and (same origin) credentials.
        assert_eq!(moved.method, "POST");
        assert_eq!(moved.body, first.body);
        let (name, value) = F::auth(KEY);
        assert_eq!(moved.header(name), Some(value.as_str()));
    }
}

#[tokio::test]
async fn a_compatible_server_redirecting_elsewhere_gets_no_credentials() {
    use crate::providers::fixtures::chat::Chat;
    use reins::providers::openai_compatible::OpenAICompatible;
    let other = Hostile::always(success::<Chat>(false, "stolen")).await;
    let target = format!("{}/v1/chat/completions", other.url());
    let origin = Hostile::always(Reply::redirect(307, &target)).await;
    // Azure-style gateways take the key in `api-key`.
    let model = OpenAICompatible::builder(format!("{}/v1", origin.url()))
        .api_key(KEY)
        .header("api-key", KEY)
        .header("x-custom-token", CUSTOM_TOKEN)
        .retry(crate::providers::support::fast_retries())
        .build()
        .unwrap()
        .completion("local-model");
    let error = within(10, call(&model, &prompt("hi"), false))
        .await
        .unwrap_err();
    assert_redirected(&error, &other.url());
    assert_no_credentials(&other.requests());
}
