//! Step 1, pull orders: the store's orders changed since its cursor become orders of that
//! store, keyed by (`store_id`, `external_id`) exactly as an import. Each page commits its
//! orders together with the cursor that covers them, so a crash loses nothing and the
//! overlap re-read after it doubles nothing.

use rusqlite::{Connection, OptionalExtension};

use crate::dates::now_ms;
use crate::db;
use crate::platforms::store::{ListedOrder, Listing, StoreClient, Walk};

use super::context::Context;
use super::pages::{Reading, imported, save_cursor, write_listed};
use super::step::StepError;
use super::walking::Keep;

/// A pull reads at most this many pages; the next pass goes on from the cursor.
const MAX_PAGES: u32 = 10_000;

/// Pulls every page of changed orders; `pulled` counts the orders written as they commit.
pub async fn pull(ctx: &Context<'_>, store: &dyn StoreClient, pulled: &mut u64) -> Result<(), StepError> {
    let started = now_ms();
    let store_id = ctx.link.store_id;
    let cursor: Option<i64> = ctx.sql(move |conn| read_cursor(conn, store_id)).await?;
    let plan = store.pull_plan();
    let overlap = i64::try_from(plan.overlap.as_millis()).unwrap_or(i64::MAX);
    let since = cursor.map(|c| c.saturating_sub(overlap));
    if plan.walk == Walk::Resumable {
        let read = Reading { store, plan: &plan, store_id, listing: Listing::Orders, cursor };
        return super::walks::pull(ctx, &read, since, started, pulled).await;
    }
    for &listing in plan.listings {
        let read = Reading { store, plan: &plan, store_id, listing, cursor };
        let reached = pull_listing(ctx, &read, since, pulled).await?;
        // A list in no known order moves the cursor once it was read whole; so does the first
        // pull of a store that reads only what is left to import, to the store's clock.
        let clock = store.first_pull_clock().filter(|_| cursor.is_none() && listing == Listing::Orders);
        let reached = reached.filter(|_| plan.walk == Walk::ByNumber).max(clock);
        if let Some(reached) = reached {
            ctx.sql(move |conn| {
                let tx = db::write_unlisted(conn)?;
                save_cursor(&tx, store_id, reached)?;
                tx.commit()?;
                Ok(())
            })
            .await?;
        }
    }
    imported(ctx, started).await
}

/// Where the next page of a listing starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Position {
    since: Option<i64>,
    page: u32,
}

impl Position {
    /// The page after one that was read whole: by key, again from the latest time read
    /// (page 1), unless every order on it carries the time asked from, which asking again
    /// would only repeat; by number, the next page.
    fn after(self, walk: Walk, listed: &[ListedOrder]) -> Position {
        let by_number = Position { since: self.since, page: self.page + 1 };
        let Some(latest) = listed.iter().map(|o| o.cursor_ms).max() else { return by_number };
        if walk == Walk::ByNumber {
            return by_number;
        }
        let all_at_latest = listed.iter().all(|o| o.cursor_ms == latest);
        match (all_at_latest, self.since == Some(latest)) {
            (false, _) => Position { since: Some(latest), page: 1 },
            (true, true) => by_number,
            // The page asked from `latest` would be this one again.
            (true, false) => Position { since: Some(latest), page: 2 },
        }
    }
}

/// Reads one listing page by page, writing each page's orders as it goes; returns the
/// latest cursor time it saw beyond `cursor` (committed already when the list is walked by
/// key or by token, oldest change first).
async fn pull_listing(
    ctx: &Context<'_>,
    read: &Reading<'_>,
    since: Option<i64>,
    pulled: &mut u64,
) -> Result<Option<i64>, StepError> {
    let Reading { store, plan, listing, cursor, .. } = *read;
    let mut reached: Option<i64> = None;
    let mut at = Position { since, page: 1 };
    let mut token: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let (listed, last) = if plan.walk == Walk::ByToken {
            let page = store.orders_after(listing, since, token.take()).await?;
            token = page.next;
            let last = token.is_none();
            (page.orders, last)
        } else {
            let listed = store.orders_page(listing, at.since, at.page).await?;
            let last = listed.len() < plan.page_size;
            (listed, last)
        };
        if listed.is_empty() {
            break;
        }
        // Cancellations never move the cursor: they are read over the same span again.
        let page_cursor = listed
            .iter()
            .map(|o| o.cursor_ms)
            .max()
            .filter(|c| listing == Listing::Orders && cursor.is_none_or(|held| *c > held));
        reached = reached.max(page_cursor);
        let commit_cursor = page_cursor.filter(|_| plan.walk != Walk::ByNumber);
        let next = at.after(plan.walk, &listed);
        write_listed(ctx, read, listed, commit_cursor, Keep::Nothing, pulled).await?;
        if last {
            break;
        }
        at = next;
    }
    Ok(reached)
}

pub fn read_cursor(conn: &Connection, store_id: i64) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached("SELECT cursor FROM store_cursors WHERE store_id = ?1")?
        .query_row([store_id], |r| r.get(0))
        .optional()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::store::Disposition;
    use serde_json::Value;

    fn listed(times: &[i64]) -> Vec<ListedOrder> {
        times
            .iter()
            .enumerate()
            .map(|(i, &t)| ListedOrder {
                external_id: i.to_string(),
                cursor_ms: t,
                version: t,
                disposition: Disposition::Import,
                raw: Value::Null,
            })
            .collect()
    }

    #[test]
    fn a_page_walked_by_key_asks_again_from_the_latest_time_read() {
        let at = Position { since: Some(100), page: 1 };
        assert_eq!(at.after(Walk::ByKey, &listed(&[100, 200, 300])), Position { since: Some(300), page: 1 });
    }

    #[test]
    fn a_page_all_at_one_time_moves_on_by_number() {
        let at = Position { since: Some(300), page: 1 };
        assert_eq!(at.after(Walk::ByKey, &listed(&[300, 300])), Position { since: Some(300), page: 2 });
        let at = Position { since: Some(300), page: 2 };
        assert_eq!(at.after(Walk::ByKey, &listed(&[300, 300])), Position { since: Some(300), page: 3 });
        // All at a later time: asked from it, page 1 would be this page again.
        let at = Position { since: Some(100), page: 1 };
        assert_eq!(at.after(Walk::ByKey, &listed(&[400, 400])), Position { since: Some(400), page: 2 });
    }

    #[test]
    fn a_list_in_no_order_is_walked_by_number() {
        let at = Position { since: Some(100), page: 4 };
        assert_eq!(at.after(Walk::ByNumber, &listed(&[100, 900])), Position { since: Some(100), page: 5 });
    }
}
