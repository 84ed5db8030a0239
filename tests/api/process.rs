//! The real binary as a test drives it: a server process on a loopback port over a
//! temporary database, spoken to over HTTP as a client would, and killed when dropped; and
//! the CLI run to completion.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_orderbridge");

/// A server process that is killed when dropped, so a failing test never leaves it running.
pub struct Server {
    pub child: Child,
    pub port: u16,
    pub stdout: Collected,
    pub stderr: Collected,
}

/// What the process writes to one stream, read to the end by a background thread.
pub struct Collected {
    text: Arc<Mutex<String>>,
    reader: Option<JoinHandle<()>>,
}

impl Collected {
    pub fn start(stream: impl Read + Send + 'static) -> Collected {
        let text = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&text);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                let mut text = sink.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
        });
        Collected { text, reader: Some(reader) }
    }

    pub fn so_far(&self) -> String {
        self.text.lock().unwrap().clone()
    }

    /// Everything, once the process has exited and the stream is closed.
    pub fn all(&mut self) -> String {
        if let Some(reader) = self.reader.take() {
            reader.join().unwrap();
        }
        self.so_far()
    }
}

impl Server {
    /// Kills the server and returns all it wrote: (stdout, stderr).
    pub fn stop(mut self) -> (String, String) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        (self.stdout.all(), self.stderr.all())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub fn command(db: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("ORDERBRIDGE_DATABASE", db)
        .env("ROCKET_ADDRESS", "127.0.0.1")
        .env("ROCKET_LOG_LEVEL", "critical")
        .env("ROCKET_CLI_COLORS", "false");
    cmd
}

/// Starts `orderbridge serve` and waits (bounded) until /health answers; returns the server
/// and what it had printed to stderr by then.
pub fn start(db: &Path, envs: &[(&str, &str)]) -> (Server, String) {
    start_with(db, &["serve"], envs)
}

/// `start` with the command line's arguments (`serve --demo`, say).
pub fn start_with(db: &Path, args: &[&str], envs: &[(&str, &str)]) -> (Server, String) {
    let port = free_port();
    let mut cmd = command(db);
    cmd.args(args).env("ROCKET_PORT", port.to_string()).stdout(Stdio::piped()).stderr(Stdio::piped());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("binary starts");
    let stdout = Collected::start(child.stdout.take().unwrap());
    let stderr = Collected::start(child.stderr.take().unwrap());
    let server = Server { child, port, stdout, stderr };
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok((200, _, _)) = http(port, "GET", "/health", &[], "") {
            let printed = server.stderr.so_far();
            return (server, printed);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("server did not answer /health within 30 s");
}

/// One HTTP/1.1 request over a fresh connection; returns (status, headers, body).
pub fn http(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<(u16, String, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes())?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    Ok((status, head.to_string(), body.to_string()))
}

pub fn token(port: u16, user: &str, password: &str) -> String {
    use base64::Engine;
    let basic =
        format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")));
    let (status, _, body) = http(
        port,
        "POST",
        "/auth/token",
        &[("Authorization", &basic), ("Content-Type", "application/x-www-form-urlencoded")],
        "grant_type=client_credentials",
    )
    .unwrap();
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    v["access_token"].as_str().unwrap().to_string()
}

pub fn run_cli(db: &Path, args: &[&str], stdin: &str) -> (bool, String, String) {
    let mut child = command(db)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}
