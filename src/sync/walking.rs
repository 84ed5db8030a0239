//! A walk of a store's orders under way ([`super::orders_in`]), and the walk a pass left
//! unfinished, kept in the database with the store (`store_walks`, CONTRACT §11 "Pulls that
//! resume"): written in the transaction of each page it read, so a process killed anywhere
//! leaves a continuation that matches the pages written, read back by the store's next pass
//! in whichever process runs it, and removed in the transaction of the page that ends it.

use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

/// A walk under way.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Walking {
    /// The continuation of the page not yet read, in the platform's own words (for Amazon,
    /// its token with the filter values it was issued for and what the walk read so far).
    pub(super) next: Option<String>,
    /// When the pass that began the walk started.
    pub(super) started: i64,
}

impl Walking {
    pub(super) fn fresh(started: i64) -> Walking {
        Walking { next: None, started }
    }
}

/// What a page's transaction does with the store's kept walk.
#[derive(Debug, Clone)]
pub(super) enum Keep {
    /// Nothing: the listing is not walked by continuation.
    Nothing,
    /// Keeps the walk as it stands after the page (its continuation set).
    Walk(Walking),
    /// The walk ended: forgets it.
    Forget,
}

impl Keep {
    pub(super) fn is_nothing(&self) -> bool {
        matches!(self, Keep::Nothing)
    }
}

/// The walk an earlier pass left unfinished, with how long ago the page that handed out its
/// continuation was written. A row that cannot be read is no walk: the pass starts again
/// from the cursor, which is where it would be without one.
pub(super) fn kept(
    conn: &Connection,
    store_id: i64,
    now: i64,
) -> rusqlite::Result<Option<(Walking, Duration)>> {
    let row: Option<(String, i64)> = conn
        .prepare_cached("SELECT walk, saved_at FROM store_walks WHERE store_id = ?1")?
        .query_row([store_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    Ok(row.and_then(|(text, saved_at)| {
        let walk = serde_json::from_str::<Walking>(&text).ok().filter(|w| w.next.is_some())?;
        let age = u64::try_from(now.saturating_sub(saved_at)).unwrap_or_default();
        Some((walk, Duration::from_millis(age)))
    }))
}

/// Keeps or forgets the store's walk as the page says, in the page's transaction.
pub(super) fn write(tx: &Connection, store_id: i64, keep: &Keep, now: i64) -> rusqlite::Result<()> {
    match keep {
        Keep::Nothing => {}
        Keep::Walk(walk) => {
            let text =
                serde_json::to_string(walk).map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?;
            tx.prepare_cached(
                "INSERT INTO store_walks (store_id, walk, saved_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (store_id) DO UPDATE SET walk = excluded.walk, saved_at = excluded.saved_at",
            )?
            .execute(params![store_id, text, now])?;
        }
        Keep::Forget => forget(tx, store_id)?,
    }
    Ok(())
}

/// Forgets the store's walk.
pub(super) fn forget(conn: &Connection, store_id: i64) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM store_walks WHERE store_id = ?1")?.execute([store_id])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_walk_comes_back_with_its_age_and_is_gone_once_forgotten() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE store_walks (store_id INTEGER PRIMARY KEY, walk TEXT NOT NULL, saved_at INTEGER NOT NULL)")
            .unwrap();
        let walk = Walking { next: Some("{\"token\":\"t2\"}".into()), started: 7 };
        write(&conn, 1, &Keep::Walk(walk), 1_000).unwrap();
        let (back, age) = kept(&conn, 1, 4_000).unwrap().expect("kept");
        assert_eq!((back.next.as_deref(), back.started), (Some("{\"token\":\"t2\"}"), 7));
        assert_eq!(age, Duration::from_secs(3));
        write(&conn, 1, &Keep::Nothing, 5_000).unwrap();
        assert!(kept(&conn, 1, 5_000).unwrap().is_some(), "a page of another listing leaves it");
        write(&conn, 1, &Keep::Forget, 5_000).unwrap();
        assert!(kept(&conn, 1, 5_000).unwrap().is_none());
    }
}
