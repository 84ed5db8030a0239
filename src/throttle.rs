//! Failed logins are throttled (CONTRACT §1, hardened): per username and per client
//! address, 5 failures in a minute and the next attempt is answered `429
//! too_many_requests` with `Retry-After`, whatever its password, until the window lets one
//! more through (one every 12 s). Other users, and other addresses, log in as before.
//!
//! The counting is governor's (GCRA, keyed); what this module adds is that only failures
//! count, and that a key at its limit refuses attempts without spending more.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use dashmap::DashMap;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// Failures allowed in a window before attempts are refused.
pub const FAILURES: u32 = 5;
const WINDOW: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    User(String),
    Address(IpAddr),
}

pub struct LoginThrottle {
    failures: DefaultKeyedRateLimiter<Key>,
    /// Keys at their limit, and until when.
    blocked: DashMap<Key, Instant>,
    clock: DefaultClock,
}

impl Default for LoginThrottle {
    fn default() -> Self {
        // The 5th failure in a window finds the bucket empty and blocks the key.
        let quota = Quota::with_period(WINDOW / FAILURES)
            .and_then(|q| NonZeroU32::new(FAILURES - 1).map(|burst| q.allow_burst(burst)))
            .unwrap_or_else(|| Quota::per_minute(NonZeroU32::MIN));
        LoginThrottle {
            failures: RateLimiter::keyed(quota),
            blocked: DashMap::new(),
            clock: DefaultClock::default(),
        }
    }
}

fn keys(username: &str, address: Option<IpAddr>) -> Vec<Key> {
    let mut keys = vec![Key::User(username.to_lowercase())];
    keys.extend(address.map(Key::Address));
    keys
}

impl LoginThrottle {
    /// `Some(wait)` when an attempt for this username or from this address must wait.
    pub fn refused(&self, username: &str, address: Option<IpAddr>) -> Option<Duration> {
        let now = Instant::now();
        keys(username, address)
            .iter()
            .filter_map(|key| {
                let until = *self.blocked.get(key)?;
                if until > now {
                    Some(until - now)
                } else {
                    self.blocked.remove(key);
                    None
                }
            })
            .max()
    }

    /// Counts a failed attempt against the username and the address.
    pub fn failed(&self, username: &str, address: Option<IpAddr>) {
        for key in keys(username, address) {
            if let Err(limit) = self.failures.check_key(&key) {
                let wait = limit.wait_time_from(self.clock.now());
                self.blocked.insert(key, Instant::now() + wait);
            }
        }
        // Forget keys whose windows have passed, now and then, so memory stays bounded.
        if self.failures.len() > 10_000 {
            self.failures.retain_recent();
            self.blocked.retain(|_, until| *until > Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_failures_block_the_user_and_the_address_but_not_others() {
        let throttle = LoginThrottle::default();
        let here: IpAddr = "10.0.0.1".parse().unwrap();
        let there: IpAddr = "10.0.0.2".parse().unwrap();
        for _ in 0..FAILURES {
            assert_eq!(throttle.refused("ann", Some(here)), None);
            throttle.failed("ann", Some(here));
        }
        let wait = throttle.refused("ann", Some(there)).expect("the user is blocked from anywhere");
        assert!(wait > Duration::ZERO && wait <= WINDOW, "{wait:?}");
        assert!(throttle.refused("ANN", None).is_some(), "usernames are counted without case");
        assert!(throttle.refused("ben", Some(here)).is_some(), "the address is blocked for any user");
        assert_eq!(throttle.refused("ben", Some(there)), None, "another user elsewhere logs in");
    }
}
