//! Sync through the real binary: the calls the crash round (`sync_suites::crash`) makes,
//! `orderbridge sync` (the command that runs a pass in the foreground), a stock send killed
//! with SIGKILL, and `serve --demo`.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use orderbridge::simulate::big_commerce::Simulator;
use serde_json::{Value, json};

use crate::process::{Server, http, start, token};
use crate::sync_rig::{HASH, TOKEN, files_in};

const PASSWORD: &str = "crash-test-admin-password";
pub(crate) const ORDERS: usize = 1_200;

pub(crate) struct Api {
    port: u16,
    bearer: String,
}

impl Api {
    pub(crate) fn new(server: &Server) -> Api {
        Api { port: server.port, bearer: format!("Bearer {}", token(server.port, "admin", PASSWORD)) }
    }

    pub(crate) fn call(&self, method: &str, path: &str, body: Value) -> (u16, Value) {
        let (status, _, text) = http(
            self.port,
            method,
            path,
            &[("Authorization", &self.bearer), ("Content-Type", "application/json")],
            &body.to_string(),
        )
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    pub(crate) fn create(&self, path: &str, body: Value) -> i64 {
        let (status, reply) = self.call("POST", path, body);
        assert_eq!(status, 201, "{path}: {reply}");
        reply["id"].as_i64().unwrap()
    }

    /// Asks for a pass of the connection and waits (bounded) until it finished; the run.
    pub(crate) async fn sync(&self, connection: i64) -> Value {
        let (status, started) = self.call("POST", &format!("/connections/{connection}/sync"), json!({}));
        assert_eq!(status, 202, "{started}");
        let run_id = started["run_id"].as_i64().unwrap();
        let path = format!("/connections/{connection}/sync_runs/{run_id}");
        for _ in 0..600 {
            let run = self.call("GET", &path, Value::Null).1;
            if !run["finished_at"].is_null() {
                return run;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("run {run_id} did not finish within 30 s");
    }

    /// Passes of the connection, each succeeding, until one finds nothing to pull, send, read,
    /// tell or stock to send (at most `passes`); whether one did.
    pub(crate) async fn settle(&self, connection: i64, passes: usize) -> bool {
        for _ in 0..passes {
            let run = self.sync(connection).await;
            assert_eq!(run["status"], "succeeded", "{run}");
            let counts = "orders_pulled orders_sent shipments_pulled shipments_notified stock_levels_sent";
            if counts.split(' ').all(|k| run[k] == 0) {
                return true;
            }
        }
        false
    }

    /// The first of the rows `path` lists whose `key` is `value`.
    pub(crate) fn find(&self, path: &str, key: &str, value: Value) -> Value {
        let (_, rows) = self.call("GET", path, Value::Null);
        let found = rows.as_array().and_then(|rows| rows.iter().find(|row| row[key] == value).cloned());
        found.unwrap_or_else(|| panic!("no {key} {value} in {path}: {rows}"))
    }

    /// Every row of a listing (`key` is `orders` or `shipments`), walked in session mode.
    pub(crate) fn all(&self, key: &str) -> Vec<Value> {
        let mut rows = Vec::new();
        let (status, mut reply) = self.call("GET", &format!("/{key}?limit=1000&sort=id"), Value::Null);
        assert_eq!(status, 200, "{reply}");
        for _ in 0..100 {
            let page = reply[key].as_array().cloned().unwrap_or_default();
            if page.is_empty() {
                break;
            }
            rows.extend(page);
            let session = reply["session_id"].as_str().expect("session_id").to_string();
            reply = self.call("GET", &format!("/{key}?session_id={session}"), Value::Null).1;
        }
        rows
    }
}

pub(crate) fn envs(folders: &str) -> Vec<(&str, &str)> {
    vec![
        ("ORDERBRIDGE_ADMIN_PASSWORD", PASSWORD),
        ("ORDERBRIDGE_FOLDER_WAREHOUSE_ROOT", folders),
        ("ORDERBRIDGE_SYNC_RETRY_BASE_SECS", "1"),
        ("ORDERBRIDGE_SYNC_INTERVAL_SECS", "86400"),
        ("ORDERBRIDGE_FILE_SETTLE_SECS", "1"),
        ("ORDERBRIDGE_PING_MODE", "offline"),
        // Every log line there is, so the test can look for the credentials in them.
        ("ROCKET_LOG_LEVEL", "debug"),
    ]
}

/// The environment that points the binary at `config` (`sync_rig` configuration keys).
pub(crate) fn env_of(folders: &str, config: &[(&'static str, String)]) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> =
        envs(folders).into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    // The server's pings stay offline: the crash is about passes.
    let config = config.iter().filter(|(k, _)| *k != "ping_mode");
    env.extend(config.map(|(k, v)| (format!("ORDERBRIDGE_{}", k.to_uppercase()), v.clone())));
    env
}

pub(crate) fn boot(db: &Path, env: &[(String, String)]) -> impl Fn() -> Server + Clone + Send + 'static {
    let (db, env) = (db.to_path_buf(), env.to_vec());
    move || {
        let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        start(&db, &pairs).0
    }
}

/// `orderbridge sync` with `args` over `db`, its folder warehouses under `folders` and a
/// BigCommerce at `base`, with `sync_mode` off (which the command ignores).
pub(crate) fn sync_command(db: &Path, base: &str, folders: &Path, args: &[&str]) -> Command {
    let mut command = crate::process::command(db);
    command
        .arg("sync")
        .args(args)
        .env("ORDERBRIDGE_BIGCOMMERCE_API_BASE", base)
        .env("ORDERBRIDGE_FOLDER_WAREHOUSE_ROOT", folders)
        .env("ORDERBRIDGE_SYNC_RETRY_BASE_SECS", "1")
        .env("ORDERBRIDGE_FILE_SETTLE_SECS", "1")
        .env("ORDERBRIDGE_SYNC_MODE", "off");
    command
}

/// Runs `command` off the async threads: whether it succeeded, and its stdout and stderr.
pub(crate) async fn run(mut command: Command) -> (bool, String, String) {
    let out = tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// A switched-on connection written straight into a new database file, for the CLI.
pub(crate) fn connection_in(db: &Path, root: &Path, token: &str) {
    let conn = orderbridge::db::open(db).unwrap().get().unwrap();
    let (now, adapter) = (orderbridge::dates::now_ms(), json!({"access_token": token, "store_hash": HASH}));
    conn.execute("INSERT INTO customers (id, company_name, created_at) VALUES (1, 'Cli', ?1)", [now])
        .unwrap();
    conn.execute(
        "INSERT INTO stores (id, customer_id, name, platform, adapter, created_at, enabled_at)
         VALUES (1, 1, 'Shop', 'big_commerce', ?1, ?2, ?2)",
        rusqlite::params![adapter.to_string(), now],
    )
    .unwrap();
    folder_connection_in(db, 1, root);
}

/// Connection `id` of store 1 to a folder warehouse (of the same id) at `root`, switched on.
pub(crate) fn folder_connection_in(db: &Path, id: i64, root: &Path) {
    let conn = orderbridge::db::open(db).unwrap().get().unwrap();
    let now = orderbridge::dates::now_ms();
    let warehouse = json!({"connection_string": format!("file://{}", root.display())}).to_string();
    conn.execute(
        "INSERT INTO warehouses (id, customer_id, platform, adapter, created_at, enabled_at)
         VALUES (?1, 1, 'folder', ?2, ?3, ?3)",
        rusqlite::params![id, warehouse, now],
    )
    .unwrap();
    conn.execute_batch(&format!(
        "INSERT INTO connections (id, customer_id, store_id, warehouse_id, name, connection_type, created_at, enabled_at)
           VALUES ({id}, 1, 1, {id}, 'c{id}', 'fulfillment', {now}, {now});
         INSERT INTO channels (connection_id, type, created_at, enabled_at) VALUES ({id}, 'sales', {now}, {now});"
    ))
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sync_command_runs_a_pass_prints_each_step_and_fails_when_the_pass_does() {
    let sim = Simulator::start().await;
    sim.add_store(HASH, TOKEN);
    sim.add_orders(HASH, 5, 3);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    let root = dir.path().join("folders/wh");
    std::fs::create_dir_all(&root).unwrap();
    connection_in(&db, &root, TOKEN);
    let cli = || sync_command(&db, &sim.base_url(), &dir.path().join("folders"), &["--connection", "1"]);
    let (ok, out, err) = run(cli()).await;
    assert!(ok, "sync_mode off does not stop the command: {out}\n{err}");
    assert!(out.contains("run 1 succeeded"), "{out}");
    assert!(out.contains("5 order(s) pulled from the store"), "{out}");
    assert!(out.contains("5 order(s) sent to the warehouse"), "{out}");
    assert_eq!(files_in(&root.join("orders")).len(), 1);

    // The store now refuses the token: the pass fails, and so does the command.
    sim.add_store(HASH, "another-token");
    let (ok, out, err) = run(cli()).await;
    assert!(!ok, "{out}");
    assert!(out.contains("failed at pull_orders (adapter_authentication_failed)"), "{out}");
    assert!(err.contains("a sync pass failed"), "{err}");
    assert!(!out.contains(TOKEN) && !err.contains(TOKEN));
}

/// Levels in the crash test's stock file: five BigCommerce requests of 2,000.
const LEVELS: usize = 10_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_a_stock_send_sends_each_level_once_but_for_one_request_per_kill() {
    let sim = Simulator::start().await;
    sim.add_store(HASH, TOKEN);
    // Each request takes long enough that the kills land between requests of one send.
    sim.set_delay(HASH, Duration::from_millis(400));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stock-crash.db");
    let folders = dir.path().join("folders");
    let root = folders.join("wh");
    std::fs::create_dir_all(root.join("inventory")).unwrap();
    connection_in(&db, &root, TOKEN);
    {
        let pool = orderbridge::db::open(&db).unwrap();
        let mut conn = pool.get().unwrap();
        let now = orderbridge::dates::now_ms();
        let tx = conn.transaction().unwrap();
        tx.execute(
            "INSERT INTO channels (connection_id, type, created_at, enabled_at) VALUES (1, 'inventory', ?1, ?1)",
            [now],
        )
        .unwrap();
        let mut insert =
            tx.prepare("INSERT INTO products (customer_id, sku, created_at) VALUES (1, ?1, ?2)").unwrap();
        for i in 0..LEVELS {
            insert.execute(rusqlite::params![format!("SKU-{i:05}"), now]).unwrap();
        }
        drop(insert);
        tx.commit().unwrap();
    }
    let levels: String = (0..LEVELS).map(|i| format!("SKU-{i:05},{}\n", i % 89)).collect();
    std::fs::write(root.join("inventory/stock.csv"), format!("sku,quantity\n{levels}")).unwrap();

    let boot =
        boot(&db, &env_of(&folders.display().to_string(), &[("bigcommerce_api_base", sim.base_url())]));
    let puts = || sim.requests().iter().filter(|r| r.starts_with("PUT ")).count();
    let mut server = tokio::task::spawn_blocking(boot.clone()).await.unwrap();
    let mut kills = 0;
    for _ in 0..2 {
        let api = Api::new(&server);
        let before = puts();
        let (status, started) = api.call("POST", "/connections/1/sync", json!({}));
        assert_eq!(status, 202, "{started}");
        // Killed once this pass's send is under way (after the settle time of the stock file
        // and the pull, however slow the machine): a request of it reached the store.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while puts() == before && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        server.child.kill().expect("SIGKILL");
        let _ = server.child.wait();
        kills += 1;
        server = tokio::task::spawn_blocking(boot.clone()).await.unwrap();
    }
    let during = puts();
    assert!(during >= 1 && during < LEVELS / 2_000 + kills, "the kills came during the send: {during}");

    sim.set_delay(HASH, Duration::ZERO);
    let api = Api::new(&server);
    assert!(api.settle(1, 6).await, "the passes settle");

    // Every level arrived, and at most one request per kill was sent again.
    let stock = sim.stock(HASH);
    assert_eq!(stock.len(), LEVELS);
    assert!((0..LEVELS).all(|i| stock.get(&format!("SKU-{i:05}")) == Some(&((i % 89) as i64))));
    let sent = puts();
    eprintln!("stock crash: {during} requests before the last kill, {sent} in all, {kills} kills");
    assert!(sent >= LEVELS / 2_000 && sent <= LEVELS / 2_000 + kills, "{sent} requests for {kills} kills");

    // One changed level later is one level in one request.
    std::fs::write(root.join("inventory/later.csv"), "sku,quantity\nSKU-00007,500\n").unwrap();
    let run = api.sync(1).await;
    assert_eq!(run["stock_levels_sent"], 1, "{run}");
    assert_eq!(puts(), sent + 1);
    assert_eq!(sim.stock(HASH).get("SKU-00007"), Some(&500));
    let (out, err) = server.stop();
    assert!(!out.contains(TOKEN) && !err.contains(TOKEN), "the token was logged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_demo_flows_new_orders_through_the_warehouse_to_notified_shipped() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    let folders = dir.path().join("folders").display().to_string();
    let env = [
        ("ORDERBRIDGE_ADMIN_PASSWORD", PASSWORD),
        ("ORDERBRIDGE_FOLDER_WAREHOUSE_ROOT", folders.as_str()),
        ("ORDERBRIDGE_SYNC_INTERVAL_SECS", "2"),
        ("ORDERBRIDGE_FILE_SETTLE_SECS", "1"),
    ];
    let (server, printed) = {
        let db = db.clone();
        let env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        tokio::task::spawn_blocking(move || {
            let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            crate::process::start_with(&db, &["serve", "--demo"], &pairs)
        })
        .await
        .unwrap()
    };
    assert!(printed.contains("simulated BigCommerce at http://127.0.0.1:"), "{printed}");
    let api = Api::new(&server);
    let seeded = api.call("GET", "/orders?page=1&limit=1&sort=-id", Value::Null).1["orders"][0]["id"]
        .as_i64()
        .expect("the demo's orders");

    // New orders arrive at the simulated stores, go to the warehouse folder, ship, and the
    // stores are told: within a minute, some order newer than the demo data is notified.
    let mut flowed = None;
    for _ in 0..120 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (_, page) = api.call("GET", "/shipments?page=1&limit=100&sort=-id", Value::Null);
        let done = page["shipments"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|s| s["order_id"].as_i64().is_some_and(|o| o > seeded) && s["state"] == "notified_shipped")
            .cloned();
        if done.is_some() {
            flowed = done;
            break;
        }
    }
    let shipment = flowed.unwrap_or_else(|| {
        let (_, runs) = api.call("GET", "/connections/1/sync_runs", Value::Null);
        panic!("no new order was shipped and notified within a minute; runs of connection 1: {runs}")
    });
    let order = api.call("GET", &format!("/orders/{}", shipment["order_id"]), Value::Null).1;
    assert_eq!(order["order"]["fulfillment_state"], "shipped", "{order}");
    assert!(shipment["tracking_number"].as_str().unwrap().starts_with("1ZDEMO"), "{shipment}");
    let (_, runs) = api.call("GET", "/connections/1/sync_runs", Value::Null);
    let ok = |r: &Value| r["status"] == "succeeded" || r["finished_at"].is_null();
    assert!(runs.as_array().unwrap().iter().all(ok), "every demo pass succeeds: {runs}");
    // The demo's Shopify store syncs like the others, and its simulated shop says what it
    // was told.
    let shop = api.find("/stores", "platform", json!("shopify"))["id"].clone();
    let connection = api.find("/connections", "store_id", shop)["id"].clone();
    let (_, runs) = api.call("GET", &format!("/connections/{connection}/sync_runs"), Value::Null);
    let runs = runs.as_array().unwrap();
    assert!(runs.iter().any(|r| r["status"] == "succeeded"), "{runs:?}");
    assert!(runs.iter().all(|r| r["status"] != "failed"), "every Shopify pass succeeds: {runs:?}");

    // The demo's WooCommerce store moves too: a new order of it ships and the shop is told.
    // The demo's ShipStation warehouse buys labels 20 s after an order arrives; the store
    // hears. The demo's Amazon seller: its merchant orders reach the folder warehouse, whose
    // worker ships them, and Amazon hears (its FBA order never leaves Amazon). The demo's eBay
    // seller likewise: fulfillments come back to eBay.
    for name in ["WooCommerce", "ShipStation", "Amazon", "eBay"] {
        assert!(printed.contains(&format!("{name} at http://127.0.0.1:")), "{printed}");
        let id = api.find("/connections", "name", json!(format!("{name} fulfillment")))["id"].clone();
        let runs_path = format!("/connections/{id}/sync_runs");
        let mut told = false;
        for _ in 0..180 {
            let (_, runs) = api.call("GET", &runs_path, Value::Null);
            let runs = runs.as_array().cloned().unwrap_or_default();
            assert!(runs.iter().all(|r| r["status"] != "failed"), "every {name} pass succeeds: {runs:?}");
            if runs.iter().any(|r| r["shipments_notified"].as_i64().unwrap_or(0) > 0) {
                told = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        assert!(told, "no {name} shipment came back to its store within 90 s");
    }
    let (out, err) = server.stop();
    let said = out + &err;
    assert!(printed.contains("Shopify at http://127.0.0.1:"), "{printed}");
    assert!(said.contains("simulated Shopify") && said.contains("fulfilled, tracking"), "{said}");
}
