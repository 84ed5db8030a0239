//! `orderbridge sync [--connection N]`: one pass of each syncing connection (or of one),
//! in the foreground against the configured database, whatever `sync_mode` says. It prints
//! what each step did and fails when a pass failed. A connection whose pass another process
//! runs now (a server on the same file) is skipped and named, and the others go on: a
//! skipped connection alone is no failure, since its pass is under way (CONTRACT §11).

use crate::config::Config;

use super::engine::{Engine, EngineError};
use super::link::Link;
use super::runs::{Run, Trigger};
use super::settings::Settings;

/// Runs the passes; `Ok(false)` when one of them failed (not when one was skipped because
/// another process runs it).
pub async fn run(config: &Config, connection: Option<i64>) -> Result<bool, String> {
    let pool = config.open_engine_database()?;
    let engine = Engine::new(pool, Settings::from_config(config));
    let ids = match connection {
        Some(id) => {
            let link = engine
                .sql(move |conn| Link::load(conn, id, None))
                .await
                .map_err(|e| format!("database: {e}"))?
                .ok_or_else(|| format!("there is no connection {id}"))?;
            let why = link.why_not(None);
            if !why.is_empty() {
                let reasons: Vec<String> = why.into_values().collect();
                return Err(format!("connection {id} does not sync: {}", reasons.join("; ")));
            }
            vec![id]
        }
        None => engine.sql(|conn| Link::syncing_ids(conn)).await.map_err(|e| format!("database: {e}"))?,
    };
    if ids.is_empty() {
        println!("No connection syncs: enable a connection, its store, its warehouse and a channel.");
        return Ok(true);
    }
    let mut all_good = true;
    let mut skipped = 0;
    for id in ids {
        match engine.run_now(id, Trigger::Request).await {
            Ok(run) => {
                all_good &= !run.failed();
                println!("{}", describe(&run));
            }
            Err(EngineError::Busy(connection, run)) => {
                skipped += 1;
                println!(
                    "connection {connection}: skipped: another orderbridge process runs its pass now (run {run})"
                );
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    if skipped > 0 {
        println!(
            "{skipped} connection(s) skipped while another process runs their pass; that alone is no failure."
        );
    }
    Ok(all_good)
}

/// One pass of one connection in the foreground, whether or not it syncs by the
/// configuration (for benchmarks and scripts); returns its run.
pub async fn pass(config: &Config, connection: i64) -> Result<Run, String> {
    let pool = config.open_engine_database()?;
    let engine = Engine::new(pool, Settings::from_config(config));
    engine.run_now(connection, Trigger::Request).await.map_err(|e| e.to_string())
}

/// What a pass did, a line per step, as a person reads it.
pub fn describe(run: &Run) -> String {
    let c = &run.counts;
    let mut out = format!("connection {}: run {} {}\n", run.connection_id, run.id, run.status);
    out.push_str(&format!("  pull orders:    {} order(s) pulled from the store\n", c.orders_pulled));
    out.push_str(&format!("  send orders:    {} order(s) sent to the warehouse\n", c.orders_sent));
    out.push_str(&format!("  pull shipments: {} shipment(s) read from the warehouse\n", c.shipments_pulled));
    out.push_str(&format!("  notify:         {} shipment(s) reported to the store\n", c.shipments_notified));
    out.push_str(&format!("  stock:          {} stock level(s) sent to the store", c.stock_levels_sent));
    if let Some(e) = &run.error {
        out.push_str(&format!("\n  failed at {} ({}): {}", e.step, e.code, e.message));
    }
    if run.problems_count > 0 {
        out.push_str(&format!("\n  {} problem(s):", run.problems_count));
        for p in &run.problems {
            out.push_str(&format!("\n    {} {} {}: {}", p.step, p.kind, p.reference, p.message));
        }
        let untold = run.problems_count.saturating_sub(run.problems.len() as u64);
        if untold > 0 {
            out.push_str(&format!("\n    and {untold} more"));
        }
    }
    out
}
