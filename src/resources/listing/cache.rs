//! What listings remember between requests, each entry valid for the data generation it was
//! made at (`db::write` bumps the generation in every write transaction, from any process):
//! the counts of page mode and session openings, and whole page-mode answers.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, params_from_iter};

use super::Plan;
use crate::http::conditional::Tagged;

/// Both caches, kept in Rocket's state.
#[derive(Clone, Default)]
pub struct Cache {
    pub counts: Counts,
    pub pages: Pages,
}

/// Listing counts already made, each valid for the data generation it was made at
/// (`db::write` bumps the generation in every write transaction, from any process). Counting
/// up to the 10,001 rows of page mode was the largest cost of a first page; a listing asked
/// again over unchanged data reads one row instead.
#[derive(Clone, Default)]
pub struct Counts(std::sync::Arc<dashmap::DashMap<String, (i64, i64)>>);

/// Distinct queries remembered before the cache starts over.
const MAX_CACHED_COUNTS: usize = 4096;

impl Counts {
    /// The number of rows `plan` matches (at most `cap`), from the cache when the data have
    /// not changed since it was counted. `generation` is `db::generation`, read by the caller
    /// before anything it counts or renders: a write landing in between leaves a count of
    /// newer data under the older generation, which the next request counts again.
    pub fn count(
        &self,
        conn: &Connection,
        plan: &Plan,
        generation: i64,
        cap: Option<i64>,
    ) -> rusqlite::Result<i64> {
        let (sql, params) = plan.count_query(cap);
        let key = format!("{sql}\u{1f}{params:?}");
        if let Some(entry) = self.0.get(&key)
            && entry.0 == generation
        {
            return Ok(entry.1);
        }
        let count = conn.prepare_cached(&sql)?.query_row(params_from_iter(params), |r| r.get(0))?;
        if self.0.len() >= MAX_CACHED_COUNTS {
            self.0.clear();
        }
        self.0.insert(key, (generation, count));
        Ok(count)
    }
}

/// Page-mode answers already rendered and tagged. A client polling the first page of its
/// orders, or many clients reading the same page, cost one render per change of the data;
/// the rest is a generation read and a lookup. Bounded by bytes (`PAGES_BUDGET`), oldest
/// first out; the key is the page's plan, whose filter carries the caller's customer, so a
/// page is only ever served to users who may see all of it.
#[derive(Clone)]
pub struct Pages(Arc<Mutex<PageCache>>);

/// Bytes of rendered pages kept at most: ~25 pages of 100 orders.
pub const PAGES_BUDGET: usize = 8 << 20;

#[derive(Default)]
struct PageCache {
    entries: HashMap<String, (i64, Tagged)>,
    /// Keys in the order they were stored (a key stored again is listed again).
    order: VecDeque<String>,
    bytes: usize,
}

impl Default for Pages {
    fn default() -> Self {
        Pages(Arc::new(Mutex::new(PageCache::default())))
    }
}

impl Pages {
    /// The key of page `page` of `plan`.
    pub fn key(plan: &Plan, page: i64) -> String {
        format!(
            "{}\u{1f}{:?}\u{1f}{:?}\u{1f}{}\u{1f}{page}",
            plan.resource.key, plan.filter, plan.sort, plan.limit
        )
    }

    /// The answer stored under `key` at `generation`, if any.
    pub fn get(&self, key: &str, generation: i64) -> Option<Tagged> {
        let cache = self.0.lock().ok()?;
        match cache.entries.get(key) {
            Some((stored, page)) if *stored == generation => Some(page.clone()),
            _ => None,
        }
    }

    /// Stores `page` under `key` for `generation`, making room by dropping the oldest.
    pub fn put(&self, key: String, generation: i64, page: Tagged) {
        if page.len() > PAGES_BUDGET / 4 {
            return;
        }
        let Ok(mut cache) = self.0.lock() else { return };
        let cache = &mut *cache;
        if let Some((_, old)) = cache.entries.remove(&key) {
            cache.bytes -= old.len();
        }
        while cache.bytes + page.len() > PAGES_BUDGET {
            let Some(oldest) = cache.order.pop_front() else { break };
            if let Some((_, old)) = cache.entries.remove(&oldest) {
                cache.bytes -= old.len();
            }
        }
        // Keys of entries already dropped or stored again are left in `order`; keep it short.
        if cache.order.len() > 4 * cache.entries.len() + 64 {
            let entries = &cache.entries;
            cache.order.retain(|k| entries.contains_key(k));
        }
        cache.bytes += page.len();
        cache.order.push_back(key.clone());
        cache.entries.insert(key, (generation, page));
    }

    /// Bytes held now.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.0.lock().map_or(0, |c| c.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(bytes: usize) -> Tagged {
        Tagged::json("x".repeat(bytes))
    }

    #[test]
    fn a_page_is_served_only_at_the_generation_it_was_made_at() {
        let pages = Pages::default();
        pages.put("k".into(), 7, page(10));
        assert!(pages.get("k", 7).is_some());
        assert!(pages.get("k", 8).is_none());
        assert!(pages.get("other", 7).is_none());
        pages.put("k".into(), 8, page(12));
        assert!(pages.get("k", 7).is_none());
        assert_eq!(pages.get("k", 8).map(|p| p.len()), Some(12));
        assert_eq!(pages.bytes(), 12);
    }

    #[test]
    fn the_budget_holds_and_the_oldest_go_first() {
        let pages = Pages::default();
        let size = PAGES_BUDGET / 5;
        for n in 0..20 {
            pages.put(format!("k{n}"), 1, page(size));
            assert!(pages.bytes() <= PAGES_BUDGET);
        }
        assert!(pages.get("k19", 1).is_some());
        assert!(pages.get("k0", 1).is_none());
        // Too big to keep beside others: not kept at all.
        pages.put("big".into(), 1, page(PAGES_BUDGET / 2));
        assert!(pages.get("big", 1).is_none());
        // Storing one key over and over keeps `order` short.
        for _ in 0..1000 {
            pages.put("same".into(), 1, page(1));
        }
        assert!(pages.0.lock().unwrap().order.len() <= 4 * 6 + 64);
    }
}
