//! An idle pass costs the same however many orders and shipments are stored (issue 35, item
//! 15): the statements every pass runs to learn that there is nothing to do take as many
//! SQLite VM steps over 200 stored orders as over 4,000. Counted by SQLite itself
//! (`SQLITE_STMTSTATUS_VM_STEP`), so the test is exact, not timed.

use rusqlite::{Connection, StatementStatus, params};

use super::{matching, notify, orders_out, stock};

/// A database holding `orders` orders of store 1 sent to warehouse 1 (`pending_shipment`),
/// each with a shipment the store was told of yesterday.
fn stored(orders: i64) -> (tempfile::TempDir, crate::db::Pool) {
    let dir = tempfile::tempdir().unwrap();
    let pool = crate::db::open(&dir.path().join("idle.db")).unwrap();
    let mut conn = pool.get().unwrap();
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    let tx = conn.transaction().unwrap();
    let now = crate::dates::now_ms();
    for id in 1..=orders {
        tx.execute(
            "INSERT INTO orders (id, customer_id, store_id, external_id, created_at, fulfillment_state,
               fulfillment_warehouse_id, external_warehouse_order_id)
             VALUES (?1, 1, 1, ?2, ?3, 'pending_shipment', 1, ?2)",
            params![id, id.to_string(), now],
        )
        .unwrap();
        tx.execute(
            "INSERT INTO shipments (id, customer_id, store_id, order_id, warehouse_id, tracking_number, state,
               created_at)
             VALUES (?1, 1, 1, ?1, 1, ?2, 'notified_shipped', ?3)",
            params![id, format!("T{id}"), now],
        )
        .unwrap();
        tx.execute(
            "INSERT INTO shipment_sync (shipment_id, notified_at) VALUES (?1, ?2)",
            params![id, now - 86_400_000],
        )
        .unwrap();
    }
    // A few cancellations settled long ago (conflicts reported once).
    for id in 1..=10 {
        tx.execute("INSERT INTO order_cancels (order_id, requested_at, reported_at) VALUES (?1, 1, 2)", [id])
            .unwrap();
    }
    tx.commit().unwrap();
    drop(conn);
    (dir, pool)
}

/// The VM steps `sql` takes to run to its end with `params`.
fn steps(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> i32 {
    let mut stmt = conn.prepare(sql).unwrap();
    let mut rows = stmt.query(params).unwrap();
    while rows.next().unwrap().is_some() {}
    drop(rows);
    stmt.get_status(StatementStatus::VmStep)
}

/// Each statement an idle pass runs, with the steps it takes over `orders` stored orders.
fn idle_steps(orders: i64) -> Vec<(&'static str, i32)> {
    let (_dir, pool) = stored(orders);
    let conn = pool.get().unwrap();
    let now = crate::dates::now_ms();
    vec![
        ("send: cancellations to carry", steps(&conn, orders_out::CANCELS, params![1, 1, 1])),
        ("send: the store's orders to send", steps(&conn, orders_out::CANDIDATES, params![1, 1, 1])),
        (
            "notify: a shipment due",
            steps(&conn, notify::ANYTHING_DUE, params![1, now, now - 30 * 86_400_000]),
        ),
        ("pull shipments: a shipment to match", steps(&conn, matching::UNPROCESSED, params![1])),
        ("stock: units of orders not yet sent", steps(&conn, stock::UNSENT_UNITS, params![1])),
    ]
}

#[test]
fn an_idle_pass_asks_the_database_the_same_work_at_200_and_at_4000_orders() {
    let (few, many) = (idle_steps(200), idle_steps(4_000));
    for ((what, a), (_, b)) in few.iter().zip(&many) {
        assert_eq!(a, b, "{what}: {a} VM steps over 200 orders, {b} over 4,000");
    }
}
