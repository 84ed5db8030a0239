//! The schedule: inside `serve`, every syncing connection gets a pass every
//! `sync_interval_secs`. A connection's first pass comes one interval after it was last
//! synced (after a restart, as the runs recorded it) or, if it never was, one interval after
//! the engine first saw it syncing; `POST /connections/{id}/sync` asks for one at once.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use std::future::Future;

use crate::config::SyncMode;
use crate::dates::now_ms;
use crate::db::DbError;

use super::engine::Engine;
use super::link::Link;
use super::runs::{self, Trigger};

/// How often the schedule looks for passes that are due.
const TICK: Duration = Duration::from_secs(1);

/// How often the list of syncing connections is read again.
const REFRESH: Duration = Duration::from_secs(5);

/// Starts the schedule in the background, until `shutdown` completes (the server's own
/// shutdown, when `serve` runs it). Runs left `running` by an earlier process are closed first.
pub async fn start(engine: Arc<Engine>, shutdown: impl Future<Output = ()> + Send + 'static) {
    let me = engine.holder.clone();
    let closed = engine.db(move |conn| {
        super::lease::clear_dead(conn, &me)?;
        Ok::<_, DbError>(runs::close_interrupted(conn)?)
    });
    if let Err(e) = closed.await {
        log::error!("sync: could not close interrupted runs: {e}");
    }
    if engine.settings().mode == SyncMode::Off {
        return;
    }
    tokio::spawn(async move {
        let shutdown = shutdown;
        tokio::pin!(shutdown);
        let mut schedule = Schedule::default();
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => schedule.tick(&engine).await,
                _ = &mut shutdown => break,
            }
        }
    });
}

#[derive(Default)]
struct Schedule {
    /// Connection id → when its next pass is due (ms).
    due: HashMap<i64, i64>,
    refreshed_at: Option<tokio::time::Instant>,
}

impl Schedule {
    async fn tick(&mut self, engine: &Arc<Engine>) {
        let interval = i64::try_from(engine.settings().interval.as_millis()).unwrap_or(i64::MAX);
        if self.refreshed_at.is_none_or(|at| at.elapsed() >= REFRESH) {
            match engine.sql(|conn| Ok((Link::syncing_ids(conn)?, runs::last_started(conn)?))).await {
                Ok((ids, last)) => {
                    let last: HashMap<i64, i64> = last.into_iter().collect();
                    let now = now_ms();
                    self.due.retain(|id, _| ids.contains(id));
                    for id in ids {
                        self.due.entry(id).or_insert_with(|| {
                            last.get(&id).copied().unwrap_or(now).saturating_add(interval)
                        });
                    }
                    self.refreshed_at = Some(tokio::time::Instant::now());
                }
                Err(e) => log::error!("sync: could not read the syncing connections: {e}"),
            }
        }
        let now = now_ms();
        for (&id, due) in self.due.iter_mut() {
            if *due > now || engine.running(id).is_some() {
                continue;
            }
            match engine.start(id, Trigger::Schedule).await {
                Ok(_) => *due = now.saturating_add(interval),
                Err(e) => log::error!("sync: could not start a pass of connection {id}: {e}"),
            }
        }
    }
}
