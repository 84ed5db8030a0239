//! The long run of the decoder property tests (issue 12): each pure decoder over N generated
//! cases, with the very generators and checks of `src/decoders_proptest/` (included below),
//! every case inside `catch_unwind`.
//!
//! ```text
//! cargo run --release --example fuzz_decoders -- --cases 1000000 [--seed N] [--only NAME] [--threads N]
//! ```
//!
//! Prints per decoder the cases run, how many it accepted and rejected, panics, broken
//! properties (a 5xx for a rejection, a date that does not read back, ...) and the time, with
//! the first failing input of each kind. Exits 1 on any panic or broken property. A stack
//! overflow cannot be caught: it aborts the run, which is a failure too. The decoders run on
//! threads with the default 2 MiB stack, as Rocket's workers do.

use std::cell::RefCell;
use std::fmt::Debug;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

// The included file names the library's modules from its crate root.
use orderbridge::{dates, http, money, orders, platforms, resources, shipments};

#[allow(dead_code)]
#[path = "../src/decoders_proptest/mod.rs"]
mod decoders_proptest;

use decoders_proptest::*;

struct Options {
    cases: u64,
    seed: u64,
    only: Option<String>,
    threads: usize,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        cases: 100_000,
        seed: 1,
        only: None,
        threads: std::thread::available_parallelism().map_or(1, usize::from),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--cases" => o.cases = value()?.replace('_', "").parse().map_err(|e| format!("--cases: {e}"))?,
            "--seed" => o.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--only" => o.only = Some(value()?),
            "--threads" => o.threads = value()?.parse().map_err(|e| format!("--threads: {e}"))?,
            other => {
                return Err(format!("unknown argument {other}; see the top of examples/fuzz_decoders.rs"));
            }
        }
    }
    o.threads = o.threads.max(1);
    Ok(o)
}

#[derive(Default)]
struct Report {
    name: &'static str,
    cases: u64,
    accepted: u64,
    rejected: u64,
    panics: u64,
    broken: u64,
    time: Duration,
    first_panic: Option<String>,
    first_broken: Option<String>,
}

thread_local! {
    /// The message and place of the latest panic on this thread, kept by the panic hook.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn shorten(s: String) -> String {
    match s.char_indices().nth(2000) {
        Some((i, _)) => format!("{}... ({} bytes)", &s[..i], s.len()),
        None => s,
    }
}

/// Runs `check` over `cases` values of `strategy`, drawn from a generator seeded by `seed`.
fn run<T: Debug>(
    name: &'static str,
    strategy: BoxedStrategy<T>,
    check: impl Fn(T) -> Checked,
    cases: u64,
    seed: u64,
) -> Report {
    // Each decoder draws its own sequence: the seed, then a hash (FNV-1a) of its name.
    let tag =
        name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8..16].copy_from_slice(&tag.to_le_bytes());
    let mut runner =
        TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &bytes));
    let mut r = Report { name, ..Report::default() };
    let started = Instant::now();
    for _ in 0..cases {
        let tree = match strategy.new_tree(&mut runner) {
            Ok(tree) => tree,
            Err(reason) => {
                r.broken += 1;
                r.first_broken.get_or_insert_with(|| format!("the generator gave up: {reason}"));
                continue;
            }
        };
        r.cases += 1;
        match catch_unwind(AssertUnwindSafe(|| check(tree.current()))) {
            Ok(Ok(Verdict::Accepted)) => r.accepted += 1,
            Ok(Ok(Verdict::Rejected)) => r.rejected += 1,
            Ok(Err(failure)) => {
                r.broken += 1;
                r.first_broken
                    .get_or_insert_with(|| shorten(format!("{failure}\n      input: {:?}", tree.current())));
            }
            Err(_) => {
                r.panics += 1;
                let message = LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_default();
                r.first_panic
                    .get_or_insert_with(|| shorten(format!("{message}\n      input: {:?}", tree.current())));
            }
        }
    }
    r.time = started.elapsed();
    r
}

type Job = Box<dyn Fn(u64, u64) -> Report + Send + Sync>;

fn job<T: Debug + 'static>(
    name: &'static str,
    strategy: fn() -> BoxedStrategy<T>,
    check: fn(T) -> Checked,
) -> (&'static str, Job) {
    (name, Box::new(move |cases, seed| run(name, strategy(), check, cases, seed)))
}

fn jobs() -> Vec<(&'static str, Job)> {
    vec![
        job(
            "json body",
            || {
                prop_oneof![
                    text(),
                    json_like(),
                    json_object().prop_map(|m| serde_json::Value::Object(m).to_string())
                ]
                .boxed()
            },
            |t| check_json_body(&t),
        ),
        job("form fields", form_fields, |f| check_form(&f)),
        job("dateString", date_string, |s| check_date(&s)),
        job("decimal", decimal_text, |s| check_decimal(&s)),
        job(
            "listing query",
            || (query_string(), prop::option::of(any::<i64>())).boxed(),
            |(q, scope)| check_query(&q, scope),
        ),
        job("import body", import_text, |t| check_import_text(&t)),
        job("import bytes", || vec(any::<u8>(), 0..96).boxed(), check_import_bytes),
        job("order record", order_record, check_order_record),
        job("shipment record", shipment_record, check_shipment_record),
        job("shipment CSV", any_warehouse_file, |b| check_shipments_csv(&b)),
        job("stock CSV", any_warehouse_file, |b| check_stock_csv(&b)),
    ]
}

fn main() {
    let o = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("fuzz_decoders: {e}");
            std::process::exit(2);
        }
    };
    std::panic::set_hook(Box::new(|info| {
        LAST_PANIC.with(|p| *p.borrow_mut() = Some(info.to_string()));
    }));
    let jobs: Vec<(&'static str, Job)> = jobs()
        .into_iter()
        .filter(|(name, _)| o.only.as_deref().is_none_or(|only| name.contains(only)))
        .collect();
    println!(
        "fuzz_decoders: {} decoder(s), {} cases each, seed {}, {} thread(s)",
        jobs.len(),
        o.cases,
        o.seed,
        o.threads
    );
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let reports: Mutex<Vec<(usize, Report)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..o.threads.min(jobs.len()) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((_, job)) = jobs.get(i) else { break };
                    let r = job(o.cases, o.seed);
                    println!(
                        "  done: {:<16} {:>9} cases in {:>7.1} s, {} panic(s), {} broken",
                        r.name,
                        r.cases,
                        r.time.as_secs_f64(),
                        r.panics,
                        r.broken
                    );
                    reports.lock().unwrap_or_else(|e| e.into_inner()).push((i, r));
                }
            });
        }
    });
    let mut reports = reports.into_inner().unwrap_or_else(|e| e.into_inner());
    reports.sort_by_key(|(i, _)| *i);
    println!();
    println!(
        "{:<16} {:>10} {:>10} {:>10} {:>7} {:>7} {:>9} {:>9}",
        "decoder", "cases", "accepted", "rejected", "panics", "broken", "time s", "us/case"
    );
    let mut failed = false;
    for (_, r) in &reports {
        println!(
            "{:<16} {:>10} {:>10} {:>10} {:>7} {:>7} {:>9.1} {:>9.1}",
            r.name,
            r.cases,
            r.accepted,
            r.rejected,
            r.panics,
            r.broken,
            r.time.as_secs_f64(),
            r.time.as_secs_f64() * 1e6 / r.cases.max(1) as f64
        );
        failed |= r.panics > 0 || r.broken > 0;
    }
    for (_, r) in &reports {
        if let Some(p) = &r.first_panic {
            println!("\n{}: first panic: {p}", r.name);
        }
        if let Some(b) = &r.first_broken {
            println!("\n{}: first broken property: {b}", r.name);
        }
    }
    println!(
        "\ntotal {:.1} s: {}",
        started.elapsed().as_secs_f64(),
        if failed { "FAILED" } else { "no failure" }
    );
    if failed {
        std::process::exit(1);
    }
}
