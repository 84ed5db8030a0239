//! Numbered schema migrations, keyed on SQLite's `PRAGMA user_version`.
//!
//! A new file gets `schema.sql` (always the newest shape) and the newest version at once. A
//! file made by an older release gets each later step in order, each in its own transaction
//! that also records its version, so an interrupted upgrade resumes where it stopped and no
//! row is lost. A file newer than this binary is refused rather than guessed at.
//!
//! Adding a step: append a `Migration` with the next version whose `apply` changes what
//! `schema.sql` cannot (new columns of existing tables, data); then it re-runs `schema.sql`,
//! whose statements are all `IF NOT EXISTS`, so new tables and indexes come from there.
//! A step may re-render stored documents with `orders::rerender` / `shipments::rerender`.

use rusqlite::{Connection, Transaction};

use crate::dates::now_ms;

use super::SCHEMA;

pub struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub apply: fn(&Transaction<'_>) -> rusqlite::Result<()>,
}

/// Version 2 is the shape of the first releases (`schema.sql` before any step below).
const FIRST_VERSION: i64 = 2;

pub const MIGRATIONS: &[Migration] = &[
    Migration { version: 3, name: "every connection gets an inventory channel", apply: inventory_channels },
    Migration {
        version: 4,
        name: "sync: runs, cursors, order files, stock, shipment quantities",
        apply: sync_tables,
    },
    Migration {
        version: 5,
        name: "stores and warehouses record who set their address",
        apply: address_set_by,
    },
    Migration {
        version: 6,
        name: "shipments record whether the store may have them",
        apply: shipment_in_doubt,
    },
    Migration {
        version: 7,
        name: "sync: warehouse cancels, cursors and strangers; leases across processes",
        apply: |_| Ok(()),
    },
    Migration {
        version: 8,
        name: "sync: a run's problems, an order's and a shipment's latest error",
        apply: sync_problems,
    },
    Migration { version: 9, name: "sync: stock levels a store applies later (receipts)", apply: |_| Ok(()) },
    Migration {
        version: 10,
        name: "sync: a warehouse's walk of shipments kept between passes",
        apply: |_| Ok(()),
    },
    Migration {
        version: 11,
        name: "sync: shipments due for archiving found by an index, not by reading every shipment",
        apply: archived_leave_the_index,
    },
    Migration {
        version: 12,
        name: "sync: a store's walk of orders kept between passes and processes",
        apply: |_| Ok(()),
    },
    Migration {
        version: 13,
        name: "sync: a file warehouse's document numbers (X12 control numbers), kept with its order files",
        apply: document_numbers,
    },
];

/// An order file records its name, the document number it was written under (an X12
/// interchange's control number) and when it was made, and each order its place in it; the warehouse's
/// counter is a table of its own (`schema.sql`). A file older than the sync tables got them in
/// today's shape at step 4, so only missing columns are added.
fn document_numbers(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    add_missing_columns(
        tx,
        &[
            ("order_batches", "document", "INTEGER"),
            ("order_batches", "document_at", "INTEGER"),
            ("order_batches", "document_name", "TEXT"),
            ("order_batch_orders", "part", "INTEGER"),
        ],
    )
}

/// Adds each (table, column, type) the table lacks: a file that got a table from a later
/// `schema.sql` (step 4 runs today's) already has some of them.
fn add_missing_columns(tx: &Transaction<'_>, columns: &[(&str, &str, &str)]) -> rusqlite::Result<()> {
    for (table, column, kind) in columns {
        let present: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2)",
            [table, column],
            |r| r.get(0),
        )?;
        if !present {
            tx.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind}"))?;
        }
    }
    Ok(())
}

/// Archived shipments are not waiting to be archived: their `notified_at` leaves the index of
/// those that are (`schema.sql`'s `shipment_sync_notified`).
fn archived_leave_the_index(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE shipment_sync SET notified_at = NULL
         WHERE notified_at IS NOT NULL AND shipment_id IN (SELECT id FROM shipments WHERE state = 'archived')",
        [],
    )?;
    Ok(())
}

/// The version this binary writes.
pub fn newest() -> i64 {
    MIGRATIONS.last().map_or(FIRST_VERSION, |m| m.version)
}

/// Brings the file to the newest version.
pub fn apply(conn: &mut Connection) -> Result<(), String> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|e| e.to_string())?;
    let newest = newest();
    if version > newest {
        return Err(format!(
            "the database is at schema version {version}, newer than this orderbridge knows ({newest}); \
             use the orderbridge release that wrote it"
        ));
    }
    if version == 0 {
        let tx = conn.transaction().map_err(|e| e.to_string())?;
        tx.execute_batch(SCHEMA).map_err(|e| format!("creating the schema: {e}"))?;
        tx.execute_batch(&format!("PRAGMA user_version = {newest}")).map_err(|e| e.to_string())?;
        return tx.commit().map_err(|e| e.to_string());
    }
    for step in MIGRATIONS.iter().filter(|m| m.version > version) {
        let failed = |e: rusqlite::Error| format!("migration {} ({}): {e}", step.version, step.name);
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(failed)?;
        (step.apply)(&tx).map_err(failed)?;
        tx.execute_batch(SCHEMA).map_err(failed)?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", step.version)).map_err(failed)?;
        tx.commit().map_err(failed)?;
    }
    Ok(())
}

/// CONTRACT §6: a connection has two channels, `sales` then `inventory`; older files have
/// only `sales`. The new channel is disabled, as a new connection's are.
fn inventory_channels(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO channels (connection_id, type, created_at, enabled_at)
         SELECT c.id, 'inventory', ?1, NULL FROM connections c
         WHERE NOT EXISTS (SELECT 1 FROM channels ch WHERE ch.connection_id = c.id AND ch.type = 'inventory')
         ORDER BY c.id",
        [now_ms()],
    )?;
    Ok(())
}

/// Sync's tables come from `schema.sql`; a shipment's items gain their unit count.
fn sync_tables(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch("ALTER TABLE shipment_items ADD COLUMN quantity INTEGER")
}

/// CONTRACT §6: a store's or warehouse's address set by a customer user is checked at every
/// connection. Older files never recorded who set it. Only a customer user of the row's own
/// customer could have (users are never deleted), so rows of customers that have never had
/// one are an admin's, and the rest count as a customer's: checked, not trusted.
fn address_set_by(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    for table in ["stores", "warehouses"] {
        tx.execute_batch(&format!(
            "ALTER TABLE {table} ADD COLUMN address_set_by TEXT NOT NULL DEFAULT 'admin'
                 CHECK (address_set_by IN ('admin', 'customer'));
             UPDATE {table} SET address_set_by = 'customer'
              WHERE customer_id IN (SELECT customer_id FROM users WHERE role = 'customer');"
        ))?;
    }
    Ok(())
}

/// Issue 29: whether a shipment may be at the store is a stored fact, no longer read from
/// its state. A file from version 4 on has the table without the column (an older one got
/// the newest table from `schema.sql` at step 4); shipments claimed or tried without a clear
/// answer (scheduled, delayed, errored) are in doubt, as their state said before.
fn shipment_in_doubt(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let has_column: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM pragma_table_info('shipment_sync') WHERE name = 'in_doubt')",
        [],
        |r| r.get(0),
    )?;
    if !has_column {
        tx.execute_batch(
            "ALTER TABLE shipment_sync ADD COLUMN in_doubt INTEGER NOT NULL DEFAULT 0 CHECK (in_doubt IN (0, 1))",
        )?;
    }
    tx.execute_batch(
        "UPDATE shipment_sync SET in_doubt = 1 WHERE shipment_id IN (SELECT id FROM shipments
           WHERE state IN ('scheduled_notify_of_shipment', 'delayed_notifying_of_shipment',
                           'errored_notifying_of_shipment'))",
    )
}

/// CONTRACT §11: runs count their problems and items keep their latest error; the problems'
/// table comes from `schema.sql`. A file older than the sync tables got them in this shape
/// already (step 4 runs today's `schema.sql`), so only missing columns are added. A
/// shipment's error kept before names its step by the state it left the shipment in; when
/// it happened was not kept.
fn sync_problems(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    add_missing_columns(
        tx,
        &[
            ("sync_runs", "problems_count", "INTEGER NOT NULL DEFAULT 0"),
            ("order_sync", "attempts", "INTEGER NOT NULL DEFAULT 0"),
            ("order_sync", "next_attempt_at", "INTEGER"),
            ("order_sync", "last_error", "TEXT"),
            ("order_sync", "last_error_at", "INTEGER"),
            ("order_sync", "last_error_step", "TEXT"),
            ("shipment_sync", "last_error_at", "INTEGER"),
            ("shipment_sync", "last_error_step", "TEXT"),
        ],
    )?;
    tx.execute_batch(
        "UPDATE shipment_sync SET last_error_step =
             CASE (SELECT state FROM shipments WHERE id = shipment_id)
               WHEN 'errored_processing' THEN 'pull_shipments' ELSE 'notify' END
          WHERE last_error IS NOT NULL AND last_error_step IS NULL
            AND (SELECT state FROM shipments WHERE id = shipment_id)
                IN ('errored_processing', 'delayed_notifying_of_shipment', 'errored_notifying_of_shipment');",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_grow_one_at_a_time_from_the_first_release() {
        for (expected, m) in (FIRST_VERSION + 1..).zip(MIGRATIONS) {
            assert_eq!(m.version, expected, "{}", m.name);
        }
    }

    #[test]
    fn a_version_5_file_gets_the_in_doubt_column() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        conn.execute_batch("ALTER TABLE shipment_sync DROP COLUMN in_doubt; PRAGMA user_version = 5")
            .unwrap();
        apply(&mut conn).unwrap();
        let has: bool = conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM pragma_table_info('shipment_sync') WHERE name = 'in_doubt')",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(has);
    }

    #[test]
    fn a_version_5_file_gets_the_problem_columns_and_its_errors_name_their_step() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        // The shape of version 5: today's schema without what step 6 adds.
        conn.execute_batch(
            "DROP TABLE sync_run_problems;
             ALTER TABLE sync_runs DROP COLUMN problems_count;
             ALTER TABLE order_sync DROP COLUMN attempts;
             ALTER TABLE order_sync DROP COLUMN next_attempt_at;
             ALTER TABLE order_sync DROP COLUMN last_error;
             ALTER TABLE order_sync DROP COLUMN last_error_at;
             ALTER TABLE order_sync DROP COLUMN last_error_step;
             ALTER TABLE shipment_sync DROP COLUMN last_error_at;
             ALTER TABLE shipment_sync DROP COLUMN last_error_step;
             INSERT INTO shipments (id, customer_id, store_id, order_id, warehouse_id, tracking_number, state, created_at)
               VALUES (1, 1, 1, 1, 1, 'A', 'errored_processing', 0), (2, 1, 1, 1, 1, 'B', 'errored_notifying_of_shipment', 0),
                      (3, 1, 1, 1, 1, 'C', 'notified_shipped', 0);
             INSERT INTO shipment_sync (shipment_id, attempts, last_error)
               VALUES (1, 0, 'no such item'), (2, 3, 'refused'), (3, 1, NULL);
             PRAGMA user_version = 5;",
        )
        .unwrap();
        apply(&mut conn).unwrap();
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, newest());
        let steps: Vec<(i64, Option<String>, Option<i64>)> = conn
            .prepare(
                "SELECT shipment_id, last_error_step, last_error_at FROM shipment_sync ORDER BY shipment_id",
            )
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            steps,
            [(1, Some("pull_shipments".into()), None), (2, Some("notify".into()), None), (3, None, None)]
        );
        for query in [
            "SELECT problems_count FROM sync_runs",
            "SELECT attempts, next_attempt_at, last_error, last_error_at, last_error_step FROM order_sync",
            "SELECT run_id, position, step, kind, ref, message FROM sync_run_problems",
        ] {
            conn.prepare(query).unwrap_or_else(|e| panic!("{query}: {e}"));
        }
    }

    #[test]
    fn a_file_newer_than_the_binary_is_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&format!("PRAGMA user_version = {}", newest() + 1)).unwrap();
        let e = apply(&mut conn).unwrap_err();
        assert!(e.contains("newer than this orderbridge knows"), "{e}");
    }
}
