//! What every simulator shares: its state behind one mutex, the loopback server that answers
//! with it, the handle its owner (a test, the demo, a benchmark's child) changes and reads it
//! through, and the fault queue its controls fill. A platform's module is then its platform's
//! behaviour and nothing else: `pub type Simulator = super::Simulator<State>` and an `impl`
//! on it for its controls.

use std::collections::VecDeque;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use super::http::{self, Request, Response};

/// A running simulator; dropping it stops it. Its methods are its [`Handle`]'s.
pub struct Simulator<S> {
    handle: Handle<S>,
    server: http::Server,
}

/// What a simulator's owner uses to change and read its state; cheap to clone, and inert
/// once the simulator stopped.
pub struct Handle<S> {
    state: Arc<Mutex<S>>,
}

impl<S> Clone for Handle<S> {
    fn clone(&self) -> Self {
        Handle { state: Arc::clone(&self.state) }
    }
}

impl<S> std::ops::Deref for Simulator<S> {
    type Target = Handle<S>;

    fn deref(&self) -> &Handle<S> {
        &self.handle
    }
}

impl<S: Send + 'static> Simulator<S> {
    /// Serves `answer` on a loopback port over `state`; `platform` names it if no port can
    /// be bound.
    pub(super) async fn serve<A, F>(state: S, platform: &str, answer: A) -> Simulator<S>
    where
        A: Fn(Arc<Mutex<S>>, Request) -> F + Send + Sync + 'static,
        F: Future<Output = Response> + Send + 'static,
    {
        let state = Arc::new(Mutex::new(state));
        let shared = Arc::clone(&state);
        let server = http::serve(move |request| answer(Arc::clone(&shared), request))
            .await
            .unwrap_or_else(|e| panic!("bind a loopback port for the {platform} simulator: {e}"));
        Simulator { handle: Handle { state }, server }
    }
}

impl<S> Simulator<S> {
    /// `http://127.0.0.1:PORT`.
    pub(super) fn origin(&self) -> String {
        format!("http://{}", self.server.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.server.addr
    }

    pub fn handle(&self) -> Handle<S> {
        self.handle.clone()
    }
}

impl<S> Handle<S> {
    /// The state; a panic that poisoned the lock left it usable (a simulator keeps serving).
    pub(super) fn lock(&self) -> MutexGuard<'_, S> {
        lock(&self.state)
    }
}

pub(super) fn lock<S>(state: &Mutex<S>) -> MutexGuard<'_, S> {
    state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Faults for the next requests, in order, each for the requests a key picks (a path
/// fragment, an operation's name; empty: any request). The first fault is due only when its
/// key fits the request, so faults for one operation do not fire on another.
#[derive(Debug, Clone)]
pub(super) struct Faults<F>(VecDeque<(String, F)>);

impl<F> Default for Faults<F> {
    fn default() -> Self {
        Faults(VecDeque::new())
    }
}

impl<F: Clone> Faults<F> {
    /// `fault` for the next `count` requests `key` picks, replacing the faults set before.
    pub(super) fn set(&mut self, key: &str, fault: F, count: usize) {
        self.0 = std::iter::repeat_n((key.to_string(), fault), count).collect();
    }

    /// As [`Faults::set`], after the faults already set.
    pub(super) fn add(&mut self, key: &str, fault: F, count: usize) {
        self.0.extend(std::iter::repeat_n((key.to_string(), fault), count));
    }

    /// Drops every fault not yet met.
    pub(super) fn clear(&mut self) {
        self.0.clear();
    }

    /// The first fault, taken if `fits` its key.
    pub(super) fn take(&mut self, fits: impl FnOnce(&str) -> bool) -> Option<F> {
        let due = self.0.front().is_some_and(|(key, _)| fits(key));
        due.then(|| self.0.pop_front().map(|(_, fault)| fault)).flatten()
    }
}
