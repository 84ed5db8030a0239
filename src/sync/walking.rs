//! A walk of a store's orders under way ([`super::walks`]), and the walks passes left
//! unfinished, kept in memory for each store's next pass while their continuation is young
//! enough. Its own module, so the context that carries them needs no step.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a stopped walk's continuation is used: Amazon's tokens live 24 hours.
const CONTINUATION_LIFETIME: Duration = Duration::from_secs(23 * 3600);

/// A walk under way.
#[derive(Debug, Clone)]
pub(super) struct Walking {
    /// The continuation of the page not yet read.
    pub(super) next: Option<String>,
    /// The store's clock at the walk's first answer.
    pub(super) clock: Option<i64>,
    /// The latest change read so far.
    pub(super) reached: Option<i64>,
    /// When the pass that began the walk started.
    pub(super) started: i64,
    /// Whether it goes on from an earlier pass.
    pub(super) resumed: bool,
}

impl Walking {
    pub(super) fn fresh(started: i64) -> Walking {
        Walking { next: None, clock: None, reached: None, started, resumed: false }
    }

    /// The cursor the walk leaves when it ends, if it moves: the latest change read, capped
    /// at the store's clock; a first pull that read nothing starts from that clock.
    pub(super) fn end_cursor(&self, cursor: Option<i64>) -> Option<i64> {
        match (self.reached, cursor) {
            (Some(reached), _) => Some(self.clock.map_or(reached, |clock| reached.min(clock))),
            (None, None) => self.clock,
            (None, Some(_)) => None,
        }
    }
}

/// A walk that stopped short (its continuation set), kept for the store's next pass.
#[derive(Debug, Clone)]
struct SavedWalk {
    walk: Walking,
    saved: Instant,
}

/// Store id → the walk of its orders a pass left unfinished.
#[derive(Debug, Default)]
pub(crate) struct Unfinished(Mutex<HashMap<i64, SavedWalk>>);

impl Unfinished {
    /// The walk of a store's orders an earlier pass left unfinished, taken, while its
    /// continuation is young enough to use.
    pub(super) fn take(&self, store_id: i64) -> Option<Walking> {
        let saved = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(&store_id);
        saved.filter(|w| w.saved.elapsed() < CONTINUATION_LIFETIME).map(|w| w.walk)
    }

    /// Keeps a walk that stopped after at least one page for the store's next pass.
    pub(super) fn keep(&self, store_id: i64, walk: Walking) {
        if walk.next.is_some() {
            let saved = SavedWalk { walk, saved: Instant::now() };
            self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(store_id, saved);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_ends_at_the_latest_change_but_never_past_the_clock_of_its_first_answer() {
        let walk = |reached, clock| Walking { reached, clock, ..Walking::fresh(0) };
        assert_eq!(walk(Some(500), Some(900)).end_cursor(Some(100)), Some(500));
        assert_eq!(walk(Some(950), Some(900)).end_cursor(Some(100)), Some(900));
        assert_eq!(walk(Some(950), None).end_cursor(None), Some(950));
        // A first pull that read nothing starts from the store's clock; a later one stays.
        assert_eq!(walk(None, Some(900)).end_cursor(None), Some(900));
        assert_eq!(walk(None, Some(900)).end_cursor(Some(100)), None);
    }
}
