//! The soak (issue 12): holds 500 concurrent keep-alive connections of mixed reads and writes
//! against the real binary for 60 s on loopback, and reports errors, 5xx and latency
//! percentiles, overall and per kind of request.
//!
//! ```sh
//! cargo build --release && cargo run --release --example soak
//! cargo run --release --example soak -- --connections 100 --duration 10 --orders 20000   # quicker
//! cargo run --release --example soak -- --keep /tmp/soak   # keep the database and the server log
//! ```
//!
//! `cargo run --example` does not rebuild the server binary, hence `cargo build --release` first
//! (the soak warns when the binary looks older than the library it was built from).
//!
//! What it does: seeds a database of `--orders` orders (default 100,000) with
//! `orderbridge seed --demo`, starts `orderbridge serve` on a free loopback port (sync off, ping
//! offline: the demo's connections point at made-up platforms), gets an admin token, and opens
//! `--connections` connections (default 500). Each connection belongs to one task that writes
//! HTTP/1.1 by hand and reads each answer by its `Content-Length` (or chunks), so every task holds
//! exactly one keep-alive connection and a reconnect cannot hide. The connections are opened all
//! at once, as clients after a restart would; a connect that took ~1 s had its SYN dropped by a
//! full listen queue and sent again (Rocket 0.5 listens with a backlog of 128). Once all are
//! open, every task sends requests back to back (a closed loop: no think time, so the server is
//! saturated the whole time) for `--duration` seconds (default 60). With N connections in
//! flight, latency is mostly waiting in line: p50 is about N / throughput. The mix, by weight:
//!
//! - reads, 70%: `GET /orders` in page mode with filters and sorts (20), `GET /orders/{id}` (20),
//!   a listing session walked page by page on `/orders` or `/shipments` (10), `GET /shipments` in
//!   page mode with filters and sorts (10), `GET` of one customer, store, warehouse or product,
//!   the connection list, or the task's own imported order found by `external_id` (10);
//! - writes, 30%: `POST /customers` or `PATCH` of the task's own customer (8), `POST /products` or
//!   `PATCH` of its own product (7), `POST /import/orders` of one new order or an update of one it
//!   imported before (10), `POST /import/shipments` of a shipment for an order it read (5).
//!
//! Nothing in the mix should fail, so every answer but the expected 2xx counts as an error (4xx
//! too), as does a 2xx whose body is not what was asked for, a transport error (refused, reset,
//! closed early, no answer within 30 s) and a connection the server closed.
//!
//! After the load: the server's RSS, its CPU time and the client's, a clean stop with SIGTERM,
//! `PRAGMA integrity_check` of the file, and every write the server acknowledged counted in it.
//!
//! Passing: all connections open at once, 0 errors, 0 5xx, 0 reconnects, every acknowledged write
//! found in the file, `integrity_check` ok. The exit status is 0 then, 1 otherwise (2 when the
//! soak itself could not run).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

#[path = "../common/mod.rs"]
mod common;
mod conn;
mod load;
mod mix;
mod server;

use common::{Guard, cpu_secs, free_port, proc_status_kib, server_binary};
use conn::*;
use load::*;
use mix::*;
use server::*;

pub(crate) const ADMIN_PASSWORD: &str = "soak-admin-password";
/// An answer slower than this is a transport error (and the connection is opened again).
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Descriptors beyond the connections that the client and the server each need.
pub(crate) const SPARE_FDS: u64 = 100;
/// Error descriptions kept per task, and printed in all.
pub(crate) const SAMPLES_PER_TASK: usize = 3;
pub(crate) const SAMPLES_PRINTED: usize = 20;

pub(crate) struct Options {
    pub(crate) connections: usize,
    pub(crate) duration_secs: u64,
    pub(crate) orders: u64,
    pub(crate) keep: Option<PathBuf>,
}

pub(crate) fn options() -> Options {
    let mut o = Options { connections: 500, duration_secs: 60, orders: 100_000, keep: None };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| fail(&format!("{arg} needs a value")));
        match arg.as_str() {
            "--connections" => {
                o.connections = value().parse().unwrap_or_else(|_| fail("--connections takes a number"))
            }
            "--duration" => {
                o.duration_secs = value().parse().unwrap_or_else(|_| fail("--duration takes seconds"))
            }
            "--orders" => o.orders = value().parse().unwrap_or_else(|_| fail("--orders takes a number")),
            "--keep" => o.keep = Some(PathBuf::from(value())),
            other => fail(&format!("unknown argument {other}")),
        }
    }
    if o.connections == 0 || o.duration_secs == 0 || o.orders == 0 {
        fail("--connections, --duration and --orders must be at least 1");
    }
    o
}

pub(crate) fn fail(message: &str) -> ! {
    eprintln!("soak: {message}");
    std::process::exit(2)
}

pub(crate) fn quantile_ms(sorted: &[u32], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    f64::from(sorted[rank - 1]) / 1000.0
}

pub(crate) fn row(label: &str, t: &mut Tally, total: u64, secs: f64) -> String {
    t.micros.sort_unstable();
    let m = &t.micros;
    let share = if total == 0 { 0.0 } else { 100.0 * t.requests as f64 / total as f64 };
    format!(
        "| {label} | {} | {share:.1}% | {:.0} | {} | {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
        t.requests,
        t.requests as f64 / secs,
        t.ok,
        t.client_4xx,
        t.server_5xx,
        t.other,
        t.transport,
        quantile_ms(m, 0.50),
        quantile_ms(m, 0.90),
        quantile_ms(m, 0.99),
        quantile_ms(m, 0.999),
        m.last().map_or(0.0, |&v| f64::from(v) / 1000.0)
    )
}

pub(crate) fn main() {
    let o = options();
    match run(&o) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => fail(&e),
    }
}

pub(crate) fn run(o: &Options) -> Result<bool, String> {
    let need = o.connections as u64 + SPARE_FDS;
    if let Some(limit) = open_files_limit()
        && limit < need
    {
        return Err(format!(
            "{} connections need at least {need} open files in this process and in the server; \
             the limit is {limit}: raise it (`ulimit -n {need}`) and run again",
            o.connections
        ));
    }
    let bin = server_binary()?;
    let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let work = o.keep.clone().unwrap_or_else(|| dir.path().to_path_buf());
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let work = work.canonicalize().map_err(|e| format!("{}: {e}", work.display()))?;
    let db = work.join("soak.db");
    for suffix in ["", "-wal", "-shm", ".key"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }

    eprintln!("soak: seeding {} orders ...", o.orders);
    let t = Instant::now();
    let seeded = orderbridge(&bin, &db, &work)
        .args(["seed", "--demo", "--orders", &o.orders.to_string()])
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("seed: {e}"))?;
    if !seeded.success() {
        return Err(format!("seed failed: {seeded}"));
    }
    let seed_secs = t.elapsed().as_secs_f64();
    let db_mib_before = file_mib(&db);

    let port = free_port()?;
    let log_path = work.join("server.log");
    let log = std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let log_err = log.try_clone().map_err(|e| format!("server log: {e}"))?;
    let mut server = Guard(
        orderbridge(&bin, &db, &work)
            .arg("serve")
            .env("ROCKET_PORT", port.to_string())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(log_err))
            .spawn()
            .map_err(|e| format!("serve: {e}"))?,
    );
    let pid = server.0.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok((200, _)) = http(port, "GET", "/health", &[], "") {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("the server did not answer /health within 60 s; see {}", log_path.display()));
        }
        if let Ok(Some(status)) = server.0.try_wait() {
            let printed = std::fs::read_to_string(&log_path).unwrap_or_default();
            return Err(format!("the server exited ({status}):\n{printed}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }

    let basic = {
        use base64::Engine;
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("admin:{ADMIN_PASSWORD}"))
        )
    };
    let (status, body) = http(
        port,
        "POST",
        "/auth/token",
        &[("Authorization", &basic), ("Content-Type", "application/x-www-form-urlencoded")],
        "grant_type=client_credentials",
    )?;
    if status != 200 {
        return Err(format!("no token ({status}): {body}"));
    }
    let token: Value = serde_json::from_str(&body).map_err(|e| format!("token answer: {e}"))?;
    let token = token["access_token"].as_str().ok_or("no access_token")?;
    let world = World::read(port, format!("Bearer {token}"), o.orders)?;
    let rss_before = proc_status_kib(&pid.to_string(), "VmRSS:");

    // The load.
    let shared = Arc::new(Shared {
        world,
        gate: tokio::sync::Barrier::new(o.connections),
        start: std::sync::OnceLock::new(),
        duration: Duration::from_secs(o.duration_secs),
        per_second: (0..o.duration_secs + 60).map(|_| AtomicU64::new(0)).collect(),
        errors: AtomicU64::new(0),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    let stop = Arc::new(AtomicBool::new(false));
    let sampling = {
        let (shared, stop) = (Arc::clone(&shared), Arc::clone(&stop));
        std::thread::spawn(move || sampler(pid, shared, stop))
    };
    eprintln!("soak: opening {} connections, then {} s of load ...", o.connections, o.duration_secs);
    let server_cpu_before = cpu_secs(&pid.to_string());
    let client_cpu_before = cpu_secs("self");
    let opening = Instant::now();
    let reports: Vec<Report> = runtime.block_on(async {
        let tasks: Vec<_> =
            (0..o.connections).map(|id| tokio::spawn(worker(id, Arc::clone(&shared)))).collect();
        let mut reports = Vec::with_capacity(tasks.len());
        for task in tasks {
            match task.await {
                Ok(report) => reports.push(report),
                Err(e) => return Err(format!("a load task failed: {e}")),
            }
        }
        Ok(reports)
    })?;
    let start = *shared.start.get().ok_or("the load never started")?;
    let open_ms = start.duration_since(opening).as_secs_f64() * 1000.0;
    let secs = start.elapsed().as_secs_f64();
    let server_cpu = cpu_secs(&pid.to_string()) - server_cpu_before;
    let client_cpu = cpu_secs("self") - client_cpu_before;
    stop.store(true, Ordering::Relaxed);
    let sampled = sampling.join().map_err(|_| "the sampler panicked")?;
    drop(runtime);
    let rss_after = proc_status_kib(&pid.to_string(), "VmRSS:");
    let rss_peak = proc_status_kib(&pid.to_string(), "VmHWM:");
    let wal_mib = file_mib(&PathBuf::from(format!("{}-wal", db.display())));

    // A clean stop: SIGTERM, and Rocket's graceful shutdown.
    let t = Instant::now();
    let _ = Command::new("kill").args(["-TERM", &pid.to_string()]).status();
    let mut exit = None;
    while t.elapsed() < Duration::from_secs(15) {
        if let Ok(Some(status)) = server.0.try_wait() {
            exit = Some(status);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let stop_ms = t.elapsed().as_secs_f64() * 1000.0;
    let stopped = match exit {
        Some(status) if status.success() => format!("SIGTERM: exit 0 in {stop_ms:.0} ms"),
        Some(status) => format!("SIGTERM: {status} in {stop_ms:.0} ms"),
        None => "still running 15 s after SIGTERM (killed)".to_string(),
    };
    drop(server);
    let db_mib_after = file_mib(&db);
    eprintln!("soak: checking the database file ...");
    let file = check_file(&db)?;
    let log_text = std::fs::read_to_string(&log_path).unwrap_or_default();
    let log_problems: Vec<&str> = log_text
        .lines()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("error") || l.contains("panic") || (l.contains("warn") && !l.contains("sigterm"))
        })
        .collect();

    // The figures.
    let mut all = Tally::default();
    let mut reads = Tally::default();
    let mut writes = Tally::default();
    let mut per_kind = vec![Tally::default(); KINDS.len()];
    let mut written = Written::default();
    let (mut reconnects, mut closes, mut connected) = (0, 0, 0);
    let mut samples = Vec::new();
    let mut connects: Vec<u32> = reports.iter().filter(|r| r.connected).map(|r| r.connect_micros).collect();
    connects.sort_unstable();
    let slow_connects = connects.iter().filter(|&&us| us > 500_000).count();
    for r in &reports {
        for (k, t) in KINDS.iter().zip(&r.tallies) {
            per_kind[k.index()].add(t);
            all.add(t);
            if k.is_write() { writes.add(t) } else { reads.add(t) }
        }
        written.add(r.written);
        reconnects += r.reconnects;
        closes += r.server_closes;
        connected += u64::from(r.connected);
        samples.extend(r.samples.iter().cloned());
    }
    let total = all.requests;
    let errors = all.errors();
    let mut seconds: Vec<u64> =
        shared.per_second[..o.duration_secs as usize].iter().map(|c| c.load(Ordering::Relaxed)).collect();
    seconds.sort_unstable();

    println!();
    println!(
        "orderbridge soak: {} keep-alive connections, {} s ({secs:.1} s measured), {} seeded orders, loopback, {} cores",
        o.connections,
        o.duration_secs,
        o.orders,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!();
    println!(
        "| kind | requests | share | req/s | 2xx | 4xx | 5xx | other | transport | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (k, t) in KINDS.iter().zip(per_kind.iter_mut()) {
        println!("{}", row(k.label(), t, total, secs));
    }
    println!("{}", row("**all reads**", &mut reads, total, secs));
    println!("{}", row("**all writes**", &mut writes, total, secs));
    println!("{}", row("**all**", &mut all, total, secs));
    println!();
    let check = |ok: bool| if ok { "ok" } else { "FAILED" };
    let found_ok = |acked: u64, found: u64| found == acked || (all.transport > 0 && found >= acked);
    let writes_ok = found_ok(written.customers, file.customers)
        && found_ok(written.products, file.products)
        && found_ok(written.orders_created, file.orders)
        && found_ok(written.shipments, file.shipments);
    let integrity_ok = file.integrity == ["ok"];
    let all_connected = connected == o.connections as u64;
    println!("| measure | result | |");
    println!("|---|---|---|");
    println!(
        "| connections | {connected} of {} open at once ({open_ms:.0} ms to open them all; one connect p50 {:.1} ms, max {:.1} ms, {slow_connects} over 500 ms); server sockets during the load {}..{} | {} |",
        o.connections,
        quantile_ms(&connects, 0.5),
        connects.last().map_or(0.0, |&us| f64::from(us) / 1000.0),
        sampled.sockets_min,
        sampled.sockets_max,
        check(all_connected)
    );
    println!(
        "| throughput | {:.0} req/s; per second min {} / median {} / max {} | |",
        total as f64 / secs,
        seconds.first().copied().unwrap_or(0),
        seconds.get(seconds.len() / 2).copied().unwrap_or(0),
        seconds.last().copied().unwrap_or(0)
    );
    println!(
        "| errors | {errors} ({} 4xx, {} 5xx, {} other, {} transport) | {} |",
        all.client_4xx,
        all.server_5xx,
        all.other,
        all.transport,
        check(errors == 0)
    );
    println!(
        "| reconnects | {reconnects} ({closes} answers closed the connection) | {} |",
        check(reconnects == 0 && closes == 0)
    );
    println!(
        "| writes acknowledged / in the file | customers {}/{}, products {}/{}, orders {}/{} (+{} updates), shipments {}/{} | {} |",
        written.customers,
        file.customers,
        written.products,
        file.products,
        written.orders_created,
        file.orders,
        written.orders_updated,
        written.shipments,
        file.shipments,
        check(writes_ok)
    );
    println!(
        "| server RSS | {} MiB before, {} MiB after (peak {} MiB, max sampled during the load {} MiB) | |",
        rss_before / 1024,
        rss_after / 1024,
        rss_peak / 1024,
        sampled.rss_max_kib / 1024
    );
    println!(
        "| CPU during the load | server {:.2} cores, soak client {:.2} cores | |",
        server_cpu / secs,
        client_cpu / secs
    );
    println!(
        "| database | seeded in {seed_secs:.1} s, {db_mib_before:.0} MiB; {db_mib_after:.0} MiB after ({wal_mib:.1} MiB WAL before the stop) | |"
    );
    println!("| server stop | {stopped} | {} |", check(exit.is_some_and(|s| s.success())));
    println!(
        "| integrity_check | {} ({:.1} s) | {} |",
        file.integrity.iter().take(5).cloned().collect::<Vec<_>>().join("; "),
        file.secs,
        check(integrity_ok)
    );
    println!(
        "| server log | {} error/warning lines | {} |",
        log_problems.len(),
        check(log_problems.is_empty())
    );

    if !samples.is_empty() {
        println!();
        println!("First errors ({} shown of {errors}):", samples.len().min(SAMPLES_PRINTED));
        samples.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (_, s) in samples.iter().take(SAMPLES_PRINTED) {
            println!("  {s}");
        }
    }
    if !log_problems.is_empty() {
        println!();
        println!("Server log ({}):", log_path.display());
        for line in log_problems.iter().take(SAMPLES_PRINTED) {
            println!("  {line}");
        }
    }
    if o.keep.is_some() {
        println!();
        println!("Kept: {} and {}", db.display(), log_path.display());
    }
    let pass = all_connected
        && errors == 0
        && reconnects == 0
        && closes == 0
        && writes_ok
        && integrity_ok
        && exit.is_some_and(|s| s.success());
    println!();
    println!("{}", if pass { "PASS" } else { "FAIL" });
    Ok(pass)
}
