//! Step 2, send orders: the store's `new` orders go to the warehouse in one file per step.
//!
//! The orders of a file are claimed first (a batch row, committed), then the warehouse
//! writes the file as they are read (under a temporary name, renamed when complete), then
//! the batch is marked delivered and its orders move to `pending_shipment`, in one
//! transaction. A crash before that last commit leaves an undelivered batch, which the next
//! pass sends again under the same file name with the same orders: the warehouse sees the
//! same document, never a second order.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Map, Value};

use crate::dates::now_ms;
use crate::db;

use super::states::OrderState;
use super::step::StepError;
use super::{Engine, Link};
use crate::platforms::PlatformError;
use crate::platforms::files::csv::{OutgoingItem, OutgoingOrder, ShipTo};
use crate::platforms::files::{OrderFeed, Sent, Warehouse, order_feed};

/// An order file about to be written: its number and its orders.
struct Batch {
    id: i64,
    number: i64,
    order_ids: Vec<i64>,
}

/// Whether this connection has orders to send (or a file to finish), without claiming any.
pub async fn has_work(engine: &Engine, link: &Link) -> Result<bool, StepError> {
    let (connection_id, store_id) = (link.id, link.store_id);
    engine.db(move |conn| {
        let pending: bool = conn
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM order_batches WHERE connection_id = ?1 AND delivered_at IS NULL)")?
            .query_row([connection_id], |r| r.get(0))?;
        Ok::<_, StepError>(pending || (routes_here(conn, connection_id, store_id)? && !candidates(conn, store_id, 1)?.is_empty()))
    })
    .await
}

/// Sends one file; returns how many orders it delivered.
pub async fn send(engine: &Engine, link: &Link, warehouse: &mut Warehouse) -> Result<u64, StepError> {
    let (connection_id, store_id) = (link.id, link.store_id);
    let batch = engine.db(move |conn| claim(conn, connection_id, store_id)).await?;
    let Some(batch) = batch else { return Ok(0) };
    // The orders are read on the database thread and written as they come.
    let (feed, orders) = order_feed();
    let ids = batch.order_ids.clone();
    let render = engine.db(move |conn| render(conn, &ids, feed));
    let (rendered, written) =
        tokio::join!(render, warehouse.send_orders(connection_id, batch.number, orders));
    // The write's failure first: when the write fails, the reading only sees its writer gone.
    match (written?, rendered?) {
        (Sent::Delivered, Rendered::Complete) => {}
        (Sent::Abandoned, _) | (_, Rendered::WriterStopped) => {
            // Each half says why it stopped, and the one that failed has been returned above.
            return Err(StepError::Platform(PlatformError::unreachable(
                "The order file was not finished; it is sent again in the next pass.",
            )));
        }
    }
    let warehouse_id = link.warehouse_id;
    engine.db(move |conn| deliver(conn, &batch, warehouse_id)).await
}

/// Whether this connection is the one its store's orders go through: the syncing connection
/// of the store with the lowest id (CONTRACT §11, step 2).
fn routes_here(conn: &Connection, connection_id: i64, store_id: i64) -> rusqlite::Result<bool> {
    let first: Option<i64> = conn
        .prepare_cached(
            "SELECT MIN(c.id) FROM connections c JOIN warehouses w ON w.id = c.warehouse_id
             WHERE c.store_id = ?1 AND c.enabled_at IS NOT NULL AND w.enabled_at IS NOT NULL
               AND EXISTS (SELECT 1 FROM channels ch WHERE ch.connection_id = c.id AND ch.type = 'sales'
                             AND ch.enabled_at IS NOT NULL)",
        )?
        .query_row([store_id], |r| r.get(0))?;
    Ok(first == Some(connection_id))
}

/// `new` orders of the store that no unsent file holds yet, oldest first.
fn candidates(conn: &Connection, store_id: i64, limit: i64) -> rusqlite::Result<Vec<i64>> {
    let mut stmt = conn.prepare_cached(
        "SELECT o.id FROM orders o
         WHERE o.fulfillment_state = 'new' AND o.store_id = ?1
           AND NOT EXISTS (SELECT 1 FROM order_batch_orders bo JOIN order_batches b ON b.id = bo.batch_id
                           WHERE bo.order_id = o.id AND b.delivered_at IS NULL)
         ORDER BY o.id LIMIT ?2",
    )?;
    let ids = stmt.query_map(params![store_id, limit], |r| r.get(0))?;
    ids.collect()
}

/// The file left unsent by an earlier pass, or a new one with every order waiting.
fn claim(conn: &mut Connection, connection_id: i64, store_id: i64) -> Result<Option<Batch>, StepError> {
    let tx = db::write(conn)?;
    let unsent: Option<(i64, i64)> = tx
        .prepare_cached(
            "SELECT id, number FROM order_batches WHERE connection_id = ?1 AND delivered_at IS NULL
             ORDER BY id LIMIT 1",
        )?
        .query_row([connection_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let batch = match unsent {
        Some((id, number)) => {
            let mut stmt = tx.prepare_cached(
                "SELECT order_id FROM order_batch_orders WHERE batch_id = ?1 ORDER BY order_id",
            )?;
            let order_ids = stmt.query_map([id], |r| r.get(0))?.collect::<rusqlite::Result<Vec<i64>>>()?;
            drop(stmt);
            Batch { id, number, order_ids }
        }
        None => {
            if !routes_here(&tx, connection_id, store_id)? {
                return Ok(None);
            }
            let order_ids = candidates(&tx, store_id, i64::MAX)?;
            if order_ids.is_empty() {
                return Ok(None);
            }
            let number: i64 = tx
                .prepare_cached(
                    "SELECT COALESCE(MAX(number), 0) + 1 FROM order_batches WHERE connection_id = ?1",
                )?
                .query_row([connection_id], |r| r.get(0))?;
            tx.prepare_cached(
                "INSERT INTO order_batches (connection_id, number, created_at) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![connection_id, number, now_ms()])?;
            let id = tx.last_insert_rowid();
            let mut link =
                tx.prepare_cached("INSERT INTO order_batch_orders (batch_id, order_id) VALUES (?1, ?2)")?;
            for order_id in &order_ids {
                link.execute(params![id, order_id])?;
            }
            drop(link);
            Batch { id, number, order_ids }
        }
    };
    tx.commit()?;
    Ok(Some(batch))
}

/// How reading the orders of a file ended.
enum Rendered {
    Complete,
    /// The writer stopped taking orders (it failed, and says why).
    WriterStopped,
}

/// Reads the orders of `order_ids` into `feed`, a few at a time.
fn render(conn: &mut Connection, order_ids: &[i64], feed: OrderFeed) -> Result<Rendered, StepError> {
    for ids in order_ids.chunks(OrderFeed::BATCH) {
        if feed.send(outgoing(conn, ids)?).is_err() {
            return Ok(Rendered::WriterStopped);
        }
    }
    Ok(if feed.finish().is_ok() { Rendered::Complete } else { Rendered::WriterStopped })
}

/// The orders as the file shows them, with their items in order.
fn outgoing(conn: &Connection, order_ids: &[i64]) -> rusqlite::Result<Vec<OutgoingOrder>> {
    let mut order_stmt = conn.prepare_cached(
        "SELECT id, external_id, external_display_id, store_id, ordered_at, customer_email, shipping_address,
                shipping_carrier_name, shipping_carrier_service_level, gift_message, notes
         FROM orders WHERE id = ?1",
    )?;
    let mut item_stmt = conn.prepare_cached(
        "SELECT sku, name, quantity, unit_price, weight FROM order_items WHERE order_id = ?1 ORDER BY position",
    )?;
    let mut orders = Vec::with_capacity(order_ids.len());
    for &id in order_ids {
        let Some(mut order) = order_stmt
            .query_row([id], |r| {
                let address: Option<String> = r.get(6)?;
                let address: Map<String, Value> =
                    address.and_then(|a| serde_json::from_str(&a).ok()).unwrap_or_default();
                let part = |key: &str| address.get(key).and_then(Value::as_str).map(str::to_string);
                Ok(OutgoingOrder {
                    order_id: r.get(0)?,
                    external_id: r.get(1)?,
                    external_display_id: r.get(2)?,
                    store_id: r.get(3)?,
                    ordered_at: r.get(4)?,
                    customer_email: r.get(5)?,
                    ship_to: ShipTo {
                        first_name: part("first_name"),
                        last_name: part("last_name"),
                        street1: part("street1"),
                        street2: part("street2"),
                        city: part("city"),
                        region: part("region"),
                        postal_code: part("postal_code"),
                        country: part("country"),
                        telephone: part("telephone"),
                    },
                    carrier: r.get(7)?,
                    service_level: r.get(8)?,
                    gift_message: r.get(9)?,
                    notes: r.get(10)?,
                    items: Vec::new(),
                })
            })
            .optional()?
        else {
            continue;
        };
        order.items = item_stmt
            .query_map([id], |r| {
                Ok(OutgoingItem {
                    sku: r.get(0)?,
                    name: r.get(1)?,
                    quantity: r.get(2)?,
                    unit_price: r.get(3)?,
                    weight: r.get(4)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        orders.push(order);
    }
    Ok(orders)
}

/// Marks the file delivered: its orders that are still `new` now wait for their shipment
/// at this warehouse.
fn deliver(conn: &mut Connection, batch: &Batch, warehouse_id: i64) -> Result<u64, StepError> {
    let tx = db::write(conn)?;
    let now = now_ms();
    tx.prepare_cached("UPDATE order_batches SET delivered_at = ?2 WHERE id = ?1")?
        .execute(params![batch.id, now])?;
    let mut moved = 0;
    for &order_id in &batch.order_ids {
        let changed = tx
            .prepare_cached(
                "UPDATE orders SET fulfillment_state = ?2, fulfillment_transitioned_at = ?3,
                   fulfillment_warehouse_id = ?4
                 WHERE id = ?1 AND fulfillment_state = 'new'",
            )?
            .execute(params![order_id, OrderState::PendingShipment.as_str(), now, warehouse_id])?;
        if changed > 0 {
            crate::orders::rerender(&tx, order_id)?;
            moved += 1;
        }
    }
    tx.commit()?;
    Ok(moved)
}
