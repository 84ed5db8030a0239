//! A warehouse's walk of shipments that stopped part-way, kept in the database for the next
//! pass (CONTRACT §11 "Pulls that resume"; ShipBob's 1,000 pages a pass, annex §4): written in
//! the transaction of the last page it read, read back when the next pass opens the inbox,
//! and forgotten in the transaction of the page that ends it.

use rusqlite::{Connection, OptionalExtension, params};

use crate::platforms::warehouse::WalkPlace;

/// The walk an earlier pass stopped part-way, if any.
pub(super) fn kept(conn: &Connection, warehouse_id: i64) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached("SELECT walk FROM warehouse_walks WHERE warehouse_id = ?1")?
        .query_row([warehouse_id], |r| r.get(0))
        .optional()
}

/// Keeps or forgets the walk as a piece says, in the piece's transaction.
pub(super) fn write(tx: &Connection, warehouse_id: i64, place: &WalkPlace) -> rusqlite::Result<()> {
    match place {
        WalkPlace::Unchanged => {}
        WalkPlace::Stopped(walk) => {
            tx.prepare_cached(
                "INSERT INTO warehouse_walks (warehouse_id, walk) VALUES (?1, ?2)
                 ON CONFLICT (warehouse_id) DO UPDATE SET walk = excluded.walk",
            )?
            .execute(params![warehouse_id, walk])?;
        }
        WalkPlace::Ended => {
            tx.prepare_cached("DELETE FROM warehouse_walks WHERE warehouse_id = ?1")?
                .execute([warehouse_id])?;
        }
    }
    Ok(())
}
