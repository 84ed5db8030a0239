//! What a pass could not do for one item while it went on (CONTRACT §11, "Runs"): each
//! problem is kept with its run (the first `KEPT_PER_RUN`, all of them counted) and, for an
//! order or a shipment, as the item's latest error, which `GET /orders/{id}/sync` and
//! `GET /shipments/{id}/sync` answer. Every function takes the step's own transaction, so a
//! problem is recorded together with the state change it explains, or not at all.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::dates::{Timestamp, now_ms};

use super::runs::Step;

/// How many problems a run keeps; `problems_count` counts the rest too.
pub const KEPT_PER_RUN: i64 = 100;

/// What a problem is about, as its `kind` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemKind {
    Order,
    Shipment,
    File,
    Sku,
}

impl ProblemKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProblemKind::Order => "order",
            ProblemKind::Shipment => "shipment",
            ProblemKind::File => "file",
            ProblemKind::Sku => "sku",
        }
    }
}

/// One item a pass could not handle: `reference` is the order or shipment id, the file
/// name or the SKU; `message` says why, quoting the platform's reason when it gave one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub step: Step,
    pub kind: ProblemKind,
    pub reference: String,
    pub message: String,
}

/// Records a problem of run `run_id`: stored while the run has fewer than 100, counted always.
pub fn add(conn: &Connection, run_id: i64, problem: &Problem) -> rusqlite::Result<()> {
    let count: Option<i64> = conn
        .prepare_cached(
            "UPDATE sync_runs SET problems_count = problems_count + 1 WHERE id = ?1 RETURNING problems_count",
        )?
        .query_row([run_id], |r| r.get(0))
        .optional()?;
    // The operator reading the log learns the same as the run says.
    log::warn!(
        "sync: run {run_id}, step {}: {} {}: {}",
        problem.step.as_str(),
        problem.kind.as_str(),
        problem.reference,
        problem.message
    );
    match count {
        Some(position) if position <= KEPT_PER_RUN => {
            conn.prepare_cached(
                "INSERT INTO sync_run_problems (run_id, position, step, kind, ref, message)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                run_id,
                position,
                problem.step.as_str(),
                problem.kind.as_str(),
                problem.reference,
                problem.message
            ])?;
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The latest error of an order (step, message, now), kept with the order's sync facts;
/// `attempts` counts the tries; `next_attempt_at` when known.
pub fn order_error(conn: &Connection, order_id: i64, step: Step, message: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO order_sync (order_id, attempts, last_error, last_error_at, last_error_step)
         VALUES (?1, 1, ?2, ?3, ?4)
         ON CONFLICT (order_id) DO UPDATE SET attempts = attempts + 1, last_error = excluded.last_error,
           last_error_at = excluded.last_error_at, last_error_step = excluded.last_error_step",
    )?
    .execute(params![order_id, message, now_ms(), step.as_str()])?;
    Ok(())
}

/// The latest error of a shipment (step, message, now); its `attempts` are the notify
/// step's to count.
pub fn shipment_error(
    conn: &Connection,
    shipment_id: i64,
    step: Step,
    message: &str,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO shipment_sync (shipment_id, last_error, last_error_at, last_error_step)
         VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (shipment_id) DO UPDATE SET last_error = excluded.last_error,
           last_error_at = excluded.last_error_at, last_error_step = excluded.last_error_step",
    )?
    .execute(params![shipment_id, message, now_ms(), step.as_str()])?;
    Ok(())
}

/// An item's latest error, as its `/sync` route answers it; `at` and `step` are null for an
/// error recorded before they were kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LastError {
    pub at: Option<Timestamp>,
    pub step: Option<String>,
    pub message: String,
}

/// An order's or shipment's way through sync (`GET /orders/{id}/sync`,
/// `GET /shipments/{id}/sync`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ItemSync {
    pub attempts: i64,
    pub last_error: Option<LastError>,
    pub next_attempt_at: Option<Timestamp>,
}

/// The sync state of order `order_id`; an order sync never touched has tried nothing.
pub fn order_sync(conn: &Connection, order_id: i64) -> rusqlite::Result<ItemSync> {
    item_sync(
        conn,
        "SELECT attempts, last_error, last_error_at, last_error_step, next_attempt_at
         FROM order_sync WHERE order_id = ?1",
        order_id,
    )
}

/// The sync state of shipment `shipment_id`.
pub fn shipment_sync(conn: &Connection, shipment_id: i64) -> rusqlite::Result<ItemSync> {
    item_sync(
        conn,
        "SELECT attempts, last_error, last_error_at, last_error_step, next_attempt_at
         FROM shipment_sync WHERE shipment_id = ?1",
        shipment_id,
    )
}

fn item_sync(conn: &Connection, sql: &str, id: i64) -> rusqlite::Result<ItemSync> {
    let found = conn
        .prepare_cached(sql)?
        .query_row([id], |r| {
            let last_error = r.get::<_, Option<String>>(1)?.map(|message| LastError {
                at: r.get::<_, Option<i64>>(2).ok().flatten().map(Timestamp),
                step: r.get::<_, Option<String>>(3).ok().flatten(),
                message,
            });
            Ok(ItemSync {
                attempts: r.get(0)?,
                last_error,
                next_attempt_at: r.get::<_, Option<i64>>(4)?.map(Timestamp),
            })
        })
        .optional()?;
    Ok(found.unwrap_or(ItemSync { attempts: 0, last_error: None, next_attempt_at: None }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::runs::{self, Trigger};

    fn database() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("PRAGMA foreign_keys = ON").unwrap();
        rusqlite::vtab::array::load_module(&conn).unwrap();
        conn.execute_batch(crate::db::SCHEMA).unwrap();
        conn.execute_batch(
            "INSERT INTO customers (id, company_name, created_at) VALUES (1, 'Acme', 0);
             INSERT INTO stores (id, customer_id, name, platform, adapter, created_at)
               VALUES (1, 1, 's', 'big_commerce', '{}', 0);
             INSERT INTO warehouses (id, customer_id, name, platform, adapter, created_at)
               VALUES (1, 1, 'w', 'folder', '{}', 0);
             INSERT INTO connections (id, customer_id, store_id, warehouse_id, name, connection_type, created_at)
               VALUES (1, 1, 1, 1, 'c', 'sales', 0);",
        )
        .unwrap();
        conn
    }

    fn problem(n: usize) -> Problem {
        Problem {
            step: Step::Notify,
            kind: ProblemKind::Shipment,
            reference: n.to_string(),
            message: format!("The store refused shipment {n}."),
        }
    }

    fn count(conn: &Connection, run_id: i64) -> (i64, i64) {
        conn.query_row(
            "SELECT problems_count, (SELECT COUNT(*) FROM sync_run_problems WHERE run_id = ?1)
             FROM sync_runs WHERE id = ?1",
            [run_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    }

    #[test]
    fn a_run_keeps_its_first_100_problems_and_counts_them_all() {
        let mut conn = database();
        let run = runs::create(&mut conn, 1, Trigger::Request).unwrap();
        for n in 1..=99 {
            add(&conn, run, &problem(n)).unwrap();
        }
        assert_eq!(count(&conn, run), (99, 99));
        add(&conn, run, &problem(100)).unwrap();
        assert_eq!(count(&conn, run), (100, 100), "the 100th is still kept");
        for n in 101..=130 {
            add(&conn, run, &problem(n)).unwrap();
        }
        assert_eq!(count(&conn, run), (130, 100), "past 100 they are counted, not kept");
        let shown = runs::find(&conn, run).unwrap().unwrap();
        assert_eq!(shown.problems_count, 130);
        assert_eq!(shown.problems.len(), 100);
        assert_eq!(shown.problems[0].reference, "1", "the first ones are kept, in order");
        assert_eq!(shown.problems[99].reference, "100");
        assert_eq!(shown.problems[0].step, "notify");
        assert_eq!(shown.problems[0].kind, "shipment");
    }

    #[test]
    fn the_problems_of_each_listed_run_are_its_own() {
        let mut conn = database();
        let first = runs::create(&mut conn, 1, Trigger::Request).unwrap();
        let second = runs::create(&mut conn, 1, Trigger::Request).unwrap();
        add(&conn, first, &problem(1)).unwrap();
        add(&conn, second, &problem(2)).unwrap();
        add(&conn, second, &problem(3)).unwrap();
        let listed = runs::latest(&conn, 1).unwrap();
        let refs = |run: &runs::Run| run.problems.iter().map(|p| p.reference.clone()).collect::<Vec<_>>();
        assert_eq!(listed[0].id, second);
        assert_eq!(refs(&listed[0]), ["2", "3"]);
        assert_eq!(refs(&listed[1]), ["1"]);
    }

    #[test]
    fn pruned_runs_take_their_problems_with_them() {
        let mut conn = database();
        let mut ids = Vec::new();
        for _ in 0..(runs::KEPT_RUNS + 25) {
            let id = runs::create(&mut conn, 1, Trigger::Request).unwrap();
            conn.execute("UPDATE sync_runs SET status = 'succeeded' WHERE id = ?1", [id]).unwrap();
            add(&conn, id, &problem(1)).unwrap();
            ids.push(id);
        }
        let oldest_left: i64 =
            conn.query_row("SELECT MIN(run_id) FROM sync_run_problems", [], |r| r.get(0)).unwrap();
        assert!(oldest_left > ids[0], "the first run's problems were pruned with it");
        let orphans: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM sync_run_problems WHERE run_id NOT IN (SELECT id FROM sync_runs)",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(orphans, 0);
    }

    #[test]
    fn an_order_error_counts_a_try_and_keeps_the_latest_reason() {
        let conn = database();
        conn.execute_batch(
            "INSERT INTO orders (id, customer_id, store_id, external_id, created_at) VALUES (7, 1, 1, 'x', 0)",
        )
        .unwrap();
        assert_eq!(
            order_sync(&conn, 7).unwrap(),
            ItemSync { attempts: 0, last_error: None, next_attempt_at: None }
        );
        order_error(&conn, 7, Step::SendOrders, "The warehouse refused it: bad address.").unwrap();
        order_error(&conn, 7, Step::SendOrders, "The warehouse refused it: no such SKU.").unwrap();
        let state = order_sync(&conn, 7).unwrap();
        assert_eq!(state.attempts, 2);
        let last = state.last_error.unwrap();
        assert_eq!(last.message, "The warehouse refused it: no such SKU.");
        assert_eq!(last.step.as_deref(), Some("send_orders"));
        assert!(last.at.is_some());
    }
}
