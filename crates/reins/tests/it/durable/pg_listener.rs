//! The PostgreSQL decision listener notices a connection that died without closing: between
//! the store and the server, a loopback proxy stops forwarding (as a host that vanished, or a
//! network path cut, would), and a decision made meanwhile still wakes the watch.

use super::{Seen, agent, decide, script};
use reins::agent::{PromptError, ToolDecision};
use reins::store::{PostgresStore, RunStore};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A TCP proxy on loopback to `upstream` whose connections can be frozen: they stay open but
/// forward nothing more. Connections made after a freeze forward as usual.
struct FreezableProxy {
    port: u16,
    /// One flag per connection made so far.
    connections: Arc<Mutex<Vec<Arc<AtomicBool>>>>,
}

impl FreezableProxy {
    async fn start(upstream: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections: Arc<Mutex<Vec<Arc<AtomicBool>>>> = Arc::default();
        let made = connections.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(&upstream).await else {
                    continue;
                };
                let frozen = Arc::new(AtomicBool::new(false));
                made.lock().unwrap().push(frozen.clone());
                let (client_read, client_write) = client.into_split();
                let (server_read, server_write) = server.into_split();
                tokio::spawn(forward(client_read, server_write, frozen.clone()));
                tokio::spawn(forward(server_read, client_write, frozen));
            }
        });
        FreezableProxy { port, connections }
    }

    /// Freezes every connection made so far; returns how many.
    fn freeze(&self) -> usize {
        let connections = self.connections.lock().unwrap();
        for frozen in connections.iter() {
            frozen.store(true, Ordering::SeqCst);
        }
        connections.len()
    }
}

/// Copies `from` to `to` until either closes, or for ever holding both once `frozen`.
async fn forward(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    frozen: Arc<AtomicBool>,
) {
    let mut buffer = vec![0; 16 * 1024];
    loop {
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        if frozen.load(Ordering::SeqCst) {
            // Neither closed nor answered: what a dead peer looks like to TCP.
            let _held = (from, to);
            std::future::pending::<()>().await;
            return;
        }
        if to.write_all(&buffer[..read]).await.is_err() {
            return;
        }
    }
}

/// The listener's connection goes silent (the proxy stops forwarding without closing it); a
/// decision another worker makes meanwhile is not notified over it, yet the watch is woken
/// once the liveness check replaced the connection. Bounded, not timed: without the check
/// the wait fails instead of hanging.
#[tokio::test]
async fn a_silently_dead_postgres_listener_connection_is_replaced() {
    let direct = super::postgres_database().await;
    let upstream_port = direct
        .split_whitespace()
        .find_map(|pair| pair.strip_prefix("port="))
        .expect("the test server's connection string names its port")
        .to_owned();
    let proxy = FreezableProxy::start(format!("127.0.0.1:{upstream_port}")).await;
    let proxied = direct.replace(
        &format!("port={upstream_port}"),
        &format!("port={}", proxy.port),
    );
    let deciding = PostgresStore::connect(&direct).await.unwrap();
    let listening = PostgresStore::connect(&proxied)
        .await
        .unwrap()
        .with_listener_check(Duration::from_millis(200));

    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let error = agent(script(), log, Seen::default())
        .prompt("pay the bill")
        .durable(deciding.clone())
        .await
        .unwrap_err();
    let PromptError::Suspended { run } = error else {
        panic!("expected a suspension, got {error:?}");
    };
    let run_id = run.run_id().to_string();
    let mut watch = listening.watch_decisions().await.unwrap();
    assert!(
        proxy.freeze() >= 2,
        "the pool's connection and the listener's"
    );

    decide(&deciding, &run_id, "t1c1", ToolDecision::approve())
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(60), watch.for_run(&run_id))
        .await
        .expect("the watch was not woken: the dead connection went unnoticed")
        .unwrap();
}
