//! Step 4, notify: each shipment ready for it is reported to the store, at most once.
//!
//! Shipments are claimed (`scheduled_notify_of_shipment`, committed) before the store is
//! asked, and the answer is committed after. A claim marks the shipment `in_doubt`, and
//! only the store's acceptance clears it: after a crash, a lost answer, or a retry or a
//! refusal that moved it back, the store's client first looks for it at the store, so the
//! customer is never told twice. Passing failures make a shipment
//! `delayed_notifying_of_shipment` with a doubling wait, and `errored_notifying_of_shipment`
//! after `sync_max_attempts` tries; a shipment the store refuses is errored at once.

use rusqlite::{Connection, OptionalExtension, params};

use crate::dates::now_ms;
use crate::db;
use crate::platforms::PlatformError;
use crate::platforms::store::{NoticeItem, ShipmentNotice};

use super::context::{Context, Shared};
use super::problems::{self, Problem, ProblemKind};
use super::runs::Step;
use super::states::move_shipment;
use super::step::StepError;
use crate::platforms::store::StoreClient;

/// `notified_shipped` shipments are archived this long after the store accepted them.
const ARCHIVE_AFTER_MS: i64 = 30 * 24 * 3600 * 1000;

/// Whether a store has a shipment to report or to archive (?1 store, ?2 now, ?3 the archive
/// time): asked by every pass, so it must cost the same however many shipments are stored.
pub(super) const ANYTHING_DUE: &str = "SELECT EXISTS (SELECT 1 FROM shipments s INDEXED BY shipments_state
       LEFT JOIN shipment_sync y ON y.shipment_id = s.id
     WHERE s.state IN ('ready_for_shipment_notification', 'scheduled_notify_of_shipment',
                       'delayed_notifying_of_shipment')
       AND s.store_id = ?1
       AND (s.state != 'delayed_notifying_of_shipment' OR COALESCE(y.next_attempt_at, 0) <= ?2))
  OR EXISTS (SELECT 1 FROM shipment_sync y CROSS JOIN shipments s ON s.id = y.shipment_id
     WHERE y.notified_at < ?3 AND s.store_id = ?1)";

/// Shipments claimed and reported at a time.
const BATCH: i64 = 500;

/// A claimed shipment: what to tell the store, or why it cannot be told.
struct Claimed {
    id: i64,
    previous: String,
    notice: Result<ShipmentNotice, String>,
}

/// Reports every shipment due; `notified` counts those the store now has. A shipment the
/// store refuses, or that uses up its tries, is a problem of run `run_id`.
pub async fn notify(ctx: &Context<'_>, store: &dyn StoreClient, notified: &mut u64) -> Result<(), StepError> {
    let store_id = ctx.link.store_id;
    // Every connection of the store reports the store's shipments, whichever warehouse
    // shipped them; one pass at a time, so none takes another's claimed shipments for a
    // crash's.
    let _store = ctx.hold(Shared::Store, store_id).await;
    // A batch at a time, so a large backlog is never held whole; a batch's shipments are
    // claimed before and settled after, and the next batch finds only what is still due.
    loop {
        let claimed = ctx.sql(move |conn| claim(conn, store_id)).await?;
        if claimed.is_empty() {
            return Ok(());
        }
        if notify_batch(ctx, store, claimed, notified).await? == Batch::Paced {
            // What is left is for a later pass: claiming it again now would only pace it again.
            return Ok(());
        }
    }
}

/// How a batch ended.
#[derive(Debug, PartialEq, Eq)]
enum Batch {
    /// Every shipment was answered for.
    Done,
    /// The store's rate limit allows the next request only after this pass; the shipments
    /// not yet told went back as they were.
    Paced,
}

/// Tells the store of each claimed shipment and records each answer.
async fn notify_batch(
    ctx: &Context<'_>,
    store: &dyn StoreClient,
    claimed: Vec<Claimed>,
    notified: &mut u64,
) -> Result<Batch, StepError> {
    let run_id = ctx.run_id;
    let mut queue = claimed.into_iter();
    while let Some(shipment) = queue.next() {
        let answer = match &shipment.notice {
            Ok(notice) => store.notify(notice).await.map(|_| ()),
            Err(problem) => Err(PlatformError::Rejected { status: 0, message: problem.clone() }),
        };
        let max_attempts = ctx.settings().max_attempts;
        let settings = ctx.settings().clone();
        let id = shipment.id;
        let stop = match &answer {
            Ok(()) => None,
            Err(e) if e.is_passing() || matches!(e, PlatformError::Refused(_)) => Some(e.clone()),
            Err(_) => None,
        };
        let recorded = answer.clone();
        let paced_state =
            if store.shows_paced_shipments_delayed() { "delayed_notifying_of_shipment" } else { "" };
        ctx.sql(move |conn| {
            let tx = db::write(conn)?;
            let now = now_ms();
            match &recorded {
                Ok(()) => {
                    tx.prepare_cached(
                        "UPDATE shipment_sync SET attempts = attempts + 1, notified_at = ?2, last_error = NULL,
                           last_error_at = NULL, last_error_step = NULL, next_attempt_at = NULL, in_doubt = 0
                         WHERE shipment_id = ?1",
                    )?
                    .execute(params![id, now])?;
                    move_shipment(&tx, id, "notified_shipped")?;
                }
                // Refused credentials are the store's account, not this shipment: it waits as it
                // was. So it does when nothing was sent because the store's rate limit allows
                // the request only later (or it shows as delayed, where the store's annex says
                // so, due at the next pass): no try is counted.
                Err(PlatformError::NotYet(_)) if !paced_state.is_empty() => {
                    tx.prepare_cached("UPDATE shipment_sync SET next_attempt_at = NULL WHERE shipment_id = ?1")?
                        .execute([id])?;
                    move_shipment(&tx, id, paced_state)?;
                }
                Err(PlatformError::Refused(_) | PlatformError::NotYet(_)) => {
                    move_shipment(&tx, id, &shipment.previous)?;
                }
                Err(e) if e.is_passing() => {
                    problems::shipment_error(&tx, id, Step::Notify, e.message())?;
                    let attempts: i64 = tx
                        .prepare_cached(
                            "UPDATE shipment_sync SET attempts = attempts + 1 WHERE shipment_id = ?1 RETURNING attempts",
                        )?
                        .query_row(params![id], |r| r.get(0))?;
                    if attempts >= i64::from(max_attempts) {
                        let message = format!(
                            "The store could not be told after {attempts} tries; the last: {}",
                            e.message()
                        );
                        problems::add(&tx, run_id, &refused(id, message))?;
                        tx.prepare_cached("UPDATE shipment_sync SET next_attempt_at = NULL WHERE shipment_id = ?1")?
                            .execute([id])?;
                        move_shipment(&tx, id, "errored_notifying_of_shipment")?;
                    } else {
                        let wait = settings.backoff(u32::try_from(attempts).unwrap_or(u32::MAX));
                        let next = now.saturating_add(i64::try_from(wait.as_millis()).unwrap_or(i64::MAX));
                        tx.prepare_cached("UPDATE shipment_sync SET next_attempt_at = ?2 WHERE shipment_id = ?1")?
                            .execute(params![id, next])?;
                        move_shipment(&tx, id, "delayed_notifying_of_shipment")?;
                    }
                }
                Err(e) => {
                    problems::shipment_error(&tx, id, Step::Notify, e.message())?;
                    tx.prepare_cached(
                        "UPDATE shipment_sync SET attempts = attempts + 1, next_attempt_at = NULL WHERE shipment_id = ?1",
                    )?
                    .execute([id])?;
                    problems::add(&tx, run_id, &refused(id, e.message().to_string()))?;
                    move_shipment(&tx, id, "errored_notifying_of_shipment")?;
                }
            }
            tx.commit()?;
            Ok(())
        })
        .await?;
        if answer.is_ok() {
            *notified += 1;
        }
        if let Some(e) = stop {
            // The store cannot be reached or refuses us: the rest wait for the next pass.
            let rest: Vec<(i64, String)> = queue.map(|s| (s.id, s.previous)).collect();
            ctx.sql(move |conn| {
                let tx = db::write(conn)?;
                for (id, previous) in &rest {
                    move_shipment(&tx, *id, previous)?;
                }
                tx.commit()?;
                Ok(())
            })
            .await?;
            if let PlatformError::NotYet(why) = e {
                // Paced, not failed: the shipments wait for a later pass, and the run says why.
                let problem = refused(id, format!("{why}; the shipment waits for a later pass"));
                ctx.sql(move |conn| problems::add(conn, run_id, &problem)).await?;
                return Ok(Batch::Paced);
            }
            return Err(StepError::Platform(e));
        }
    }
    Ok(Batch::Done)
}

/// A shipment the store would not take, as a problem of the run.
fn refused(shipment_id: i64, message: String) -> Problem {
    Problem { step: Step::Notify, kind: ProblemKind::Shipment, reference: shipment_id.to_string(), message }
}

/// Archives old notified shipments, then claims every shipment due for notification.
fn claim(conn: &mut Connection, store_id: i64) -> rusqlite::Result<Vec<Claimed>> {
    let now = now_ms();
    // Most passes have nothing to report: say so without taking the write lock.
    let anything: bool = conn
        .prepare_cached(ANYTHING_DUE)?
        .query_row(params![store_id, now, now - ARCHIVE_AFTER_MS], |r| r.get(0))?;
    if !anything {
        return Ok(Vec::new());
    }
    let tx = db::write(conn)?;
    // Archived shipments leave the index of `notified_at` (it is cleared), so the next pass
    // finds only what is due since.
    let mut stmt = tx.prepare_cached(
        "SELECT s.id, s.state = 'notified_shipped' FROM shipment_sync y CROSS JOIN shipments s ON s.id = y.shipment_id
         WHERE y.notified_at < ?2 AND s.store_id = ?1",
    )?;
    let old = stmt
        .query_map(params![store_id, now - ARCHIVE_AFTER_MS], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<Vec<(i64, bool)>>>()?;
    drop(stmt);
    for (id, notified) in old {
        if notified {
            move_shipment(&tx, id, "archived")?;
        }
        tx.prepare_cached("UPDATE shipment_sync SET notified_at = NULL WHERE shipment_id = ?1")?
            .execute([id])?;
    }
    let mut stmt = tx.prepare_cached(
        "SELECT s.id, s.state, COALESCE(y.in_doubt, 0) FROM shipments s INDEXED BY shipments_state
           LEFT JOIN shipment_sync y ON y.shipment_id = s.id
         WHERE s.state IN ('ready_for_shipment_notification', 'scheduled_notify_of_shipment',
                           'delayed_notifying_of_shipment')
           AND s.store_id = ?1
           AND (s.state != 'delayed_notifying_of_shipment' OR COALESCE(y.next_attempt_at, 0) <= ?2)
         ORDER BY s.id LIMIT ?3",
    )?;
    let due = stmt
        .query_map(params![store_id, now, BATCH], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<Vec<(i64, String, bool)>>>()?;
    drop(stmt);
    let mut claimed = Vec::with_capacity(due.len());
    for (id, state, marked) in due {
        tx.prepare_cached(
            "INSERT INTO shipment_sync (shipment_id) VALUES (?1) ON CONFLICT (shipment_id) DO NOTHING",
        )?
        .execute([id])?;
        // A try that may have reached the store marked it; a shipment claimed or delayed
        // (rows older than the mark included) may be there too.
        let in_doubt = marked || state != "ready_for_shipment_notification";
        // After a crash a claimed shipment goes back to ready if its next try fails to start.
        let previous = if state == "scheduled_notify_of_shipment" {
            "ready_for_shipment_notification".to_string()
        } else {
            state
        };
        move_shipment(&tx, id, "scheduled_notify_of_shipment")?;
        let notice = notice(&tx, id, in_doubt)?;
        if notice.is_ok() {
            // Committed before the store is asked: from here until its answer settles it, the
            // store may have the shipment.
            tx.prepare_cached("UPDATE shipment_sync SET in_doubt = 1 WHERE shipment_id = ?1")?
                .execute([id])?;
        }
        claimed.push(Claimed { id, previous, notice });
    }
    tx.commit()?;
    Ok(claimed)
}

/// What the store is told of a shipment: its order, tracking and the units of each line
/// (with, when in doubt, the units of each SKU other shipments of the order reported).
fn notice(
    conn: &Connection,
    shipment_id: i64,
    in_doubt: bool,
) -> rusqlite::Result<Result<ShipmentNotice, String>> {
    let (order_id, external_order_id, address_id, tracking_number, carrier, service_level): (
        i64,
        String,
        Option<String>,
        String,
        Option<String>,
        Option<String>,
    ) = conn
        .prepare_cached(
            "SELECT o.id, o.external_id, y.address_id, s.tracking_number, s.carrier_name, s.service_level
             FROM shipments s JOIN orders o ON o.id = s.order_id LEFT JOIN order_sync y ON y.order_id = o.id
             WHERE s.id = ?1",
        )?
        .query_row([shipment_id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
        })?;
    let mut stmt = conn.prepare_cached(
        "SELECT oi.external_order_item_id, oi.sku, COALESCE(si.quantity, oi.quantity)
         FROM shipment_items si JOIN order_items oi ON oi.id = si.order_item_id
         WHERE si.shipment_id = ?1 ORDER BY si.position",
    )?;
    let items = stmt
        .query_map([shipment_id], |r| {
            Ok(NoticeItem { line: r.get(0)?, sku: r.get(1)?, quantity: r.get(2)? })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let order_items = conn
        .prepare_cached(
            "SELECT external_order_item_id, sku, quantity FROM order_items WHERE order_id = ?1 ORDER BY position",
        )?
        .query_map([order_id], |r| Ok(NoticeItem { line: r.get(0)?, sku: r.get(1)?, quantity: r.get(2)? }))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    if items.is_empty() {
        return Ok(Err(format!("The shipment names no item of order {order_id}.")));
    }
    let units_told_before = if in_doubt {
        conn.prepare_cached(
            "SELECT oi.sku, SUM(COALESCE(si.quantity, oi.quantity))
             FROM shipments s JOIN shipment_items si ON si.shipment_id = s.id
               JOIN order_items oi ON oi.id = si.order_item_id
             WHERE s.order_id = ?1 AND s.id <> ?2 AND s.state IN ('notified_shipped', 'archived')
               AND oi.sku IS NOT NULL
             GROUP BY oi.sku",
        )?
        .query_map(params![order_id, shipment_id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<Vec<(String, i64)>>>()?
    } else {
        Vec::new()
    };
    // Shipments are reported in id order, so the one that brings the units shipped up to
    // every unit of every item is the one that completes the order.
    let (shipped_at, ordered_at, completes_order): (Option<i64>, Option<i64>, bool) = conn
        .prepare_cached(
            "SELECT s.shipped_at, (SELECT ordered_at FROM orders WHERE id = ?1), NOT EXISTS (
               SELECT 1 FROM order_items oi
               WHERE oi.order_id = ?1 AND oi.quantity > (
                 SELECT COALESCE(SUM(COALESCE(si.quantity, oi.quantity)), 0)
                 FROM shipment_items si JOIN shipments e ON e.id = si.shipment_id
                 WHERE si.order_item_id = oi.id AND e.id <= ?2
                   AND e.state NOT IN ('new', 'scheduled_processing_shipment', 'errored_processing')))
             FROM shipments s WHERE s.id = ?2",
        )?
        .query_row(params![order_id, shipment_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(Ok(ShipmentNotice {
        shipment_id,
        completes_order,
        external_order_id,
        address_id,
        tracking_number,
        carrier,
        shipping_method: service_level,
        shipped_at,
        items,
        order_items,
        ordered_at,
        in_doubt,
        units_told_before,
    }))
}

/// Used by `POST /shipments/{id}/retry`: a shipment whose last step failed goes back into it,
/// still `in_doubt` if an earlier try may have reached the store.
pub fn retry(conn: &Connection, shipment_id: i64) -> rusqlite::Result<Option<&'static str>> {
    let state: Option<String> = conn
        .prepare_cached("SELECT state FROM shipments WHERE id = ?1")?
        .query_row([shipment_id], |r| r.get(0))
        .optional()?;
    let to = match state.as_deref() {
        Some("errored_processing") => "scheduled_processing_shipment",
        Some("errored_notifying_of_shipment") => "ready_for_shipment_notification",
        _ => return Ok(None),
    };
    conn.prepare_cached(
        "UPDATE shipment_sync SET attempts = 0, next_attempt_at = NULL, last_error = NULL, last_error_at = NULL,
           last_error_step = NULL WHERE shipment_id = ?1",
    )?
    .execute([shipment_id])?;
    move_shipment(conn, shipment_id, to)?;
    Ok(Some(to))
}
