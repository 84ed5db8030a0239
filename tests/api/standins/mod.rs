//! Stand-in servers on 127.0.0.1 for the live ping checks: each binds an ephemeral port, serves
//! a bounded number of connections, and stops when its `StandIn` handle is dropped.

pub mod ftp;
pub mod ftp_files;
pub mod http;
pub mod sftp;
pub mod sftp_files;

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// More connections than any one test makes; the accept loop ends after this many.
const MAX_CONNECTIONS: usize = 8;

/// A server task; dropping the handle aborts it and every connection it serves.
pub struct StandIn {
    pub addr: SocketAddr,
    task: JoinHandle<()>,
}

impl StandIn {
    pub async fn start<F, Fut>(serve: F) -> Self
    where
        F: Fn(TcpStream) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let addr = listener.local_addr().expect("local address");
        let task = tokio::spawn(async move {
            let mut connections = JoinSet::new();
            for _ in 0..MAX_CONNECTIONS {
                let Ok((stream, _)) = listener.accept().await else {
                    break;
                };
                connections.spawn(serve(stream));
            }
            while connections.join_next().await.is_some() {}
        });
        Self { addr, task }
    }

    /// A server that accepts connections and never says a word.
    pub async fn silent() -> Self {
        Self::start(|stream| async move {
            tokio::time::sleep(Duration::from_secs(60)).await;
            drop(stream);
        })
        .await
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `scheme://user:password@addr/path` with user and password percent-encoded, as a
/// warehouse's `connection_string` names a stand-in.
pub fn connection_string(scheme: &str, user: &str, password: &str, addr: SocketAddr, path: &str) -> String {
    let user = utf8_percent_encode(user, NON_ALPHANUMERIC);
    let password = utf8_percent_encode(password, NON_ALPHANUMERIC);
    format!("{scheme}://{user}:{password}@{addr}{path}")
}

/// A loopback address where nothing listens: bound, then released.
pub async fn closed_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
    listener.local_addr().expect("local address")
}
