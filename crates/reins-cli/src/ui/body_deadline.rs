//! A deadline for a request's body. Its head must arrive in time ([`super::listening`]), but
//! a client may then announce a large form and send it a byte a second, holding one of the
//! inbox's few connections (and the task reading it) for as long as it likes — before its
//! token is read, so anyone reaching the port can. A body must arrive whole within
//! [`BODY_TIMEOUT`] of its head; past it, the request is answered 408 with a page saying why,
//! and the connection is closed.

use super::listening::internal_timeout;
use super::refused;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Sleep;

/// How long a request's body may take to arrive, from its head to its last byte: a person's
/// form takes a fraction of a second, the largest one the inbox takes (a few hundred KiB)
/// a few seconds on a slow network.
const BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// Internal, for reins's own tests (like the deadline for a request's head): [`BODY_TIMEOUT`]
/// in milliseconds. Not a setting: it is not documented for users and may go.
const BODY_TIMEOUT_ENV: &str = "REINS_INTERNAL_UI_BODY_TIMEOUT_MS";

/// [`BODY_TIMEOUT`], or the internal [`BODY_TIMEOUT_ENV`]'s when set.
pub(super) fn timeout() -> Result<Duration, String> {
    internal_timeout(BODY_TIMEOUT, BODY_TIMEOUT_ENV)
}

/// Answers the request with its body bounded by `timeout`; when the body took longer (whatever
/// the handler made of the body cut short), 408 and a closed connection instead.
pub(super) async fn within(
    State(timeout): State<Duration>,
    request: Request,
    next: Next,
) -> Response {
    let late = Arc::new(AtomicBool::new(false));
    let (parts, body) = request.into_parts();
    let body = Body::new(Timed {
        body,
        deadline: Box::pin(tokio::time::sleep(timeout)),
        late: late.clone(),
        ended: false,
    });
    let response = next.run(Request::from_parts(parts, body)).await;
    if !late.load(Ordering::Relaxed) {
        return response;
    }
    let mut response = refused(
        StatusCode::REQUEST_TIMEOUT,
        &format!("the request's body did not arrive within {timeout:?}: send the form again"),
        None,
    );
    // The rest of the body may still be on its way: the connection can serve no other
    // request.
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// A request's body that fails once it has taken longer than its deadline, saying so in `late`.
struct Timed {
    body: Body,
    deadline: Pin<Box<Sleep>>,
    late: Arc<AtomicBool>,
    /// Arrived whole: late no more, however long the handler takes.
    ended: bool,
}

impl HttpBody for Timed {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(None);
        }
        // Polled first, so that its timer wakes the reader even when no byte comes.
        if this.deadline.as_mut().poll(cx).is_ready() {
            this.late.store(true, Ordering::Relaxed);
            return Poll::Ready(Some(Err(axum::Error::new(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the request's body did not arrive in time",
            )))));
        }
        let frame = Pin::new(&mut this.body).poll_frame(cx);
        this.ended = matches!(frame, Poll::Ready(None));
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.ended || self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
