//! Reading an answer of Restate's ingress, up to a bound.

use crate::client_error::ClientError;

/// The most bytes [`RestateRuns`](crate::RestateRuns) reads of one answer of the ingress:
/// 64 MiB, twice the largest message Restate takes by default (a run's output is one).
///
/// Why a bound: the answer is read whole before it is decoded, and an address that is no
/// Restate ingress (a mistyped port, a hostile or broken server) could send without end.
pub const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;

/// The body of `response` as text, or [`ClientError::Decode`] once it passes `limit` bytes
/// (the rest is not read); `failed` says why the transfer broke.
pub(crate) async fn read_answer(
    response: reqwest::Response,
    limit: usize,
    failed: impl Fn(reqwest::Error) -> ClientError,
) -> Result<String, ClientError> {
    let (body, more) = read_at_most(response, limit, failed).await?;
    if more {
        return Err(ClientError::Decode(format!(
            "the answer passed {limit} bytes, more than any answer of Restate's ingress \
             holds: is this the ingress's address?"
        )));
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// The first `limit` bytes of `response`'s body, and whether it held more (the rest is not
/// read: an endless body ends here, not at the call's timeout); `failed` says why the
/// transfer broke.
pub(crate) async fn read_at_most(
    mut response: reqwest::Response,
    limit: usize,
    failed: impl Fn(reqwest::Error) -> ClientError,
) -> Result<(Vec<u8>, bool), ClientError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(&failed)? {
        let room = limit.saturating_sub(body.len());
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

/// How many characters of a refusal's body [`excerpt`] keeps: enough for a server's reason
/// (Restate's are one JSON line), not a proxy's whole error page.
pub(crate) const EXCERPT_CHARS: usize = 300;

/// `body` (of which more was left unread when `more`) as one short line to quote in an error:
/// every run of white space one space, the first [`EXCERPT_CHARS`] characters, `…` when some
/// were left out, and control characters (a terminal's escape sequences among them) shown as
/// `\u001b`-style escapes, never sent to the terminal.
pub(crate) fn excerpt(body: &[u8], more: bool) -> String {
    let text = String::from_utf8_lossy(body);
    let mut words = text
        .split_whitespace()
        .flat_map(|word| std::iter::once(' ').chain(word.chars()));
    // The first word's leading space is not part of the excerpt.
    words.next();
    let mut shown: String = words.by_ref().take(EXCERPT_CHARS).collect();
    if more || words.next().is_some() {
        shown.push('…');
    }
    reins::text::printable(&shown).into_owned()
}

#[cfg(test)]
mod tests {
    use super::{EXCERPT_CHARS, excerpt};
    use crate::stand_ins::endless_server;
    use crate::{ClientError, RestateRuns};

    /// A server that answers every call with an endless body: the client stops reading at
    /// its bound and says why, instead of holding all of it in memory.
    #[tokio::test]
    async fn an_endless_answer_is_refused_past_the_bound() {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                    connection: close\r\n\r\n[";
        let (address, endless) = endless_server(head, &[b'1'; 64 * 1024]).await;
        let runs = RestateRuns::new(&format!("http://{address}")).unwrap();
        let answer = runs.output("r1").await;
        let said = match answer {
            Err(ClientError::Decode(said)) => said,
            other => panic!("expected a refusal, got {other:?}"),
        };
        assert!(said.contains("is this the ingress's address?"), "{said}");
        endless.abort();
    }

    /// A proxy's error page is quoted as one short line, its escape sequences shown as text.
    #[test]
    fn an_excerpt_is_one_short_line_without_control_characters() {
        let page = format!(
            "<html>\n  <title>\u{1b}[31m502 Bad Gateway</title>\r\n{}</html>",
            "<p>down</p>\n".repeat(1000)
        );
        let shown = excerpt(page.as_bytes(), false);
        assert!(
            shown.starts_with("<html> <title>\\u001b[31m502 Bad Gateway</title> <p>down</p>"),
            "{shown}"
        );
        assert!(shown.ends_with('…'), "{shown}");
        assert!(shown.chars().count() < EXCERPT_CHARS + 10, "{shown}");
        assert!(!shown.chars().any(char::is_control), "{shown}");
        assert_eq!(excerpt(b"  no  service\n", false), "no service");
        assert_eq!(excerpt(b"cut", true), "cut…");
    }
}
