//! A warehouse's document numbers (X12 control numbers, files-x12.md §3) in the database:
//! `warehouse_counters` holds each warehouse's next number, and an order file's number and the
//! time it was made are recorded with its batch, committed before the file is written. The
//! platforms ask through [`Documents`]; they never see the database.

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, params};

use crate::dates::now_ms;
use crate::db::{self, DbError, Pool};
use crate::platforms::PlatformError;
use crate::platforms::warehouse::{Counter, Documents, Numbered, SendKey};

/// The document numbers of one warehouse, on the engine's database thread.
pub(super) struct Numbers {
    pub(super) pool: Pool,
    pub(super) warehouse_id: i64,
}

impl Numbers {
    async fn db<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, PlatformError> {
        #[expect(clippy::disallowed_methods, reason = "background work on behalf of no user")]
        let done = db::run(&self.pool, move |conn| work(conn).map_err(DbError::from)).await;
        done.map_err(|e: DbError| {
            PlatformError::unreachable(format!("The database could not number the document: {e}."))
        })
    }
}

/// Takes the warehouse's next number: the counter's, raised to `first` when the adapter's first
/// number changed since it was last applied; after `last` comes 1.
fn take(conn: &Connection, warehouse_id: i64, counter: Counter) -> rusqlite::Result<i64> {
    let held: Option<(i64, i64)> = conn
        .prepare_cached("SELECT next, first FROM warehouse_counters WHERE warehouse_id = ?1")?
        .query_row([warehouse_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let number = match held {
        None => counter.first,
        Some((next, first)) if first != counter.first => next.max(counter.first),
        Some((next, _)) => next,
    };
    let number = if (1..=counter.last).contains(&number) { number } else { 1 };
    let following = if number >= counter.last { 1 } else { number + 1 };
    conn.prepare_cached(
        "INSERT INTO warehouse_counters (warehouse_id, next, first) VALUES (?1, ?2, ?3)
         ON CONFLICT (warehouse_id) DO UPDATE SET next = excluded.next, first = excluded.first",
    )?
    .execute(params![warehouse_id, following, counter.first])?;
    Ok(number)
}

#[async_trait]
impl Documents for Numbers {
    async fn of_send(&self, send: SendKey, counter: Counter) -> Result<Numbered, PlatformError> {
        let warehouse_id = self.warehouse_id;
        self.db(move |conn| {
            let tx = db::write(conn)?;
            let held: Option<(Option<i64>, Option<i64>)> = tx
                .prepare_cached(
                    "SELECT document, document_at FROM order_batches WHERE connection_id = ?1 AND number = ?2",
                )?
                .query_row(params![send.connection_id, send.number], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?;
            if let Some((Some(number), Some(at))) = held {
                return Ok(Numbered { number, at });
            }
            let numbered = Numbered { number: take(&tx, warehouse_id, counter)?, at: now_ms() };
            tx.prepare_cached(
                "UPDATE order_batches SET document = ?3, document_at = ?4 WHERE connection_id = ?1 AND number = ?2",
            )?
            .execute(params![send.connection_id, send.number, numbered.number, numbered.at])?;
            tx.commit()?;
            Ok(numbered)
        })
        .await
    }

    async fn named(&self, send: SendKey, name: String) -> Result<String, PlatformError> {
        self.db(move |conn| {
            let tx = db::write(conn)?;
            tx.prepare_cached(
                "UPDATE order_batches SET document_name = ?3
                  WHERE connection_id = ?1 AND number = ?2 AND document_name IS NULL",
            )?
            .execute(params![send.connection_id, send.number, name])?;
            let recorded: Option<String> = tx
                .prepare_cached(
                    "SELECT document_name FROM order_batches WHERE connection_id = ?1 AND number = ?2",
                )?
                .query_row(params![send.connection_id, send.number], |r| r.get(0))
                .optional()?
                .flatten();
            tx.commit()?;
            Ok(recorded.unwrap_or(name))
        })
        .await
    }

    async fn place(&self, send: SendKey, parts: Vec<(i64, i64)>) -> Result<(), PlatformError> {
        self.db(move |conn| {
            let tx = db::write(conn)?;
            let batch: i64 = tx
                .prepare_cached("SELECT id FROM order_batches WHERE connection_id = ?1 AND number = ?2")?
                .query_row(params![send.connection_id, send.number], |r| r.get(0))?;
            let mut set = tx.prepare_cached(
                "UPDATE order_batch_orders SET part = ?3 WHERE batch_id = ?1 AND order_id = ?2",
            )?;
            for (order_id, part) in parts {
                set.execute(params![batch, order_id, part])?;
            }
            drop(set);
            tx.commit()
        })
        .await
    }

    async fn next(&self, counter: Counter) -> Result<Numbered, PlatformError> {
        let warehouse_id = self.warehouse_id;
        self.db(move |conn| {
            let tx = db::write(conn)?;
            let number = take(&tx, warehouse_id, counter)?;
            tx.commit()?;
            Ok(Numbered { number, at: now_ms() })
        })
        .await
    }
}
