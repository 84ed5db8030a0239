//! An HTTP/1.1 stand-in answering like BigCommerce and Sellbrite, recording what it was sent.

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::StandIn;

pub const STORE_HASH: &str = "abc123";
pub const BIGCOMMERCE_TOKEN: &str = "tok-SECRET-1234";
/// A token the stand-in knows but that lacks the scope: 403.
pub const BIGCOMMERCE_SCOPELESS_TOKEN: &str = "tok-SCOPELESS-4321";
/// Store hashes that make the stand-in misbehave.
pub const FAILING_STORE_HASH: &str = "down503";
pub const SLOW_STORE_HASH: &str = "slow";
pub const SELLBRITE_AUTH_TOKEN: &str = "acct-SECRET-9876";
pub const SELLBRITE_SECRET_KEY: &str = "key-SECRET-5555";

/// Longest request head read; the checks send a few hundred bytes.
const MAX_HEAD_BYTES: usize = 16 * 1024;

#[derive(Debug, Clone)]
pub struct SeenRequest {
    pub method: String,
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
}

impl SeenRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

pub struct Reply {
    status: u16,
    content_type: &'static str,
    body: String,
}

impl Reply {
    fn json(status: u16, body: serde_json::Value) -> Self {
        Self { status, content_type: "application/json", body: body.to_string() }
    }
}

pub struct HttpStandIn {
    server: StandIn,
    seen: Arc<Mutex<Vec<SeenRequest>>>,
}

impl HttpStandIn {
    /// `answer` returns `None` to never answer.
    pub async fn start(answer: fn(&SeenRequest) -> Option<Reply>) -> Self {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        let server = StandIn::start(move |stream| serve(stream, answer, Arc::clone(&record))).await;
        Self { server, seen }
    }

    pub fn base(&self) -> String {
        format!("http://{}", self.server.addr)
    }

    pub fn requests(&self) -> Vec<SeenRequest> {
        self.seen.lock().expect("requests lock").clone()
    }
}

async fn serve(
    mut stream: TcpStream,
    answer: fn(&SeenRequest) -> Option<Reply>,
    seen: Arc<Mutex<Vec<SeenRequest>>>,
) {
    let mut head = Vec::new();
    let mut buffer = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD_BYTES {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buffer[..n]),
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let request = SeenRequest {
        method: request_line.next().unwrap_or_default().to_owned(),
        path: request_line.next().unwrap_or_default().to_owned(),
        headers: lines
            .take_while(|line| !line.is_empty())
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
            .collect(),
    };
    seen.lock().expect("requests lock").push(request.clone());
    let Some(reply) = answer(&request) else {
        tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        return;
    };
    let response = format!(
        "HTTP/1.1 {} Stand-in\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
        reply.status,
        reply.content_type,
        reply.body.len(),
        reply.body
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// `GET /stores/{hash}/v2/store` as BigCommerce answers it.
pub fn bigcommerce(request: &SeenRequest) -> Option<Reply> {
    let hash = request.path.strip_prefix("/stores/").and_then(|rest| rest.strip_suffix("/v2/store"));
    match hash {
        Some(STORE_HASH) => {}
        Some(SLOW_STORE_HASH) => return None,
        Some(FAILING_STORE_HASH) => {
            return Some(Reply {
                status: 503,
                content_type: "text/plain",
                body: "Upstream overloaded".into(),
            });
        }
        _ => {
            return Some(Reply::json(404, serde_json::json!({"status": 404, "title": "Not Found"})));
        }
    }
    Some(match request.header("x-auth-token") {
        Some(BIGCOMMERCE_TOKEN) => Reply::json(200, serde_json::json!({"id": STORE_HASH, "name": "Demo"})),
        Some(BIGCOMMERCE_SCOPELESS_TOKEN) => Reply::json(
            403,
            serde_json::json!([{"status": 403, "message": "You don't have a required scope to access the endpoint"}]),
        ),
        // Echoes the token it was sent, as a careless platform might.
        other => Reply::json(
            401,
            serde_json::json!({
                "status": 401,
                "title": format!("The access token '{}' is not valid", other.unwrap_or_default()),
                "type": "https://developer.bigcommerce.com/api-docs/getting-started/api-status-codes"
            }),
        ),
    })
}

pub fn sellbrite_basic_header() -> String {
    let pair = format!("{SELLBRITE_AUTH_TOKEN}:{SELLBRITE_SECRET_KEY}");
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))
}

/// `GET /v1/warehouses` as Sellbrite (a Rails app) answers it.
pub fn sellbrite(request: &SeenRequest) -> Option<Reply> {
    if request.path != "/v1/warehouses" {
        return Some(Reply::json(404, serde_json::json!({"error": "Not found"})));
    }
    Some(if request.header("authorization") == Some(sellbrite_basic_header().as_str()) {
        Reply::json(200, serde_json::json!([]))
    } else {
        Reply { status: 401, content_type: "text/html", body: "HTTP Basic: Access denied.\n".into() }
    })
}

/// Reads the request, then never answers.
pub fn never(_: &SeenRequest) -> Option<Reply> {
    None
}

/// Sellbrite over its rate limit: a 403 whose body says so, not a 429.
pub fn sellbrite_rate_limited(_: &SeenRequest) -> Option<Reply> {
    Some(Reply { status: 403, content_type: "text/plain", body: "Rate Limit Exceeded".into() })
}
