//! The orders benchmark, on the path a user takes: start the real binary on an empty file,
//! import 100,000 orders over HTTP (`POST /import/orders`, 5,000 NDJSON records a request),
//! then serve them to four workloads measured with `wrk`, each beside nginx serving the exact
//! same response bytes, so throughput is reported as a ratio that means the same on any
//! machine. The orders are the demo data set (`orderbridge seed`, 2 items an order), read out
//! of a scratch file; `--seeded` serves that seeded file itself instead (the old path).
//!
//! ```sh
//! apt-get install -y wrk nginx-light      # once
//! cargo build --release && cargo run --release --example bench
//! cargo run --release --example bench -- --orders 20000 --duration 5   # a quicker run
//! cargo run --release --example bench -- --seeded --orders 1000000     # the seeded path
//! ```
//!
//! Workloads (32 connections, loopback):
//! - W1 first page of 100 orders, page mode
//! - W2 32 listing sessions walked page after page (a session read to its end is replaced)
//! - W3 one store, a one-month `ordered_at` window, sorted by `ordered_at`, first 100
//! - W4 `GET /orders/{id}`
//!
//! Also: import rate, start-up time, and the server's RSS after the import, after the load,
//! and at its peak. And Rocket's floor (`floor`): a bare Rocket answering W1's and W4's bytes
//! from memory, the most any handler on Rocket 0.5 can do on the machine.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod client;
#[path = "../common/mod.rs"]
mod common;
mod data;
mod floor;
mod nginx;

use client::{http, json_field, session_script, wrk};
use common::{Guard, proc_status_kib, server_binary};

const ADMIN_PASSWORD: &str = "bench-admin-password";

pub struct Options {
    orders: u64,
    duration_secs: u64,
    connections: u32,
    per_request: usize,
    seeded: bool,
    keep: Option<PathBuf>,
    /// With `--keep` and `--seeded`: serve the database already there instead of a new one.
    reuse: bool,
}

fn options() -> Options {
    let mut o = Options {
        orders: 100_000,
        duration_secs: 10,
        connections: 32,
        per_request: 5_000,
        seeded: false,
        keep: None,
        reuse: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| fail(&format!("{arg} needs a value")));
        let number =
            |v: String, what: &str| v.parse().unwrap_or_else(|_| fail(&format!("{what} takes a number")));
        match arg.as_str() {
            "--orders" => o.orders = number(value(), "--orders"),
            "--duration" => o.duration_secs = number(value(), "--duration"),
            "--connections" => o.connections = number(value(), "--connections") as u32,
            "--per-request" => o.per_request = (number(value(), "--per-request") as usize).max(1),
            "--seeded" => o.seeded = true,
            "--keep" => o.keep = Some(PathBuf::from(value())),
            "--reuse" => o.reuse = true,
            other => fail(&format!("unknown argument {other}")),
        }
    }
    if o.reuse && (o.keep.is_none() || !o.seeded) {
        fail("--reuse needs --seeded and --keep DIR (the folder of an earlier run's bench.db)");
    }
    o
}

/// The server being measured, stopped by `fail` (exiting runs no destructor).
static SERVER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

pub fn fail(message: &str) -> ! {
    eprintln!("bench: {message}");
    let pid = SERVER.load(std::sync::atomic::Ordering::SeqCst);
    if pid != 0 {
        let _ = Command::new("kill").arg(pid.to_string()).status();
    }
    std::process::exit(2)
}

fn free_port() -> u16 {
    common::free_port().unwrap_or_else(|e| fail(&format!("bind a loopback port: {e}")))
}

pub fn orderbridge(db: &Path) -> Command {
    let mut cmd = Command::new(server_binary().unwrap_or_else(|e| fail(&e)));
    cmd.env("ORDERBRIDGE_DATABASE", db)
        .env("ORDERBRIDGE_ADMIN_PASSWORD", ADMIN_PASSWORD)
        .env("ORDERBRIDGE_SESSION_TTL_SECS", "600")
        .env("ORDERBRIDGE_PING_MODE", "offline")
        .env("ROCKET_LOG_LEVEL", "off")
        .env("ROCKET_CLI_COLORS", "false");
    cmd
}

/// Starts `serve` on `db`; returns the server and how long it took to accept connections.
fn serve(db: &Path, port: u16) -> (Guard, f64) {
    let t = Instant::now();
    let server = Guard(
        orderbridge(db)
            .arg("serve")
            .env("ROCKET_PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("server starts"),
    );
    SERVER.store(server.0.id(), std::sync::atomic::Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            fail("the server did not start within 60 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    (server, t.elapsed().as_secs_f64() * 1000.0)
}

fn token(port: u16) -> String {
    use base64::Engine;
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("admin:{ADMIN_PASSWORD}"))
    );
    let (status, body) = http(
        port,
        "/auth/token",
        &[("Authorization", &basic), ("Content-Type", "application/x-www-form-urlencoded")],
        Some(b"grant_type=client_credentials"),
    );
    if status != 200 {
        fail(&format!("no token ({status}): {body}"));
    }
    json_field(&body, "access_token").expect("access_token").to_string()
}

/// The server's resident set and its peak so far, in MiB.
fn memory(pid: u32) -> (u64, u64) {
    let pid = pid.to_string();
    (proc_status_kib(&pid, "VmRSS:") / 1024, proc_status_kib(&pid, "VmHWM:") / 1024)
}

/// How the data got in, for the report.
enum Loaded {
    Imported { records_per_sec: f64, requests: usize, per_request: usize, rss_mib: u64 },
    Seeded { secs: Option<f64>, file_mib: f64 },
}

fn main() {
    let o = options();
    let dir = tempfile::tempdir().expect("temp dir");
    let work = o.keep.clone().unwrap_or_else(|| dir.path().to_path_buf());
    std::fs::create_dir_all(&work).expect("work dir");
    let db = work.join("bench.db");
    let port = free_port();

    let (server, startup_ms, token, loaded) = if o.seeded {
        let secs = if o.reuse && db.exists() {
            eprintln!("bench: reusing {}", db.display());
            None
        } else {
            Some(data::seed(&db, o.orders))
        };
        let file_mib = std::fs::metadata(&db).map(|m| m.len() as f64 / 1048576.0).unwrap_or(0.0);
        let (server, startup_ms) = serve(&db, port);
        (server, startup_ms, token(port), Loaded::Seeded { secs, file_mib })
    } else {
        let source = work.join("source.db");
        data::seed(&source, o.orders);
        let dataset = data::read_dataset(&source);
        data::remove_database(&source);
        data::remove_database(&db);
        let (server, startup_ms) = serve(&db, port);
        let token = token(port);
        let cpu = common::cpu_secs(&server.0.id().to_string());
        let imported = data::import(port, &format!("Bearer {token}"), &dataset, o.per_request);
        let cpu = common::cpu_secs(&server.0.id().to_string()) - cpu;
        eprintln!(
            "bench: the import took {:.1} s, server CPU {cpu:.1} s ({:.1} cores)",
            imported.secs,
            cpu / imported.secs
        );
        drop(dataset);
        let (rss_mib, _) = memory(server.0.id());
        let loaded = Loaded::Imported {
            records_per_sec: o.orders as f64 / imported.secs,
            requests: imported.requests,
            per_request: o.per_request,
            rss_mib,
        };
        (server, startup_ms, token, loaded)
    };
    let pid = server.0.id();
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
    // W2: enough sessions for 32 walkers at 25,000 pages a second, opened beforehand.
    let walkers = (o.connections as usize / 2).max(1);
    let pages = (o.orders as usize).div_ceil(100).saturating_sub(1).max(1);
    let count = 2 * walkers + (25_000 * o.duration_secs as usize).div_ceil(pages);
    let sessions = open_sessions(port, &auth, count);
    let script = work.join("w2.lua");
    std::fs::write(&script, session_script(&sessions, walkers, pages, &token)).expect("lua script");

    eprintln!("bench: W1 ...");
    let r1 = wrk(port, &w1, Some(&token), None, &o);
    eprintln!("bench: W2 ...");
    let r2 = wrk(port, "/orders", None, Some(&script), &o);
    eprintln!("bench: W3 ...");
    let r3 = wrk(port, &w3, Some(&token), None, &o);
    eprintln!("bench: W4 ...");
    let r4 = wrk(port, &w4, Some(&token), None, &o);
    let (rss, hwm) = memory(pid);
    drop(server);
    SERVER.store(0, std::sync::atomic::Ordering::SeqCst);

    let (g1, g4) = nginx::serve_same_bytes(&work, &w1_body, &w4_body, &o);
    let (f1, f4) = floor::serve_same_bytes(&w1_body, &w4_body, &o);

    let check = |ok: bool| if ok { "ok" } else { "MISSED" };
    println!(
        "orderbridge benchmark: {} orders, wrk -t2 -c{} -d{}s, loopback",
        o.orders, o.connections, o.duration_secs
    );
    println!("| measure | result | goal | |");
    println!("|---|---|---|---|");
    match loaded {
        Loaded::Imported { records_per_sec, requests, per_request, rss_mib } => {
            println!(
                "| import over HTTP ({requests} requests of {per_request}) | {records_per_sec:.0} records/s | >= 25,000 | {} |",
                check(records_per_sec >= 25_000.0)
            );
            println!("| RSS after the import | {rss_mib} MiB | <= 100 MiB | {} |", check(rss_mib <= 100));
        }
        Loaded::Seeded { secs: Some(secs), file_mib } => println!(
            "| seed {} orders | {secs:.1} s ({file_mib:.0} MiB file) | <= 60 s | {} |",
            o.orders,
            check(secs <= 60.0)
        ),
        Loaded::Seeded { secs: None, file_mib } => {
            println!("| seed | not run (--reuse; {file_mib:.0} MiB file) | <= 60 s | |")
        }
    }
    println!("| start-up | {startup_ms:.0} ms | < 1000 ms | {} |", check(startup_ms < 1000.0));
    println!(
        "| W1 first page of 100 (page mode), {} KiB | {r1:.0} req/s = {:.2} x nginx ({g1:.0}) | >= 0.7 x nginx | {} |",
        w1_body.len() / 1024,
        r1 / g1,
        check(r1 / g1 >= 0.7)
    );
    println!(
        "| W2 32 sessions walked page after page | {r2:.0} req/s = {:.2} x nginx serving W1's bytes | >= 0.8 x nginx | {} |",
        r2 / g1,
        check(r2 / g1 >= 0.8)
    );
    println!(
        "| W3 store + month window by ordered_at, {} KiB | {r3:.0} req/s = {:.2} x W1 | >= 0.5 x W1 | {} |",
        w3_body.len() / 1024,
        r3 / r1,
        check(r3 >= 0.5 * r1)
    );
    println!(
        "| W4 GET /orders/{{id}}, {} B | {r4:.0} req/s = {:.2} x nginx ({g4:.0}) | >= 0.8 x nginx | {} |",
        w4_body.len(),
        r4 / g4,
        check(r4 / g4 >= 0.8)
    );
    println!(
        "| Rocket's floor: bare Rocket 0.5, W1's bytes from memory | {f1:.0} req/s = {:.2} x nginx; W1 {:.2}, W2 {:.2} x floor | the most W1 and W2 can reach | |",
        f1 / g1,
        r1 / f1,
        r2 / f1
    );
    println!(
        "| Rocket's floor: W4's bytes | {f4:.0} req/s = {:.2} x nginx; W4 {:.2} x floor | the most W4 can reach | |",
        f4 / g4,
        r4 / f4
    );
    println!("| RSS after the load | {rss} MiB | <= 150 MiB | {} |", check(rss <= 150));
    println!("| peak RSS | {hwm} MiB | <= 170 MiB | {} |", check(hwm <= 170));
}

/// Opens `count` listing sessions of 100 orders (their first page read); returns their ids.
fn open_sessions(port: u16, auth: &str, count: usize) -> Vec<String> {
    eprintln!("bench: opening {count} listing sessions ...");
    (0..count)
        .map(|_| {
            let (status, body) = http(port, "/orders?limit=100", &[("Authorization", auth)], None);
            if status != 200 {
                fail(&format!("opening a session answered {status}: {body}"));
            }
            json_field(&body, "session_id").expect("session_id").to_string()
        })
        .collect()
}

/// The date one month before `date` (YYYY-MM-DD), same day of month clamped to 28.
fn month_before(date: &str) -> String {
    let parts: Vec<u32> = date.split('-').filter_map(|p| p.parse().ok()).collect();
    let [y, m, d] = parts[..] else { return "2026-01-01".to_string() };
    let (y, m) = if m == 1 { (y - 1, 12) } else { (y, m - 1) };
    format!("{y:04}-{m:02}-{:02}", d.min(28))
}
