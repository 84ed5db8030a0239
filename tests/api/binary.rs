//! The real binary: started on a loopback port with a temporary database, spoken to over
//! HTTP as a client would, and stopped by the test. Also the `user` subcommands.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_orderbridge");

/// A server process that is killed when dropped, so a failing test never leaves it running.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn command(db: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("ORDERBRIDGE_DATABASE", db)
        .env("ROCKET_ADDRESS", "127.0.0.1")
        .env("ROCKET_LOG_LEVEL", "critical")
        .env("ROCKET_CLI_COLORS", "false");
    cmd
}

/// Starts `orderbridge serve` and waits (bounded) until /health answers.
fn start(db: &Path, envs: &[(&str, &str)]) -> (Server, String) {
    let port = free_port();
    let mut cmd = command(db);
    cmd.arg("serve").env("ROCKET_PORT", port.to_string()).stdout(Stdio::null()).stderr(Stdio::piped());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("binary starts");
    let stderr = child.stderr.take().unwrap();
    let server = Server { child, port };
    // Collect what the server prints, in the background, to return it to the test.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            text.push_str(&line);
            text.push('\n');
            let _ = tx.send(text.clone());
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok((200, _, _)) = http(port, "GET", "/health", &[], "") {
            let printed = rx.try_iter().last().unwrap_or_default();
            return (server, printed);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("server did not answer /health within 30 s");
}

/// One HTTP/1.1 request over a fresh connection; returns (status, headers, body).
fn http(
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

fn token(port: u16, user: &str, password: &str) -> String {
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

fn run_cli(db: &Path, args: &[&str], stdin: &str) -> (bool, String, String) {
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

#[test]
fn first_run_prints_a_working_admin_password_and_a_restart_keeps_data_and_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ob.db");
    let (server, printed) = start(&db, &[]);
    let password = printed
        .lines()
        .find_map(|l| l.split("with password ").nth(1))
        .unwrap_or_else(|| panic!("no password printed: {printed}"))
        .trim()
        .to_string();
    let admin = token(server.port, "admin", &password);
    let bearer = format!("Bearer {admin}");
    let (status, head, body) = http(
        server.port,
        "POST",
        "/customers",
        &[("Authorization", &bearer), ("Content-Type", "application/json")],
        &json!({"company_name": "Over the wire"}).to_string(),
    )
    .unwrap();
    assert_eq!(status, 201, "{head}\n{body}");
    drop(server);

    let (server, printed) = start(&db, &[]);
    assert!(!printed.contains(&password), "the password is printed only once");
    let (status, _, body) =
        http(server.port, "GET", "/customers", &[("Authorization", &bearer)], "").unwrap();
    assert_eq!(status, 200, "the token survives a restart: {body}");
    let list: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(list[0]["company_name"], "Over the wire");
}

#[test]
fn errors_over_real_http_use_the_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) =
        start(&dir.path().join("ob.db"), &[("ORDERBRIDGE_ADMIN_PASSWORD", "configured-password")]);
    let (status, head, body) = http(server.port, "GET", "/customers", &[], "").unwrap();
    assert_eq!(status, 401);
    assert!(head.to_ascii_lowercase().contains("www-authenticate: bearer realm=\"orderbridge\""), "{head}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"]["code"], "unauthorized");
    let (status, _, body) = http(server.port, "GET", "/nowhere", &[], "").unwrap();
    assert_eq!(status, 404);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["error"]["code"], "not_found");
    token(server.port, "admin", "configured-password");
}

#[test]
fn user_subcommands_add_list_change_and_disable_users() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ob.db");
    // The first command on a fresh file creates it; the admin's password is printed by serve only.
    let (ok, _, err) = run_cli(&db, &["user", "add", "ops", "--role", "admin"], "ops-password-1\n");
    assert!(ok, "{err}");
    let (ok, _, err) = run_cli(&db, &["user", "add", "ops", "--role", "admin"], "ops-password-1\n");
    assert!(!ok && err.contains("taken"), "duplicate name refused: {err}");
    let (ok, _, err) = run_cli(&db, &["user", "add", "shop", "--customer-id", "42"], "shop-password\n");
    assert!(!ok && err.contains("customer"), "unknown customer refused: {err}");
    let (ok, _, err) = run_cli(&db, &["user", "add", "weak", "--role", "admin"], "short\n");
    assert!(!ok && err.contains("8 characters"), "{err}");

    let (server, _) = start(&db, &[]);
    let first = token(server.port, "ops", "ops-password-1");
    let (ok, _, err) = run_cli(&db, &["user", "passwd", "ops"], "ops-password-2\n");
    assert!(ok, "{err}");
    token(server.port, "ops", "ops-password-2");
    let (ok, out, _) = run_cli(&db, &["user", "list"], "");
    assert!(ok && out.contains("ops") && out.contains("admin") && out.contains("enabled"), "{out}");
    assert!(!out.contains("ops-password"), "no password in listings");
    let (ok, _, err) = run_cli(&db, &["user", "disable", "ops"], "");
    assert!(ok, "{err}");
    let (ok, out, _) = run_cli(&db, &["user", "list"], "");
    assert!(ok && out.contains("disabled"), "{out}");
    let bearer = format!("Bearer {first}");
    let (status, _, _) = http(server.port, "GET", "/customers", &[("Authorization", &bearer)], "").unwrap();
    assert_eq!(status, 401, "a disabled user's token stops working");
}
