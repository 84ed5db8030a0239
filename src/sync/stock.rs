//! Step 5, stock (the inventory channel): what the warehouse says it holds (its stock files,
//! or its inventory list) is recorded, mapped to the customer's products (a bundle's stock is the smallest
//! whole number of bundles its components make) and sent to the store as absolute levels.
//! Only levels that changed since the last successful send go out again.
//!
//! A stock file is recorded (one transaction) before it is moved to `processed/`, so a crash
//! in between re-reads the same numbers and changes nothing. Levels are recorded as sent
//! after the store accepted them; a crash in that window sends the same absolute levels
//! again, which leaves the store as it was.

use std::collections::{BTreeMap, HashMap, HashSet};

use rusqlite::{Connection, params};

use crate::dates::now_ms;
use crate::db;
use crate::platforms::PlatformError;
use crate::platforms::store::StoreClient;
use crate::platforms::warehouse::{Inbox, Since, StockRow, WarehouseClient};

use super::context::Context;
use super::inbox::{MAX_PIECES, Reading};
use super::problems::ProblemKind;
use super::runs::Step;
use super::step::{StepError, note};

/// Reads what the warehouse says it holds and sends the changed levels; `sent` counts the
/// levels sent.
pub async fn sync(
    ctx: &Context<'_>,
    (store, warehouse): (&dyn StoreClient, &mut dyn WarehouseClient),
    sent: &mut u64,
) -> Result<(), StepError> {
    // What became of levels the store took to apply later, before new ones go.
    let (link, run_id) = (ctx.link, ctx.run_id);
    let receipt_failure = super::receipts::settle(ctx, store).await?;
    let since = Since { cursor: None, created_at: 0, walk: None };
    let mut inbox = Reading::open(warehouse, Inbox::Stock, since).await?;
    for _ in 0..MAX_PIECES {
        let Some(piece) = inbox.warehouse.next_stock().await? else { break };
        let warehouse_id = link.warehouse_id;
        for remark in piece.reports.remarks {
            let (kind, reference) = match remark.of_sku {
                true => (ProblemKind::Sku, remark.reference),
                false => (ProblemKind::File, piece.name.clone()),
            };
            ctx.note(Step::Stock, kind, reference, remark.message).await?;
        }
        let used = match piece.records {
            Ok(rows) => {
                ctx.sql(move |conn| record(conn, warehouse_id, &rows)).await?;
                Ok(())
            }
            Err(bad) => Err(bad),
        };
        inbox.settle(ctx, piece.name, used).await?;
    }
    let (connection_id, customer_id, warehouse_id) = (link.id, link.customer_id, link.warehouse_id);
    let store_id = link.store_id;
    let (changed, unknown) = ctx
        .sql(move |conn| {
            let at = Holdings { connection_id, customer_id, warehouse_id, store_id };
            changed_levels(conn, &at)
        })
        .await?;
    if !unknown.is_empty() {
        // Named in the run, each with why it was not sent (CONTRACT §11, "Stock levels").
        ctx
            .sql(move |conn| {
                for sku in &unknown {
                    let message = format!("The warehouse holds SKU {sku}, which is no product of the customer; its level was not sent.");
                    note(conn, run_id, Step::Stock, ProblemKind::Sku, sku, &message)?;
                }
                Ok(())
            })
            .await?;
    }
    // One request's levels per commit, so a crash re-sends one request at most. A level the
    // store refused or skipped (it did not apply it: no such product, an untracked item) is
    // not recorded as sent, so the next pass tries it again; the others are.
    let mut refused: Vec<(String, String)> = Vec::new();
    for chunk in changed.chunks(store.stock_per_request()) {
        let answer = store.set_stock(chunk).await?;
        let accepted = answer.accepted;
        let unapplied: HashSet<&str> =
            answer.refused.iter().chain(&answer.skipped).map(|(sku, _)| sku.as_str()).collect();
        let levels: Vec<(String, i64)> =
            chunk.iter().filter(|(sku, _)| !unapplied.contains(sku.as_str())).cloned().collect();
        let unapplied_now: Vec<(String, String)> =
            answer.refused.iter().chain(&answer.skipped).cloned().collect();
        refused.extend(answer.refused);
        let receipts = answer.receipts;
        // The store's stock counts as updated only while every level was taken.
        let all_taken = refused.is_empty();
        let store_id = link.store_id;
        let taken = accepted as u64;
        let platform = ctx.store_name();
        ctx.sql(move |conn| {
            for (sku, why) in &unapplied_now {
                let message = format!("{platform} did not apply the stock level of SKU {sku}: {why}.");
                note(conn, run_id, Step::Stock, ProblemKind::Sku, sku, &message)?;
            }
            let sent = Sent { connection_id, store_id, warehouse_id, receipts: &receipts };
            mark_sent(conn, &sent, &levels, all_taken)
        })
        .await?;
        *sent += taken;
    }
    if let Some((_, first)) = refused.first() {
        let platform = ctx.store_name();
        return Err(StepError::Platform(PlatformError::BadData(format!(
            "{platform} refused {} of {} stock updates; first: {first}.",
            refused.len(),
            changed.len()
        ))));
    }
    if let Some(message) = receipt_failure {
        return Err(StepError::Platform(PlatformError::BadData(message)));
    }
    inbox.finish()
}

/// Records what a stock file says the warehouse holds (a later file wins).
fn record(conn: &mut Connection, warehouse_id: i64, rows: &[StockRow]) -> rusqlite::Result<()> {
    let tx = db::write(conn)?;
    let now = now_ms();
    let mut upsert = tx.prepare_cached(
        "INSERT INTO warehouse_stock (warehouse_id, sku, quantity, updated_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (warehouse_id, sku) DO UPDATE SET quantity = excluded.quantity, updated_at = excluded.updated_at",
    )?;
    for row in rows {
        upsert.execute(params![warehouse_id, row.sku, row.quantity, now])?;
    }
    drop(upsert);
    tx.commit()
}

/// Stock levels by SKU.
type Levels = Vec<(String, i64)>;

/// Whose stock a level is computed for: the connection's customer, warehouse and store.
struct Holdings {
    connection_id: i64,
    customer_id: i64,
    warehouse_id: i64,
    store_id: i64,
}

/// The units per SKU of the store's orders not yet sent (?1 store): read through the index of
/// (store, state), never the store's other orders.
pub(super) const UNSENT_UNITS: &str =
    "SELECT oi.sku, SUM(oi.quantity) FROM orders o INDEXED BY orders_store_fulfillment_state
       JOIN order_items oi ON oi.order_id = o.id
     WHERE o.store_id = ?1 AND o.fulfillment_state = 'new' AND oi.sku IS NOT NULL GROUP BY oi.sku";

/// The store levels that differ from what was last sent for this connection, sorted by
/// sku, and the warehouse SKUs that match no product of the customer.
///
/// The store already counted the units of its orders that were pulled but not yet sent
/// (`new`), which the warehouse cannot know of: they come off first (CONTRACT §11, "Stock
/// levels"), from components before a bundle's level is made of them, and a bundle SKU's own
/// units off the bundle's level after.
fn changed_levels(conn: &Connection, at: &Holdings) -> rusqlite::Result<(Levels, Vec<String>)> {
    let Holdings { connection_id, customer_id, warehouse_id, store_id } = *at;
    let mut stmt =
        conn.prepare_cached("SELECT sku, quantity FROM warehouse_stock WHERE warehouse_id = ?1")?;
    let mut held: HashMap<String, i64> =
        stmt.query_map([warehouse_id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
    let mut stmt = conn.prepare_cached(UNSENT_UNITS)?;
    let unsent: HashMap<String, i64> =
        stmt.query_map([store_id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
    let mut stmt = conn.prepare_cached("SELECT id, sku FROM products WHERE customer_id = ?1")?;
    let products: HashMap<i64, String> =
        stmt.query_map([customer_id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
    let mut stmt = conn.prepare_cached(
        "SELECT b.product_id, b.component_id, b.qty FROM product_bundle_items b
           JOIN products p ON p.id = b.product_id WHERE p.customer_id = ?1",
    )?;
    let mut bundles: HashMap<i64, Vec<(i64, i64)>> = HashMap::new();
    for row in stmt
        .query_map([customer_id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)))?
    {
        let (bundle, component, qty) = row?;
        bundles.entry(bundle).or_default().push((component, qty));
    }
    let known: std::collections::HashSet<&str> = products.values().map(String::as_str).collect();
    let mut unknown: Vec<String> = held.keys().filter(|sku| !known.contains(sku.as_str())).cloned().collect();
    unknown.sort();
    for (sku, have) in held.iter_mut() {
        *have = (*have - unsent.get(sku).copied().unwrap_or(0)).max(0);
    }
    let mut wanted: BTreeMap<String, i64> = BTreeMap::new();
    for (id, sku) in &products {
        let level = match bundles.get(id) {
            // A bundle is as many as its scarcest component makes; unknown while any is.
            Some(parts) => parts
                .iter()
                .map(|(component, qty)| {
                    products.get(component).and_then(|s| held.get(s)).map(|have| have / (*qty).max(1))
                })
                .collect::<Option<Vec<i64>>>()
                .and_then(|per_part| per_part.into_iter().min()),
            None => held.get(sku).copied(),
        };
        let unsent_here = if bundles.contains_key(id) { unsent.get(sku).copied().unwrap_or(0) } else { 0 };
        if let Some(level) = level {
            wanted.insert(sku.clone(), (level - unsent_here).max(0));
        }
    }
    let mut stmt = conn.prepare_cached("SELECT sku, quantity FROM stock_sent WHERE connection_id = ?1")?;
    let sent: HashMap<String, i64> =
        stmt.query_map([connection_id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
    let changed = wanted.into_iter().filter(|(sku, level)| sent.get(sku) != Some(level)).collect();
    Ok((changed, unknown))
}

/// Where levels went, and the receipts the store handed out for them.
struct Sent<'a> {
    connection_id: i64,
    store_id: i64,
    warehouse_id: i64,
    receipts: &'a [String],
}

/// Records levels the store accepted (with any receipts for them), and (`touch`) when the
/// store's and warehouse's stock moved.
fn mark_sent(
    conn: &mut Connection,
    sent: &Sent<'_>,
    levels: &[(String, i64)],
    touch: bool,
) -> rusqlite::Result<()> {
    let Sent { connection_id, store_id, warehouse_id, receipts } = *sent;
    let tx = db::write(conn)?;
    let now = now_ms();
    let mut upsert = tx.prepare_cached(
        "INSERT INTO stock_sent (connection_id, sku, quantity, sent_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (connection_id, sku) DO UPDATE SET quantity = excluded.quantity, sent_at = excluded.sent_at",
    )?;
    for (sku, level) in levels {
        upsert.execute(params![connection_id, sku, level, now])?;
    }
    drop(upsert);
    super::receipts::keep(&tx, store_id, connection_id, receipts, levels, now)?;
    if touch {
        tx.prepare_cached("UPDATE stores SET inventory_updated_at = ?2 WHERE id = ?1")?
            .execute(params![store_id, now])?;
        tx.prepare_cached("UPDATE warehouses SET inventory_updated_at = ?2 WHERE id = ?1")?
            .execute(params![warehouse_id, now])?;
    }
    tx.commit()
}
