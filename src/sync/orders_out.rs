//! Step 2, send orders: the store's `new` orders go to the warehouse (one file per step for a
//! file drop; a bounded number per claim for an API warehouse, each created under a reference
//! made from its id), and the store's cancellations of orders a warehouse holds are carried
//! to it.
//!
//! The orders of a send are claimed first (a batch row, committed), then the warehouse takes
//! them as they are read, then what became of each is committed in one transaction: taken
//! (`pending_shipment`, with the warehouse's own id) or refused (`errored`). A crash before
//! that commit leaves an undelivered batch, which the next pass sends again under the same
//! number with those of its orders still `new`: the warehouse sees the same document (or the
//! same reference), never a second order.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Map, Value};

use crate::dates::now_ms;
use crate::db;

use super::context::Context;
use super::link::Link;
use super::problems::{self, ProblemKind};
use super::runs::Step;
use super::states::{self, OrderState};
use super::step::{StepError, note};
use crate::platforms::PlatformError;
use crate::platforms::warehouse::{
    Cancelled, Delivery, HeldOrder, OrderFeed, OutgoingItem, OutgoingOrder, SendKey, SentOrder, ShipTo,
    WarehouseClient, order_feed,
};

/// Orders claimed for one send, and its number.
struct Batch {
    id: i64,
    number: i64,
    created_at: i64,
    order_ids: Vec<i64>,
    /// Claimed by an earlier pass whose send ended without a verdict on these orders.
    unfinished: bool,
}

/// Sends a step makes at most; the next pass goes on.
const MAX_SENDS: usize = 10_000;

/// Whether this connection has orders to send, a send to finish or a cancellation to carry,
/// without claiming any.
pub async fn has_work(ctx: &Context<'_>) -> Result<bool, StepError> {
    let link = ctx.link;
    let (connection_id, store_id) = (link.id, link.store_id);
    let owner = link.clone();
    ctx.sql(move |conn| {
        let pending: bool = conn
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM order_batches WHERE connection_id = ?1 AND delivered_at IS NULL)")?
            .query_row([connection_id], |r| r.get(0))?;
        Ok(
            pending
                || !cancels(conn, &owner)?.is_empty()
                || (routes_here(conn, connection_id, store_id)? && !candidates(conn, connection_id, store_id, 1)?.is_empty()),
        )
    })
    .await
}

/// Carries the store's cancellations to the warehouse, then sends the waiting orders; returns
/// how many orders the warehouse took.
pub async fn send(ctx: &Context<'_>, warehouse: &mut dyn WarehouseClient) -> Result<u64, StepError> {
    cancel(ctx, warehouse).await?;
    let (link, run_id) = (ctx.link, ctx.run_id);
    let (connection_id, store_id) = (link.id, link.store_id);
    let limit = warehouse.orders_per_send();
    let mut taken = 0;
    for _ in 0..MAX_SENDS {
        let batch = ctx.db(move |conn| claim(conn, connection_id, store_id, limit)).await?;
        let Some(batch) = batch else { break };
        let warehouse_id = link.warehouse_id;
        if batch.order_ids.is_empty() {
            // An unfinished send whose every order is no longer waiting: nothing goes out.
            let id = batch.id;
            ctx.db(move |conn| deliver(conn, (run_id, id, warehouse_id), &[], true)).await?;
            continue;
        }
        // The orders are read a few at a time and handed over as the warehouse takes them; the
        // wait for a slow warehouse is this task's, never a database thread's.
        let (feed, orders) =
            order_feed(SendKey { connection_id, number: batch.number, created_at: batch.created_at });
        let render = render(ctx, &batch, feed);
        let (rendered, delivery) = tokio::join!(render, warehouse.send_orders(orders));
        let Delivery { orders: answered, failure } = delivery;
        let complete = failure.is_none() && matches!(rendered, Ok(Rendered::Complete));
        let id = batch.id;
        taken += ctx.db(move |conn| deliver(conn, (run_id, id, warehouse_id), &answered, complete)).await?;
        // The warehouse's failure first: when it fails, the reading only sees its taker gone.
        if let Some(failure) = failure {
            return Err(StepError::Platform(failure));
        }
        if rendered? == Rendered::TakerStopped {
            return Err(StepError::Platform(PlatformError::unreachable(
                "The warehouse stopped taking orders; they are sent again in the next pass.",
            )));
        }
        if limit.is_none() {
            break;
        }
    }
    Ok(taken)
}

/// A store's cancellation of an order this warehouse holds, or may hold, not yet settled.
struct Cancel {
    order_id: i64,
    external_id: Option<String>,
    /// The warehouse's id of the order; none while its create is in doubt.
    warehouse_order_id: Option<String>,
    /// A tracking number of a shipment of it orderbridge holds.
    shipped: Option<String>,
}

/// The statement of [`cancels`] (?1 store, ?2 warehouse, ?3 connection). Every pass asks it:
/// it starts from the few cancellations waiting (`CROSS JOIN` keeps that order), never from
/// the store's orders.
pub(super) const CANCELS: &str = "SELECT o.id, o.external_id, o.external_warehouse_order_id,
                (SELECT s.tracking_number FROM shipments s WHERE s.order_id = o.id
                   AND s.state != 'errored_processing' ORDER BY s.id LIMIT 1)
         FROM order_cancels c CROSS JOIN orders o ON o.id = c.order_id
         WHERE c.reported_at IS NULL AND o.store_id = ?1
           AND ((o.fulfillment_warehouse_id = ?2 AND o.external_warehouse_order_id IS NOT NULL)
                OR (o.fulfillment_state = 'new' AND EXISTS (
                      SELECT 1 FROM order_batch_orders bo JOIN order_batches b ON b.id = bo.batch_id
                       WHERE bo.order_id = o.id AND b.delivered_at IS NULL AND b.connection_id = ?3)))
         ORDER BY o.id";

/// The cancellations to carry to the warehouse: of orders it holds under its own id, and of
/// orders whose create this connection may have sent (`new` in an unfinished send).
fn cancels(conn: &Connection, link: &Link) -> rusqlite::Result<Vec<Cancel>> {
    let mut stmt = conn.prepare_cached(CANCELS)?;
    let rows = stmt.query_map(params![link.store_id, link.warehouse_id, link.id], |r| {
        Ok(Cancel {
            order_id: r.get(0)?,
            external_id: r.get(1)?,
            warehouse_order_id: r.get(2)?,
            shipped: r.get(3)?,
        })
    })?;
    rows.collect()
}

/// What became of one cancellation.
enum Settled {
    /// The order is cancelled (at the warehouse, or it never got there).
    Cancelled,
    /// It stays as it is, and the conflict is reported once.
    Conflict(String),
    /// The warehouse could not be asked now: reported, and asked again in the next pass.
    NotNow(String),
}

/// Asks the warehouse to cancel each order the store cancelled after it was sent. An order
/// whose create may be in flight is looked up first: found, it is the warehouse's and is
/// cancelled there; not found, it is cancelled here with no request. An order with a
/// shipment, or whose cancel the warehouse refused, keeps its state: the conflict is reported
/// once, and its shipments still come back and are still notified. A cancel that cannot be
/// asked now is reported for its order alone; the other orders still go.
async fn cancel(ctx: &Context<'_>, warehouse: &mut dyn WarehouseClient) -> Result<(), StepError> {
    let (link, run_id) = (ctx.link, ctx.run_id);
    let owner = link.clone();
    let waiting = ctx.sql(move |conn| cancels(conn, &owner)).await?;
    let name = ctx.warehouse_name();
    for Cancel { order_id, external_id, warehouse_order_id, shipped } in waiting {
        let order = describe(order_id, external_id.as_deref());
        let known = warehouse_order_id.is_some();
        let (found, settled) =
            match settle(warehouse, order_id, external_id, warehouse_order_id, shipped).await {
                Ok(settled) => settled,
                Err(e @ (PlatformError::Refused(_) | PlatformError::NotAllowed(_))) => {
                    return Err(StepError::Platform(e));
                }
                Err(e) => (None, Err(e)),
            };
        let settled = match settled {
            Ok(Outcome::Done) => Settled::Cancelled,
            Ok(Outcome::Shipped(tracking)) => Settled::Conflict(format!(
                "{order} was cancelled in the store, but {name} has shipped it (tracking {tracking})"
            )),
            Ok(Outcome::Refused(reason)) => Settled::Conflict(format!(
                "{order} was cancelled in the store, but {name} refused to cancel it: {reason}"
            )),
            Err(e) if e.is_passing() => Settled::NotNow(format!(
                "{order} was cancelled in the store, but {name} could not be asked to cancel it now ({e}); it is asked again in the next pass"
            )),
            Err(e) => Settled::Conflict(format!(
                "{order} was cancelled in the store, but {name} could not be asked to cancel it: {e}"
            )),
        };
        let warehouse_id = link.warehouse_id;
        ctx.sql(move |conn| {
            let tx = db::write(conn)?;
            let now = now_ms();
            // A create that was in doubt reached the warehouse: the order is the warehouse's.
            if let (false, Some(id)) = (known, &found) {
                states::adopt(&tx, order_id, warehouse_id, id, now)?;
            }
            match &settled {
                Settled::Cancelled => {
                    tx.prepare_cached("DELETE FROM order_cancels WHERE order_id = ?1")?
                        .execute([order_id])?;
                    states::move_order(&tx, order_id, OrderState::Canceled, now)?;
                }
                Settled::Conflict(message) | Settled::NotNow(message) => {
                    if matches!(settled, Settled::Conflict(_)) {
                        tx.prepare_cached("UPDATE order_cancels SET reported_at = ?2 WHERE order_id = ?1")?
                            .execute(params![order_id, now])?;
                    }
                    note(&tx, run_id, Step::SendOrders, ProblemKind::Order, &order_id.to_string(), message)?;
                    problems::order_error(&tx, order_id, Step::SendOrders, message)?;
                }
            }
            tx.commit()?;
            Ok(())
        })
        .await?;
    }
    Ok(())
}

/// What asking the warehouse came to.
enum Outcome {
    Done,
    Shipped(String),
    Refused(String),
}

/// Looks an order in doubt up, then cancels it at the warehouse: (the warehouse's id of the
/// order, when a look-up found it; what the cancel came to). `Err` only when the look-up
/// itself failed.
async fn settle(
    warehouse: &mut dyn WarehouseClient,
    order_id: i64,
    external_id: Option<String>,
    warehouse_order_id: Option<String>,
    shipped: Option<String>,
) -> Result<(Option<String>, Result<Outcome, PlatformError>), PlatformError> {
    if let Some(tracking) = shipped {
        return Ok((None, Ok(Outcome::Shipped(tracking))));
    }
    let (found, warehouse_order_id) = match warehouse_order_id {
        Some(id) => (None, id),
        None => match warehouse.find(order_id).await? {
            Some(id) => (Some(id.clone()), id),
            // It never reached the warehouse: nothing to ask.
            None => return Ok((None, Ok(Outcome::Done))),
        },
    };
    let held = HeldOrder { order_id, external_id, warehouse_order_id };
    let outcome = match warehouse.cancel(&held).await {
        Ok(Cancelled::Done | Cancelled::NotAsked) => Ok(Outcome::Done),
        Ok(Cancelled::Refused(reason)) => Ok(Outcome::Refused(reason)),
        Err(e) => Err(e),
    };
    Ok((found, outcome))
}

/// How a person finds an order: "order 5 (external id 101)".
fn describe(order_id: i64, external_id: Option<&str>) -> String {
    match external_id {
        Some(external) => format!("order {order_id} (external id {external})"),
        None => format!("order {order_id}"),
    }
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

/// The statement of [`candidates`] (?1 store, ?2 limit, ?3 connection). It asks the index of
/// (store, state) for the store's `new` orders, already in id order: every pass asks it, so it
/// must not walk the store's other orders (an index of the store alone, also in id order, read
/// every order row to find none `new`: an idle pass cost grew with the orders stored).
pub(super) const CANDIDATES: &str = "SELECT o.id FROM orders o
         WHERE o.fulfillment_state = 'new' AND o.store_id = ?1
           AND NOT EXISTS (SELECT 1 FROM order_cancels c WHERE c.order_id = o.id)
           AND NOT EXISTS (SELECT 1 FROM order_batch_orders bo JOIN order_batches b ON b.id = bo.batch_id
                           WHERE bo.order_id = o.id AND b.delivered_at IS NULL AND b.connection_id = ?3)
         ORDER BY o.id LIMIT ?2";

/// `new` orders of the store that no unsent batch of this connection holds, oldest first. An
/// order held by an unsent batch of another connection, one that routed the store's orders
/// before it was switched off, is sent here: that batch sends only what is still `new`.
fn candidates(
    conn: &Connection,
    connection_id: i64,
    store_id: i64,
    limit: i64,
) -> rusqlite::Result<Vec<i64>> {
    let mut stmt = conn.prepare_cached(CANDIDATES)?;
    let ids = stmt.query_map(params![store_id, limit, connection_id], |r| r.get(0))?;
    ids.collect()
}

/// The send left unfinished by an earlier pass, with those of its orders still `new` (the
/// store may have cancelled one meanwhile: it is never sent), or a new one with the orders
/// waiting, at most `limit` of them.
fn claim(
    conn: &mut Connection,
    connection_id: i64,
    store_id: i64,
    limit: Option<usize>,
) -> Result<Option<Batch>, StepError> {
    let tx = db::write(conn)?;
    let unsent: Option<(i64, i64, i64)> = tx
        .prepare_cached(
            "SELECT id, number, created_at FROM order_batches WHERE connection_id = ?1 AND delivered_at IS NULL
             ORDER BY id LIMIT 1",
        )?
        .query_row([connection_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    let batch = match unsent {
        Some((id, number, created_at)) => {
            let mut stmt = tx.prepare_cached(
                "SELECT bo.order_id FROM order_batch_orders bo JOIN orders o ON o.id = bo.order_id
                 WHERE bo.batch_id = ?1 AND o.fulfillment_state = 'new'
                   AND NOT EXISTS (SELECT 1 FROM order_cancels c WHERE c.order_id = o.id)
                 ORDER BY bo.order_id",
            )?;
            let order_ids = stmt.query_map([id], |r| r.get(0))?.collect::<rusqlite::Result<Vec<i64>>>()?;
            drop(stmt);
            Batch { id, number, created_at, order_ids, unfinished: true }
        }
        None => {
            if !routes_here(&tx, connection_id, store_id)? {
                return Ok(None);
            }
            let limit = limit.map_or(i64::MAX, |n| i64::try_from(n).unwrap_or(i64::MAX));
            let order_ids = candidates(&tx, connection_id, store_id, limit)?;
            if order_ids.is_empty() {
                return Ok(None);
            }
            let number: i64 = tx
                .prepare_cached(
                    "SELECT COALESCE(MAX(number), 0) + 1 FROM order_batches WHERE connection_id = ?1",
                )?
                .query_row([connection_id], |r| r.get(0))?;
            let created_at = now_ms();
            tx.prepare_cached(
                "INSERT INTO order_batches (connection_id, number, created_at) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![connection_id, number, created_at])?;
            let id = tx.last_insert_rowid();
            let mut link =
                tx.prepare_cached("INSERT INTO order_batch_orders (batch_id, order_id) VALUES (?1, ?2)")?;
            for order_id in &order_ids {
                link.execute(params![id, order_id])?;
            }
            drop(link);
            Batch { id, number, created_at, order_ids, unfinished: false }
        }
    };
    tx.commit()?;
    Ok(Some(batch))
}

/// How reading the orders of a send ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rendered {
    Complete,
    /// The warehouse stopped taking orders (it failed, and says why).
    TakerStopped,
}

/// Reads the orders of `batch` into `feed`, a few at a time, each read on the database thread
/// and handed over from here. The orders of a send an earlier pass left unfinished go marked
/// as in doubt: their creates may have reached the warehouse.
async fn render(ctx: &Context<'_>, batch: &Batch, feed: OrderFeed) -> Result<Rendered, StepError> {
    for ids in batch.order_ids.chunks(OrderFeed::BATCH) {
        let ids = ids.to_vec();
        let mut orders = ctx.sql(move |conn| outgoing(conn, &ids)).await?;
        for order in &mut orders {
            order.in_doubt = batch.unfinished;
        }
        if feed.give(orders).await.is_err() {
            return Ok(Rendered::TakerStopped);
        }
    }
    Ok(if feed.end().await.is_ok() { Rendered::Complete } else { Rendered::TakerStopped })
}

/// The orders as a warehouse is sent them, with their items in order.
fn outgoing(conn: &Connection, order_ids: &[i64]) -> rusqlite::Result<Vec<OutgoingOrder>> {
    let mut order_stmt = conn.prepare_cached(
        "SELECT id, external_id, external_display_id, store_id, ordered_at, customer_email, shipping_address,
                shipping_carrier_name, shipping_carrier_service_level, gift_message, notes, billing_address,
                currency_code, shipping_amount, tax_amount, purchase_order_id, requested_ship_date
         FROM orders WHERE id = ?1",
    )?;
    let mut item_stmt = conn.prepare_cached(
        "SELECT sku, name, quantity, unit_price, weight, tax_amount, upc, external_order_item_id
         FROM order_items WHERE order_id = ?1 ORDER BY position",
    )?;
    let mut orders = Vec::with_capacity(order_ids.len());
    for &id in order_ids {
        let Some(mut order) = order_stmt
            .query_row([id], |r| {
                Ok(OutgoingOrder {
                    order_id: r.get(0)?,
                    external_id: r.get(1)?,
                    external_display_id: r.get(2)?,
                    store_id: r.get(3)?,
                    ordered_at: r.get(4)?,
                    customer_email: r.get(5)?,
                    ship_to: address(r.get(6)?),
                    bill_to: address(r.get(11)?),
                    carrier: r.get(7)?,
                    service_level: r.get(8)?,
                    gift_message: r.get(9)?,
                    notes: r.get(10)?,
                    purchase_order_id: r.get(15)?,
                    requested_ship_date: r.get(16)?,
                    currency_code: r.get(12)?,
                    shipping_amount: r.get(13)?,
                    tax_amount: r.get(14)?,
                    items: Vec::new(),
                    in_doubt: false,
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
                    tax_amount: r.get(5)?,
                    upc: r.get(6)?,
                    external_order_item_id: r.get(7)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        orders.push(order);
    }
    Ok(orders)
}

/// An address stored as its JSON document.
fn address(text: Option<String>) -> ShipTo {
    let address: Map<String, Value> = text.and_then(|a| serde_json::from_str(&a).ok()).unwrap_or_default();
    let part = |key: &str| address.get(key).and_then(Value::as_str).map(str::to_string);
    ShipTo {
        first_name: part("first_name"),
        last_name: part("last_name"),
        street1: part("street1"),
        street2: part("street2"),
        city: part("city"),
        region: part("region"),
        postal_code: part("postal_code"),
        country: part("country"),
        telephone: part("telephone"),
    }
}

/// Records what became of the orders of batch `batch` (run, batch, warehouse ids), and marks
/// the batch delivered once every order was answered for (`complete`): an order the warehouse
/// took waits for its shipment there, one it refused is `errored` with the reason in the
/// run's problems. Returns how many it took.
fn deliver(
    conn: &mut Connection,
    (run_id, batch_id, warehouse_id): (i64, i64, i64),
    answered: &[(i64, SentOrder)],
    complete: bool,
) -> Result<u64, StepError> {
    let tx = db::write(conn)?;
    let now = now_ms();
    if complete {
        tx.prepare_cached("UPDATE order_batches SET delivered_at = ?2 WHERE id = ?1")?
            .execute(params![batch_id, now])?;
    }
    let mut taken = 0;
    for (order_id, outcome) in answered {
        match outcome {
            SentOrder::Accepted { warehouse_order_id } => {
                let changed = tx
                    .prepare_cached(
                        "UPDATE orders SET fulfillment_state = ?2, fulfillment_transitioned_at = ?3,
                           fulfillment_warehouse_id = ?4,
                           external_warehouse_order_id = COALESCE(?5, external_warehouse_order_id)
                         WHERE id = ?1 AND fulfillment_state = 'new'",
                    )?
                    .execute(params![
                        order_id,
                        OrderState::PendingShipment.as_str(),
                        now,
                        warehouse_id,
                        warehouse_order_id
                    ])?;
                if changed > 0 {
                    crate::orders::rerender(&tx, *order_id)?;
                    taken += 1;
                }
            }
            SentOrder::Refused(reason) => {
                let state: Option<Option<String>> = tx
                    .prepare_cached("SELECT fulfillment_state FROM orders WHERE id = ?1")?
                    .query_row([order_id], |r| r.get(0))
                    .optional()?;
                if state.flatten().as_deref() == Some(OrderState::New.as_str()) {
                    states::move_order(&tx, *order_id, OrderState::Errored, now)?;
                    note(&tx, run_id, Step::SendOrders, ProblemKind::Order, &order_id.to_string(), reason)?;
                    problems::order_error(&tx, *order_id, Step::SendOrders, reason)?;
                }
            }
        }
    }
    tx.commit()?;
    Ok(taken)
}
