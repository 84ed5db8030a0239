//! Amazon's rate limits, paced by orderbridge itself (annex §5, *Rate limits*): a token
//! bucket per (`client_id`, `seller_id`, region, operation), in memory, shared by every pass,
//! connection and ping of those values. A bucket starts full, holds its burst and refills at
//! the latest `x-amzn-RateLimit-Limit` Amazon sent for that operation of that account, else
//! at the annex's rate. A 429 empties it.
//!
//! A bucket is made by the first request an account sends, never by a question about it, and
//! the buckets are bounded: past [`MAX_BUCKETS`] the idle ones (full again, so no different
//! from a new one) are forgotten first, then the least recently used.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

/// An operation orderbridge sends, with its default plan: (name, requests a second, burst).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    SearchOrders,
    GetOrder,
    ConfirmShipment,
    GetMarketplaceParticipations,
    SearchListingsItems,
    GetListingsItem,
    CreateFeedDocument,
    CreateFeed,
    GetFeed,
    GetFeedDocument,
}

impl Operation {
    /// Amazon's operation id, as messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Operation::SearchOrders => "searchOrders",
            Operation::GetOrder => "getOrder",
            Operation::ConfirmShipment => "confirmShipment",
            Operation::GetMarketplaceParticipations => "getMarketplaceParticipations",
            Operation::SearchListingsItems => "searchListingsItems",
            Operation::GetListingsItem => "getListingsItem",
            Operation::CreateFeedDocument => "createFeedDocument",
            Operation::CreateFeed => "createFeed",
            Operation::GetFeed => "getFeed",
            Operation::GetFeedDocument => "getFeedDocument",
        }
    }

    /// The annex's table: (requests a second, burst). `createFeed` is the
    /// `JSON_LISTINGS_FEED` limit, 5 per 5 minutes (one token every 60 s, 5 held).
    pub fn plan(self) -> (f64, f64) {
        match self {
            Operation::SearchOrders => (0.0056, 20.0),
            Operation::GetOrder => (0.5, 30.0),
            Operation::ConfirmShipment => (2.0, 10.0),
            Operation::GetMarketplaceParticipations => (0.016, 15.0),
            Operation::SearchListingsItems => (5.0, 5.0),
            Operation::GetListingsItem => (5.0, 10.0),
            Operation::CreateFeedDocument => (0.5, 15.0),
            Operation::CreateFeed => (1.0 / 60.0, 5.0),
            Operation::GetFeed => (2.0, 15.0),
            Operation::GetFeedDocument => (0.0222, 10.0),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    rate: f64,
    burst: f64,
    at: Instant,
}

impl Bucket {
    fn full(op: Operation) -> Bucket {
        let (rate, burst) = op.plan();
        Bucket { tokens: burst, rate, burst, at: Instant::now() }
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        self.at = now;
    }

    /// How long until one token is there (zero when it is).
    fn wait(&self) -> Duration {
        if self.tokens >= 1.0 {
            return Duration::ZERO;
        }
        Duration::from_secs_f64(((1.0 - self.tokens) / self.rate).min(86_400.0))
    }
}

type Key = (String, Operation);

/// The most buckets kept at once (about 10 MiB with the adapter's longest `client_id`).
pub const MAX_BUCKETS: usize = 32_768;

fn buckets() -> &'static Mutex<HashMap<Key, Bucket>> {
    static BUCKETS: OnceLock<Mutex<HashMap<Key, Bucket>>> = OnceLock::new();
    BUCKETS.get_or_init(Default::default)
}

fn with_bucket<T>(account: &str, op: Operation, f: impl FnOnce(&mut Bucket) -> T) -> T {
    let mut all = buckets().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let now = Instant::now();
    let key = (account.to_string(), op);
    if !all.contains_key(&key) && all.len() >= MAX_BUCKETS {
        evict(&mut all, now);
    }
    let bucket = all.entry(key).or_insert_with(|| Bucket::full(op));
    bucket.refill(now);
    f(bucket)
}

/// Makes room: forgets every idle bucket, then, if that is not a quarter, the least recently
/// used down to three quarters of the bound.
fn evict(all: &mut HashMap<Key, Bucket>, now: Instant) {
    all.retain(|_, bucket| {
        let mut seen = *bucket;
        seen.refill(now);
        seen.tokens < seen.burst
    });
    let keep = MAX_BUCKETS / 4 * 3;
    if all.len() > keep {
        let mut by_use: Vec<(Instant, Key)> = all.iter().map(|(k, b)| (b.at, k.clone())).collect();
        by_use.sort_unstable_by_key(|(at, _)| *at);
        for (_, key) in by_use.into_iter().take(all.len() - keep) {
            all.remove(&key);
        }
    }
}

/// The bucket of `op` as it is now, without keeping one for an account that has none.
fn peek(account: &str, op: Operation) -> Bucket {
    let all = buckets().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut bucket = all.get(&(account.to_string(), op)).copied().unwrap_or_else(|| Bucket::full(op));
    bucket.refill(Instant::now());
    bucket
}

/// Whether `account` has a bucket of any operation.
#[cfg(test)]
pub fn holds(account: &str) -> bool {
    buckets().lock().unwrap_or_else(|poisoned| poisoned.into_inner()).keys().any(|(a, _)| a == account)
}

/// How many buckets are kept.
#[cfg(test)]
pub fn held() -> usize {
    buckets().lock().unwrap_or_else(|poisoned| poisoned.into_inner()).len()
}

/// Takes a token for `op`, or says how long until one is there (nothing taken).
pub fn take(account: &str, op: Operation) -> Result<(), Duration> {
    with_bucket(account, op, |b| {
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            Ok(())
        } else {
            Err(b.wait())
        }
    })
}

/// How long until `op` has a token (zero when it has one), taking and keeping nothing.
pub fn wait(account: &str, op: Operation) -> Duration {
    peek(account, op).wait()
}

/// Amazon answered 429: the bucket is empty, its next token `1 / rate` away.
pub fn empty(account: &str, op: Operation) {
    with_bucket(account, op, |b| b.tokens = 0.0);
}

/// Amazon's `x-amzn-RateLimit-Limit` for `op`: its refill rate from now on; a value that is
/// not a positive decimal is ignored.
pub fn learn_rate(account: &str, op: Operation, header: Option<&str>) {
    let Some(rate) = header.and_then(|h| h.trim().parse::<f64>().ok()) else { return };
    if rate.is_finite() && rate > 0.0 {
        with_bucket(account, op, |b| b.rate = rate);
    }
}

/// The wall-clock time `wait` from now, as messages name it.
pub fn at(wait: Duration) -> String {
    let when = SystemTime::now().checked_add(wait).unwrap_or_else(SystemTime::now);
    let ms =
        when.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(0));
    crate::dates::format_ms(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_starts_full_spends_its_burst_and_a_429_empties_it() {
        let account = "pacing-test-1";
        for _ in 0..5 {
            assert_eq!(take(account, Operation::SearchListingsItems), Ok(()));
        }
        // The sixth within the same instant waits about 1 / 5 s.
        let waited = take(account, Operation::SearchListingsItems).unwrap_err();
        assert!(waited <= Duration::from_millis(200) && waited > Duration::ZERO, "{waited:?}");
        empty(account, Operation::SearchOrders);
        let wait = wait(account, Operation::SearchOrders);
        assert!(wait > Duration::from_secs(170) && wait <= Duration::from_secs(179), "{wait:?}");
    }

    #[test]
    fn asking_how_long_to_wait_keeps_nothing_and_the_buckets_are_bounded() {
        let account = "pacing-test-3";
        assert_eq!(wait(account, Operation::GetOrder), Duration::ZERO);
        assert!(!holds(account), "a question keeps no bucket");
        for i in 0..MAX_BUCKETS + 500 {
            assert_eq!(take(&format!("pacing-test-many-{i}"), Operation::GetOrder), Ok(()));
        }
        assert!(held() <= MAX_BUCKETS, "{} buckets", held());
        // An account in the middle of its wait is not forgotten for the idle ones.
        empty("pacing-test-4", Operation::SearchOrders);
        for i in 0..MAX_BUCKETS {
            learn_rate(&format!("pacing-test-idle-{i}"), Operation::GetOrder, Some("1"));
        }
        assert!(wait("pacing-test-4", Operation::SearchOrders) > Duration::from_secs(170));
    }

    #[test]
    fn the_rate_amazon_names_replaces_the_default_and_nonsense_is_ignored() {
        let account = "pacing-test-2";
        empty(account, Operation::CreateFeed);
        learn_rate(account, Operation::CreateFeed, Some("nonsense"));
        learn_rate(account, Operation::CreateFeed, Some("-1"));
        assert!(wait(account, Operation::CreateFeed) > Duration::from_secs(59));
        learn_rate(account, Operation::CreateFeed, Some("10.0"));
        assert!(wait(account, Operation::CreateFeed) <= Duration::from_millis(100));
    }
}
