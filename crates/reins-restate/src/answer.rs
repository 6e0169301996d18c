//! Reading an answer of Restate's ingress or admin API, up to a bound, and quoting a refusal.

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

/// The most bytes read of an answer with an error status (the ingress's or the admin API's)
/// to quote in the error: its reason is one JSON line, and an address that is no Restate API
/// (a proxy's error page, a server that sends without end) is not read further, nor quoted
/// whole.
pub(crate) const MAX_REFUSAL_BYTES: usize = 64 * 1024;

/// The body of `response`, an answer with an error status, as [`excerpt`] quotes it (of its
/// first [`MAX_REFUSAL_BYTES`], the rest unread), every one of `secrets` (the credentials the
/// call sent) masked: a server or a proxy may echo the request's headers back. A body that
/// cannot be read (the connection broke, the call's timeout passed) is not quoted.
pub(crate) async fn refusal(response: reqwest::Response, secrets: &[String]) -> String {
    let unread = |error: reqwest::Error| ClientError::Transport(crate::http::transport_text(error));
    match read_at_most(response, MAX_REFUSAL_BYTES, unread).await {
        Ok((body, more)) => excerpt(&body, more, secrets),
        Err(_) => String::new(),
    }
}

/// How many characters of a refusal's body [`excerpt`] keeps: enough for a server's reason
/// (Restate's are one JSON line), not a proxy's whole error page.
pub(crate) const EXCERPT_CHARS: usize = 300;

/// What a secret is shown as in an excerpt.
const MASKED: &str = "***";

/// The shortest start of a secret that is masked where the excerpt cuts the text inside it:
/// fewer characters tell nothing of it, and would make ordinary text look like one.
const MIN_CUT_SECRET: usize = 4;

/// `body` (of which more was left unread when `more`) as one short line to quote in an error:
/// every run of white space one space, the first [`EXCERPT_CHARS`] characters, `…` when some
/// were left out, and control characters (a terminal's escape sequences among them) shown as
/// `\u001b`-style escapes, never sent to the terminal. Every one of `secrets` is masked, and
/// its start where the excerpt ends inside it.
pub(crate) fn excerpt(body: &[u8], more: bool, secrets: &[String]) -> String {
    let mut text = String::from_utf8_lossy(body).into_owned();
    for secret in secrets.iter().filter(|secret| !secret.is_empty()) {
        text = text.replace(secret.as_str(), MASKED);
    }
    let mut words = text
        .split_whitespace()
        .flat_map(|word| std::iter::once(' ').chain(word.chars()));
    // The first word's leading space is not part of the excerpt.
    words.next();
    let mut shown: String = words.by_ref().take(EXCERPT_CHARS).collect();
    if more || words.next().is_some() {
        for secret in secrets {
            let cut = (MIN_CUT_SECRET..secret.len())
                .rev()
                .filter(|&len| secret.is_char_boundary(len))
                .find(|&len| shown.ends_with(&secret[..len]));
            if let Some(len) = cut {
                shown.truncate(shown.len() - len);
                shown.push_str(MASKED);
            }
        }
        shown.push('…');
    }
    reins::text::printable(&shown).into_owned()
}

#[cfg(test)]
mod tests {
    use super::{EXCERPT_CHARS, excerpt};
    use crate::stand_ins::endless_server;
    use crate::{ClientError, RestateRuns};
    use std::time::Duration;

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

    /// An ingress (or a proxy before it) answering an error status with a body without end,
    /// which echoes the credentials the call sent: the call ends with the status and a short
    /// excerpt of the body, the credentials masked, instead of reading up to the answer's
    /// bound (64 MiB) and quoting all of it.
    #[tokio::test]
    async fn an_endless_error_answer_is_quoted_short_without_the_credentials() {
        let head = "HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\n\
                    connection: close\r\n\r\n{\"message\": \"refused: Authorization: Bearer \
                    tok-9f8e7d (user ops:hunter2)\", \"trace\": \"";
        let (address, endless) = endless_server(head, &[b'x'; 64 * 1024]).await;
        let runs = RestateRuns::new(&format!("http://ops:hunter2@{address}"))
            .unwrap()
            .bearer_token("tok-9f8e7d")
            .unwrap();
        // A guard against a hang, far past what reading the excerpt takes.
        let guard = Duration::from_secs(60);
        let status = tokio::time::timeout(guard, runs.status("r1")).await;
        let said = match status {
            Ok(Err(error @ ClientError::Http { status: 500, .. })) => error.to_string(),
            other => panic!("expected the ingress's refusal, got {other:?}"),
        };
        assert!(
            said.starts_with(
                "the Restate ingress answered HTTP 500: {\"message\": \"refused: Authorization: \
                 Bearer *** (user ops:***)\", \"trace\": \"xxx"
            ),
            "{said}"
        );
        assert!(said.ends_with('…'), "{said}");
        assert!(said.len() < 500, "{said}");
        endless.abort();
    }

    /// A proxy's error page is quoted as one short line, its escape sequences shown as text.
    #[test]
    fn an_excerpt_is_one_short_line_without_control_characters() {
        let page = format!(
            "<html>\n  <title>\u{1b}[31m502 Bad Gateway</title>\r\n{}</html>",
            "<p>down</p>\n".repeat(1000)
        );
        let shown = excerpt(page.as_bytes(), false, &[]);
        assert!(
            shown.starts_with("<html> <title>\\u001b[31m502 Bad Gateway</title> <p>down</p>"),
            "{shown}"
        );
        assert!(shown.ends_with('…'), "{shown}");
        assert!(shown.chars().count() < EXCERPT_CHARS + 10, "{shown}");
        assert!(!shown.chars().any(char::is_control), "{shown}");
        assert_eq!(excerpt(b"  no  service\n", false, &[]), "no service");
        assert_eq!(excerpt(b"cut", true, &[]), "cut…");
    }

    /// A credential the server echoed is masked wherever it is, also where the read's bound
    /// left only its start (masked before the excerpt is cut, a whole one never straddles
    /// the cut); text that merely ends like a credential's first characters is kept.
    #[test]
    fn an_excerpt_masks_the_credentials_also_where_it_cuts_one() {
        let secrets = ["tok-9f8e7d".to_owned()];
        let echoed = b"Authorization: Bearer tok-9f8e7d\nhost: x";
        assert_eq!(
            excerpt(echoed, false, &secrets),
            "Authorization: Bearer *** host: x"
        );
        let straddling = format!("{} tok-9f8e7d", "x".repeat(EXCERPT_CHARS - 6));
        let shown = excerpt(straddling.as_bytes(), false, &secrets);
        assert_eq!(shown, format!("{} ***", "x".repeat(EXCERPT_CHARS - 6)));
        let read_up_to_the_cut = b"sent tok-9f";
        assert_eq!(excerpt(read_up_to_the_cut, true, &secrets), "sent ***…");
        assert_eq!(excerpt(b"at tok", true, &secrets), "at tok…");
    }
}
