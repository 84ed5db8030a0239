//! A small HTTP/1.1 server for the simulated platforms: keep-alive connections on a loopback
//! port, requests with a `Content-Length` body, and one handler for all of them. Enough for
//! orderbridge's own clients, which is all it serves.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// Largest request head or body the simulator reads.
const MAX_BYTES: usize = 16 * 1024 * 1024;

pub struct Request {
    pub method: String,
    /// The path without the query.
    pub path: String,
    pub query: Vec<(String, String)>,
    /// The text after `?` as received, not decoded (empty when there is none): for a
    /// simulator that refuses characters a client should have percent-encoded.
    pub raw_query: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn param(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn json(status: u16, body: &serde_json::Value) -> Response {
        Response {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.to_string().into_bytes(),
        }
    }

    pub fn empty(status: u16) -> Response {
        Response { status, headers: Vec::new(), body: Vec::new() }
    }
}

/// A running server; dropping it stops the server and every connection it serves.
pub struct Server {
    pub addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves `handle` on 127.0.0.1 at an ephemeral port.
pub async fn serve<H, F>(handle: H) -> std::io::Result<Server>
where
    H: Fn(Request) -> F + Send + Sync + 'static,
    F: Future<Output = Response> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let handle = Arc::new(handle);
    let task = tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { break };
                    let _ = stream.set_nodelay(true);
                    let handle = Arc::clone(&handle);
                    connections.spawn(async move { connection(stream, handle).await });
                }
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
    });
    Ok(Server { addr, task })
}

async fn connection<H, F>(stream: TcpStream, handle: Arc<H>)
where
    H: Fn(Request) -> F,
    F: Future<Output = Response>,
{
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    loop {
        let Some((request, close)) = read_request(&mut reader).await else { return };
        let response = handle(request).await;
        if write_response(&mut write, response, close).await.is_err() || close {
            return;
        }
    }
}

async fn read_request(reader: &mut BufReader<tokio::net::tcp::OwnedReadHalf>) -> Option<(Request, bool)> {
    let mut line = String::new();
    if reader.read_line(&mut line).await.ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next()?.to_string(), parts.next()?.to_string());
    let mut headers = Vec::new();
    let mut size = line.len();
    loop {
        let mut header = String::new();
        let n = reader.read_line(&mut header).await.ok()?;
        size += n;
        if n == 0 || size > MAX_BYTES {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    let length = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    if length > MAX_BYTES {
        return None;
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await.ok()?;
    let close =
        headers.iter().any(|(n, v)| n.eq_ignore_ascii_case("connection") && v.eq_ignore_ascii_case("close"));
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let raw_query = query.to_string();
    let query = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    Some((Request { method, path: path.to_string(), query, raw_query, headers, body }, close))
}

async fn write_response(
    write: &mut tokio::net::tcp::OwnedWriteHalf,
    response: Response,
    close: bool,
) -> std::io::Result<()> {
    let reason = match response.status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        207 => "Multi-Status",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    };
    let mut head = format!("HTTP/1.1 {} {reason}\r\n", response.status);
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if response.status != 204 {
        head.push_str(&format!("Content-Length: {}\r\n", response.body.len()));
    }
    if close {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    // One write: a head and a body sent apart meet Nagle's algorithm and the client's
    // delayed ACK, and every answer waits 40 ms.
    let mut bytes = head.into_bytes();
    if response.status != 204 {
        bytes.extend_from_slice(&response.body);
    }
    write.write_all(&bytes).await?;
    write.flush().await
}
