//! `orderbridge backup FILE`: a consistent copy of the database, taken with SQLite's online
//! backup while the server may be running. The copy is read from one snapshot (one step for
//! the whole file, under one read transaction, which in WAL mode never blocks writers), then
//! checked with `PRAGMA quick_check` before it is called done.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

/// Copies the database at `source` to `target`, which must not exist. Returns the pages copied.
pub fn backup(source: &Path, target: &Path) -> Result<i32, String> {
    if !source.exists() {
        return Err(format!("there is no database at {}", source.display()));
    }
    // Claims the name at once: an existing file is refused, never overwritten.
    std::fs::OpenOptions::new().write(true).create_new(true).open(target).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            format!("{} already exists; backup never overwrites a file", target.display())
        } else {
            format!("cannot create {}: {e}", target.display())
        }
    })?;
    let copied = copy(source, target);
    if copied.is_err() {
        let _ = std::fs::remove_file(target);
    }
    copied
}

fn copy(source: &Path, target: &Path) -> Result<i32, String> {
    let failed = |e: rusqlite::Error| format!("backup failed: {e}");
    let from = Connection::open_with_flags(
        source,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(failed)?;
    from.busy_timeout(std::time::Duration::from_secs(10)).map_err(failed)?;
    let mut to = Connection::open(target).map_err(failed)?;
    let pages = {
        let backup = rusqlite::backup::Backup::new(&from, &mut to).map_err(failed)?;
        // -1: every page in one step, so the copy is one snapshot of the source.
        loop {
            match backup.step(-1).map_err(failed)? {
                rusqlite::backup::StepResult::Done => break,
                // The source was busy or locked: wait a little and go on.
                _ => std::thread::sleep(std::time::Duration::from_millis(50)),
            }
        }
        backup.progress().pagecount
    };
    let check: String = to.query_row("PRAGMA quick_check", [], |r| r.get(0)).map_err(failed)?;
    if check != "ok" {
        return Err(format!("the copy does not check out ({check})"));
    }
    Ok(pages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_has_every_row_and_an_existing_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (source, target) = (dir.path().join("a.db"), dir.path().join("b.db"));
        let conn = Connection::open(&source).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1), (2), (3);",
        )
        .unwrap();
        assert!(backup(&source, &target).unwrap() >= 1);
        let copy = Connection::open(&target).unwrap();
        let rows: i64 = copy.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, 3);
        let again = backup(&source, &target).unwrap_err();
        assert!(again.contains("already exists"), "{again}");
        let missing = backup(&dir.path().join("none.db"), &dir.path().join("c.db")).unwrap_err();
        assert!(missing.contains("no database"), "{missing}");
        assert!(!dir.path().join("c.db").exists());
    }
}
