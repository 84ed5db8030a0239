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
pub struct Counts(Arc<Mutex<CountCache>>);

#[derive(Default)]
struct CountCache {
    entries: HashMap<String, (i64, i64)>,
    bytes: usize,
}

/// Distinct queries remembered before the cache starts over.
const MAX_CACHED_COUNTS: usize = 4096;

/// Bytes of count keys (a count query's SQL and parameters) kept before the cache starts
/// over: the keys, not the counts, are what a caller's filters make long.
const COUNTS_BUDGET: usize = 4 << 20;

/// What an entry costs beside its key and page: the map's slot, the strings' and the
/// page's headers. Counted so that many tiny entries are bounded too.
const ENTRY_OVERHEAD: usize = 96;

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
        if let Some(count) = self.recall(&key, generation) {
            return Ok(count);
        }
        let count = conn.prepare_cached(&sql)?.query_row(params_from_iter(params), |r| r.get(0))?;
        self.remember(key, generation, count);
        Ok(count)
    }

    fn recall(&self, key: &str, generation: i64) -> Option<i64> {
        let cache = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        cache.entries.get(key).filter(|(stored, _)| *stored == generation).map(|(_, count)| *count)
    }

    fn remember(&self, key: String, generation: i64, count: i64) {
        let cost = key.len() + ENTRY_OVERHEAD;
        if cost > COUNTS_BUDGET / 4 {
            return;
        }
        let mut cache = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(entry) = cache.entries.get_mut(&key) {
            *entry = (generation, count);
            return;
        }
        if cache.entries.len() >= MAX_CACHED_COUNTS || cache.bytes + cost > COUNTS_BUDGET {
            cache.entries.clear();
            cache.bytes = 0;
        }
        cache.bytes += cost;
        cache.entries.insert(key, (generation, count));
    }

    /// Bytes held now.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.0.lock().map_or(0, |c| c.bytes)
    }
}

/// Page-mode answers already rendered and tagged. A client polling the first page of its
/// orders, or many clients reading the same page, cost one render per change of the data;
/// the rest is a generation read and a lookup. Bounded by bytes (`PAGES_BUDGET`, counting
/// the pages and both copies of their keys, which a long filter makes large), oldest
/// first out; the key is the page's plan, whose filter carries the caller's customer, so a
/// page is only ever served to users who may see all of it.
#[derive(Clone)]
pub struct Pages(Arc<Mutex<PageCache>>);

/// Bytes of rendered pages and their keys kept at most: ~25 pages of 100 orders.
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
        // The entry, and the key's copy in `order`.
        let cost = entry_cost(&key, &page) + order_cost(&key);
        if cost > PAGES_BUDGET / 4 {
            return;
        }
        let Ok(mut cache) = self.0.lock() else { return };
        let cache = &mut *cache;
        if let Some((_, old)) = cache.entries.remove(&key) {
            cache.bytes -= entry_cost(&key, &old);
        }
        while cache.bytes + cost > PAGES_BUDGET {
            let Some(oldest) = cache.order.pop_front() else { break };
            cache.bytes -= order_cost(&oldest);
            if let Some((_, old)) = cache.entries.remove(&oldest) {
                cache.bytes -= entry_cost(&oldest, &old);
            }
        }
        // Keys of entries already dropped or stored again are left in `order`; keep it short.
        if cache.order.len() > 4 * cache.entries.len() + 64 {
            let entries = &cache.entries;
            let mut freed = 0;
            cache.order.retain(|k| {
                let keep = entries.contains_key(k);
                if !keep {
                    freed += order_cost(k);
                }
                keep
            });
            cache.bytes -= freed;
        }
        cache.bytes += cost;
        cache.order.push_back(key.clone());
        cache.entries.insert(key, (generation, page));
    }

    /// Bytes held now.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.0.lock().map_or(0, |c| c.bytes)
    }
}

fn entry_cost(key: &str, page: &Tagged) -> usize {
    key.len() + page.len() + ENTRY_OVERHEAD
}

fn order_cost(key: &str) -> usize {
    key.len() + ENTRY_OVERHEAD / 4
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
        // The page, its key, and the key twice in the order of storing.
        assert_eq!(pages.bytes(), entry_cost("k", &page(12)) + 2 * order_cost("k"));
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

    /// What the page cache really holds: every key it keeps (in the map and in the order of
    /// storing) and every page.
    fn pages_held(pages: &Pages) -> usize {
        let cache = pages.0.lock().unwrap();
        let entries: usize = cache.entries.iter().map(|(k, (_, p))| k.len() + p.len()).sum();
        entries + cache.order.iter().map(String::len).sum::<usize>()
    }

    #[test]
    fn a_pages_accounted_bytes_include_its_key_and_long_keys_stay_in_the_budget() {
        let pages = Pages::default();
        let long_key = "k".repeat(60_000);
        pages.put(long_key.clone(), 1, page(10));
        assert!(pages.bytes() >= 2 * 60_000 + 10, "the key, in the map and in the order: {}", pages.bytes());
        // 600 distinct 60 KB filters (36 MB of keys) behind tiny pages.
        for n in 0..600 {
            pages.put(format!("{n}{long_key}"), 1, page(10));
            assert!(pages.bytes() <= PAGES_BUDGET, "{}", pages.bytes());
            assert!(pages_held(&pages) <= pages.bytes(), "accounted below what is held");
        }
        assert!(pages.get(&format!("599{long_key}"), 1).is_some(), "the newest is kept");
    }

    #[test]
    fn the_count_caches_accounted_bytes_include_its_key_and_long_keys_stay_in_the_budget() {
        let counts = Counts::default();
        let long_key = "k".repeat(60_000);
        counts.remember(long_key.clone(), 1, 5);
        assert!(counts.bytes() >= 60_000, "{}", counts.bytes());
        assert_eq!(counts.recall(&long_key, 1), Some(5));
        assert_eq!(counts.recall(&long_key, 2), None, "another generation");
        for n in 0..1000 {
            counts.remember(format!("{n}{long_key}"), 1, n);
            assert!(counts.bytes() <= COUNTS_BUDGET, "{}", counts.bytes());
            let held: usize = counts.0.lock().unwrap().entries.keys().map(String::len).sum();
            assert!(held <= counts.bytes(), "accounted below what is held");
        }
        assert_eq!(counts.recall(&format!("999{long_key}"), 1), Some(999));
    }
}
