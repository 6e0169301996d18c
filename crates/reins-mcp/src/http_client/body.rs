//! A body of a server's answer read bounded: whole up to [`MAX_MESSAGE_BYTES`], else its
//! start only (the rest left unread, the connection closed).

use crate::weighed::{MAX_MESSAGE_BYTES, TOO_LONG_HEAD_BYTES};
use futures::StreamExt;

/// A JSON body, as far as it was read.
pub(super) enum Body {
    Whole(Vec<u8>),
    /// Longer than [`MAX_MESSAGE_BYTES`]: its start, and how much was read.
    Cut {
        head: Vec<u8>,
        read: usize,
    },
}

/// Reads a body up to [`MAX_MESSAGE_BYTES`]; past that, keeps its start and reads no more.
pub(super) async fn read_body(response: reqwest::Response) -> Result<Body, reqwest::Error> {
    let mut chunks = std::pin::pin!(body_stream(response));
    let mut body = Vec::new();
    while let Some(chunk) = chunks.next().await.transpose()? {
        if body.len().saturating_add(chunk.len()) > MAX_MESSAGE_BYTES {
            let read = body.len().saturating_add(chunk.len());
            let wanted = TOO_LONG_HEAD_BYTES.saturating_sub(body.len());
            body.extend_from_slice(&chunk[..chunk.len().min(wanted)]);
            body.truncate(TOO_LONG_HEAD_BYTES);
            body.shrink_to_fit();
            return Ok(Body::Cut { head: body, read });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Body::Whole(body))
}

/// Reads at most `limit` bytes of a body, for an error's diagnostic.
pub(super) async fn read_start(
    response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, reqwest::Error> {
    let mut chunks = std::pin::pin!(body_stream(response));
    let mut start = Vec::new();
    while start.len() < limit {
        let Some(chunk) = chunks.next().await.transpose()? else {
            break;
        };
        let wanted = limit - start.len();
        start.extend_from_slice(&chunk[..chunk.len().min(wanted)]);
    }
    Ok(start)
}

/// At most `limit` bytes of `body` as text.
pub(super) fn lossy_start(body: &Body, limit: usize) -> String {
    let text = match body {
        Body::Whole(text) => text,
        Body::Cut { head, .. } => head,
    };
    String::from_utf8_lossy(&text[..text.len().min(limit)]).into_owned()
}

/// `text` without the byte-order mark it may start with (RFC 8259 lets a parser ignore it).
pub(super) fn without_bom(text: &[u8]) -> &[u8] {
    text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text)
}

/// `error` without the URL it quotes. The URL as given may hold a credential (its query, its
/// user information), and reqwest quotes it in its normal form (host in lower case, a `/`
/// path added), which the scrubbing of errors, looking for the URL as written, would miss;
/// the error names the server already (by the URL without them).
pub(super) fn unquoted(error: reqwest::Error) -> reqwest::Error {
    error.without_url()
}

/// The body of `response`, its errors [`unquoted`].
pub(super) fn body_stream(
    response: reqwest::Response,
) -> impl futures::Stream<Item = Result<bytes::Bytes, reqwest::Error>> + Send + 'static {
    futures::TryStreamExt::map_err(response.bytes_stream(), unquoted)
}
