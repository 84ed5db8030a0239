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

use std::io::{Read, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

const ADMIN_PASSWORD: &str = "soak-admin-password";
/// An answer slower than this is a transport error (and the connection is opened again).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Descriptors beyond the connections that the client and the server each need.
const SPARE_FDS: u64 = 100;
/// Error descriptions kept per task, and printed in all.
const SAMPLES_PER_TASK: usize = 3;
const SAMPLES_PRINTED: usize = 20;

struct Options {
    connections: usize,
    duration_secs: u64,
    orders: u64,
    keep: Option<PathBuf>,
}

fn options() -> Options {
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

fn fail(message: &str) -> ! {
    eprintln!("soak: {message}");
    std::process::exit(2)
}

// ---------------------------------------------------------------------------------------------
// The server process

/// A child process killed when dropped, so no path out of `run` leaves the server behind.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn binary() -> Result<PathBuf, String> {
    // target/release/examples/soak -> target/release/orderbridge
    let exe = std::env::current_exe().map_err(|e| format!("current exe: {e}"))?;
    let dir = exe.parent().and_then(Path::parent).ok_or("no target directory")?;
    let bin = dir.join("orderbridge");
    if !bin.exists() {
        return Err("build the server first: cargo build --release".into());
    }
    // `cargo run --example` rebuilds the library but not the binary.
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if let (Some(bin_time), Some(lib_time)) = (modified(&bin), modified(&dir.join("liborderbridge.rlib")))
        && lib_time > bin_time
    {
        eprintln!(
            "soak: warning: {} is older than the library; run `cargo build --release` first",
            bin.display()
        );
    }
    Ok(bin)
}

fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).map_err(|e| e.to_string())
}

fn orderbridge(bin: &Path, db: &Path, work: &Path) -> Command {
    let mut cmd = Command::new(bin);
    // Settings from the caller's shell or a Rocket.toml would change what is measured.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("ROCKET_") || key.starts_with("ORDERBRIDGE_") {
            cmd.env_remove(key.as_ref());
        }
    }
    cmd.current_dir(work)
        .env("ORDERBRIDGE_DATABASE", db)
        .env("ORDERBRIDGE_ADMIN_PASSWORD", ADMIN_PASSWORD)
        .env("ORDERBRIDGE_SYNC_MODE", "off")
        .env("ORDERBRIDGE_PING_MODE", "offline")
        .env("ROCKET_ADDRESS", "127.0.0.1")
        .env("ROCKET_LOG_LEVEL", "critical")
        .env("ROCKET_CLI_COLORS", "false");
    cmd
}

/// The soft limit on open files of this process (the server inherits it); `None` if unlimited.
fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

fn proc_status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// User + system CPU seconds of a process (`self` or a pid), from clock ticks of 1/100 s.
fn cpu_secs(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    (ticks(11) + ticks(12)) as f64 / 100.0
}

/// The process's open sockets (its connections and its listener).
fn sockets(pid: u32) -> u64 {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return 0 };
    dir.filter_map(Result::ok)
        .filter(|e| std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:")))
        .count() as u64
}

fn file_mib(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / 1_048_576.0)
}

/// One HTTP/1.1 request on a fresh connection, for setting up: (status, body).
fn http(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Result<(u16, String), String> {
    let io = |e: std::io::Error| format!("{method} {path}: {e}");
    let mut stream = TcpStream::connect(("127.0.0.1", port)).map_err(io)?;
    stream.set_read_timeout(Some(Duration::from_secs(30))).map_err(io)?;
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).map_err(io)?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).map_err(io)?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        return Err(format!("{method} {path}: a chunked answer; expected Content-Length"));
    }
    Ok((status, body.to_string()))
}

/// `GET path` as JSON, which must answer 200.
fn get_json(port: u16, auth: &str, path: &str) -> Result<Value, String> {
    let (status, body) = http(port, "GET", path, &[("Authorization", auth)], "")?;
    if status != 200 {
        return Err(format!("GET {path} answered {status}: {body}"));
    }
    serde_json::from_str(&body).map_err(|e| format!("GET {path}: {e}"))
}

/// What the seeded database holds, read over the API before the load.
struct World {
    port: u16,
    auth: String,
    /// Seeded orders have the ids 1..=orders.
    orders: u64,
    /// (store id, its customer id)
    stores: Vec<(i64, i64)>,
    customers: Vec<i64>,
    /// (warehouse id, its customer id)
    warehouses: Vec<(i64, i64)>,
    products: Vec<i64>,
}

impl World {
    fn read(port: u16, auth: String, orders: u64) -> Result<World, String> {
        let pairs = |v: &Value, key: &str| -> Vec<(i64, i64)> {
            v.as_array()
                .map(|a| a.iter().filter_map(|x| Some((x["id"].as_i64()?, x[key].as_i64()?))).collect())
                .unwrap_or_default()
        };
        let ids = |v: &Value| -> Vec<i64> {
            v.as_array().map(|a| a.iter().filter_map(|x| x["id"].as_i64()).collect()).unwrap_or_default()
        };
        let stores = pairs(&get_json(port, &auth, "/stores")?, "customer_id");
        let warehouses = pairs(&get_json(port, &auth, "/warehouses")?, "customer_id");
        let customers = ids(&get_json(port, &auth, "/customers")?);
        let products = ids(&get_json(port, &auth, "/products?page=1&limit=1000")?["products"]);
        let newest = get_json(port, &auth, "/orders?page=1&limit=1&sort=-id")?;
        let newest = newest["orders"][0]["id"].as_i64().unwrap_or(0);
        if newest != orders as i64 {
            return Err(format!("the seeded database's newest order is {newest}, not {orders}"));
        }
        let world = World { port, auth, orders, stores, customers, warehouses, products };
        if world.stores.is_empty() || world.customers.is_empty() || world.products.is_empty() {
            return Err("the seeded database has no stores, customers or products".into());
        }
        if world.stores.iter().any(|&(_, c)| world.warehouse_of(c).is_none()) {
            return Err("a seeded store's customer has no warehouse".into());
        }
        Ok(world)
    }

    fn warehouse_of(&self, customer: i64) -> Option<i64> {
        self.warehouses.iter().find(|&&(_, c)| c == customer).map(|&(w, _)| w)
    }

    fn customer_of_store(&self, store: i64) -> Option<i64> {
        self.stores.iter().find(|&&(s, _)| s == store).map(|&(_, c)| c)
    }
}

// ---------------------------------------------------------------------------------------------
// The mix

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    OrdersPage,
    OrderGet,
    Session,
    ShipmentsPage,
    EntityGet,
    CustomerWrite,
    ProductWrite,
    OrderImport,
    ShipmentImport,
}

const KINDS: [Kind; 9] = [
    Kind::OrdersPage,
    Kind::OrderGet,
    Kind::Session,
    Kind::ShipmentsPage,
    Kind::EntityGet,
    Kind::CustomerWrite,
    Kind::ProductWrite,
    Kind::OrderImport,
    Kind::ShipmentImport,
];

impl Kind {
    /// Share of the requests, in percent (they add up to 100).
    fn weight(self) -> u32 {
        match self {
            Kind::OrdersPage | Kind::OrderGet => 20,
            Kind::Session | Kind::ShipmentsPage | Kind::EntityGet | Kind::OrderImport => 10,
            Kind::CustomerWrite => 8,
            Kind::ProductWrite => 7,
            Kind::ShipmentImport => 5,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Kind::OrdersPage => "GET /orders page mode, filters, sorts",
            Kind::OrderGet => "GET /orders/{id}",
            Kind::Session => "session walk /orders, /shipments",
            Kind::ShipmentsPage => "GET /shipments page mode, filters",
            Kind::EntityGet => "GET customer/store/warehouse/product",
            Kind::CustomerWrite => "POST, PATCH /customers",
            Kind::ProductWrite => "POST, PATCH /products",
            Kind::OrderImport => "POST /import/orders (new, update)",
            Kind::ShipmentImport => "POST /import/shipments",
        }
    }

    fn is_write(self) -> bool {
        matches!(self, Kind::CustomerWrite | Kind::ProductWrite | Kind::OrderImport | Kind::ShipmentImport)
    }

    fn index(self) -> usize {
        KINDS.iter().position(|&k| k == self).unwrap_or(0)
    }
}

const FULFILLMENT_STATES: [&str; 4] = ["shipped", "partially_shipped", "pending_shipment", "cancelled"];
const SHIPMENT_STATES: [&str; 9] = [
    "new",
    "ready_for_shipment_notification",
    "scheduled_notify_of_shipment",
    "scheduled_processing_shipment",
    "errored_processing",
    "delayed_notifying_of_shipment",
    "errored_notifying_of_shipment",
    "notified_shipped",
    "archived",
];

fn one<'a, T>(rng: &mut StdRng, list: &'a [T]) -> &'a T {
    &list[rng.random_range(0..list.len())]
}

/// What to do with a successful answer.
enum Then {
    Nothing,
    /// `GET /orders/{id}`: the document of that order; keep it for a shipment.
    Order(i64),
    /// A listing session's page on `orders` or `shipments`.
    Session(&'static str),
    /// `201 {"id"}` of a customer or a product.
    NewCustomer,
    NewProduct,
    /// `{"created", "updated"}` of an import of one record.
    Imported {
        what: Imported,
        created: bool,
    },
    /// A listing that must find exactly one record.
    OneMatch,
}

#[derive(Clone, Copy)]
enum Imported {
    Order { store: i64 },
    Shipment,
}

struct Request {
    kind: Kind,
    method: &'static str,
    path: String,
    body: Option<String>,
    expect: u16,
    then: Then,
}

impl Request {
    fn get(kind: Kind, path: String, then: Then) -> Request {
        Request { kind, method: "GET", path, body: None, expect: 200, then }
    }

    fn send(
        kind: Kind,
        method: &'static str,
        path: String,
        body: &Value,
        expect: u16,
        then: Then,
    ) -> Request {
        Request { kind, method, path, body: Some(body.to_string()), expect, then }
    }

    fn bytes(&self, world: &World) -> Vec<u8> {
        let mut r = format!(
            "{} {} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: {}\r\n",
            self.method, self.path, world.port, world.auth
        );
        match &self.body {
            Some(body) => r.push_str(&format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )),
            None => r.push_str("\r\n"),
        }
        r.into_bytes()
    }
}

/// What one task remembers between its requests.
struct Task {
    id: usize,
    rng: StdRng,
    /// Grows with each name the task makes, so names are unique in the run.
    n: u64,
    customers: Vec<i64>,
    products: Vec<i64>,
    /// (store id, external id) of the orders it imported.
    imported: Vec<(i64, String)>,
    /// (order id, store id, an item id) of orders it read, for shipments.
    shippable: Vec<(i64, i64, i64)>,
    /// (resource, session id) of the listing session it walks.
    session: Option<(&'static str, String)>,
    written: Written,
}

/// The writes the server acknowledged.
#[derive(Default, Clone, Copy)]
struct Written {
    customers: u64,
    products: u64,
    orders_created: u64,
    orders_updated: u64,
    shipments: u64,
}

impl Written {
    fn add(&mut self, o: Written) {
        self.customers += o.customers;
        self.products += o.products;
        self.orders_created += o.orders_created;
        self.orders_updated += o.orders_updated;
        self.shipments += o.shipments;
    }
}

fn now_iso() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "2026-01-01T00:00:00Z".to_string())
}

impl Task {
    fn next_name(&mut self) -> String {
        self.n += 1;
        format!("{}-{}", self.id, self.n)
    }

    fn pick(&mut self) -> Kind {
        let mut r = self.rng.random_range(0..100);
        let mut kind = Kind::OrderGet;
        for k in KINDS {
            if r < k.weight() {
                kind = k;
                break;
            }
            r -= k.weight();
        }
        // A shipment needs an order read first.
        if kind == Kind::ShipmentImport && self.shippable.is_empty() { Kind::OrderGet } else { kind }
    }

    fn next(&mut self, w: &World) -> Request {
        let kind = self.pick();
        let rng = &mut self.rng;
        match kind {
            Kind::OrdersPage => {
                let limit = *one(rng, &[20, 20, 50, 100]);
                let page = rng.random_range(1..=10);
                let store = one(rng, &w.stores).0;
                let filter = match rng.random_range(0..5) {
                    0 => String::new(),
                    1 => format!("&store_id={store}"),
                    2 => format!("&state={}", one(rng, &FULFILLMENT_STATES)),
                    3 => format!("&store_id={store}&ordered_at_min=30+days+ago&sort=-ordered_at"),
                    _ => format!("&sort={}", one(rng, &["-id", "ordered_at", "-created_at", "external_id"])),
                };
                Request::get(kind, format!("/orders?page={page}&limit={limit}{filter}"), Then::Nothing)
            }
            Kind::OrderGet => {
                let id = rng.random_range(1..=w.orders) as i64;
                Request::get(kind, format!("/orders/{id}"), Then::Order(id))
            }
            Kind::Session => match &self.session {
                Some((resource, id)) if rng.random_range(0..50) != 0 => {
                    Request::get(kind, format!("/{resource}?session_id={id}"), Then::Session(resource))
                }
                _ => {
                    let (resource, limit) =
                        if rng.random_bool(0.7) { ("orders", 20) } else { ("shipments", 50) };
                    let filter = if rng.random_bool(0.5) {
                        format!("&store_id={}", one(rng, &w.stores).0)
                    } else {
                        String::new()
                    };
                    Request::get(kind, format!("/{resource}?limit={limit}{filter}"), Then::Session(resource))
                }
            },
            Kind::ShipmentsPage => {
                let limit = *one(rng, &[20, 50]);
                let page = rng.random_range(1..=5);
                let filter = match rng.random_range(0..5) {
                    0 => format!("&state={}", one(rng, &SHIPMENT_STATES)),
                    1 => format!("&warehouse_id={}", one(rng, &w.warehouses).0),
                    2 => format!("&store_id={}&sort=-shipped_at", one(rng, &w.stores).0),
                    3 => format!("&customer_id={}&sort=tracking_number", one(rng, &w.customers)),
                    _ => "&sort=-created_at".to_string(),
                };
                Request::get(kind, format!("/shipments?page={page}&limit={limit}{filter}"), Then::Nothing)
            }
            Kind::EntityGet => {
                let path = match rng.random_range(0..6) {
                    0 => match self.customers.last() {
                        Some(id) if rng.random_bool(0.5) => format!("/customers/{id}"),
                        _ => format!("/customers/{}", one(rng, &w.customers)),
                    },
                    1 => format!("/stores/{}", one(rng, &w.stores).0),
                    2 => format!("/warehouses/{}", one(rng, &w.warehouses).0),
                    3 => match self.products.last() {
                        Some(id) if rng.random_bool(0.5) => format!("/products/{id}"),
                        _ => format!("/products/{}", one(rng, &w.products)),
                    },
                    4 => "/connections".to_string(),
                    _ => match self.imported.last() {
                        Some((store, external)) => {
                            let path = format!("/orders?page=1&store_id={store}&external_id={external}");
                            return Request::get(kind, path, Then::OneMatch);
                        }
                        None => format!("/customers/{}", one(rng, &w.customers)),
                    },
                };
                Request::get(kind, path, Then::Nothing)
            }
            Kind::CustomerWrite => {
                if self.customers.is_empty() || self.rng.random_range(0..10) == 0 {
                    let name = self.next_name();
                    let body = json!({"company_name": format!("Soak {name}"), "city": "Soakville",
                                      "state": "TX", "zipcode": "78701", "country": "US"});
                    Request::send(kind, "POST", "/customers".into(), &body, 201, Then::NewCustomer)
                } else {
                    let id = *one(&mut self.rng, &self.customers);
                    self.n += 1;
                    let body = json!({"street1": format!("{} Soak St", self.n), "zipcode": "78702"});
                    Request::send(kind, "PATCH", format!("/customers/{id}"), &body, 204, Then::Nothing)
                }
            }
            Kind::ProductWrite => {
                if self.products.is_empty() || self.rng.random_range(0..4) == 0 {
                    let customer = match self.customers.last() {
                        Some(&id) => id,
                        None => *one(&mut self.rng, &w.customers),
                    };
                    let name = self.next_name();
                    let body = json!({"customer_id": customer, "sku": format!("SOAK-{name}")});
                    Request::send(kind, "POST", "/products".into(), &body, 201, Then::NewProduct)
                } else {
                    let id = *one(&mut self.rng, &self.products);
                    self.n += 1;
                    let body = json!({"variant_of": format!("soak-{}", self.n)});
                    Request::send(kind, "PATCH", format!("/products/{id}"), &body, 204, Then::Nothing)
                }
            }
            Kind::OrderImport => {
                let (store, external, created) = if self.imported.is_empty() || self.rng.random_bool(0.7) {
                    let store = one(&mut self.rng, &w.stores).0;
                    (store, format!("SOAK-{}", self.next_name()), true)
                } else {
                    let (store, external) = one(&mut self.rng, &self.imported).clone();
                    (store, external, false)
                };
                self.n += 1;
                let items: Vec<Value> = (1..=self.rng.random_range(1..=3))
                    .map(|line| {
                        json!({"sku": format!("SOAK-SKU-{line}"), "name": format!("Soak item {line}"),
                               "quantity": self.rng.random_range(1..=4), "unit_price": "12.50",
                               "weight": "0.40", "external_order_item_id": format!("{external}-{line}")})
                    })
                    .collect();
                let order = json!({
                    "store_id": store, "external_id": external, "external_display_id": format!("#{external}"),
                    "customer_email": format!("soak{}@example.com", self.id), "ordered_at": now_iso(),
                    "currency_code": "USD", "shipping_amount": "5.00", "tax_amount": "1.25",
                    "notes": format!("soak revision {}", self.n), "fulfillment_state": "new",
                    "shipping_carrier_name": "UPS", "shipping_carrier_service_level": "Ground",
                    "shipping_address": {"first_name": "Sam", "last_name": "Soak", "street1": "1 Main St",
                        "city": "Austin", "region": "TX", "postal_code": "78701", "country": "US"},
                    "order_items": items,
                });
                let then = Then::Imported { what: Imported::Order { store }, created };
                // An update keeps the external id: remember a new one only.
                if created {
                    self.imported.push((store, external));
                }
                Request::send(kind, "POST", "/import/orders".into(), &json!([order]), 200, then)
            }
            Kind::ShipmentImport => {
                let (order, store, item) = self.shippable.pop().unwrap_or((1, 1, 1));
                let warehouse = w.customer_of_store(store).and_then(|c| w.warehouse_of(c)).unwrap_or(1);
                let name = self.next_name();
                let shipment = json!({
                    "order_id": order, "tracking_number": format!("SOAK-{name}"), "warehouse_id": warehouse,
                    "carrier_name": "UPS", "service_level": "Ground", "shipped_at": now_iso(), "weight": "1.5",
                    "order_items": [{"id": item}],
                });
                let then = Then::Imported { what: Imported::Shipment, created: true };
                Request::send(kind, "POST", "/import/shipments".into(), &json!([shipment]), 200, then)
            }
        }
    }

    /// Checks a 2xx answer's body and learns from it; `Err` describes a wrong body.
    fn learn(&mut self, then: &Then, body: &[u8]) -> Result<(), String> {
        let text = std::str::from_utf8(body).map_err(|_| "a body that is not UTF-8".to_string())?;
        match then {
            Then::Nothing => {
                if !text.is_empty() && !text.starts_with(['{', '[']) {
                    return Err("a body that is not JSON".into());
                }
            }
            Then::Order(id) => {
                if self.shippable.len() < 8 {
                    let v: Value = serde_json::from_str(text).map_err(|e| format!("order JSON: {e}"))?;
                    let order = &v["order"];
                    if order["id"].as_i64() != Some(*id) {
                        return Err(format!("asked for order {id}, got {}", order["id"]));
                    }
                    let store = order["store_id"].as_i64().ok_or("an order without store_id")?;
                    let item = order["order_items"][0]["id"].as_i64();
                    if let Some(item) = item {
                        self.shippable.push((*id, store, item));
                    }
                } else if !text.contains(&format!("\"id\":{id},")) {
                    return Err(format!("asked for order {id}, its id is not in the body"));
                }
            }
            Then::Session(resource) => {
                let at = text.rfind("\"session_id\":\"").ok_or("a session page without session_id")?;
                let rest = &text[at + 14..];
                let id = &rest[..rest.find('"').ok_or("an unterminated session_id")?];
                if !text.starts_with(&format!("{{\"{resource}\":[")) {
                    return Err(format!("a session page without {resource}"));
                }
                // Past the end the page is empty: open another session next time.
                let ended = text.starts_with(&format!("{{\"{resource}\":[]"));
                self.session = if ended { None } else { Some((*resource, id.to_string())) };
            }
            Then::NewCustomer | Then::NewProduct => {
                let v: Value = serde_json::from_str(text).map_err(|e| format!("create answer: {e}"))?;
                let id = v["id"].as_i64().ok_or_else(|| format!("a create answer without id: {text}"))?;
                if matches!(then, Then::NewCustomer) {
                    self.customers.push(id);
                    self.written.customers += 1;
                } else {
                    self.products.push(id);
                    self.written.products += 1;
                }
            }
            Then::Imported { what, created } => {
                let v: Value = serde_json::from_str(text).map_err(|e| format!("import answer: {e}"))?;
                let (c, u) = (v["created"].as_u64(), v["updated"].as_u64());
                let want = if *created { (Some(1), Some(0)) } else { (Some(0), Some(1)) };
                if (c, u) != want {
                    return Err(format!("an import of one record answered {text}"));
                }
                match (what, created) {
                    (Imported::Order { .. }, true) => self.written.orders_created += 1,
                    (Imported::Order { .. }, false) => self.written.orders_updated += 1,
                    (Imported::Shipment, _) => self.written.shipments += 1,
                }
            }
            Then::OneMatch => {
                if !text.contains("\"total_count\":1,") {
                    return Err(format!("looked up one order by external_id: {}", prefix(text, 200)));
                }
            }
        }
        Ok(())
    }

    /// The import of a new order failed: it may not exist, so do not update or look it up.
    fn forget(&mut self, then: &Then) {
        if let Then::Imported { what: Imported::Order { store }, created: true } = then
            && self.imported.last().is_some_and(|(s, _)| s == store)
        {
            self.imported.pop();
        }
    }
}

fn prefix(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

// ---------------------------------------------------------------------------------------------
// One keep-alive connection, by hand

struct Conn {
    port: u16,
    stream: Option<BufReader<tokio::net::TcpStream>>,
    opened: u64,
}

struct Answer {
    status: u16,
    body: Vec<u8>,
    keep_alive: bool,
}

impl Conn {
    async fn open(&mut self) -> std::io::Result<()> {
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", self.port)).await?;
        stream.set_nodelay(true)?;
        self.stream = Some(BufReader::with_capacity(64 * 1024, stream));
        self.opened += 1;
        Ok(())
    }

    /// Sends one request and reads its answer. The caller drops the connection on `Err`.
    async fn exchange(&mut self, request: &[u8]) -> Result<Answer, String> {
        if self.stream.is_none() {
            self.open().await.map_err(|e| format!("connect: {e}"))?;
        }
        let Some(stream) = self.stream.as_mut() else { return Err("no connection".into()) };
        stream.get_mut().write_all(request).await.map_err(|e| format!("write: {e}"))?;
        let mut line = Vec::with_capacity(256);
        read_line(stream, &mut line, "status line").await?;
        let status_line = String::from_utf8_lossy(&line).into_owned();
        let status: u16 = status_line
            .strip_prefix("HTTP/1.1 ")
            .and_then(|s| s.get(..3))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("not an HTTP/1.1 status line: {:?}", status_line.trim_end()))?;
        let (mut length, mut chunked, mut keep_alive) = (None, false, true);
        loop {
            line.clear();
            read_line(stream, &mut line, "header").await?;
            if line == b"\r\n" || line == b"\n" {
                break;
            }
            let header = String::from_utf8_lossy(&line).to_ascii_lowercase();
            let Some((name, value)) = header.split_once(':') else { continue };
            let value = value.trim();
            match name.trim() {
                "content-length" => length = Some(value.parse::<usize>().map_err(|_| "bad Content-Length")?),
                "transfer-encoding" => chunked = value.contains("chunked"),
                "connection" => keep_alive = !value.contains("close"),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                read_line(stream, &mut line, "chunk size").await?;
                let size = String::from_utf8_lossy(&line);
                let size = size.trim().split(';').next().unwrap_or("");
                let size = usize::from_str_radix(size, 16).map_err(|_| format!("bad chunk size {size:?}"))?;
                if size == 0 {
                    // Trailers, up to the empty line.
                    loop {
                        line.clear();
                        read_line(stream, &mut line, "trailer").await?;
                        if line == b"\r\n" || line == b"\n" {
                            break;
                        }
                    }
                    break;
                }
                let start = body.len();
                body.resize(start + size, 0);
                stream.read_exact(&mut body[start..]).await.map_err(|e| format!("chunk: {e}"))?;
                let mut crlf = [0u8; 2];
                stream.read_exact(&mut crlf).await.map_err(|e| format!("chunk end: {e}"))?;
            }
        } else if let Some(n) = length {
            body.resize(n, 0);
            stream.read_exact(&mut body).await.map_err(|e| format!("body ({n} bytes): {e}"))?;
        } else if !(status == 204 || status == 304 || (100..200).contains(&status)) {
            // No length: the body runs to the end of the connection.
            stream.read_to_end(&mut body).await.map_err(|e| format!("body: {e}"))?;
            keep_alive = false;
        }
        Ok(Answer { status, body, keep_alive })
    }
}

/// Reads one line (with its `\n`); the end of the stream before one is an error.
async fn read_line(
    stream: &mut BufReader<tokio::net::TcpStream>,
    line: &mut Vec<u8>,
    what: &str,
) -> Result<(), String> {
    match stream.read_until(b'\n', line).await {
        Ok(0) => Err(format!("the server closed the connection before the {what}")),
        Ok(_) if line.ends_with(b"\n") => Ok(()),
        Ok(_) => Err(format!("the server closed the connection within the {what}")),
        Err(e) => Err(format!("reading the {what}: {e}")),
    }
}

// ---------------------------------------------------------------------------------------------
// The load

#[derive(Default, Clone)]
struct Tally {
    requests: u64,
    ok: u64,
    client_4xx: u64,
    server_5xx: u64,
    /// Another status than the expected one (not 4xx or 5xx), or a wrong body.
    other: u64,
    transport: u64,
    /// Latency of every answer, in microseconds.
    micros: Vec<u32>,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.requests += o.requests;
        self.ok += o.ok;
        self.client_4xx += o.client_4xx;
        self.server_5xx += o.server_5xx;
        self.other += o.other;
        self.transport += o.transport;
        self.micros.extend_from_slice(&o.micros);
    }

    fn errors(&self) -> u64 {
        self.client_4xx + self.server_5xx + self.other + self.transport
    }
}

struct Report {
    tallies: Vec<Tally>,
    connected: bool,
    /// How long opening the connection took, retries included.
    connect_micros: u32,
    /// Connections opened after the first: each one followed an error or a close.
    reconnects: u64,
    /// Answers that closed the connection (`Connection: close`, or a body to the end).
    server_closes: u64,
    /// (seconds into the load, what went wrong)
    samples: Vec<(f64, String)>,
    written: Written,
}

/// What all tasks share while they run.
struct Shared {
    world: World,
    gate: tokio::sync::Barrier,
    start: std::sync::OnceLock<Instant>,
    duration: Duration,
    /// Answers completed in each second of the run.
    per_second: Vec<AtomicU64>,
    errors: AtomicU64,
}

async fn worker(id: usize, shared: Arc<Shared>) -> Report {
    let w = &shared.world;
    let mut conn = Conn { port: w.port, stream: None, opened: 0 };
    let mut report = Report {
        tallies: vec![Tally::default(); KINDS.len()],
        connected: false,
        connect_micros: 0,
        reconnects: 0,
        server_closes: 0,
        samples: Vec::new(),
        written: Written::default(),
    };
    let connecting = Instant::now();
    for attempt in 0..3 {
        match conn.open().await {
            Ok(()) => {
                report.connected = true;
                report.connect_micros = u32::try_from(connecting.elapsed().as_micros()).unwrap_or(u32::MAX);
                break;
            }
            Err(e) => {
                if report.samples.len() < SAMPLES_PER_TASK {
                    report.samples.push((0.0, format!("task {id}: connect (attempt {}): {e}", attempt + 1)));
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    // Everyone connected (or gave up) before anyone sends.
    shared.gate.wait().await;
    let start = *shared.start.get_or_init(Instant::now);
    let deadline = start + shared.duration;
    let mut task = Task {
        id,
        rng: StdRng::seed_from_u64(0x50A4 + id as u64),
        n: 0,
        customers: Vec::new(),
        products: Vec::new(),
        imported: Vec::new(),
        shippable: Vec::new(),
        session: None,
        written: Written::default(),
    };
    while Instant::now() < deadline {
        let request = task.next(w);
        let bytes = request.bytes(w);
        let reopening = conn.stream.is_none() && conn.opened > 0;
        let sent = Instant::now();
        let result = tokio::time::timeout(REQUEST_TIMEOUT, conn.exchange(&bytes)).await;
        let elapsed = sent.elapsed();
        if reopening && conn.stream.is_some() {
            report.reconnects += 1;
        }
        let tally = &mut report.tallies[request.kind.index()];
        tally.requests += 1;
        let slot = (start.elapsed().as_secs() as usize).min(shared.per_second.len() - 1);
        shared.per_second[slot].fetch_add(1, Ordering::Relaxed);
        let problem = match result {
            Err(_) => {
                conn.stream = None;
                tally.transport += 1;
                Some(format!("no answer within {} s", REQUEST_TIMEOUT.as_secs()))
            }
            Ok(Err(e)) => {
                conn.stream = None;
                tally.transport += 1;
                Some(e)
            }
            Ok(Ok(answer)) => {
                tally.micros.push(u32::try_from(elapsed.as_micros()).unwrap_or(u32::MAX));
                if !answer.keep_alive {
                    conn.stream = None;
                    report.server_closes += 1;
                }
                let body = String::from_utf8_lossy(&answer.body);
                if answer.status == request.expect {
                    match task.learn(&request.then, &answer.body) {
                        Ok(()) => {
                            tally.ok += 1;
                            None
                        }
                        Err(e) => {
                            tally.other += 1;
                            Some(format!("{} (status {}): {e}", answer.status, request.expect))
                        }
                    }
                } else {
                    match answer.status {
                        400..=499 => tally.client_4xx += 1,
                        500..=599 => tally.server_5xx += 1,
                        _ => tally.other += 1,
                    }
                    Some(format!("{} (expected {}): {}", answer.status, request.expect, prefix(&body, 300)))
                }
            }
        };
        if let Some(problem) = problem {
            task.forget(&request.then);
            shared.errors.fetch_add(1, Ordering::Relaxed);
            if report.samples.len() < SAMPLES_PER_TASK {
                let at = start.elapsed().as_secs_f64();
                let body =
                    request.body.as_deref().map(|b| format!(" body {}", prefix(b, 200))).unwrap_or_default();
                report.samples.push((
                    at,
                    format!("task {id} at {at:.1} s: {} {}{body} -> {problem}", request.method, request.path),
                ));
            }
        }
    }
    report.written = task.written;
    report
}

/// What the sampler saw of the server while the load ran.
#[derive(Default)]
struct Sampled {
    rss_max_kib: u64,
    sockets_min: u64,
    sockets_max: u64,
}

/// Every second until `stop`: the server's RSS and sockets, and a line of progress every 10 s.
fn sampler(pid: u32, shared: Arc<Shared>, stop: Arc<AtomicBool>) -> Sampled {
    let mut s = Sampled { sockets_min: u64::MAX, ..Sampled::default() };
    let mut last_print = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(1000));
        let Some(start) = shared.start.get() else { continue };
        if start.elapsed() > shared.duration {
            continue;
        }
        s.rss_max_kib = s.rss_max_kib.max(proc_status_kib(pid, "VmRSS:"));
        let open = sockets(pid);
        s.sockets_min = s.sockets_min.min(open);
        s.sockets_max = s.sockets_max.max(open);
        if last_print.elapsed() >= Duration::from_secs(10) {
            last_print = Instant::now();
            let done: u64 = shared.per_second.iter().map(|c| c.load(Ordering::Relaxed)).sum();
            eprintln!(
                "soak: {:>3.0} s: {done} requests, {} errors, server {} sockets, RSS {} MiB",
                start.elapsed().as_secs_f64(),
                shared.errors.load(Ordering::Relaxed),
                open,
                proc_status_kib(pid, "VmRSS:") / 1024
            );
        }
    }
    if s.sockets_min == u64::MAX {
        s.sockets_min = 0;
    }
    s
}

// ---------------------------------------------------------------------------------------------
// After the load

/// `PRAGMA integrity_check` and the rows the soak wrote, from the file with the server stopped.
struct FileCheck {
    integrity: Vec<String>,
    secs: f64,
    customers: u64,
    products: u64,
    orders: u64,
    shipments: u64,
}

fn check_file(db: &Path) -> Result<FileCheck, String> {
    let e = |e: rusqlite::Error| format!("{}: {e}", db.display());
    let t = Instant::now();
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(e)?;
    let mut stmt = conn.prepare("PRAGMA integrity_check").map_err(e)?;
    let integrity = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(e)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(e)?;
    let secs = t.elapsed().as_secs_f64();
    let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).map(|n| n as u64).map_err(e);
    Ok(FileCheck {
        integrity,
        secs,
        customers: count("SELECT count(*) FROM customers WHERE company_name LIKE 'Soak %'")?,
        products: count("SELECT count(*) FROM products WHERE sku LIKE 'SOAK-%'")?,
        orders: count("SELECT count(*) FROM orders WHERE external_id LIKE 'SOAK-%'")?,
        shipments: count("SELECT count(*) FROM shipments WHERE tracking_number LIKE 'SOAK-%'")?,
    })
}

/// The `q` quantile of sorted microseconds, in milliseconds (nearest rank).
fn quantile_ms(sorted: &[u32], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    f64::from(sorted[rank - 1]) / 1000.0
}

fn row(label: &str, t: &mut Tally, total: u64, secs: f64) -> String {
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

fn main() {
    let o = options();
    match run(&o) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => fail(&e),
    }
}

fn run(o: &Options) -> Result<bool, String> {
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
    let bin = binary()?;
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
    let rss_before = proc_status_kib(pid, "VmRSS:");

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
    let rss_after = proc_status_kib(pid, "VmRSS:");
    let rss_peak = proc_status_kib(pid, "VmHWM:");
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
