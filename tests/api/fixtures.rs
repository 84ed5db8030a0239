//! Rows the order tests need from modules built elsewhere (stores, warehouses), written
//! with plain SQL, and imports through the library (fast, no HTTP).

use orderbridge::resources::import::{self, Counts, Record};
use serde_json::{Value, json};

use crate::common::TestApp;

pub fn store(app: &TestApp, customer_id: i64, name: &str) -> i64 {
    let conn = app.pool().get().unwrap();
    conn.execute(
        "INSERT INTO stores (customer_id, name, platform, adapter, created_at) VALUES (?1, ?2, 'bigcommerce', '{}', 0)",
        rusqlite::params![customer_id, name],
    )
    .unwrap();
    conn.last_insert_rowid()
}

pub fn warehouse(app: &TestApp, customer_id: i64, name: &str) -> i64 {
    let conn = app.pool().get().unwrap();
    conn.execute(
        "INSERT INTO warehouses (customer_id, name, platform, adapter, created_at) VALUES (?1, ?2, 'sftp', '{}', 0)",
        rusqlite::params![customer_id, name],
    )
    .unwrap();
    conn.last_insert_rowid()
}

fn records(values: Vec<Value>) -> Vec<Record> {
    values.into_iter().enumerate().map(|(i, v)| (i + 1, Ok(v.to_string()))).collect()
}

pub fn import_orders(app: &TestApp, orders: Vec<Value>) -> Counts {
    let mut conn = app.pool().get().unwrap();
    import::import_orders(&mut conn, records(orders), &mut |_| {}).expect("orders import")
}

pub fn import_shipments(app: &TestApp, shipments: Vec<Value>) -> Counts {
    let mut conn = app.pool().get().unwrap();
    import::import_shipments(&mut conn, records(shipments), &mut |_| {}).expect("shipments import")
}

/// A minimal order record.
pub fn order(store_id: i64, external_id: &str) -> Value {
    json!({"store_id": store_id, "external_id": external_id,
           "order_items": [{"sku": "SKU-1", "unit_price": "10.00", "quantity": 1}]})
}

/// `ms` milliseconds from now, as an ISO timestamp.
pub fn at(offset_ms: i64) -> String {
    orderbridge::dates::format_ms(orderbridge::dates::now_ms() + offset_ms)
}

pub const HOUR: i64 = 3_600_000;
pub const DAY: i64 = 24 * HOUR;

/// Ids of the documents under `key` of a listing body.
pub fn ids(body: &Value, key: &str) -> Vec<i64> {
    body[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} array in {body}"))
        .iter()
        .map(|o| o["id"].as_i64().unwrap())
        .collect()
}

/// An admin, one tenant with a store and a warehouse.
pub struct World {
    pub customer: i64,
    pub token: String,
    pub store: i64,
    pub warehouse: i64,
}

pub async fn world(app: &TestApp, name: &str) -> World {
    let (customer, token) = app.tenant(name).await;
    let store = store(app, customer, &format!("{name} Store"));
    let warehouse = warehouse(app, customer, &format!("{name} Warehouse"));
    World { customer, token, store, warehouse }
}
