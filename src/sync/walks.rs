//! Step 1 for a store whose list comes in no documented order, each page naming the next
//! ([`Walk::Resumable`]: Amazon's `searchOrders`). Each page's orders are written as soon as
//! it is read; the cursor moves only when the walk ends, in the transaction of its last
//! page, to the latest change read but never past the store's clock when the walk's first
//! page was answered, and never back. A walk that stops short (the platform's rate limit,
//! which orderbridge paces itself, or a failure) is kept in memory with its continuation and
//! the next pass of the store goes on from there while the continuation is young enough;
//! a continuation the store no longer takes (400) starts the walk again from the cursor, once.

use std::time::{Duration, Instant};

use crate::platforms::PlatformError;
use crate::platforms::store::Listing;

use super::Engine;
use super::pages::{Reading, imported, write_listed};
use super::step::StepError;

/// A walk reads at most this many pages in one pass; the next pass goes on.
const MAX_PAGES: u32 = 10_000;

/// How long a stopped walk's continuation is used: Amazon's tokens live 24 hours.
const CONTINUATION_LIFETIME: Duration = Duration::from_secs(23 * 3600);

/// A walk that stopped short (its continuation set), kept for the store's next pass.
#[derive(Debug, Clone)]
pub(crate) struct SavedWalk {
    walk: Walking,
    saved: Instant,
}

/// A walk under way.
#[derive(Debug, Clone)]
struct Walking {
    /// The continuation of the page not yet read.
    next: Option<String>,
    /// The store's clock at the walk's first answer.
    clock: Option<i64>,
    /// The latest change read so far.
    reached: Option<i64>,
    /// When the pass that began the walk started.
    started: i64,
    /// Whether it goes on from an earlier pass.
    resumed: bool,
}

impl Walking {
    fn fresh(started: i64) -> Walking {
        Walking { next: None, clock: None, reached: None, started, resumed: false }
    }

    /// The cursor the walk leaves when it ends, if it moves: the latest change read, capped
    /// at the store's clock; a first pull that read nothing starts from that clock.
    fn end_cursor(&self, cursor: Option<i64>) -> Option<i64> {
        match (self.reached, cursor) {
            (Some(reached), _) => Some(self.clock.map_or(reached, |clock| reached.min(clock))),
            (None, None) => self.clock,
            (None, Some(_)) => None,
        }
    }
}

/// Reads the store's changed orders, going on with a walk an earlier pass left, or from
/// `since` (the cursor less the overlap).
pub(super) async fn pull(
    engine: &Engine,
    read: &Reading<'_>,
    since: Option<i64>,
    started: i64,
    pulled: &mut u64,
) -> Result<(), StepError> {
    let store_id = read.store_id;
    let saved = engine.take_walk(store_id).filter(|w| w.saved.elapsed() < CONTINUATION_LIFETIME);
    let mut walk = match saved {
        Some(saved) => Walking { resumed: true, ..saved.walk },
        None => Walking::fresh(started),
    };
    let mut restarted = false;
    for _ in 0..MAX_PAGES {
        let page = match read.store.orders_after(Listing::Orders, since, walk.next.clone()).await {
            Ok(page) => page,
            Err(PlatformError::Rejected { status: 400, .. }) if walk.resumed && !restarted => {
                // The store no longer takes the continuation: once more, from the cursor.
                restarted = true;
                walk = Walking::fresh(started);
                continue;
            }
            Err(e) => {
                keep(engine, store_id, walk);
                // Paced out: the walk goes on at a later pass, and this one goes on without it.
                return if matches!(e, PlatformError::NotYet(_)) { Ok(()) } else { Err(e.into()) };
            }
        };
        walk.clock = walk.clock.or(page.clock);
        walk.reached = walk.reached.max(page.orders.iter().map(|o| o.cursor_ms).max());
        let last = page.next.is_none();
        let commit = if last { walk.end_cursor(read.cursor) } else { None };
        write_listed(engine, read, page.orders, commit, pulled).await?;
        if last {
            return imported(engine, store_id, walk.started).await;
        }
        walk.next = page.next;
        walk.resumed = false;
    }
    keep(engine, store_id, walk);
    Ok(())
}

/// Keeps a walk that stopped after at least one page for the store's next pass.
fn keep(engine: &Engine, store_id: i64, walk: Walking) {
    if walk.next.is_some() {
        engine.keep_walk(store_id, SavedWalk { walk, saved: Instant::now() });
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
