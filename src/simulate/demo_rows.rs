//! The rows the demo reads and writes for more than one of its platforms: a customer's
//! switched-on connection, and a customer's SKUs.

use rusqlite::{Connection, params};

/// A switched-on connection of a customer's store and warehouse, its sales channel on and its
/// inventory channel on when `stock`.
pub(super) fn connect(
    conn: &Connection,
    (customer, store, warehouse): (i64, i64, i64),
    name: &str,
    stock: bool,
    now: i64,
) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO connections (customer_id, store_id, warehouse_id, name, connection_type, created_at, enabled_at)
         VALUES (?1, ?2, ?3, ?4, 'fulfillment', ?5, ?5)",
        params![customer, store, warehouse, name, now],
    )?;
    let connection = conn.last_insert_rowid();
    conn.execute(
        "INSERT INTO channels (connection_id, type, created_at, enabled_at) VALUES (?1, 'sales', ?2, ?2), (?1, 'inventory', ?2, ?3)",
        params![connection, now, stock.then_some(now)],
    )?;
    Ok(())
}

/// The SKUs of a customer's products: the inventory items of its simulated shop.
pub(super) fn customer_skus(conn: &Connection, customer_id: i64) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare_cached("SELECT sku FROM products WHERE customer_id = ?1 ORDER BY id")?;
    stmt.query_map([customer_id], |r| r.get(0))?.collect()
}
