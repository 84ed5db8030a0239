//! No acknowledged write is lost on kill -9. The real binary takes 32 concurrent writers
//! (creates, PATCHes and imports, each a write of several rows) and is killed with SIGKILL
//! while they run. Started again over the same file, every write that got its 2xx is there,
//! every write that got no answer is there whole or not at all, and SQLite finds the file
//! sound (`integrity_check`, `foreign_key_check`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::process::{http, start, token};

const PASSWORD: &str = "crash-writes-admin-password";
const WRITERS: usize = 32;
const ORDERS_PER_IMPORT: usize = 8;
const ITEMS_PER_ORDER: usize = 3;

/// What one writer did: acknowledged writes, and the one whose answer the kill cut off.
#[derive(Default)]
struct Log {
    /// Customers created: (id, company_name).
    customers: Vec<(i64, String)>,
    /// Variant collections created: (id, name, product ids).
    collections: Vec<(i64, String, Vec<i64>)>,
    /// A collection create that got no answer: (name, product ids).
    collection_in_doubt: Option<(String, Vec<i64>)>,
    /// The customer this writer PATCHes, the last name acknowledged and the last tried.
    patched: Option<(i64, u64, u64)>,
    /// Imports acknowledged (their external ids) and the one in doubt.
    imports: Vec<Vec<String>>,
    import_in_doubt: Option<Vec<String>>,
    /// Requests answered 2xx.
    acknowledged: usize,
}

struct Writer {
    port: u16,
    bearer: String,
    stop: Arc<AtomicBool>,
    answered: Arc<AtomicUsize>,
}

enum Answer {
    /// Status and body: the server answered.
    Got(u16, Value),
    /// No answer (the server died): the write may or may not have happened.
    None,
}

impl Writer {
    fn call(&self, method: &str, path: &str, body: &Value) -> Answer {
        let headers = [("Authorization", self.bearer.as_str()), ("Content-Type", "application/json")];
        match http(self.port, method, path, &headers, &body.to_string()) {
            Ok((status, _, text)) if status != 0 => {
                // A 201 whose body the kill cut off has no id to check; treat it as unanswered.
                let body = serde_json::from_str(&text).unwrap_or(Value::Null);
                if status == 201 && body["id"].as_i64().is_none() {
                    return Answer::None;
                }
                self.answered.fetch_add(1, Ordering::Relaxed);
                Answer::Got(status, body)
            }
            _ => Answer::None,
        }
    }

    /// Writes until the server stops answering (or, bounded, a minute passes).
    fn run(&self, n: usize, products: &[i64], customer: i64) -> Log {
        let mut log = Log::default();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut step = 0u64;
        while Instant::now() < deadline {
            step += 1;
            let answered = match n % 3 {
                0 => self.create(n, step, products, &mut log),
                1 => self.patch(customer, step, &mut log),
                _ => self.import(n, step, &mut log),
            };
            if !answered || self.stop.load(Ordering::Relaxed) {
                break;
            }
            log.acknowledged += 1;
        }
        log
    }

    /// A customer, then a variant collection of three products (four rows).
    fn create(&self, n: usize, step: u64, products: &[i64], log: &mut Log) -> bool {
        if step.is_multiple_of(2) {
            let name = format!("writer {n} customer {step}");
            return match self.call("POST", "/customers", &json!({"company_name": name})) {
                Answer::Got(201, body) => {
                    log.customers.push((body["id"].as_i64().unwrap(), name));
                    true
                }
                Answer::Got(status, body) => panic!("POST /customers: {status} {body}"),
                Answer::None => false,
            };
        }
        let picked: Vec<i64> = (0..3).map(|i| products[(n + step as usize + i) % products.len()]).collect();
        let name = format!("writer {n} collection {step}");
        match self.call("POST", "/variant_collections", &json!({"name": name, "product_ids": picked})) {
            Answer::Got(201, body) => {
                log.collections.push((body["id"].as_i64().unwrap(), name, picked));
                true
            }
            Answer::Got(status, body) => panic!("POST /variant_collections: {status} {body}"),
            Answer::None => {
                log.collection_in_doubt = Some((name, picked));
                false
            }
        }
    }

    fn patch(&self, customer: i64, step: u64, log: &mut Log) -> bool {
        let acked = log.patched.map_or(0, |(_, acked, _)| acked);
        log.patched = Some((customer, acked, step));
        let body = json!({"company_name": format!("patched {customer} {step}")});
        match self.call("PATCH", &format!("/customers/{customer}"), &body) {
            Answer::Got(204, _) => {
                log.patched = Some((customer, step, step));
                true
            }
            Answer::Got(status, body) => panic!("PATCH /customers/{customer}: {status} {body}"),
            Answer::None => false,
        }
    }

    fn import(&self, n: usize, step: u64, log: &mut Log) -> bool {
        let ids: Vec<String> = (0..ORDERS_PER_IMPORT).map(|k| format!("w{n}-s{step}-o{k}")).collect();
        let records: Vec<Value> = ids
            .iter()
            .map(|id| {
                let items: Vec<Value> = (0..ITEMS_PER_ORDER)
                    .map(|i| json!({"sku": format!("SKU-{i}"), "unit_price": "1.50", "quantity": i + 1}))
                    .collect();
                json!({"store_id": 1, "external_id": id, "order_items": items})
            })
            .collect();
        match self.call("POST", "/import/orders", &Value::Array(records)) {
            Answer::Got(200, _) => {
                log.imports.push(ids);
                true
            }
            Answer::Got(status, body) => panic!("POST /import/orders: {status} {body}"),
            Answer::None => {
                log.import_in_doubt = Some(ids);
                false
            }
        }
    }
}

#[test]
fn kill_9_during_32_concurrent_writers_loses_no_acknowledged_write_and_leaves_nothing_half_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.db");
    let envs = [("ORDERBRIDGE_ADMIN_PASSWORD", PASSWORD), ("ORDERBRIDGE_SYNC_MODE", "off")];
    let (server, _) = start(&db, &envs);
    let port = server.port;
    let bearer = format!("Bearer {}", token(port, "admin", PASSWORD));
    let setup = Writer { port, bearer: bearer.clone(), stop: Arc::default(), answered: Arc::default() };
    let created = |path: &str, body: Value| match setup.call("POST", path, &body) {
        Answer::Got(201, reply) => reply["id"].as_i64().unwrap(),
        Answer::Got(status, reply) => panic!("{path}: {status} {reply}"),
        Answer::None => panic!("{path}: no answer"),
    };
    let customer = created("/customers", json!({"company_name": "Acme"}));
    let store = created(
        "/stores",
        json!({"customer_id": customer, "name": "Shop", "platform": "big_commerce",
               "adapter": {"access_token": "tok-crash", "store_hash": "abc"}}),
    );
    assert_eq!(store, 1, "the import writers name store 1");
    let products: Vec<i64> = (0..6)
        .map(|i| created("/products", json!({"customer_id": customer, "sku": format!("P-{i}")})))
        .collect();
    let patch_targets: Vec<i64> = (0..WRITERS)
        .map(|n| created("/customers", json!({"company_name": format!("patched target {n}")})))
        .collect();

    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = (0..WRITERS)
        .map(|n| {
            let writer = Writer {
                port,
                bearer: bearer.clone(),
                stop: Arc::clone(&stop),
                answered: Arc::clone(&answered),
            };
            let products = products.clone();
            let target = patch_targets[n];
            std::thread::spawn(move || writer.run(n, &products, target))
        })
        .collect();
    // Kill after a few seconds of writing (and some hundreds of answers), bounded in time.
    let started = Instant::now();
    let deadline = started + Duration::from_secs(30);
    while (started.elapsed() < Duration::from_secs(3) || answered.load(Ordering::Relaxed) < 500)
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut server = server;
    server.child.kill().expect("SIGKILL"); // Child::kill sends SIGKILL on Unix.
    let _ = server.child.wait();
    stop.store(true, Ordering::Relaxed);
    let logs: Vec<Log> = writers.into_iter().map(|w| w.join().expect("a writer panicked")).collect();
    drop(server);
    let acknowledged: usize = logs.iter().map(|l| l.acknowledged).sum();
    assert!(acknowledged >= 500, "the writers got going before the kill: {acknowledged}");

    // Start again over the same file: the server opens it (SQLite recovers its WAL).
    let (server, _) = start(&db, &envs);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let integrity: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(integrity, "ok");
    let broken_keys: i64 =
        conn.query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| r.get(0)).unwrap();
    assert_eq!(broken_keys, 0, "no row points at a row that is not there");

    let customers: BTreeMap<i64, String> = conn
        .prepare("SELECT id, company_name FROM customers")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let collection_products = |id: i64| -> Vec<i64> {
        conn.prepare(
            "SELECT product_id FROM variant_collection_products WHERE collection_id = ?1 ORDER BY position",
        )
        .unwrap()
        .query_map([id], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
    };
    let order_items = |external_id: &str| -> Option<i64> {
        conn.query_row(
            "SELECT (SELECT count(*) FROM order_items i WHERE i.order_id = o.id) FROM orders o WHERE o.external_id = ?1",
            [external_id],
            |r| r.get(0),
        )
        .ok()
    };
    let mut checked = 0;
    for log in &logs {
        for (id, name) in &log.customers {
            assert_eq!(customers.get(id), Some(name), "acknowledged customer {id}");
            checked += 1;
        }
        for (id, name, picked) in &log.collections {
            let stored: String = conn
                .query_row("SELECT name FROM variant_collections WHERE id = ?1", [id], |r| r.get(0))
                .unwrap();
            assert_eq!((&stored, &collection_products(*id)), (name, picked), "acknowledged collection {id}");
            checked += 1;
        }
        if let Some((name, picked)) = &log.collection_in_doubt {
            let id: Option<i64> = conn
                .query_row("SELECT id FROM variant_collections WHERE name = ?1", [name], |r| r.get(0))
                .ok();
            if let Some(id) = id {
                assert_eq!(&collection_products(id), picked, "collection {name} is whole or absent");
            }
        }
        if let Some((customer, acked, tried)) = log.patched {
            let name = &customers[&customer];
            let fine = match name.strip_prefix(&format!("patched {customer} ")) {
                Some(step) => step.parse().is_ok_and(|step: u64| (acked.max(1)..=tried).contains(&step)),
                None => acked == 0 && name.starts_with("patched target"),
            };
            assert!(fine, "customer {customer} is {name:?}: acknowledged step {acked}, last tried {tried}");
            checked += 1;
        }
        for ids in &log.imports {
            for id in ids {
                assert_eq!(order_items(id), Some(ITEMS_PER_ORDER as i64), "acknowledged order {id} whole");
            }
            checked += 1;
        }
        if let Some(ids) = &log.import_in_doubt {
            let present: Vec<Option<i64>> = ids.iter().map(|id| order_items(id)).collect();
            assert!(
                present.iter().all(Option::is_none)
                    || present.iter().all(|n| *n == Some(ITEMS_PER_ORDER as i64)),
                "an import in doubt is whole or absent: {present:?}"
            );
        }
    }
    assert!(checked >= 300, "{checked} acknowledged writes checked");
    let in_doubt =
        logs.iter().filter(|l| l.import_in_doubt.is_some() || l.collection_in_doubt.is_some()).count();
    eprintln!(
        "{acknowledged} writes acknowledged before the kill, {checked} checked, {in_doubt} multi-row writes in doubt"
    );
    let half_orders: i64 = conn
        .query_row(
            &format!(
                "SELECT count(*) FROM orders o WHERE (SELECT count(*) FROM order_items i WHERE i.order_id = o.id) <> {ITEMS_PER_ORDER}
                 OR NOT EXISTS (SELECT 1 FROM order_docs d WHERE d.id = o.id)"
            ),
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(half_orders, 0, "every order has all its items and its document");
    let empty_collections: i64 = conn
        .query_row(
            "SELECT count(*) FROM variant_collections c WHERE (SELECT count(*) FROM variant_collection_products p WHERE p.collection_id = c.id) <> 3",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(empty_collections, 0, "every collection has its three products");

    // And the restarted server answers for what it holds.
    let bearer = format!("Bearer {}", token(server.port, "admin", PASSWORD));
    let (status, _, _) =
        http(server.port, "GET", "/orders?limit=5", &[("Authorization", &bearer)], "").unwrap();
    assert_eq!(status, 200);
    server.stop();
}
