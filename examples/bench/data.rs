//! The benchmark's data: the demo data set written by `orderbridge seed`, and the user's way
//! in, the same orders imported over HTTP into a server started on an empty file.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use serde_json::{Value, json};

use super::client::http;
use super::{fail, orderbridge};

/// Seeds a new database file at `db` with the real binary; returns the seconds it took.
pub fn seed(db: &Path, orders: u64) -> f64 {
    remove_database(db);
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

pub fn remove_database(db: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    let _ = std::fs::remove_file(db.with_extension("key"));
}

/// What a user brings: customers, their stores, and orders as NDJSON records.
pub struct Dataset {
    customers: Vec<(i64, Value)>,
    stores: Vec<(i64, i64, Value)>,
    orders: Vec<Value>,
}

impl Dataset {
    pub fn len(&self) -> usize {
        self.orders.len()
    }
}

/// Reads the seeded file's customers, stores and order documents, as a user would hold them
/// before their first import: the same orders as the seeded path, so both serve equal pages.
fn sql<T>(e: rusqlite::Error) -> T {
    fail(&format!("reading the seeded file: {e}"))
}

pub fn read_dataset(db: &Path) -> Dataset {
    let conn =
        rusqlite::Connection::open(db).unwrap_or_else(|e| fail(&format!("open {}: {e}", db.display())));
    let mut stmt = conn
        .prepare("SELECT id, company_name, street1, city, state, zipcode, country FROM customers ORDER BY id")
        .unwrap_or_else(sql);
    let customers = stmt
        .query_map([], |r| {
            let text = |i: usize| r.get::<_, Option<String>>(i);
            Ok((
                r.get(0)?,
                json!({"company_name": text(1)?, "street1": text(2)?, "city": text(3)?, "state": text(4)?,
                       "zipcode": text(5)?, "country": text(6)?}),
            ))
        })
        .and_then(Iterator::collect::<rusqlite::Result<Vec<(i64, Value)>>>)
        .unwrap_or_else(sql);
    let mut stmt =
        conn.prepare("SELECT id, customer_id, name, url FROM stores ORDER BY id").unwrap_or_else(sql);
    let stores = stmt
        .query_map([], |r| {
            // Credentials are sealed in the file: the copies carry made-up ones (pings are off).
            let adapter =
                json!({"auth_token": format!("{:032x}", r.get::<_, i64>(0)?), "secret_key": "0".repeat(32)});
            Ok((
                r.get(0)?,
                r.get(1)?,
                json!({"name": r.get::<_, String>(2)?, "url": r.get::<_, Option<String>>(3)?,
                       "platform": "sellbrite", "adapter": adapter}),
            ))
        })
        .and_then(Iterator::collect::<rusqlite::Result<Vec<(i64, i64, Value)>>>)
        .unwrap_or_else(sql);
    let mut stmt = conn.prepare("SELECT doc FROM order_docs ORDER BY id").unwrap_or_else(sql);
    let orders = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(Iterator::collect::<rusqlite::Result<Vec<String>>>)
        .unwrap_or_else(sql)
        .into_iter()
        .map(|doc| serde_json::from_str(&doc).unwrap_or_else(|e| fail(&format!("an order document: {e}"))))
        .collect();
    Dataset { customers, stores, orders }
}

fn strip(record: &mut Value, keys: &[&str]) {
    if let Some(map) = record.as_object_mut() {
        for key in keys {
            map.remove(*key);
        }
    }
}

/// What the import did: seconds spent in the import requests, and the request count.
pub struct Imported {
    pub secs: f64,
    pub requests: usize,
}

/// Creates the dataset's customers and stores through the API, then imports its orders with
/// `POST /import/orders`, `per_request` NDJSON records at a time. Only the import requests
/// are timed; the bodies are written beforehand, as a user's files would be.
pub fn import(port: u16, auth: &str, data: &Dataset, per_request: usize) -> Imported {
    let post = |path: &str, body: &Value| {
        let text = body.to_string();
        let headers = [("Authorization", auth), ("Content-Type", "application/json")];
        let (status, answer) = http(port, path, &headers, Some(text.as_bytes()));
        if status != 201 && status != 200 {
            fail(&format!("POST {path} answered {status}: {answer}"));
        }
        serde_json::from_str::<Value>(&answer).unwrap_or_else(|e| fail(&format!("{path}: {e}")))
    };
    let mut customer_ids = HashMap::new();
    for (old, body) in &data.customers {
        let created = post("/customers", body);
        customer_ids.insert(*old, created["id"].as_i64().expect("customer id"));
    }
    let mut store_ids = HashMap::new();
    for (old, customer, body) in &data.stores {
        let mut body = body.clone();
        body["customer_id"] = json!(customer_ids[customer]);
        let created = post("/stores", &body);
        store_ids.insert(*old, created["id"].as_i64().expect("store id"));
    }
    let bodies: Vec<Vec<u8>> = data
        .orders
        .chunks(per_request)
        .map(|chunk| {
            let mut out = Vec::new();
            for order in chunk {
                let mut order = order.clone();
                let old = order["store_id"].as_i64().expect("store_id");
                order["store_id"] = json!(store_ids[&old]);
                // What the service wrote is not the user's to send: ids, times of writing, and
                // the warehouse a sync chose (the copies have no warehouses).
                strip(&mut order, &["id", "created_at", "fulfillment_warehouse_id"]);
                for item in order["order_items"].as_array_mut().into_iter().flatten() {
                    strip(item, &["id", "created_at"]);
                }
                serde_json::to_writer(&mut out, &order).expect("serialize");
                out.push(b'\n');
            }
            out
        })
        .collect();
    eprintln!(
        "bench: importing {} orders in {} requests of {per_request} ({} MiB) ...",
        data.len(),
        bodies.len(),
        bodies.iter().map(Vec::len).sum::<usize>() >> 20
    );
    let t = Instant::now();
    let mut created = 0;
    let mut times = Vec::with_capacity(bodies.len());
    for body in &bodies {
        let headers = [("Authorization", auth), ("Content-Type", "application/x-ndjson")];
        let one = Instant::now();
        let (status, answer) = http(port, "/import/orders", &headers, Some(body));
        times.push(format!("{:.0}", one.elapsed().as_secs_f64() * 1000.0));
        if status != 200 {
            fail(&format!("POST /import/orders answered {status}: {}", &answer[..answer.len().min(2000)]));
        }
        let counts: Value =
            serde_json::from_str(&answer).unwrap_or_else(|e| fail(&format!("import answer: {e}")));
        created += counts["created"].as_u64().unwrap_or(0);
    }
    let secs = t.elapsed().as_secs_f64();
    eprintln!("bench: import requests took (ms): {}", times.join(" "));
    if created != data.len() as u64 {
        fail(&format!("the import created {created} of {} orders", data.len()));
    }
    Imported { secs, requests: bodies.len() }
}
