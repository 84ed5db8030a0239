//! Step 1 for a store whose list comes in no documented order, each page naming the next
//! ([`Walk::Resumable`]: Amazon's `searchOrders`). Each page's orders are written as soon as
//! it is read, with the walk as it stands after the page ([`super::walking`]), so a walk that
//! stops short (the platform's rate limit, which orderbridge paces itself, a failure, a
//! killed process) is continued by the store's next pass, in whichever process runs it,
//! while the store says its continuation is young enough; a continuation the store no
//! longer takes starts the walk again from the cursor, once. The cursor moves only when the
//! walk ends, in the transaction of its last page (which forgets the walk), to the latest
//! change read but never past the store's clock when the walk's first page was answered,
//! and never back.
//!
//! [`Walk::Resumable`]: crate::platforms::store::Walk::Resumable

use crate::dates::now_ms;
use crate::platforms::PlatformError;
use crate::platforms::store::Listing;

use super::context::Context;
use super::pages::{Reading, imported, write_listed};
use super::step::StepError;
use super::walking::{self, Keep, Walking};

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
    let kept = ctx.sql(move |conn| walking::kept(conn, store_id, now_ms())).await?;
    let mut walk = match kept {
        Some((saved, age)) if read.store.continuation_usable(age) => Walking { resumed: true, ..saved },
        _ => Walking::fresh(started),
    };
    let mut restarted = false;
    for _ in 0..MAX_PAGES {
        let page = match read.store.orders_after(Listing::Orders, since, walk.next.clone()).await {
            Ok(page) => page,
            Err(e) if walk.resumed && !restarted && read.store.continuation_refused(&e) => {
                // The store no longer takes the continuation: once more, from the cursor.
                restarted = true;
                walk = Walking::fresh(started);
                ctx.sql(move |conn| walking::forget(conn, store_id)).await?;
                continue;
            }
            // Paced out: the walk, kept with its last page, goes on at a later pass, and this
            // pass goes on without it.
            Err(PlatformError::NotYet(_)) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        walk.clock = walk.clock.or(page.clock);
        walk.reached = walk.reached.max(page.orders.iter().map(|o| o.cursor_ms).max());
        walk.next = page.next;
        walk.resumed = false;
        let last = walk.next.is_none();
        let commit = if last { walk.end_cursor(read.cursor) } else { None };
        let keep = if last { Keep::Forget } else { Keep::Walk(walk.clone()) };
        write_listed(ctx, read, page.orders, commit, keep, pulled).await?;
        if last {
            return imported(ctx, walk.started).await;
        }
    }
    Ok(())
}
