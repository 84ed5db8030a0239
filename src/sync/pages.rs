//! Writing what a pull read (CONTRACT §11 step 1): one page of a store's listing at a time,
//! its new and changed orders (each read whole first), the cancellations of orders held and
//! the cursor that covers them (and the walk that goes on from them), in one transaction, so a
//! crash loses nothing and a re-read doubles nothing. Used by [`super::orders_in`]'s one loop.

use std::collections::HashMap;

use futures::{StreamExt, TryStreamExt};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use crate::dates::{format_ms, now_ms};
use crate::db;
use crate::orders::model::NewOrder;
use crate::orders::write::OrderWriter;
use crate::platforms::PlatformError;
use crate::platforms::store::{
    Disposition, Listed, ListedOrder, Listing, PullPlan, PulledOrder, StoreClient,
};

use super::context::Context;
use super::states::{self, OrderState};
use super::step::StepError;
use super::walking::{self, Keep};

/// Requests for order details in flight at once (the platform gate allows 5).
const DETAILS_AT_ONCE: usize = 5;

/// What we already hold of a listed order.
struct Known {
    id: i64,
    /// The version written last (`order_sync.source_modified_at`).
    version: Option<i64>,
    state: Option<String>,
}

/// One listing of one store being read.
pub(super) struct Reading<'a> {
    pub(super) store: &'a dyn StoreClient,
    pub(super) plan: &'a PullPlan,
    pub(super) store_id: i64,
    pub(super) listing: Listing,
    /// The store's cursor when the pull began.
    pub(super) cursor: Option<i64>,
}

/// Writes one page of a listing: the orders to import that are new or changed (each read
/// whole first), the cancellations of orders held, `commit_cursor` and what `keep` says of
/// the store's walk with them, in one transaction; `pulled` counts the orders written.
pub(super) async fn write_listed(
    ctx: &Context<'_>,
    read: &Reading<'_>,
    listed: Vec<ListedOrder>,
    commit_cursor: Option<i64>,
    keep: Keep,
    pulled: &mut u64,
) -> Result<(), StepError> {
    let Reading { store, plan, store_id, .. } = *read;
    let keys: Vec<String> = listed.iter().map(|o| o.external_id.clone()).collect();
    let known = ctx.sql(move |conn| lookup(conn, store_id, &keys)).await?;
    let mut wanted = Vec::new();
    let mut cancels = Vec::new();
    for order in listed {
        let held = known.get(&order.external_id);
        match order.disposition {
            Disposition::Import => {
                let rewrite = |k: &Known| {
                    k.version != Some(order.version)
                        && (plan.rewrites_sent_orders
                            || OrderState::parse(k.state.as_deref()) == Some(OrderState::New))
                };
                if held.is_none_or(rewrite) {
                    wanted.push(order);
                }
            }
            Disposition::Cancel => {
                // Even a shipped order: a warehouse that shipped it has a conflict to report.
                if let Some(k) = held
                    && OrderState::parse(k.state.as_deref()).is_some_and(|s| s != OrderState::Canceled)
                {
                    cancels.push(k.id);
                }
            }
            Disposition::Skip => {}
        }
    }
    let requests: Vec<_> = wanted.into_iter().map(|order| whole(store, order)).collect();
    let fetched: Vec<(String, i64, PulledOrder)> =
        futures::stream::iter(requests).buffer_unordered(DETAILS_AT_ONCE).try_collect().await?;
    // A page that brings nothing new, moves no cursor and keeps no walk writes nothing.
    if !(fetched.is_empty() && cancels.is_empty() && commit_cursor.is_none() && keep.is_nothing()) {
        let end = PageEnd { cursor: commit_cursor, keep };
        *pulled += ctx.db(move |conn| write_page(conn, store_id, fetched, &cancels, &end)).await?;
    }
    Ok(())
}

/// A listed order with its items and addresses: (external id, version, the order).
async fn whole(
    store: &dyn StoreClient,
    order: ListedOrder,
) -> Result<(String, i64, PulledOrder), PlatformError> {
    let (external_id, version) = (order.external_id.clone(), order.version);
    let pulled = match order.listed {
        Listed::Whole(made) => made?,
        Listed::Entry(_) => store.record(&order).await?,
    };
    Ok((external_id, version, pulled))
}

fn lookup(conn: &Connection, store_id: i64, keys: &[String]) -> rusqlite::Result<HashMap<String, Known>> {
    let mut stmt = conn.prepare_cached(
        "SELECT o.id, s.source_modified_at, o.fulfillment_state FROM orders o
           LEFT JOIN order_sync s ON s.order_id = o.id
         WHERE o.store_id = ?1 AND o.external_id = ?2",
    )?;
    let mut known = HashMap::with_capacity(keys.len());
    for key in keys {
        if let Some(k) = stmt
            .query_row(params![store_id, key], |r| {
                Ok(Known { id: r.get(0)?, version: r.get(1)?, state: r.get(2)? })
            })
            .optional()?
        {
            known.insert(key.clone(), k);
        }
    }
    Ok(known)
}

/// What a page's transaction records besides its orders: the cursor it moves to, and the
/// store's walk as it stands after the page.
struct PageEnd {
    cursor: Option<i64>,
    keep: Keep,
}

/// Writes one page's orders, its cancellations, the cursor and the walk in one transaction.
fn write_page(
    conn: &mut Connection,
    store_id: i64,
    orders: Vec<(String, i64, PulledOrder)>,
    cancels: &[i64],
    end: &PageEnd,
) -> Result<u64, StepError> {
    // A page of orders already held moves only the cursor, which no listing counts.
    let tx =
        if orders.is_empty() && cancels.is_empty() { db::write_unlisted(conn)? } else { db::write(conn)? };
    let now = now_ms();
    let mut writer = OrderWriter::new(&tx, now);
    let mut written = 0;
    for (external_id, version, pulled) in orders {
        let mut record = pulled.record;
        record.insert("store_id".into(), Value::from(store_id));
        // Sync owns these fields; a re-read of a known order keeps what sync set.
        type Held = (Option<String>, Option<i64>, Option<i64>, Option<String>);
        let held: Option<Held> = tx
            .prepare_cached(
                "SELECT fulfillment_state, fulfillment_transitioned_at, fulfillment_warehouse_id,
                        external_warehouse_order_id
                 FROM orders WHERE store_id = ?1 AND external_id = ?2",
            )?
            .query_row(params![store_id, external_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .optional()?;
        let (state, at, warehouse, warehouse_order) =
            held.unwrap_or((Some(OrderState::New.as_str().into()), Some(now), None, None));
        record.insert("fulfillment_state".into(), state.map_or(Value::Null, Value::from));
        record
            .insert("fulfillment_transitioned_at".into(), at.map_or(Value::Null, |ms| format_ms(ms).into()));
        record.insert("fulfillment_warehouse_id".into(), warehouse.map_or(Value::Null, Value::from));
        record.insert("external_warehouse_order_id".into(), warehouse_order.map_or(Value::Null, Value::from));
        let bad = |problems: crate::fields::Details| {
            let list: Vec<String> = problems.iter().map(|(k, v)| format!("{k} {v}")).collect();
            StepError::Platform(PlatformError::BadData(format!(
                "The store's order {external_id} cannot be read: {}.",
                list.join("; ")
            )))
        };
        let order = NewOrder::from_record(record).map_err(bad)?;
        let customer_id = writer.check(&order)?.map_err(bad)?;
        let id = writer.write(&order, customer_id)?.id;
        tx.prepare_cached(
            "INSERT INTO order_sync (order_id, source_modified_at, address_id) VALUES (?1, ?2, ?3)
             ON CONFLICT (order_id) DO UPDATE SET source_modified_at = excluded.source_modified_at,
               address_id = excluded.address_id",
        )?
        .execute(params![id, version, pulled.address_id])?;
        written += 1;
    }
    for &order_id in cancels {
        states::cancel_by_store(&tx, order_id, now)?;
    }
    if let Some(cursor) = end.cursor {
        save_cursor(&tx, store_id, cursor)?;
    }
    walking::write(&tx, store_id, &end.keep, now)?;
    // The writer's statements borrow the transaction.
    drop(writer);
    tx.commit()?;
    Ok(written)
}

/// Moves the store's cursor forward (never back) to `cursor`.
fn save_cursor(conn: &Connection, store_id: i64, cursor: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO store_cursors (store_id, cursor) VALUES (?1, ?2)
         ON CONFLICT (store_id) DO UPDATE SET cursor = max(cursor, excluded.cursor)",
    )?
    .execute(params![store_id, cursor])?;
    Ok(())
}

/// Moves the store's `order_imported_at` to `at`, the start of the pass whose pull read it all.
pub(super) async fn imported(ctx: &Context<'_>, at: i64) -> Result<(), StepError> {
    let store_id = ctx.link.store_id;
    ctx.sql(move |conn| {
        conn.prepare_cached("UPDATE stores SET order_imported_at = ?1 WHERE id = ?2")?
            .execute(params![at, store_id])?;
        Ok(())
    })
    .await
}
