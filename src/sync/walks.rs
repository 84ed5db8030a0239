//! Step 1 for a store whose list comes in no documented order, each page naming the next
//! ([`Walk::Resumable`]: Amazon's `searchOrders`). Each page's orders are written as soon as
//! it is read; the cursor moves only when the walk ends, in the transaction of its last
//! page, to the latest change read but never past the store's clock when the walk's first
//! page was answered, and never back. A walk that stops short (the platform's rate limit,
//! which orderbridge paces itself, or a failure) is kept in memory with its continuation and
//! the next pass of the store goes on from there while the continuation is young enough;
//! a continuation the store no longer takes (400) starts the walk again from the cursor, once.

use crate::platforms::PlatformError;
use crate::platforms::store::Listing;

use super::context::Context;
use super::pages::{Reading, imported, write_listed};
use super::step::StepError;
use super::walking::Walking;

/// A walk reads at most this many pages in one pass; the next pass goes on.
const MAX_PAGES: u32 = 10_000;

/// Reads the store's changed orders, going on with a walk an earlier pass left, or from
/// `since` (the cursor less the overlap).
pub(super) async fn pull(
    ctx: &Context<'_>,
    read: &Reading<'_>,
    since: Option<i64>,
    started: i64,
    pulled: &mut u64,
) -> Result<(), StepError> {
    let store_id = read.store_id;
    let mut walk = match ctx.walks().take(store_id) {
        Some(saved) => Walking { resumed: true, ..saved },
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
                ctx.walks().keep(store_id, walk);
                // Paced out: the walk goes on at a later pass, and this one goes on without it.
                return if matches!(e, PlatformError::NotYet(_)) { Ok(()) } else { Err(e.into()) };
            }
        };
        walk.clock = walk.clock.or(page.clock);
        walk.reached = walk.reached.max(page.orders.iter().map(|o| o.cursor_ms).max());
        let last = page.next.is_none();
        let commit = if last { walk.end_cursor(read.cursor) } else { None };
        write_listed(ctx, read, page.orders, commit, pulled).await?;
        if last {
            return imported(ctx, walk.started).await;
        }
        walk.next = page.next;
        walk.resumed = false;
    }
    ctx.walks().keep(store_id, walk);
    Ok(())
}
