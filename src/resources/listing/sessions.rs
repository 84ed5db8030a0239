//! Listing sessions (CONTRACT §7): in memory, each owned by the user that opened it, idle
//! for at most `session_ttl_secs`, capped at `max_sessions`, swept by a timer that starts at
//! liftoff and stops at shutdown.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use dashmap::DashMap;
use rocket::fairing::AdHoc;
use rocket::tokio::sync::{Mutex, OwnedMutexGuard};

use super::{Cursor, Plan};
use crate::dates::now_ms;
use crate::http::error::ApiError;
use crate::http::users::random_token;

/// Where a session stands: the last row it returned and the page number it answered.
#[derive(Debug, Default)]
pub struct Position {
    pub cursor: Option<Cursor>,
    pub page: i64,
}

pub struct Session {
    pub user_id: i64,
    pub plan: Plan,
    expires_at: AtomicI64,
    /// Held while a page is read, so concurrent requests of one session get successive pages.
    /// An async lock: a request waits for the one before it in its own task, never in a
    /// database thread (a sleeping database thread is a core's worth of work not done).
    position: Arc<Mutex<Position>>,
}

/// A session and its position, held by one request at a time (`Sessions::lock`).
pub struct Held {
    pub session: Arc<Session>,
    pub position: OwnedMutexGuard<Position>,
}

/// The live sessions; cheap to clone (shared).
#[derive(Clone)]
pub struct Sessions {
    map: Arc<DashMap<String, Arc<Session>>>,
    ttl_ms: i64,
    max: usize,
}

impl Sessions {
    pub fn new(ttl_secs: u64, max: usize) -> Self {
        Sessions { map: Arc::new(DashMap::new()), ttl_ms: (ttl_secs as i64).saturating_mul(1000), max }
    }

    /// 429 when the cap is reached even after dropping expired sessions.
    pub fn ensure_room(&self) -> Result<(), ApiError> {
        if self.map.len() >= self.max {
            self.sweep();
            if self.map.len() >= self.max {
                return Err(ApiError::TooManySessions);
            }
        }
        Ok(())
    }

    /// Registers a session and returns its id (192 random bits).
    pub fn open(&self, user_id: i64, plan: Plan, position: Position) -> Result<String, ApiError> {
        self.ensure_room()?;
        let id = random_token(24);
        let session = Session {
            user_id,
            plan,
            expires_at: AtomicI64::new(now_ms() + self.ttl_ms),
            position: Arc::new(Mutex::new(position)),
        };
        self.map.insert(id.clone(), Arc::new(session));
        Ok(id)
    }

    /// Waits until no other request is reading a page of session `id` of `user_id`, and holds
    /// its position until the answer is dropped. Only a wait: whether the request may use the
    /// session is `resume`'s answer, once the token has been checked.
    pub async fn lock(&self, id: &str, user_id: i64) -> Option<Held> {
        let session = self.map.get(id).map(|s| Arc::clone(s.value())).filter(|s| s.user_id == user_id)?;
        let position = Arc::clone(&session.position).lock_owned().await;
        Some(Held { session, position })
    }

    /// The session `lock` found for `id`, if `user_id` may go on listing `resource` with it;
    /// its timeout refreshed. Unknown, expired, another user's or another resource's: 404
    /// `session_not_found`.
    pub fn resume(
        &self,
        id: &str,
        held: Option<Held>,
        user_id: i64,
        resource: &str,
    ) -> Result<Held, ApiError> {
        let now = now_ms();
        let held = held.ok_or(ApiError::SessionNotFound)?;
        let session = &held.session;
        if session.expires_at.load(Ordering::Relaxed) <= now {
            self.map.remove_if(id, |_, s| s.expires_at.load(Ordering::Relaxed) <= now);
            return Err(ApiError::SessionNotFound);
        }
        if session.user_id != user_id || session.plan.resource.key != resource {
            return Err(ApiError::SessionNotFound);
        }
        session.expires_at.store(now + self.ttl_ms, Ordering::Relaxed);
        Ok(held)
    }

    /// Drops expired sessions.
    pub fn sweep(&self) {
        let now = now_ms();
        self.map.retain(|_, s| s.expires_at.load(Ordering::Relaxed) > now);
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Starts the sweeper at liftoff; it ends when the server shuts down.
    pub fn sweeper() -> AdHoc {
        AdHoc::on_liftoff("listing session sweeper", |rocket| {
            Box::pin(async move {
                let Some(sessions) = rocket.state::<Sessions>().cloned() else { return };
                let period = Duration::from_millis((sessions.ttl_ms / 2).clamp(100, 5000) as u64);
                let mut shutdown = rocket.shutdown();
                rocket::tokio::spawn(async move {
                    let mut tick = rocket::tokio::time::interval(period);
                    loop {
                        rocket::tokio::select! {
                            _ = tick.tick() => sessions.sweep(),
                            _ = &mut shutdown => break,
                        }
                    }
                });
            })
        })
    }
}
