//! A server on loopback answering every request with one event stream, for the hosted
//! protocols no mock server here speaks (Gemini's, OpenAI's Responses API): it records each
//! request's path and headers.

use axum::Router;
use axum::http::{HeaderMap, Uri};
use std::sync::{Arc, Mutex};

/// A request as the server saw it: its path with query, and its headers.
pub type Seen = Arc<Mutex<Vec<(String, HeaderMap)>>>;

/// Starts the server on a thread of its own, answering `events` (each sent as one
/// `data:` line) to every request: its `http://address` and what it sees.
pub fn sse_server(events: &[serde_json::Value]) -> (String, Seen) {
    let body: String = events
        .iter()
        .map(|event| format!("data: {event}\n\n"))
        .collect();
    let seen: Seen = Arc::default();
    let recorded = Arc::clone(&seen);
    let answer = move |uri: Uri, headers: HeaderMap| {
        let (recorded, body) = (Arc::clone(&recorded), body.clone());
        async move {
            recorded.lock().unwrap().push((uri.to_string(), headers));
            ([("content-type", "text/event-stream")], body)
        }
    };
    let address = serve_on_a_thread(Router::new().fallback(answer));
    (format!("http://{address}"), seen)
}

/// Serves `router` on loopback from a thread of its own, for as long as the test process
/// lives: the address it listens on.
pub fn serve_on_a_thread(router: Router) -> std::net::SocketAddr {
    let (address_tx, address_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            address_tx.send(listener.local_addr().unwrap()).unwrap();
            axum::serve(listener, router).await.unwrap();
        });
    });
    address_rx.recv().unwrap()
}
