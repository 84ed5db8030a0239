//! What the engine takes from the configuration, and how it reads it: the tries and waits
//! of a platform request within a pass, and the backoff between a shipment's notifications.

use std::time::Duration;

use crate::config::{Config, SyncMode};
use crate::platforms::{self, retry::RetryPolicy};

/// Tries of one platform request within a pass before the step gives up on it.
const TRIES_PER_PASS: u32 = 3;

/// What the engine needs from the configuration.
#[derive(Debug, Clone)]
pub struct Settings {
    pub mode: SyncMode,
    pub interval: Duration,
    pub max_attempts: u32,
    pub retry_base: Duration,
    /// The longest a pass waits for one answer.
    pub request_timeout: Duration,
    /// How long a warehouse's file must look unchanged before it is read.
    pub file_settle: Duration,
    /// Where the platforms are, as the operator set it.
    pub platforms: platforms::Settings,
    /// Whether customer users' addresses may be private (CONTRACT §6).
    pub tenant_private_targets: bool,
}

impl Settings {
    pub fn from_config(config: &Config) -> Settings {
        Settings {
            mode: config.sync_mode,
            interval: Duration::from_secs(config.sync_interval_secs),
            max_attempts: config.sync_max_attempts,
            retry_base: Duration::from_secs(config.sync_retry_base_secs),
            request_timeout: Duration::from_secs(config.ping_timeout_secs),
            file_settle: Duration::from_secs(config.file_settle_secs),
            platforms: platforms::Settings::from_config(config),
            tenant_private_targets: config.tenant_private_targets,
        }
    }

    pub(crate) fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy {
            tries: TRIES_PER_PASS,
            base: self.retry_base,
            request_timeout: self.request_timeout,
            // A wait the platform asks for is taken inside the pass up to the interval.
            longest_wait: self.interval,
        }
    }

    /// The wait before a shipment's next notification after `attempts` failed ones.
    pub(crate) fn backoff(&self, attempts: u32) -> Duration {
        let doublings = attempts.saturating_sub(1).min(20);
        self.retry_base.saturating_mul(1u32 << doublings)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;
    use crate::platforms::{PlatformError, retry};

    fn settings(sync_interval_secs: u64, ping_timeout_secs: u64) -> Settings {
        Settings::from_config(&Config { sync_interval_secs, ping_timeout_secs, ..Config::default() })
    }

    /// CONTRACT §11 and the API platforms' annexes: a wait the platform asks for is taken
    /// inside the pass up to `sync_interval_secs`, and a longer one ends the step at once;
    /// `ping_timeout_secs` bounds one answer, not the wait.
    #[tokio::test]
    async fn a_rate_limits_wait_is_bounded_by_the_sync_interval_not_the_ping_timeout() {
        // A 1 s interval, a 10 s answer timeout and a 3 s wait: the step fails at once.
        let calls = AtomicU32::new(0);
        let answer: Result<(), _> =
            retry::send(&settings(1, 10).retry_policy(), "test-interval-1", || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err(PlatformError::rate_limited("slow down", Some(Duration::from_secs(3))))
            })
            .await;
        let Err(e) = answer else { panic!("a 3 s wait was taken inside a 1 s interval") };
        assert!(e.message().contains("not to call again before"), "{e}");
        assert_eq!(calls.load(Ordering::SeqCst), 1, "nothing sent inside the wait");

        // A 60 s interval, a 1 s answer timeout and a 2 s wait: waited out, then asked again.
        let calls = AtomicU32::new(0);
        let answer = retry::send(&settings(60, 1).retry_policy(), "test-interval-60", || async {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            if n == 0 {
                Err(PlatformError::rate_limited("slow down", Some(Duration::from_secs(2))))
            } else {
                Ok(n)
            }
        })
        .await;
        assert_eq!(answer, Ok(1), "a wait shorter than the interval is taken");
    }
}
