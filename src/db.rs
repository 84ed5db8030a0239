//! The SQLite file: opening it, applying the embedded schema on first run, the connection
//! pool, and the one helper that runs blocking SQL off the async threads.

use std::path::Path;

use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, ErrorCode};

use crate::error::ApiError;

pub type Pool = r2d2::Pool<SqliteConnectionManager>;

/// The schema, embedded in the binary.
pub const SCHEMA: &str = include_str!("../schema.sql");

/// Bumped when `schema.sql` changes shape; stored in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 2;

/// Every pooled connection's settings.
const CONNECTION_PRAGMAS: &str =
    "PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL;";

/// One connection outside the pool, with the pool's settings, for a command that must be the
/// database's only user. The file must have been prepared by `open`.
pub fn connect(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.execute_batch(CONNECTION_PRAGMAS)?;
    Ok(conn)
}

/// Opens (creating if needed) the database file and applies the schema on first run.
pub fn open(path: &Path) -> Result<Pool, String> {
    let manager = SqliteConnectionManager::file(path).with_init(|c| {
        // Listings and imports cycle through a few dozen statements; keep them all prepared.
        c.set_prepared_statement_cache_capacity(128);
        c.execute_batch(CONNECTION_PRAGMAS)
    });
    let pool = r2d2::Pool::builder()
        .max_size(8)
        .build(manager)
        .map_err(|e| format!("cannot open database {}: {e}", path.display()))?;
    let mut conn = pool.get().map_err(|e| format!("cannot open database {}: {e}", path.display()))?;
    migrate(&mut conn).map_err(|e| format!("cannot prepare database {}: {e}", path.display()))?;
    Ok(pool)
}

fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version >= SCHEMA_VERSION {
        return Ok(());
    }
    let tx = conn.transaction()?;
    tx.execute_batch(SCHEMA)?;
    tx.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION}"))?;
    tx.commit()
}

/// Runs blocking database work on Rocket's blocking pool with a pooled connection, so the
/// async threads never wait on SQLite.
pub async fn run<T, F>(pool: &Pool, work: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&mut Connection) -> Result<T, ApiError> + Send + 'static,
{
    let pool = pool.clone();
    rocket::tokio::task::spawn_blocking(move || {
        let mut conn = pool.get()?;
        work(&mut conn)
    })
    .await
    .map_err(|e| ApiError::internal(format_args!("blocking task: {e}")))?
}

/// Starts a write transaction. IMMEDIATE takes the write lock up front, so a read-then-write
/// waits on `busy_timeout` for another writer instead of failing with SQLITE_BUSY mid-way.
pub fn write(conn: &mut Connection) -> rusqlite::Result<rusqlite::Transaction<'_>> {
    conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
}

/// Whether `e` is a violation of a UNIQUE or PRIMARY KEY constraint, for turning it into 409.
pub fn is_unique_violation(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == ErrorCode::ConstraintViolation
                && (f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                    || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY)
    )
}

/// Reads a setting kept in the database.
pub fn setting(conn: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    use rusqlite::OptionalExtension;
    conn.query_row("SELECT value FROM settings WHERE key = ?1", [key], |r| r.get(0)).optional()
}

pub fn set_setting(conn: &Connection, key: &str, value: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO settings (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [key, value],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reopening_keeps_rows_and_turns_on_foreign_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        {
            let pool = open(&path).unwrap();
            let conn = pool.get().unwrap();
            set_setting(&conn, "k", "v").unwrap();
        }
        let pool = open(&path).unwrap();
        let conn = pool.get().unwrap();
        assert_eq!(setting(&conn, "k").unwrap().as_deref(), Some("v"));
        let fk: i64 = conn.query_row("PRAGMA foreign_keys", [], |r| r.get(0)).unwrap();
        assert_eq!(fk, 1);
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
        assert_eq!(mode, "wal");
    }
}
