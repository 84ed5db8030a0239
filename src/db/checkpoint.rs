//! WAL checkpoints off the request path. By SQLite's default, the commit that grows the WAL
//! past 1,000 pages copies the WAL into the database file and syncs it, inside that
//! request: an import of 5,000 orders paid for it about once a request (100,000 orders over
//! HTTP: ~25,000 records/s with it, ~29,000 without, `examples/bench/`). Under `serve` a
//! thread of its own checkpoints instead, ten times a second, and request connections only
//! checkpoint past `BACKSTOP_PAGES`. The backstop is what bounds the WAL under a steady mix
//! of reads and writes: a PASSIVE checkpoint copies what it can, but the WAL starts over
//! only when a writer finds all of it copied, and with hundreds of requests in flight the
//! thread alone let it grow to 274 MiB in the soak (88 MiB with this backstop; 40 before).

use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

/// WAL pages past which a commit checkpoints anyway (64 MiB of 16 KiB pages).
pub const BACKSTOP_PAGES: i64 = 4_096;

/// How often the thread looks.
const TICK: Duration = Duration::from_millis(100);

/// Who checkpoints the WAL of a pool's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checkpoints {
    /// Every commit, as SQLite does by default (the CLI's short-lived commands).
    OnCommit,
    /// A `Checkpointer` (the server); commits only past `BACKSTOP_PAGES`.
    InBackground,
}

/// The checkpointing thread; stopped (and joined) when dropped.
pub struct Checkpointer {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts checkpointing the WAL of the database at `path`, on a connection of its own.
    pub fn start(path: &Path) -> Result<Checkpointer, String> {
        let conn = Connection::open(path).map_err(|e| format!("database: {e}"))?;
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("orderbridge-checkpoint".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(TICK) {
                    // PASSIVE never waits for readers or writers: it copies what no reader
                    // still needs, and with nothing new it returns at once, syncing nothing.
                    if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
                        log::warn!("database: a WAL checkpoint failed: {e}");
                    }
                }
            })
            .map_err(|e| format!("cannot start the checkpoint thread: {e}"))?;
        Ok(Checkpointer { stop: Some(stop), thread: Some(thread) })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_copies_the_wal_that_commits_no_longer_copy_and_stops_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.db");
        let file_size = || std::fs::metadata(&path).unwrap().len();
        let conn = Connection::open(&path).unwrap();
        conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(())).unwrap();
        conn.execute_batch(&format!(
            "PRAGMA wal_autocheckpoint = {BACKSTOP_PAGES};
             CREATE TABLE t (x BLOB);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
             INSERT INTO t SELECT randomblob(4000) FROM n;"
        ))
        .unwrap();
        // Past SQLite's own 1,000 pages, the commit copied nothing into the file.
        assert!(file_size() < 1 << 20, "{}", file_size());
        let checkpointer = Checkpointer::start(&path).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while file_size() < 6 << 20 {
            assert!(std::time::Instant::now() < deadline, "the WAL was not checkpointed: {}", file_size());
            std::thread::sleep(Duration::from_millis(50));
        }
        let started = std::time::Instant::now();
        drop(checkpointer);
        assert!(started.elapsed() < Duration::from_secs(2), "the thread stops when dropped");
        drop(conn);
    }
}
