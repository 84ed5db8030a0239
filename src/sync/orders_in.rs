//! Step 1, pull orders: the store's orders changed since its cursor become orders of that
//! store, keyed by (`store_id`, `external_id`) exactly as an import. One loop reads every
//! store: the store hands out pages, each naming the next and the cursor it moves to, and
//! each page commits its orders together with that cursor (and, for a walk kept between
//! passes, the walk as it stands after it), so a crash loses nothing and the overlap re-read
//! after it doubles nothing.
//!
//! A walk kept between passes ([`PullPlan::continuation_lifetime`]: Amazon's `searchOrders`)
//! that stops short (the platform's rate limit, which orderbridge paces itself, a failure, a
//! killed process) is continued by the store's next pass, in whichever process runs it,
//! while its continuation is young enough; a continuation the store no longer takes starts
//! the walk again from the cursor, once.

use std::collections::HashSet;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension};

use crate::dates::now_ms;
use crate::platforms::PlatformError;
use crate::platforms::store::{Ask, Listing, StoreClient};

use super::context::Context;
use super::pages::{Reading, imported, write_listed};
use super::problems::ProblemKind;
use super::runs::Step;
use super::step::StepError;
use super::walking::{self, Keep, Walking};

/// A walk reads at most this many pages in one pass; the next pass goes on from the cursor
/// (or the kept walk).
const MAX_PAGES: u32 = 10_000;

/// Pulls every page of changed orders; `pulled` counts the orders written as they commit.
pub async fn pull(ctx: &Context<'_>, store: &dyn StoreClient, pulled: &mut u64) -> Result<(), StepError> {
    let started = now_ms();
    let store_id = ctx.link.store_id;
    let cursor: Option<i64> = ctx.sql(move |conn| read_cursor(conn, store_id)).await?;
    let plan = store.pull_plan();
    let overlap = i64::try_from(plan.overlap.as_millis()).unwrap_or(i64::MAX);
    let since = cursor.map(|c| c.saturating_sub(overlap));
    // Everything changed since the earliest start of a walk read to its end is imported;
    // nothing is said while a walk is kept for a later pass.
    let mut read_from = Some(started);
    for &listing in plan.listings {
        let read = Reading { store, plan: &plan, store_id, listing, cursor };
        let walked = walk(ctx, &read, since, started, pulled).await?;
        read_from = read_from.zip(walked).map(|(earliest, walk_start)| earliest.min(walk_start));
    }
    match read_from {
        Some(at) => imported(ctx, at).await,
        None => Ok(()),
    }
}

/// Reads one listing page by page, writing each page's orders as it goes; answers when the
/// pass that began the walk started, or `None` when the walk stopped short and is kept for a
/// later pass.
async fn walk(
    ctx: &Context<'_>,
    read: &Reading<'_>,
    since: Option<i64>,
    started: i64,
    pulled: &mut u64,
) -> Result<Option<i64>, StepError> {
    let Reading { store, store_id, listing, cursor, .. } = *read;
    let lifetime = read.plan.continuation_lifetime.filter(|_| listing == Listing::Orders);
    let keeps = lifetime.is_some();
    let kept = match lifetime {
        Some(lifetime) => kept_walk(ctx, store_id, lifetime).await?,
        None => None,
    };
    let (mut walk, mut resumed) = match kept {
        Some(walk) => (walk, true),
        None => (Walking::fresh(started), false),
    };
    // What the store's pages left out, named once however often a page is read.
    let mut named = HashSet::new();
    for _ in 0..MAX_PAGES {
        let page = match store.page(Ask { listing, since_ms: since, at: walk.next.as_deref() }).await {
            Ok(page) => page,
            Err(e) if resumed && store.continuation_refused(&e) => {
                // The store no longer takes the continuation: once more, from the cursor.
                resumed = false;
                walk = Walking::fresh(started);
                ctx.sql(move |conn| walking::forget(conn, store_id)).await?;
                continue;
            }
            // Paced out: the walk, kept with its last page, goes on at a later pass (or, not
            // kept, starts again there from the cursor: eBay's), and this pass goes on
            // without it.
            Err(PlatformError::NotYet(_)) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        resumed = false;
        for (reference, message) in page.remarks {
            if named.insert(reference.clone()) {
                ctx.note(Step::PullOrders, ProblemKind::Order, reference, message).await?;
            }
        }
        walk.next = page.next;
        let last = walk.next.is_none() || (page.orders.is_empty() && !keeps);
        // Cancellations never move the cursor: they are read over the same span again.
        let moved = page.cursor.filter(|c| listing == Listing::Orders && cursor.is_none_or(|held| *c > held));
        let keep = match (keeps, last) {
            (false, _) => Keep::Nothing,
            (true, false) => Keep::Walk(walk.clone()),
            (true, true) => Keep::Forget,
        };
        write_listed(ctx, read, page.orders, moved, keep, pulled).await?;
        if last {
            return Ok(Some(walk.started));
        }
    }
    Ok((!keeps).then_some(started))
}

/// The walk an earlier pass left, if its continuation is still usable.
async fn kept_walk(
    ctx: &Context<'_>,
    store_id: i64,
    lifetime: Duration,
) -> Result<Option<Walking>, StepError> {
    let kept = ctx.sql(move |conn| walking::kept(conn, store_id, now_ms())).await?;
    Ok(kept.filter(|(_, age)| *age < lifetime).map(|(walk, _)| walk))
}

pub fn read_cursor(conn: &Connection, store_id: i64) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached("SELECT cursor FROM store_cursors WHERE store_id = ?1")?
        .query_row([store_id], |r| r.get(0))
        .optional()
}
