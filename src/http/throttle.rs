//! Failed logins are throttled without locking others out (CONTRACT §1): after 5 failures
//! for one username within a minute, that username is answered `429 too_many_requests` with
//! `Retry-After`, whatever the password, until the oldest of those failures is a minute old;
//! one client address gets the same after 50 failures within a minute, whatever the usernames.
//! Below that, another user's right password from the same address logs in at once (behind
//! a reverse proxy every user shares one address).
//!
//! An attempt counts as a failure from the moment it starts and is forgiven when its
//! password proves right, so guesses sent side by side cannot all slip in while the slow
//! password check of the first one runs.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Failures of one username allowed within `WINDOW`.
pub const USER_FAILURES: usize = 5;
/// Failures from one client address allowed within `WINDOW`, whatever the usernames.
pub const ADDRESS_FAILURES: usize = 50;
const WINDOW: Duration = Duration::from_secs(60);
/// Past this many keys, those with no failure in the window are forgotten.
const KEYS_KEPT: usize = 10_000;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    User(String),
    Address(IpAddr),
}

impl Key {
    fn limit(&self) -> usize {
        match self {
            Key::User(_) => USER_FAILURES,
            Key::Address(_) => ADDRESS_FAILURES,
        }
    }
}

#[derive(Default)]
pub struct LoginThrottle {
    /// The failures of each key within the window, oldest first.
    failures: Mutex<HashMap<Key, VecDeque<Instant>>>,
}

/// A login attempt under way, counted as a failure unless `forgive` is called.
#[must_use = "an attempt not forgiven counts as a failed login"]
pub struct Attempt<'a> {
    throttle: &'a LoginThrottle,
    keys: Vec<Key>,
    at: Instant,
}

impl Attempt<'_> {
    /// The password was right (or the attempt never got to check it): it is not a failure.
    pub fn forgive(self) {
        let mut failures = self.throttle.failures.lock().unwrap_or_else(PoisonError::into_inner);
        for key in &self.keys {
            if let Some(times) = failures.get_mut(key)
                && let Some(i) = times.iter().position(|t| *t == self.at)
            {
                times.remove(i);
            }
        }
    }
}

fn keys(username: &str, address: Option<IpAddr>) -> Vec<Key> {
    let mut keys = vec![Key::User(username.to_lowercase())];
    keys.extend(address.map(Key::Address));
    keys
}

impl LoginThrottle {
    /// Starts an attempt for `username` from `address`, or says how long it must wait.
    pub fn begin(&self, username: &str, address: Option<IpAddr>) -> Result<Attempt<'_>, Duration> {
        self.begin_at(username, address, Instant::now())
    }

    fn begin_at(
        &self,
        username: &str,
        address: Option<IpAddr>,
        now: Instant,
    ) -> Result<Attempt<'_>, Duration> {
        let keys = keys(username, address);
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        if failures.len() > KEYS_KEPT {
            failures
                .retain(|_, times| times.back().is_some_and(|t| now.saturating_duration_since(*t) < WINDOW));
        }
        let mut wait = Duration::ZERO;
        for key in &keys {
            let Some(times) = failures.get_mut(key) else { continue };
            while times.front().is_some_and(|t| now.saturating_duration_since(*t) >= WINDOW) {
                times.pop_front();
            }
            // With `limit` failures in the window, one more may come once the oldest of the
            // latest `limit` has left it.
            if let Some(index) = times.len().checked_sub(key.limit())
                && let Some(oldest) = times.get(index)
            {
                wait = wait.max((*oldest + WINDOW).saturating_duration_since(now));
            }
        }
        if !wait.is_zero() {
            return Err(wait);
        }
        for key in &keys {
            failures.entry(key.clone()).or_default().push_back(now);
        }
        Ok(Attempt { throttle: self, keys, at: now })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fail(throttle: &LoginThrottle, user: &str, address: Option<IpAddr>, now: Instant) {
        let attempt = throttle.begin_at(user, address, now).expect("not throttled yet");
        drop(attempt);
    }

    #[test]
    fn five_failures_throttle_the_username_until_the_oldest_is_a_minute_old() {
        let throttle = LoginThrottle::default();
        let here: IpAddr = "10.0.0.1".parse().unwrap();
        let start = Instant::now();
        for i in 0..USER_FAILURES {
            fail(&throttle, "ann", Some(here), start + Duration::from_secs(i as u64));
        }
        let now = start + Duration::from_secs(10);
        let wait = throttle.begin_at("ann", Some(here), now).err().expect("ann waits");
        assert_eq!(wait, Duration::from_secs(50), "until the first failure is a minute old");
        assert!(throttle.begin_at("ANN", None, now).is_err(), "usernames are counted without case");
        let ben = throttle.begin_at("ben", Some(here), now).expect("another user from the same address");
        ben.forgive();
        let later = start + Duration::from_secs(60);
        let attempt =
            throttle.begin_at("ann", Some(here), later).expect("the first failure has left the window");
        attempt.forgive();
        assert!(throttle.begin_at("ann", Some(here), later).is_ok(), "a right password is not a failure");
    }

    #[test]
    fn fifty_failures_from_one_address_throttle_it_whatever_the_usernames() {
        let throttle = LoginThrottle::default();
        let here: IpAddr = "10.0.0.1".parse().unwrap();
        let there: IpAddr = "10.0.0.2".parse().unwrap();
        let now = Instant::now();
        for i in 0..ADDRESS_FAILURES {
            fail(&throttle, &format!("user{i}"), Some(here), now);
        }
        let wait = throttle.begin_at("someone-new", Some(here), now).err().expect("the address waits");
        assert_eq!(wait, WINDOW);
        assert!(throttle.begin_at("someone-new", Some(there), now).is_ok(), "other addresses log in");
    }

    #[test]
    fn attempts_under_way_count_so_side_by_side_guesses_stop_at_the_limit() {
        let throttle = LoginThrottle::default();
        let now = Instant::now();
        let under_way: Vec<_> =
            (0..USER_FAILURES).map(|_| throttle.begin_at("ann", None, now).unwrap()).collect();
        assert!(throttle.begin_at("ann", None, now).is_err(), "the sixth waits while five are checked");
        for attempt in under_way {
            attempt.forgive();
        }
        assert!(throttle.begin_at("ann", None, now).is_ok(), "five right passwords leave no failure");
    }

    #[test]
    fn keys_with_no_recent_failure_are_forgotten_past_the_cap() {
        let throttle = LoginThrottle::default();
        let start = Instant::now();
        for i in 0..=KEYS_KEPT {
            fail(&throttle, &format!("user{i}"), None, start);
        }
        fail(&throttle, "late", None, start + WINDOW);
        let kept = throttle.failures.lock().unwrap().len();
        assert_eq!(kept, 1, "only the key failing within the window is kept");
    }
}
