//! Sync runs: one row per pass, created when it starts and completed when it ends, as
//! `GET /connections/{id}/sync_runs` shows them (CONTRACT §11, "Runs").

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

use crate::dates::{Timestamp, now_ms};

/// How many runs a connection's list shows, and keeps: older ones are pruned.
pub const KEPT_RUNS: i64 = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Trigger {
    Schedule,
    Request,
}

impl Trigger {
    fn as_str(self) -> &'static str {
        match self {
            Trigger::Schedule => "schedule",
            Trigger::Request => "request",
        }
    }
}

/// The steps of a pass, as a run's `error.step` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    PullOrders,
    SendOrders,
    PullShipments,
    Notify,
    Stock,
}

impl Step {
    pub fn as_str(self) -> &'static str {
        match self {
            Step::PullOrders => "pull_orders",
            Step::SendOrders => "send_orders",
            Step::PullShipments => "pull_shipments",
            Step::Notify => "notify",
            Step::Stock => "stock",
        }
    }
}

/// What a pass did, step by step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RunCounts {
    pub orders_pulled: u64,
    pub orders_sent: u64,
    pub shipments_pulled: u64,
    pub shipments_notified: u64,
    pub stock_levels_sent: u64,
}

/// Why a pass ended early. The message is for a person and never carries a credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub step: Step,
    pub code: &'static str,
    pub message: String,
}

/// How a pass ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub counts: RunCounts,
    pub failure: Option<Failure>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunError {
    pub step: String,
    pub code: String,
    pub message: String,
}

/// A problem as a run shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunProblem {
    pub step: String,
    pub kind: String,
    #[serde(rename = "ref")]
    pub reference: String,
    pub message: String,
}

/// A run as the API returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Run {
    pub id: i64,
    pub connection_id: i64,
    pub trigger: String,
    pub started_at: Timestamp,
    pub finished_at: Option<Timestamp>,
    pub status: String,
    #[serde(flatten)]
    pub counts: RunCounts,
    pub error: Option<RunError>,
    /// The first problems of the pass (`super::problems::KEPT_PER_RUN`); `problems_count` counts all.
    pub problems: Vec<RunProblem>,
    pub problems_count: u64,
}

impl Run {
    pub fn failed(&self) -> bool {
        self.status == "failed"
    }
}

const COLUMNS: &str = "id, connection_id, trigger, started_at, finished_at, status, orders_pulled, orders_sent,
                       shipments_pulled, shipments_notified, stock_levels_sent, error_step, error_code, error_message,
                       problems_count";

fn from_row(r: &Row<'_>) -> rusqlite::Result<Run> {
    let count = |i: usize| r.get::<_, i64>(i).map(|n| u64::try_from(n).unwrap_or_default());
    let error = match (r.get::<_, Option<String>>(11)?, r.get::<_, Option<String>>(12)?) {
        (Some(step), Some(code)) => {
            Some(RunError { step, code, message: r.get::<_, Option<String>>(13)?.unwrap_or_default() })
        }
        _ => None,
    };
    Ok(Run {
        id: r.get(0)?,
        connection_id: r.get(1)?,
        trigger: r.get(2)?,
        started_at: Timestamp(r.get(3)?),
        finished_at: r.get::<_, Option<i64>>(4)?.map(Timestamp),
        status: r.get(5)?,
        counts: RunCounts {
            orders_pulled: count(6)?,
            orders_sent: count(7)?,
            shipments_pulled: count(8)?,
            shipments_notified: count(9)?,
            stock_levels_sent: count(10)?,
        },
        error,
        problems: Vec::new(),
        problems_count: count(14)?,
    })
}

/// Fills in the problems of `runs`, read in one query.
fn with_problems(conn: &Connection, mut runs: Vec<Run>) -> rusqlite::Result<Vec<Run>> {
    let ids: Vec<i64> = runs.iter().filter(|r| r.problems_count > 0).map(|r| r.id).collect();
    let at: std::collections::HashMap<i64, usize> = runs.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
    for (run_id, problem) in problems_of(conn, &ids)? {
        if let Some(&i) = at.get(&run_id) {
            runs[i].problems.push(problem);
        }
    }
    Ok(runs)
}

/// Records a pass that starts now, and prunes the connection's runs past the kept ones.
pub fn create(conn: &mut Connection, connection_id: i64, trigger: Trigger) -> rusqlite::Result<i64> {
    let tx = crate::db::write_unlisted(conn)?;
    let id = insert(&tx, connection_id, trigger)?;
    tx.commit()?;
    Ok(id)
}

/// [`create`] inside the caller's transaction.
pub fn insert(tx: &Connection, connection_id: i64, trigger: Trigger) -> rusqlite::Result<i64> {
    tx.prepare_cached(
        "INSERT INTO sync_runs (connection_id, trigger, started_at, status) VALUES (?1, ?2, ?3, 'running')",
    )?
    .execute(params![connection_id, trigger.as_str(), now_ms()])?;
    let id = tx.last_insert_rowid();
    // Pruning now and then is enough to keep the list at its size.
    if id % 20 == 0 {
        tx.prepare_cached(
            "DELETE FROM sync_runs WHERE connection_id = ?1 AND status != 'running'
           AND id < (SELECT MIN(id) FROM (SELECT id FROM sync_runs WHERE connection_id = ?1
                                          ORDER BY id DESC LIMIT ?2))",
        )?
        .execute(params![connection_id, KEPT_RUNS])?;
    }
    Ok(id)
}

/// Completes a run with what its pass did.
/// Records how run `id` ended, unless it was closed meanwhile: another process that found its
/// lease lapsed closed it as interrupted, and that stays.
pub fn finish(conn: &mut Connection, id: i64, outcome: &Outcome) -> rusqlite::Result<()> {
    let c = &outcome.counts;
    let failure = outcome.failure.as_ref();
    let tx = crate::db::write_unlisted(conn)?;
    tx.prepare_cached(
        "UPDATE sync_runs SET finished_at = ?2, status = ?3, orders_pulled = ?4, orders_sent = ?5,
           shipments_pulled = ?6, shipments_notified = ?7, stock_levels_sent = ?8,
           error_step = ?9, error_code = ?10, error_message = ?11
         WHERE id = ?1 AND status = 'running'",
    )?
    .execute(params![
        id,
        now_ms(),
        if failure.is_some() { "failed" } else { "succeeded" },
        c.orders_pulled as i64,
        c.orders_sent as i64,
        c.shipments_pulled as i64,
        c.shipments_notified as i64,
        c.stock_levels_sent as i64,
        failure.map(|f| f.step.as_str()),
        failure.map(|f| f.code),
        failure.map(|f| f.message.as_str()),
    ])?;
    tx.commit()
}

/// Records the step a pass is in (kept in `error_step` while the run has no `error_code`),
/// so a run interrupted by a crash can say where it stopped.
pub fn enter(conn: &Connection, id: i64, step: Step) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE sync_runs SET error_step = ?2 WHERE id = ?1")?
        .execute(params![id, step.as_str()])?;
    Ok(())
}

const INTERRUPTED: &str = "UPDATE sync_runs SET status = 'failed', finished_at = ?1,
           error_step = COALESCE(error_step, 'pull_orders'), error_code = 'interrupted',
           error_message = 'The pass was interrupted: orderbridge stopped before it finished. The next pass picks up where it left off.'
         WHERE status = 'running'";

/// Runs left `running` by a process that stopped mid-pass: they will never finish, so they
/// are marked failed when the engine starts. A run whose pass another process still holds
/// the lease of (`orderbridge sync` beside a server) is under way, and is left alone. One
/// statement, and no data generation bump when there is nothing to close (listing counts stay
/// cached).
pub fn close_interrupted(conn: &mut Connection) -> rusqlite::Result<usize> {
    conn.execute(
        &format!("{INTERRUPTED} AND id NOT IN (SELECT run_id FROM sync_leases WHERE expires_at > ?1)"),
        [now_ms()],
    )
}

/// Closes run `id` as interrupted if it is still `running` (its pass's lease expired).
pub fn close_one_interrupted(conn: &Connection, id: i64, now: i64) -> rusqlite::Result<()> {
    conn.execute(&format!("{INTERRUPTED} AND id = ?2"), params![now, id])?;
    Ok(())
}

/// Ends a run whose pass stopped because its lease was taken over (another process found it
/// lapsed), unless that process closed the run already.
pub fn close_lost(conn: &Connection, id: i64) -> rusqlite::Result<()> {
    close_running(
        conn,
        id,
        "interrupted",
        "The pass stopped: another orderbridge process took over its connection. The next pass picks up where it left off.",
    )
}

/// Ends a run whose pass stopped on a bug (a panic) as failed, in the step it was in, so it
/// is never left `running`.
pub fn close_broken(conn: &Connection, id: i64) -> rusqlite::Result<()> {
    close_running(
        conn,
        id,
        "internal_error",
        "The pass stopped on an error of orderbridge itself; see the server log. The next pass picks up where it left off.",
    )
}

/// Ends run `id` as failed with `code` and `message` in the step it was in, if still `running`.
fn close_running(conn: &Connection, id: i64, code: &str, message: &str) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE sync_runs SET status = 'failed', finished_at = ?1,
           error_step = COALESCE(error_step, 'pull_orders'), error_code = ?3, error_message = ?4
         WHERE id = ?2 AND status = 'running'",
        params![now_ms(), id, code, message],
    )?;
    Ok(())
}

/// The problems of each of `run_ids`, in one query: (run id, problem), by run then position.
fn problems_of(conn: &Connection, run_ids: &[i64]) -> rusqlite::Result<Vec<(i64, RunProblem)>> {
    if run_ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<rusqlite::types::Value> = run_ids.iter().map(|&id| id.into()).collect();
    let mut stmt = conn.prepare_cached(
        "SELECT run_id, step, kind, ref, message FROM sync_run_problems
         WHERE run_id IN rarray(?1) ORDER BY run_id, position",
    )?;
    let rows = stmt.query_map([std::rc::Rc::new(ids)], |r| {
        Ok((
            r.get(0)?,
            RunProblem { step: r.get(1)?, kind: r.get(2)?, reference: r.get(3)?, message: r.get(4)? },
        ))
    })?;
    rows.collect()
}

pub fn find(conn: &Connection, id: i64) -> rusqlite::Result<Option<Run>> {
    let run = conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM sync_runs WHERE id = ?1"))?
        .query_row([id], from_row)
        .optional()?;
    Ok(with_problems(conn, run.into_iter().collect())?.pop())
}

/// The latest runs of a connection, newest first.
pub fn latest(conn: &Connection, connection_id: i64) -> rusqlite::Result<Vec<Run>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM sync_runs WHERE connection_id = ?1 ORDER BY id DESC LIMIT ?2"
    ))?;
    let rows = stmt.query_map(params![connection_id, KEPT_RUNS], from_row)?;
    with_problems(conn, rows.collect::<rusqlite::Result<_>>()?)
}

/// When each connection's latest pass started, for the schedule after a restart.
pub fn last_started(conn: &Connection) -> rusqlite::Result<Vec<(i64, i64)>> {
    let mut stmt =
        conn.prepare_cached("SELECT connection_id, MAX(started_at) FROM sync_runs GROUP BY connection_id")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}
