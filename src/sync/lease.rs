//! Who runs a connection's pass now, across processes (CONTRACT §11): a server and
//! `orderbridge sync` on one database file must never run the same connection's pass at once
//! (both would look at the store, both post the same shipment). A pass holds a lease row in
//! the database, taken in the transaction that creates its run, renewed while it runs and
//! released when it ends; a lease whose holder stopped renewing (a process killed) expires,
//! and the next pass takes it over and closes the dead pass's run as interrupted.

use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

use crate::dates::now_ms;

use super::runs::{self, Trigger};

/// How long a lease lasts unless renewed.
pub const LEASE: Duration = Duration::from_secs(30);

/// How often a pass renews its lease.
pub const RENEW: Duration = Duration::from_secs(10);

fn lease_ms() -> i64 {
    i64::try_from(LEASE.as_millis()).unwrap_or(i64::MAX)
}

/// What taking the lease came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// The lease is ours, for the new run.
    Run(i64),
    /// Another process runs the connection's pass now, as this run.
    HeldBy(i64),
}

/// Takes the connection's lease for a new run, unless another holder's lease is live.
pub fn take(
    conn: &mut Connection,
    connection_id: i64,
    holder: &str,
    trigger: Trigger,
) -> rusqlite::Result<Taken> {
    let tx = crate::db::write_unlisted(conn)?;
    let now = now_ms();
    let held: Option<(String, i64, i64)> = tx
        .prepare_cached("SELECT holder, run_id, expires_at FROM sync_leases WHERE connection_id = ?1")?
        .query_row([connection_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    if let Some((other, run_id, expires_at)) = held {
        if other != holder && expires_at > now && is_alive(&other, None) {
            return Ok(Taken::HeldBy(run_id));
        }
        // Its holder stopped renewing it: that pass will never finish.
        runs::close_one_interrupted(&tx, run_id, now)?;
    }
    let run_id = runs::insert(&tx, connection_id, trigger)?;
    tx.prepare_cached(
        "INSERT INTO sync_leases (connection_id, holder, run_id, expires_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (connection_id) DO UPDATE SET holder = excluded.holder, run_id = excluded.run_id,
           expires_at = excluded.expires_at",
    )?
    .execute(params![connection_id, holder, run_id, now + lease_ms()])?;
    tx.commit()?;
    Ok(Taken::Run(run_id))
}

/// Who holds leases: the process id and a random mark, so a process tells its own leases from
/// those of an earlier process that had the same id.
pub fn holder() -> String {
    format!("pid {} #{:016x}", std::process::id(), rand::random::<u64>())
}

/// Whether the process that took a lease may still run its pass. A process killed without
/// giving its leases back (kill -9) holds them until they expire; where the system shows its
/// processes (`/proc`), a holder whose process is gone holds nothing. At start (`starting`
/// names the engine that starts), a holder with this process's id but another mark is an
/// earlier process that had the same id (a restart in a container).
fn is_alive(holder: &str, starting: Option<&str>) -> bool {
    let Some(pid) = holder.strip_prefix("pid ").and_then(|rest| rest.split(' ').next()) else { return true };
    let Ok(pid) = pid.parse::<u32>() else { return true };
    if pid == std::process::id() {
        return starting.is_none_or(|me| me == holder);
    }
    let proc = std::path::Path::new("/proc");
    if !proc.join("self").exists() {
        return true;
    }
    // Gone, or a zombie (killed, not yet reaped by its parent): `pid (name) Z …`.
    match std::fs::read_to_string(proc.join(pid.to_string()).join("stat")) {
        Ok(stat) => stat.rsplit_once(')').is_none_or(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

/// Gives up the leases of passes whose process is gone, when engine `me` starts (before their
/// runs are closed as interrupted); returns how many.
pub fn clear_dead(conn: &Connection, me: &str) -> rusqlite::Result<usize> {
    let mut stmt = conn.prepare_cached("SELECT connection_id, holder, expires_at FROM sync_leases")?;
    let now = now_ms();
    let dead: Vec<(i64, String)> = stmt
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?)))?
        .filter_map(|row| match row {
            Ok((connection, holder, expires_at)) => {
                (expires_at <= now || !is_alive(&holder, Some(me))).then_some(Ok((connection, holder)))
            }
            Err(e) => Some(Err(e)),
        })
        .collect::<rusqlite::Result<_>>()?;
    for (connection, holder) in &dead {
        conn.prepare_cached("DELETE FROM sync_leases WHERE connection_id = ?1 AND holder = ?2")?
            .execute(params![connection, holder])?;
    }
    Ok(dead.len())
}

/// Keeps the lease for another [`LEASE`]; false when it is no longer ours.
pub fn renew(conn: &Connection, connection_id: i64, holder: &str) -> rusqlite::Result<bool> {
    let changed = conn
        .prepare_cached("UPDATE sync_leases SET expires_at = ?3 WHERE connection_id = ?1 AND holder = ?2")?
        .execute(params![connection_id, holder, now_ms() + lease_ms()])?;
    Ok(changed > 0)
}

/// Gives the lease of run `run_id` back when its pass ended (a lease a newer pass of this
/// holder took meanwhile stays).
pub fn release(conn: &Connection, connection_id: i64, holder: &str, run_id: i64) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM sync_leases WHERE connection_id = ?1 AND holder = ?2 AND run_id = ?3")?
        .execute(params![connection_id, holder, run_id])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh database, its foreign keys off on this connection: the lease alone is tested.
    fn database() -> (tempfile::TempDir, crate::db::Pool) {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::db::open(&dir.path().join("t.db")).unwrap();
        (dir, pool)
    }

    #[test]
    fn a_live_lease_of_another_holder_keeps_the_pass_and_an_expired_one_is_taken_over() {
        let (_dir, pool) = database();
        let mut conn = pool.get().unwrap();
        conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
        let Taken::Run(first) = take(&mut conn, 7, "server", Trigger::Schedule).unwrap() else { panic!() };
        assert_eq!(take(&mut conn, 7, "cli", Trigger::Request).unwrap(), Taken::HeldBy(first));
        assert!(renew(&conn, 7, "server").unwrap());
        assert!(!renew(&conn, 7, "cli").unwrap());
        // The server was killed: its lease runs out, and the CLI takes over and closes its run.
        conn.execute("UPDATE sync_leases SET expires_at = 0", []).unwrap();
        let Taken::Run(second) = take(&mut conn, 7, "cli", Trigger::Request).unwrap() else { panic!() };
        assert_ne!(first, second);
        let status: String =
            conn.query_row("SELECT status FROM sync_runs WHERE id = ?1", [first], |r| r.get(0)).unwrap();
        assert_eq!(status, "failed");
        release(&conn, 7, "server", first).unwrap();
        assert_eq!(
            take(&mut conn, 7, "server", Trigger::Request).unwrap(),
            Taken::HeldBy(second),
            "not the server's to release"
        );
        release(&conn, 7, "cli", first).unwrap();
        assert!(
            matches!(take(&mut conn, 7, "server", Trigger::Request).unwrap(), Taken::HeldBy(_)),
            "not that run's lease"
        );
        release(&conn, 7, "cli", second).unwrap();
        assert!(matches!(take(&mut conn, 7, "server", Trigger::Request).unwrap(), Taken::Run(_)));
    }

    #[test]
    fn a_lease_of_a_process_that_is_gone_holds_nothing() {
        let (_dir, pool) = database();
        let mut conn = pool.get().unwrap();
        conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
        // An earlier process with this process's id (a restart in a container) left its lease.
        let former = format!("pid {} #0000000000000001", std::process::id());
        let Taken::Run(first) = take(&mut conn, 3, &former, Trigger::Schedule).unwrap() else { panic!() };
        let me = holder();
        assert_eq!(take(&mut conn, 3, &me, Trigger::Request).unwrap(), Taken::HeldBy(first), "not at start");
        assert_eq!(clear_dead(&conn, &me).unwrap(), 1);
        let Taken::Run(second) = take(&mut conn, 3, &me, Trigger::Request).unwrap() else { panic!() };
        assert_ne!(first, second);
        // The starting engine's own lease, and one of a process still running, are kept.
        assert_eq!(clear_dead(&conn, &me).unwrap(), 0);
        conn.execute("UPDATE sync_leases SET holder = 'pid 1 #2'", []).unwrap();
        assert_eq!(clear_dead(&conn, &me).unwrap(), 0, "process 1 runs");
    }
}
