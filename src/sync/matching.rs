//! Step 3, the match: a shipment a warehouse reported is linked to the order items (and units)
//! it ships, or is `errored_processing` with the reason. A file's shipment is matched as it is
//! imported; a shipment still waiting (or scheduled for processing again) is matched by every
//! pass of its store's connections.

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::dates::now_ms;
use crate::db;

use super::problems::{self, ProblemKind};
use super::runs::Step;
use super::states;
use super::step::note;

/// An item a warehouse says it shipped, before it is matched to an order item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requested {
    pub sku: String,
    pub quantity: i64,
    /// Every unit of the SKU the order has left to ship (a warehouse that does not say how
    /// many); `quantity` is then 0.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all: bool,
}

/// Whether a store has shipments to match (?1 store): asked by every pass, so it reads the few
/// shipments in those states, never the store's others.
pub(super) const UNPROCESSED: &str = "SELECT EXISTS (SELECT 1 FROM shipments INDEXED BY shipments_state
     WHERE state IN ('new', 'scheduled_processing_shipment') AND store_id = ?1)";

/// Matches the store's unprocessed shipments (from any warehouse: an import may bring
/// them) to their orders' items.
pub fn process(conn: &mut Connection, store_id: i64, run_id: i64) -> rusqlite::Result<()> {
    let waiting: bool = conn.prepare_cached(UNPROCESSED)?.query_row(params![store_id], |r| r.get(0))?;
    if !waiting {
        return Ok(());
    }
    let tx = db::write(conn)?;
    let now = now_ms();
    let mut stmt = tx.prepare_cached(
        "SELECT id, order_id FROM shipments INDEXED BY shipments_state
         WHERE state IN ('new', 'scheduled_processing_shipment') AND store_id = ?1 ORDER BY id",
    )?;
    let waiting = stmt
        .query_map(params![store_id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<Vec<(i64, i64)>>>()?;
    drop(stmt);
    for (shipment_id, order_id) in waiting {
        let outcome = match_items(&tx, shipment_id, order_id)?;
        let state = match &outcome {
            Ok(()) => {
                tx.prepare_cached(
                    "UPDATE shipment_sync SET last_error = NULL, last_error_at = NULL, last_error_step = NULL
                     WHERE shipment_id = ?1",
                )?
                .execute([shipment_id])?;
                "ready_for_shipment_notification"
            }
            Err(problem) => {
                processing_failed(&tx, run_id, shipment_id, problem)?;
                "errored_processing"
            }
        };
        states::move_shipment(&tx, shipment_id, state)?;
        states::update_progress(&tx, order_id, now)?;
    }
    tx.commit()
}

/// A shipment that cannot be matched to its order: its latest error and the run's problem.
pub(super) fn processing_failed(
    tx: &Connection,
    run_id: i64,
    shipment_id: i64,
    problem: &str,
) -> rusqlite::Result<()> {
    problems::shipment_error(tx, shipment_id, Step::PullShipments, problem)?;
    let message = format!("Shipment {shipment_id} {problem}.");
    note(tx, run_id, Step::PullShipments, ProblemKind::Shipment, &shipment_id.to_string(), &message)
}

/// Links a shipment to the order items (and units) it ships, or says why it cannot.
fn match_items(conn: &Connection, shipment_id: i64, order_id: i64) -> rusqlite::Result<Result<(), String>> {
    let requested: Option<String> = conn
        .prepare_cached("SELECT requested FROM shipment_sync WHERE shipment_id = ?1")?
        .query_row([shipment_id], |r| r.get(0))
        .optional()?
        .flatten();
    let requested: Option<Vec<Requested>> = requested.and_then(|text| serde_json::from_str(&text).ok());
    let Some(requested) = requested else {
        // An imported shipment names its items itself.
        return Ok(Ok(()));
    };
    let links = match allocate(conn, order_id, &requested, shipment_id)? {
        Ok(links) => links,
        Err(problem) => return Ok(Err(problem)),
    };
    conn.prepare_cached("DELETE FROM shipment_items WHERE shipment_id = ?1")?.execute([shipment_id])?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO shipment_items (shipment_id, position, order_item_id, quantity) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (position, (item, quantity)) in links.iter().enumerate() {
        insert.execute(params![shipment_id, position as i64, item, quantity])?;
    }
    Ok(Ok(()))
}

/// The (order item, units) a shipment of `requested` takes from what the order has left to
/// ship (leaving out shipment `exclude`'s own units), or why it cannot. No item requested
/// means every unit left.
pub(super) fn allocate(
    conn: &Connection,
    order_id: i64,
    requested: &[Requested],
    exclude: i64,
) -> rusqlite::Result<Result<Vec<(i64, i64)>, String>> {
    // (item id, sku, units not yet in another shipment)
    let mut stmt = conn.prepare_cached(
        "SELECT oi.id, oi.sku, oi.quantity - (
                  SELECT COALESCE(SUM(COALESCE(si.quantity, oi.quantity)), 0)
                    FROM shipment_items si JOIN shipments s ON s.id = si.shipment_id
                   WHERE si.order_item_id = oi.id AND s.id != ?2 AND s.state != 'errored_processing')
           FROM order_items oi WHERE oi.order_id = ?1 ORDER BY oi.position",
    )?;
    let mut left = stmt
        .query_map(params![order_id, exclude], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?, r.get::<_, i64>(2)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    if requested.is_empty() {
        let links: Vec<(i64, i64)> =
            left.iter().filter(|(_, _, n)| *n > 0).map(|(id, _, n)| (*id, *n)).collect();
        if links.is_empty() {
            return Ok(Err(format!(
                "ships every unit left, but every unit of order {order_id} is already in a shipment"
            )));
        }
        return Ok(Ok(links));
    }
    let mut links: Vec<(i64, i64)> = Vec::new();
    for want in requested {
        if !left.iter().any(|(_, sku, _)| sku.as_deref() == Some(want.sku.as_str())) {
            return Ok(Err(format!("sku {} is not an item of order {order_id}", want.sku)));
        }
        let mut missing = want.quantity;
        if want.all {
            missing = left
                .iter()
                .filter(|(_, sku, _)| sku.as_deref() == Some(want.sku.as_str()))
                .map(|l| l.2)
                .sum();
            if missing <= 0 {
                return Ok(Err(format!(
                    "ships every unit left of sku {}, but every unit of it in order {order_id} is already in a shipment",
                    want.sku
                )));
            }
        }
        for (id, _, n) in left.iter_mut().filter(|(_, sku, _)| sku.as_deref() == Some(want.sku.as_str())) {
            let take = missing.min(*n);
            if take > 0 {
                *n -= take;
                missing -= take;
                match links.iter_mut().find(|(item, _)| item == id) {
                    Some(link) => link.1 += take,
                    None => links.push((*id, take)),
                }
            }
        }
        if missing > 0 {
            return Ok(Err(format!(
                "ships {} units of sku {}, more than order {order_id} has left to ship",
                want.quantity, want.sku
            )));
        }
    }
    Ok(Ok(links))
}
