//! The engine: the passes under way in this process and their leases, the slots they take
//! turns on, and what outlives a pass. It starts a pass, hands it to [`super::pass`], and
//! records how it ended.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::FutureExt;

use crate::db::{DbError, Pool};

use super::context::{Lasting, Tools};
use super::runs::{self, Run, Trigger};
use super::settings::Settings;
use super::{lease, pass};

/// How many passes run at once; the rest wait for a slot.
const MAX_PASSES_AT_ONCE: usize = 16;

/// Why the engine could not do what was asked (not a pass's own failure, which its run
/// records).
#[derive(Debug)]
pub enum EngineError {
    Db(DbError),
    /// Another process runs this connection's pass now (connection, its run).
    Busy(i64, i64),
}

impl From<DbError> for EngineError {
    fn from(e: DbError) -> Self {
        EngineError::Db(e)
    }
}

impl From<rusqlite::Error> for EngineError {
    fn from(e: rusqlite::Error) -> Self {
        EngineError::Db(DbError::from(e))
    }
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineError::Db(e) => write!(f, "database: {e}"),
            EngineError::Busy(connection, run) => {
                write!(
                    f,
                    "connection {connection}: another orderbridge process runs its pass now (run {run})"
                )
            }
        }
    }
}

/// The engine: its own database thread, the passes under way, and the settings.
pub struct Engine {
    pool: Pool,
    settings: Settings,
    /// Connection id → the id of its pass under way. A std mutex: never held across an await.
    running: Mutex<HashMap<i64, i64>>,
    /// Serializes starting passes, so two requests for one connection get one pass.
    starting: tokio::sync::Mutex<()>,
    slots: tokio::sync::Semaphore,
    /// What outlives a pass, lent to each: turns on shared things, the warehouse clients'
    /// memory (a walk left unfinished is in the database, for any process).
    lasting: Lasting,
    /// Who this engine is among the processes on the database file: its passes' leases.
    pub(super) holder: String,
}

/// A pass that `start` began, or found already under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Started {
    New(i64),
    AlreadyRunning(i64),
}

impl Started {
    pub fn run_id(self) -> i64 {
        match self {
            Started::New(id) | Started::AlreadyRunning(id) => id,
        }
    }
}

impl Engine {
    /// An engine over `pool`, which should be its own (one database thread), so passes never
    /// queue behind HTTP requests or hold them up.
    pub fn new(pool: Pool, settings: Settings) -> Arc<Engine> {
        Arc::new(Engine {
            pool,
            settings,
            running: Mutex::new(HashMap::new()),
            starting: tokio::sync::Mutex::new(()),
            slots: tokio::sync::Semaphore::new(MAX_PASSES_AT_ONCE),
            lasting: Lasting::default(),
            holder: lease::holder(),
        })
    }

    /// What the engine lends a pass.
    fn tools(&self) -> Tools<'_> {
        Tools::new(&self.pool, &self.settings, &self.lasting)
    }

    /// Database work on the engine's own thread. The engine acts for no user, so there is no
    /// token to check (`AuthUser::run` is for requests).
    pub(super) async fn db<T, E, F>(&self, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
        F: FnOnce(&mut rusqlite::Connection) -> Result<T, E> + Send + 'static,
    {
        self.tools().db(work).await
    }

    /// Database work on the engine's own thread that answers in a plain rusqlite result.
    pub(super) async fn sql<T, F>(&self, work: F) -> Result<T, DbError>
    where
        T: Send + 'static,
        F: FnOnce(&mut rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        self.tools().sql(work).await
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The run id of the pass under way for a connection, if any.
    pub fn running(&self, connection_id: i64) -> Option<i64> {
        self.running.lock().ok().and_then(|r| r.get(&connection_id).copied())
    }

    /// Starts a pass of a connection in the background, or names the one under way.
    pub async fn start(
        self: &Arc<Self>,
        connection_id: i64,
        trigger: Trigger,
    ) -> Result<Started, EngineError> {
        let run_id = match self.begin(connection_id, trigger).await? {
            Started::New(id) => id,
            already => return Ok(already),
        };
        let engine = Arc::clone(self);
        tokio::spawn(async move {
            engine.finish_pass(connection_id, run_id).await;
        });
        Ok(Started::New(run_id))
    }

    /// Runs a pass of a connection in the foreground (the `sync` command), unless one is
    /// already under way in this process. Returns the finished run.
    pub async fn run_now(self: &Arc<Self>, connection_id: i64, trigger: Trigger) -> Result<Run, EngineError> {
        let run_id = match self.begin(connection_id, trigger).await? {
            Started::New(id) => id,
            // In this process, the `sync` command runs one pass at a time: this is another's.
            Started::AlreadyRunning(id) => return Err(EngineError::Busy(connection_id, id)),
        };
        self.finish_pass(connection_id, run_id).await;
        let found = self.sql(move |conn| runs::find(conn, run_id)).await?;
        found.ok_or(EngineError::Db(DbError::Failed(format!("run {run_id} vanished"))))
    }

    async fn begin(&self, connection_id: i64, trigger: Trigger) -> Result<Started, EngineError> {
        let _one_at_a_time = self.starting.lock().await;
        if let Some(id) = self.running(connection_id) {
            return Ok(Started::AlreadyRunning(id));
        }
        let holder = self.holder.clone();
        let taken = self.sql(move |conn| lease::take(conn, connection_id, &holder, trigger)).await?;
        let run_id = match taken {
            lease::Taken::Run(id) => id,
            lease::Taken::HeldBy(id) => return Ok(Started::AlreadyRunning(id)),
        };
        if let Ok(mut running) = self.running.lock() {
            running.insert(connection_id, run_id);
        }
        Ok(Started::New(run_id))
    }

    /// Runs the pass of `run_id`, frees the connection, then records the outcome.
    async fn finish_pass(self: &Arc<Self>, connection_id: i64, run_id: i64) {
        struct Release<'a>(&'a Engine, i64);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                if let Ok(mut running) = self.0.running.lock() {
                    running.remove(&self.1);
                }
            }
        }
        let release = Release(self, connection_id);
        let _slot = self.slots.acquire().await;
        // A pass that stops on a bug still ends its run: it is never left `running`. A pass
        // whose lease another process took over stops at once: that process may run it now.
        let pass =
            std::panic::AssertUnwindSafe(pass::run(self.tools(), connection_id, run_id)).catch_unwind();
        let outcome = tokio::select! {
            outcome = pass => Some(outcome),
            () = self.keep_lease(connection_id) => None,
        };
        // The connection is free before its run reads as finished: whoever sees the run
        // finished and asks for a pass gets a new one, never this one named as still running.
        // The lease goes with the run's end, and only this run's (a new pass may hold it).
        drop(release);
        let holder = self.holder.clone();
        let recorded = self
            .db(move |conn| {
                match &outcome {
                    Some(Ok(outcome)) => runs::finish(conn, run_id, outcome)?,
                    Some(Err(_)) => runs::close_broken(conn, run_id)?,
                    None => runs::close_lost(conn, run_id)?,
                }
                lease::release(conn, connection_id, &holder, run_id)?;
                Ok::<_, EngineError>(())
            })
            .await;
        if let Err(e) = recorded {
            log::error!("sync: could not record the end of run {run_id}: {e}");
        }
    }

    /// Renews the lease of a connection's pass while it runs; returns once the lease is no
    /// longer this engine's (another process took it over), which stops the pass.
    async fn keep_lease(&self, connection_id: i64) {
        loop {
            tokio::time::sleep(lease::RENEW).await;
            let holder = self.holder.clone();
            let renewed =
                self.db(move |conn| Ok::<_, EngineError>(lease::renew(conn, connection_id, &holder)?)).await;
            match renewed {
                Ok(true) => {}
                Ok(false) => {
                    log::error!(
                        "sync: connection {connection_id}: the pass's lease was taken over; the pass stops"
                    );
                    return;
                }
                Err(e) => {
                    log::error!("sync: connection {connection_id}: could not renew the pass's lease: {e}")
                }
            }
        }
    }
}
