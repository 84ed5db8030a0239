//! The SQLite file: opening it, applying the embedded schema on first run, the connection
//! pool, and the one helper that runs blocking SQL off the async threads.

use std::path::Path;

use r2d2_sqlite::SqliteConnectionManager;
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode};

pub use checkpoint::{Checkpointer, Checkpoints};

/// The connection pool and the database threads that use it. `run` hands work to a small,
/// fixed set of threads (by default one per core) instead of tokio's blocking pool: with many
/// requests in flight the blocking pool grows a thread per request, and on a small machine the
/// switching between them cost more than the queries (2 cores: `GET /orders/{id}` ~20k req/s
/// through the blocking pool, ~25-32k through two threads). Argon2 and DNS lookups keep using
/// tokio's blocking pool, so a burst of logins or a slow ping never holds up the database.
#[derive(Clone)]
pub struct Pool {
    connections: r2d2::Pool<SqliteConnectionManager>,
    jobs: mpsc::Sender<Job>,
    /// How a connection to the same file is made, with a page cache of the given KiB.
    connect: Arc<dyn Fn(i64) -> SqliteConnectionManager + Send + Sync>,
}

type Job = Box<dyn FnOnce() + Send>;

impl Pool {
    /// Connections and database threads of their own on the same file (already opened,
    /// migrated and its credentials checked), each connection with a page cache of
    /// `cache_kib` KiB: for background work (the sync engine) that must neither wait behind
    /// requests nor hold them up.
    pub fn own(&self, threads: usize, cache_kib: i64) -> Result<Pool, String> {
        let threads = threads.max(1);
        let connections = r2d2::Pool::builder()
            .max_size(u32::try_from(threads + 1).unwrap_or(u32::MAX))
            .build((self.connect)(cache_kib))
            .map_err(|e| format!("cannot open the database again: {e}"))?;
        Ok(Pool { connections, jobs: start_workers(threads)?, connect: Arc::clone(&self.connect) })
    }

    /// A connection for work that is already off the async threads (CLI, tests, `run`).
    pub fn get(&self) -> Result<r2d2::PooledConnection<SqliteConnectionManager>, r2d2::Error> {
        self.connections.get()
    }
}

/// Starts `count` database threads; they end when the last `Pool` clone is dropped.
fn start_workers(count: usize) -> Result<mpsc::Sender<Job>, String> {
    let (sender, receiver) = mpsc::channel::<Job>();
    let receiver = Arc::new(Mutex::new(receiver));
    for n in 0..count {
        let receiver = Arc::clone(&receiver);
        std::thread::Builder::new()
            .name(format!("orderbridge-db-{n}"))
            .spawn(move || {
                loop {
                    // Hold the lock only to take a job, never while running it.
                    let job = match receiver.lock() {
                        Ok(receiver) => receiver.recv(),
                        Err(_) => return,
                    };
                    match job {
                        // A panicking job (a bug) answers 500 through its dropped reply;
                        // the thread lives on for the next job.
                        Ok(job) => {
                            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                        }
                        Err(_) => return,
                    }
                }
            })
            .map_err(|e| format!("cannot start a database thread: {e}"))?;
    }
    Ok(sender)
}

/// The default number of database threads: the machine's cores, at least 2.
pub fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()).max(2)
}

/// What writing a keyed record did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Created,
    Updated,
}

/// What can go wrong with the database, in its own terms: `error` maps it to HTTP, and
/// background work (the sync engine, the sweeper) reports it its own way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbError {
    /// Another connection held the write lock past the busy timeout: try again shortly.
    Busy,
    /// Anything else (a bug or the environment); the text is for the log only.
    Failed(String),
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbError::Busy => f.write_str("the database is busy"),
            DbError::Failed(cause) => f.write_str(cause),
        }
    }
}

impl std::error::Error for DbError {}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        if is_busy(&e) { DbError::Busy } else { DbError::Failed(format!("database: {e}")) }
    }
}

impl From<r2d2::Error> for DbError {
    fn from(e: r2d2::Error) -> Self {
        DbError::Failed(format!("database pool: {e}"))
    }
}

pub mod backup;
pub mod checkpoint;
pub mod migrations;
pub mod secrets;

/// The schema, embedded in the binary: always the newest shape, applied whole to a new file.
pub const SCHEMA: &str = include_str!("../../schema.sql");

/// How long a statement waits for another connection's write lock before SQLITE_BUSY.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Every connection's settings (with `BUSY_TIMEOUT`). The page cache is 2 MiB per connection,
/// about SQLite's default. It was 16 MiB, and after an import and a burst of listing sessions
/// those caches were most of the server's resident memory (up to 16 MiB on each of the pool's
/// connections: RSS 192 MiB after the benchmark's load, 59 MiB with 2 MiB caches). Pages
/// past the cache come from the operating system's file cache, which the process does not
/// hold; session walks were no slower for it (`examples/bench/`, W2).
///
/// The sync engine's connection is the exception ([`ENGINE_CACHE_KIB`]): it is one, and a
/// pull writes pages of 100 orders into half a dozen indexes whose keys may come in no order
/// (Amazon's order ids and purchase times), which a 2 MiB cache turns into reads of the same
/// index pages again and again.
fn configure(conn: &Connection, cache_kib: i64) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.execute_batch(&format!(
        "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -{cache_kib};"
    ))?;
    // `rarray(?)`: a list of values bound as one parameter (a listing page's ids).
    rusqlite::vtab::array::load_module(conn)
}

/// Runs `sql` only if the write lock is free now, for work that may as well happen later
/// (an index a listing would like); SQLITE_BUSY is the caller's to take as "not now".
pub fn execute_if_unlocked(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.busy_timeout(Duration::ZERO)?;
    let done = conn.execute_batch(sql);
    conn.busy_timeout(BUSY_TIMEOUT)?;
    done
}

/// One connection outside the pool, with the pool's settings, for a command that must be the
/// database's only user. The file must have been prepared by `open` (with the same key file).
pub fn connect(path: &Path, key_file: &Path) -> Result<Connection, String> {
    let sealer = secrets::load_or_create(path, key_file)?;
    let conn = Connection::open(path).map_err(|e| format!("cannot open database {}: {e}", path.display()))?;
    configure(&conn, CACHE_KIB).map_err(|e| format!("database: {e}"))?;
    secrets::register(&conn, &sealer).map_err(|e| format!("database: {e}"))?;
    Ok(conn)
}

/// Upgrades the file and seals any plain credential over one connection, then closes it and
/// lets go of the key, for a command that must then be the key's only user (`rotate-key`).
pub fn prepare(path: &Path, key_file: &Path) -> Result<(), String> {
    secrets::finish_rotation(path, key_file)?;
    let sealer = secrets::load_or_create(path, key_file)?;
    let mut conn =
        Connection::open(path).map_err(|e| format!("cannot open database {}: {e}", path.display()))?;
    configure(&conn, CACHE_KIB).map_err(|e| format!("database: {e}"))?;
    secrets::register(&conn, &sealer).map_err(|e| format!("database: {e}"))?;
    migrate(&mut conn).map_err(|e| format!("cannot prepare database {}: {e}", path.display()))?;
    secrets::ensure(&mut conn, &sealer, key_file)?;
    conn.close().map_err(|(_, e)| format!("database: {e}"))
}

/// Opens (creating if needed) the database file and applies the schema on first run, with
/// the key file beside it (`secrets::default_key_file`).
pub fn open(path: &Path) -> Result<Pool, String> {
    open_with(path, default_workers(), &secrets::default_key_file(path), Checkpoints::OnCommit)
}

/// `open`, with `workers` database threads (0 means the default), the credentials' key in
/// `key_file`, and who checkpoints the WAL (with `InBackground`, start a `Checkpointer`).
pub fn open_with(
    path: &Path,
    workers: usize,
    key_file: &Path,
    checkpoints: Checkpoints,
) -> Result<Pool, String> {
    let workers = if workers == 0 { default_workers() } else { workers };
    secrets::finish_rotation(path, key_file)?;
    let sealer = secrets::load_or_create(path, key_file)?;
    let (file, sealed) = (path.to_path_buf(), Arc::clone(&sealer));
    let connect = Arc::new(move |cache_kib: i64| {
        let sealing = Arc::clone(&sealed);
        SqliteConnectionManager::file(&file).with_init(move |c| {
            // Listings and imports cycle through a few dozen statements; keep them all prepared.
            c.set_prepared_statement_cache_capacity(128);
            configure(c, cache_kib)?;
            if checkpoints == Checkpoints::InBackground {
                c.execute_batch(&format!("PRAGMA wal_autocheckpoint = {};", checkpoint::BACKSTOP_PAGES))?;
            }
            secrets::register(c, &sealing)
        })
    });
    // A few connections beyond the threads' serve the CLI and work outside `run`.
    let connections = r2d2::Pool::builder()
        .max_size(u32::try_from(workers + 2).unwrap_or(u32::MAX))
        .build(connect(CACHE_KIB))
        .map_err(|e| format!("cannot open database {}: {e}", path.display()))?;
    let mut conn = connections.get().map_err(|e| format!("cannot open database {}: {e}", path.display()))?;
    migrate(&mut conn).map_err(|e| format!("cannot prepare database {}: {e}", path.display()))?;
    secrets::ensure(&mut conn, &sealer, key_file)?;
    drop(conn);
    Ok(Pool { connections, jobs: start_workers(workers)?, connect })
}

/// The page cache of every connection but the engine's, in KiB.
const CACHE_KIB: i64 = 2 * 1024;

/// The page cache of the sync engine's own connection, in KiB (see `configure`).
pub const ENGINE_CACHE_KIB: i64 = 16 * 1024;

fn migrate(conn: &mut Connection) -> Result<(), String> {
    // Only a new, empty file takes this (an existing one keeps its page size), so it must come
    // before anything writes the header. An order's document is ~3 KB: a 4 KiB page holds one
    // and wastes a quarter, a 16 KiB page holds five. The file is ~15% smaller, and a page of
    // 100 orders is read from ~25 pages instead of ~120, which is what a session walking
    // deep into the table, past what the page cache holds, pays for.
    conn.execute_batch("PRAGMA page_size = 16384").map_err(|e| e.to_string())?;
    conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(())).map_err(|e| e.to_string())?;
    migrations::apply(conn)
}

/// Runs blocking database work on one of the database threads with a pooled connection, so
/// the async threads never wait on SQLite. The work needs no user or request: its error type
/// is the caller's, as long as a database failure converts into it.
pub async fn run<T, E, F>(pool: &Pool, work: F) -> Result<T, E>
where
    T: Send + 'static,
    E: From<DbError> + Send + 'static,
    F: FnOnce(&mut Connection) -> Result<T, E> + Send + 'static,
{
    let (reply, answer) = tokio::sync::oneshot::channel();
    let connections = pool.connections.clone();
    let job: Job = Box::new(move || {
        let result =
            connections.get().map_err(|e| E::from(DbError::from(e))).and_then(|mut conn| work(&mut conn));
        // The request may have gone away meanwhile; then nobody needs the answer.
        let _ = reply.send(result);
    });
    pool.jobs.send(job).map_err(|_| E::from(DbError::Failed("the database threads have stopped".into())))?;
    answer.await.map_err(|_| E::from(DbError::Failed("a database job ended without an answer".into())))?
}

/// Starts a write transaction. IMMEDIATE takes the write lock up front, so a read-then-write
/// waits on `busy_timeout` for another writer instead of failing with SQLITE_BUSY mid-way.
///
/// Every write transaction also bumps `data_generation`: whatever it changes, listing counts
/// cached before it are stale after it commits (and still good if it rolls back).
pub fn write(conn: &mut Connection) -> rusqlite::Result<rusqlite::Transaction<'_>> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    tx.prepare_cached("UPDATE data_generation SET value = value + 1 WHERE id = 1")?.execute([])?;
    Ok(tx)
}

/// A write transaction (the write lock taken up front, as `write`) for rows no listing
/// counts (sync runs), so it leaves cached listing counts valid.
pub fn write_unlisted(conn: &mut Connection) -> rusqlite::Result<rusqlite::Transaction<'_>> {
    conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
}

/// The current data generation (see `write`).
pub fn generation(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT value FROM data_generation WHERE id = 1")?.query_row([], |r| r.get(0))
}

/// Whether `e` is SQLITE_BUSY: another connection holds the lock.
pub fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == ErrorCode::DatabaseBusy)
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

/// Reads a stored adapter (JSON text written by this service) at column `index`.
pub fn settings_from_column(
    row: &rusqlite::Row<'_>,
    index: usize,
) -> rusqlite::Result<serde_json::Map<String, serde_json::Value>> {
    let text: String = row.get(index)?;
    match serde_json::from_str(&text) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(_) => Err(rusqlite::Error::FromSqlConversionFailure(
            index,
            rusqlite::types::Type::Text,
            "a stored adapter is not a JSON object".into(),
        )),
        Err(e) => {
            Err(rusqlite::Error::FromSqlConversionFailure(index, rusqlite::types::Type::Text, Box::new(e)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    #[expect(clippy::disallowed_methods, reason = "the database threads themselves, no user involved")]
    async fn a_panicking_job_fails_and_the_threads_live_on() {
        let dir = tempfile::tempdir().unwrap();
        let pool = open(&dir.path().join("t.db")).unwrap();
        let failed: Result<(), DbError> = run(&pool, |_| panic!("a bug")).await;
        assert!(matches!(failed, Err(DbError::Failed(_))), "{failed:?}");
        let answer: Result<i64, DbError> =
            run(&pool, |conn| Ok(conn.query_row("SELECT 41 + 1", [], |r| r.get::<_, i64>(0))?)).await;
        assert_eq!(answer, Ok(42), "the one thread is still there");
    }

    #[test]
    fn a_new_file_gets_16_kib_pages_and_an_existing_file_keeps_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let page_size = |conn: &Connection| conn.query_row("PRAGMA page_size", [], |r| r.get::<_, i64>(0));
        let fresh = dir.path().join("fresh.db");
        let pool = open(&fresh).unwrap();
        assert_eq!(
            page_size(&pool.get().unwrap()).unwrap(),
            16384,
            "the pragma ran before the header was written"
        );

        let older = dir.path().join("older.db");
        Connection::open(&older).unwrap().execute_batch("CREATE TABLE t (x INTEGER)").unwrap();
        let pool = open(&older).unwrap();
        assert_eq!(page_size(&pool.get().unwrap()).unwrap(), 4096, "an existing file is not rewritten");
    }

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
