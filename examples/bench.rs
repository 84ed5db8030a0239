//! The orders benchmark: seeds a large database with the real binary, starts the server on
//! loopback, and measures four workloads with `wrk`, each beside nginx serving the exact
//! same response bytes, so throughput is reported as a ratio that means the same on any
//! machine.
//!
//! ```sh
//! apt-get install -y wrk nginx-light      # once
//! cargo build --release && cargo run --release --example bench
//! cargo run --release --example bench -- --orders 100000 --duration 5   # a quicker run
//! ```
//!
//! Workloads (32 connections, loopback):
//! - W1 first page of 100 orders, page mode
//! - W2 a session page past the 900th (32 sessions walked to page 900 first)
//! - W3 one store, a one-month `ordered_at` window, sorted by `ordered_at`, first 100
//! - W4 `GET /orders/{id}`
//!
//! Also: seed time (2 items per order), start-up time on the seeded file, and the server's RSS
//! after the load.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{Guard, proc_status_kib, server_binary};

const ADMIN_PASSWORD: &str = "bench-admin-password";

struct Options {
    orders: u64,
    duration_secs: u64,
    connections: u32,
    keep: Option<PathBuf>,
    /// With `--keep`: serve the database already there instead of seeding a new one.
    reuse: bool,
}

fn options() -> Options {
    let mut o = Options { orders: 1_000_000, duration_secs: 10, connections: 32, keep: None, reuse: false };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| fail(&format!("{arg} needs a value")));
        match arg.as_str() {
            "--orders" => o.orders = value().parse().unwrap_or_else(|_| fail("--orders takes a number")),
            "--duration" => {
                o.duration_secs = value().parse().unwrap_or_else(|_| fail("--duration takes seconds"))
            }
            "--connections" => {
                o.connections = value().parse().unwrap_or_else(|_| fail("--connections takes a number"))
            }
            "--keep" => o.keep = Some(PathBuf::from(value())),
            "--reuse" => o.reuse = true,
            other => fail(&format!("unknown argument {other}")),
        }
    }
    o
}

fn fail(message: &str) -> ! {
    eprintln!("bench: {message}");
    std::process::exit(2)
}

fn binary() -> PathBuf {
    server_binary().unwrap_or_else(|e| fail(&e))
}

fn free_port() -> u16 {
    common::free_port().unwrap_or_else(|e| fail(&format!("bind a loopback port: {e}")))
}

fn orderbridge(db: &Path) -> Command {
    let mut cmd = Command::new(binary());
    cmd.env("ORDERBRIDGE_DATABASE", db)
        .env("ORDERBRIDGE_ADMIN_PASSWORD", ADMIN_PASSWORD)
        .env("ORDERBRIDGE_SESSION_TTL_SECS", "600")
        .env("ROCKET_LOG_LEVEL", "off")
        .env("ROCKET_CLI_COLORS", "false");
    cmd
}

/// One HTTP/1.1 request on a fresh connection: (status, body).
fn http(port: u16, path: &str, headers: &[(&str, &str)], body: Option<&str>) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(60))).expect("timeout");
    let method = if body.is_some() { "POST" } else { "GET" };
    let payload = body.unwrap_or("");
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        payload.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(payload);
    stream.write_all(req.as_bytes()).expect("write");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read");
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        dechunk(body)
    } else {
        body.to_string()
    };
    (status, body)
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

fn json_field<'a>(body: &'a str, key: &str) -> Option<&'a str> {
    let start = body.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = body[start..].trim_start();
    let rest = rest.strip_prefix('"').unwrap_or(rest);
    let end = rest.find(['"', ',', '}']).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Requests per second from wrk's summary.
fn wrk(port: u16, path: &str, token: Option<&str>, script: Option<&Path>, o: &Options) -> f64 {
    let mut cmd = Command::new("wrk");
    cmd.arg("-t2")
        .arg(format!("-c{}", o.connections))
        .arg(format!("-d{}s", o.duration_secs))
        .arg("--timeout")
        .arg("10s");
    if let Some(token) = token {
        cmd.arg("-H").arg(format!("Authorization: Bearer {token}"));
    }
    if let Some(script) = script {
        cmd.arg("-s").arg(script);
    }
    cmd.arg(format!("http://127.0.0.1:{port}{path}"));
    let out = cmd.output().unwrap_or_else(|e| fail(&format!("wrk: {e} (apt-get install -y wrk)")));
    let text = String::from_utf8_lossy(&out.stdout);
    let non2xx = text.lines().find(|l| l.contains("Non-2xx")).map(str::trim).unwrap_or("");
    if !non2xx.is_empty() {
        eprintln!("bench: warning: {non2xx} for {path}");
    }
    text.lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| fail(&format!("no wrk result for {path}:\n{text}")))
}

/// Seeds a new database file at `db` with the real binary; returns the seconds it took.
fn seed(db: &Path, orders: u64) -> f64 {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    eprintln!("bench: seeding {orders} orders ...");
    let t = Instant::now();
    let status = orderbridge(db)
        .args(["seed", "--demo", "--orders", &orders.to_string(), "--items", "2"])
        .stdout(Stdio::null())
        .status()
        .expect("seed runs");
    if !status.success() {
        fail("seed failed");
    }
    t.elapsed().as_secs_f64()
}

fn main() {
    let o = options();
    let dir = tempfile::tempdir().expect("temp dir");
    let work = o.keep.clone().unwrap_or_else(|| dir.path().to_path_buf());
    std::fs::create_dir_all(&work).expect("work dir");
    let db = work.join("bench.db");
    if o.reuse && o.keep.is_none() {
        fail("--reuse needs --keep DIR (the folder of an earlier run's bench.db)");
    }
    let seed_secs = if o.reuse && db.exists() {
        eprintln!("bench: reusing {}", db.display());
        None
    } else {
        Some(seed(&db, o.orders))
    };
    let db_mib = std::fs::metadata(&db).map(|m| m.len() as f64 / 1048576.0).unwrap_or(0.0);

    // Start.
    let port = free_port();
    let t = Instant::now();
    let server = Guard(
        orderbridge(&db)
            .arg("serve")
            .env("ROCKET_PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("server starts"),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            fail("the server did not start within 60 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let startup_ms = t.elapsed().as_secs_f64() * 1000.0;
    let pid = server.0.id();

    let basic = {
        use base64::Engine;
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("admin:{ADMIN_PASSWORD}"))
        )
    };
    let (status, body) = http(
        port,
        "/auth/token",
        &[("Authorization", &basic), ("Content-Type", "application/x-www-form-urlencoded")],
        Some("grant_type=client_credentials"),
    );
    if status != 200 {
        fail(&format!("no token ({status}): {body}"));
    }
    let token = json_field(&body, "access_token").expect("access_token").to_string();
    let auth = format!("Bearer {token}");
    let get = |path: &str| {
        let (status, body) = http(port, path, &[("Authorization", &auth)], None);
        if status != 200 {
            fail(&format!("{path} answered {status}: {body}"));
        }
        body
    };

    // The workloads' URLs.
    let w1 = "/orders?page=1&limit=100".to_string();
    let mid_id = (o.orders / 2).max(1);
    let w4 = format!("/orders/{mid_id}");
    let one = get(&w4);
    let store = json_field(&one, "store_id").unwrap_or("1").to_string();
    let ordered_at = json_field(&one, "ordered_at").unwrap_or("2026-01-01T00:00:00.000Z").to_string();
    // A one-month window ending at the sample order's date.
    let window_end = ordered_at.get(..10).unwrap_or("2026-01-01").to_string();
    let window_start = month_before(&window_end);
    let w3 = format!(
        "/orders?store_id={store}&ordered_at_min={window_start}&ordered_at_max={window_end}&sort=ordered_at&page=1&limit=100"
    );
    let w1_body = get(&w1);
    let w3_body = get(&w3);
    let w4_body = get(&w4);

    // W2: sessions walked past page 900, then read onward by wrk.
    let sessions = prepare_sessions(port, &auth, 32, 900);
    let script = work.join("w2.lua");
    std::fs::write(&script, session_script(&sessions, &token)).expect("lua script");

    eprintln!("bench: W1 ...");
    let r1 = wrk(port, &w1, Some(&token), None, &o);
    eprintln!("bench: W2 ...");
    let r2 = wrk(port, "/orders", None, Some(&script), &o);
    eprintln!("bench: W3 ...");
    let r3 = wrk(port, &w3, Some(&token), None, &o);
    eprintln!("bench: W4 ...");
    let r4 = wrk(port, &w4, Some(&token), None, &o);
    let rss = proc_status_kib(&pid.to_string(), "VmRSS:");
    let hwm = proc_status_kib(&pid.to_string(), "VmHWM:");
    drop(server);

    // nginx with the same bytes.
    let n1 = work.join("w1.json");
    let n4 = work.join("w4.json");
    std::fs::write(&n1, &w1_body).expect("write w1");
    std::fs::write(&n4, &w4_body).expect("write w4");
    let nport = free_port();
    let conf = work.join("nginx.conf");
    std::fs::write(
        &conf,
        format!(
            "daemon off; worker_processes auto; pid {pid}; error_log stderr crit;\n\
             events {{ worker_connections 1024; }}\n\
             http {{ access_log off; server {{ listen 127.0.0.1:{nport};\n\
               location = /w1 {{ default_type application/json; alias {w1}; }}\n\
               location = /w4 {{ default_type application/json; alias {w4}; }} }} }}\n",
            pid = work.join("nginx.pid").display(),
            w1 = n1.display(),
            w4 = n4.display()
        ),
    )
    .expect("nginx conf");
    let nginx = Guard(
        Command::new("nginx")
            .arg("-c")
            .arg(&conf)
            .arg("-p")
            .arg(&work)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| fail(&format!("nginx: {e} (apt-get install -y nginx-light)"))),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", nport)).is_err() {
        if Instant::now() > deadline {
            let mut err = String::new();
            let mut nginx = nginx;
            if let Some(mut e) = nginx.0.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            fail(&format!("nginx did not start: {err}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    eprintln!("bench: nginx ...");
    let g1 = wrk(nport, "/w1", None, None, &o);
    let g4 = wrk(nport, "/w4", None, None, &o);
    // A killed master leaves its workers behind; ask it to stop them and wait for it.
    let _ = Command::new("nginx").arg("-c").arg(&conf).arg("-p").arg(&work).args(["-s", "quit"]).status();
    let mut nginx = nginx;
    let _ = nginx.0.wait();

    let check = |ok: bool| if ok { "ok" } else { "MISSED" };
    println!(
        "orderbridge benchmark: {} orders, wrk -t2 -c{} -d{}s, loopback",
        o.orders, o.connections, o.duration_secs
    );
    println!("| measure | result | target | |");
    println!("|---|---|---|---|");
    match seed_secs {
        Some(secs) => println!(
            "| seed {} orders | {secs:.1} s ({db_mib:.0} MiB file) | <= 60 s | {} |",
            o.orders,
            check(secs <= 60.0)
        ),
        None => println!("| seed | not run (--reuse; {db_mib:.0} MiB file) | <= 60 s | |"),
    }
    println!(
        "| start-up on the seeded file | {startup_ms:.0} ms | < 1000 ms | {} |",
        check(startup_ms < 1000.0)
    );
    println!(
        "| W1 first page of 100 (page mode), {} KiB | {r1:.0} req/s = {:.2} x nginx ({g1:.0}) | >= 0.33 x nginx | {} |",
        w1_body.len() / 1024,
        r1 / g1,
        check(r1 / g1 >= 1.0 / 3.0)
    );
    println!(
        "| W2 session page past the 900th | {r2:.0} req/s = {:.2} x W1 | within 20% of W1 | {} |",
        r2 / r1,
        check(r2 >= 0.8 * r1)
    );
    println!(
        "| W2 vs nginx serving W1's bytes | {:.2} x nginx | >= 0.33 x nginx | {} |",
        r2 / g1,
        check(r2 / g1 >= 1.0 / 3.0)
    );
    println!(
        "| W3 store + month window by ordered_at, {} KiB | {r3:.0} req/s = {:.2} x W1 | >= 0.5 x W1 | {} |",
        w3_body.len() / 1024,
        r3 / r1,
        check(r3 >= 0.5 * r1)
    );
    println!(
        "| W4 GET /orders/{{id}}, {} B | {r4:.0} req/s = {:.2} x nginx ({g4:.0}) | >= 0.33 x nginx | {} |",
        w4_body.len(),
        r4 / g4,
        check(r4 / g4 >= 1.0 / 3.0)
    );
    println!(
        "| RSS after the load (peak) | {} MiB ({} MiB) | < 150 MiB | {} |",
        rss / 1024,
        hwm / 1024,
        check(rss < 150 * 1024)
    );
}

/// Opens `count` sessions and walks each to `depth` pages, in parallel; returns their ids.
fn prepare_sessions(port: u16, auth: &str, count: usize, depth: usize) -> Vec<String> {
    eprintln!("bench: walking {count} sessions to page {depth} ...");
    let threads: Vec<_> = (0..count)
        .map(|_| {
            let auth = auth.to_string();
            std::thread::spawn(move || {
                let (status, body) = http(port, "/orders?limit=100", &[("Authorization", &auth)], None);
                if status != 200 {
                    fail(&format!("opening a session answered {status}"));
                }
                let id = json_field(&body, "session_id").expect("session_id").to_string();
                for _ in 1..depth {
                    let (status, _) =
                        http(port, &format!("/orders?session_id={id}"), &[("Authorization", &auth)], None);
                    if status != 200 {
                        fail(&format!("walking a session answered {status}"));
                    }
                }
                id
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().expect("session thread")).collect()
}

/// A wrk script giving each of wrk's threads its own half of the sessions, round robin. The
/// requests are formatted once per thread, as wrk does for the other workloads' static
/// request, so the load generator does the same work per request in every workload.
fn session_script(sessions: &[String], token: &str) -> String {
    let list: Vec<String> = sessions.iter().map(|s| format!("\"{s}\"")).collect();
    format!(
        r#"local sessions = {{{list}}}
local next_thread = 0
function setup(thread)
  thread:set("tid", next_thread)
  next_thread = next_thread + 1
end
local requests = {{}}
function init(args)
  local half = #sessions / 2
  for k = 1, half do
    local s = sessions[(tid % 2) * half + k]
    requests[k] = wrk.format("GET", "/orders?session_id=" .. s, {{["Authorization"] = "Bearer {token}"}})
  end
end
local i = 0
function request()
  i = i % #requests + 1
  return requests[i]
end
"#,
        list = list.join(", ")
    )
}

/// The date one month before `date` (YYYY-MM-DD), same day of month clamped to 28.
fn month_before(date: &str) -> String {
    let parts: Vec<u32> = date.split('-').filter_map(|p| p.parse().ok()).collect();
    let [y, m, d] = parts[..] else { return "2026-01-01".to_string() };
    let (y, m) = if m == 1 { (y - 1, 12) } else { (y, m - 1) };
    format!("{y:04}-{m:02}-{:02}", d.min(28))
}
