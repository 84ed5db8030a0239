//! What a step of a pass is given instead of the engine: the engine's database thread and
//! settings, what outlives a pass (turns on shared things, the warehouse clients' memory),
//! the connection the pass drives and the run that records it.
//! A leaf: the engine builds these and the steps use them, so neither imports the other.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::db::{self, DbError, Pool};
use crate::platforms::registry;
use crate::platforms::warehouse::Memory;

use super::link::Link;
use super::problems::ProblemKind;
use super::runs::Step;
use super::settings::Settings;
use super::step::{StepError, note};

/// What the passes of different connections share and take turns on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Shared {
    /// A warehouse's files.
    Warehouse,
    /// A store's notifications.
    Store,
}

/// The lock of one shared thing; held across awaits, so tokio's.
type TurnLock = tokio::sync::Mutex<()>;

/// What outlives a pass: the engine keeps it, and lends it to each.
#[derive(Default)]
pub(crate) struct Lasting {
    /// The locks passes of different connections take turns on: a warehouse's files (two
    /// connections to one warehouse never read and move them at once) and a store's
    /// notifications (every connection of a store reports its shipments, one at a time).
    holds: Mutex<HashMap<(Shared, i64), Arc<TurnLock>>>,
    /// What the warehouse clients keep across passes (what earlier passes saw of the
    /// warehouses' files: CONTRACT §11, files still being written).
    memory: Memory,
}

/// What the engine lends a pass: its database thread, its settings, and what outlives passes.
#[derive(Clone, Copy)]
pub(crate) struct Tools<'a> {
    pool: &'a Pool,
    settings: &'a Settings,
    lasting: &'a Lasting,
}

impl<'a> Tools<'a> {
    pub(super) fn new(pool: &'a Pool, settings: &'a Settings, lasting: &'a Lasting) -> Tools<'a> {
        Tools { pool, settings, lasting }
    }

    /// Database work on the engine's own thread. The engine acts for no user, so there is no
    /// token to check (`AuthUser::run` is for requests).
    pub(super) async fn db<T, E, F>(&self, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
        F: FnOnce(&mut rusqlite::Connection) -> Result<T, E> + Send + 'static,
    {
        #[expect(clippy::disallowed_methods, reason = "background work on behalf of no user")]
        db::run(self.pool, work).await
    }

    /// Database work on the engine's thread that answers in a plain rusqlite result.
    pub(super) async fn sql<T, F>(&self, work: F) -> Result<T, DbError>
    where
        T: Send + 'static,
        F: FnOnce(&mut rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        self.db(move |conn| work(conn).map_err(DbError::from)).await
    }
}

/// What a step needs: the engine's tools, the connection it works for and its run.
pub(crate) struct Context<'a> {
    tools: Tools<'a>,
    pub(super) link: &'a Link,
    pub(super) run_id: i64,
}

impl<'a> Context<'a> {
    pub(super) fn new(tools: Tools<'a>, link: &'a Link, run_id: i64) -> Context<'a> {
        Context { tools, link, run_id }
    }

    /// Database work on the engine's thread, for work that answers in its own error.
    pub(super) async fn db<T, E, F>(&self, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
        F: FnOnce(&mut rusqlite::Connection) -> Result<T, E> + Send + 'static,
    {
        self.tools.db(work).await
    }

    /// Database work on the engine's thread whose failure is the step's.
    pub(super) async fn sql<T, F>(&self, work: F) -> Result<T, StepError>
    where
        T: Send + 'static,
        F: FnOnce(&mut rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        Ok(self.tools.sql(work).await?)
    }

    /// Records in the run what the step could not do for one item while it went on.
    pub(super) async fn note(
        &self,
        step: Step,
        kind: ProblemKind,
        reference: String,
        message: String,
    ) -> Result<(), StepError> {
        let run_id = self.run_id;
        self.sql(move |conn| note(conn, run_id, step, kind, &reference, &message)).await
    }

    /// The engine's database, for a platform's own records kept there (its document numbers).
    pub(super) fn pool(&self) -> &'a Pool {
        self.tools.pool
    }

    pub(super) fn settings(&self) -> &'a Settings {
        self.tools.settings
    }

    /// What the warehouse clients keep across passes.
    pub(super) fn memory(&self) -> &'a Memory {
        &self.tools.lasting.memory
    }

    /// The store's platform as its users know it ("The store" for one not registered).
    pub(super) fn store_name(&self) -> &'static str {
        registry::store(&self.link.store_platform).map_or("The store", |p| p.name)
    }

    /// The warehouse's platform as its users know it.
    pub(super) fn warehouse_name(&self) -> &'static str {
        registry::warehouse(&self.link.warehouse_platform).map_or("The warehouse", |p| p.name)
    }

    /// Waits until no other pass uses what is shared, then holds it.
    pub(super) async fn hold(&self, what: Shared, id: i64) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = {
            let mut locks = self.tools.lasting.holds.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            Arc::clone(locks.entry((what, id)).or_default())
        };
        lock.lock_owned().await
    }
}
