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
    mut response: reqwest::Response,
    limit: usize,
    failed: impl Fn(reqwest::Error) -> ClientError,
) -> Result<String, ClientError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(&failed)? {
        if body.len().saturating_add(chunk.len()) > limit {
            return Err(ClientError::Decode(format!(
                "the answer passed {limit} bytes, more than any answer of Restate's ingress \
                 holds: is this the ingress's address?"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

#[cfg(test)]
mod tests {
    use crate::{ClientError, RestateRuns};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A server that answers every call with an endless body: the client stops reading at
    /// its bound and says why, instead of holding all of it in memory.
    #[tokio::test]
    async fn an_endless_answer_is_refused_past_the_bound() {
        let server = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = server.local_addr().unwrap();
        let endless = tokio::spawn(async move {
            while let Ok((mut stream, _)) = server.accept().await {
                tokio::spawn(async move {
                    let mut request = [0u8; 4096];
                    let _ = stream.read(&mut request).await;
                    let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                                connection: close\r\n\r\n[";
                    if stream.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    let block = vec![b'1'; 64 * 1024];
                    loop {
                        if stream.write_all(&block).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        let runs = RestateRuns::new(&format!("http://{address}")).unwrap();
        let answer = runs.output("r1").await;
        let said = match answer {
            Err(ClientError::Decode(said)) => said,
            other => panic!("expected a refusal, got {other:?}"),
        };
        assert!(said.contains("is this the ingress's address?"), "{said}");
        endless.abort();
    }
}
