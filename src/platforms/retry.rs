//! Trying a platform request again, and not asking too much at once.
//!
//! A passing failure (no answer, 5xx, a rate limit) is tried again within the pass: a
//! rate-limited answer waits as long as the platform asked and never less; anything else
//! (and a rate limit that named no wait) waits the base delay, doubling with each try. Other
//! failures return at once. A gate per platform account keeps at most 5 of its requests in
//! flight, whatever the number of passes.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::PlatformError;

/// Requests one platform account may have in flight at once.
pub const MAX_IN_FLIGHT: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries of one request, the first included.
    pub tries: u32,
    /// The first wait after a passing failure; it doubles with each try.
    pub base: Duration,
    /// The longest one answer may take.
    pub request_timeout: Duration,
}

/// The wait before try `next` (2 for the first retry) after `error`.
pub fn wait_before(policy: &RetryPolicy, next: u32, error: &PlatformError) -> Duration {
    let doubling = policy.base.saturating_mul(1u32 << next.saturating_sub(2).min(20));
    match error {
        PlatformError::Unreachable { wait: Some(asked), rate_limited: true, .. } => {
            (*asked).max(Duration::from_millis(1))
        }
        _ => doubling,
    }
}

/// Runs `request` under the account's gate, trying again on passing failures.
pub async fn send<T, F, Fut>(policy: &RetryPolicy, account: &str, mut request: F) -> Result<T, PlatformError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, PlatformError>>,
{
    let mut tries = 1;
    loop {
        let outcome = {
            let _permit = permit(account).await;
            request().await
        };
        match outcome {
            Err(e) if e.is_passing() && tries < policy.tries.max(1) => {
                tries += 1;
                tokio::time::sleep(wait_before(policy, tries, &e)).await;
            }
            other => return other,
        }
    }
}

/// A place among the account's requests in flight.
pub async fn permit(account: &str) -> Option<OwnedSemaphorePermit> {
    static GATES: OnceLock<Mutex<HashMap<String, Arc<Semaphore>>>> = OnceLock::new();
    let gate = {
        let mut gates = GATES.get_or_init(Default::default).lock().ok()?;
        Arc::clone(
            gates.entry(account.to_string()).or_insert_with(|| Arc::new(Semaphore::new(MAX_IN_FLIGHT))),
        )
    };
    gate.acquire_owned().await.ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    const POLICY: RetryPolicy =
        RetryPolicy { tries: 3, base: Duration::from_millis(10), request_timeout: Duration::from_secs(1) };

    #[test]
    fn a_rate_limit_waits_as_asked_and_other_failures_double() {
        let limited = PlatformError::rate_limited("slow down", Some(Duration::from_millis(700)));
        assert_eq!(wait_before(&POLICY, 2, &limited), Duration::from_millis(700));
        let unnamed = PlatformError::rate_limited("slow down", None);
        assert_eq!(wait_before(&POLICY, 3, &unnamed), Duration::from_millis(20));
        let down = PlatformError::unreachable("down");
        assert_eq!(wait_before(&POLICY, 2, &down), Duration::from_millis(10));
        assert_eq!(wait_before(&POLICY, 4, &down), Duration::from_millis(40));
    }

    #[tokio::test]
    async fn passing_failures_are_tried_again_and_refusals_are_not() {
        let calls = AtomicU32::new(0);
        let answer: Result<u32, _> = send(&POLICY, "test-a", || async {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            if n < 2 { Err(PlatformError::unreachable("down")) } else { Ok(n) }
        })
        .await;
        assert_eq!(answer, Ok(2));

        let calls = AtomicU32::new(0);
        let answer: Result<(), _> = send(&POLICY, "test-b", || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(PlatformError::Refused("no".into()))
        })
        .await;
        assert!(matches!(answer, Err(PlatformError::Refused(_))));
        assert_eq!(calls.load(Ordering::SeqCst), 1);

        let calls = AtomicU32::new(0);
        let answer: Result<(), _> = send(&POLICY, "test-c", || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(PlatformError::unreachable("down"))
        })
        .await;
        assert!(answer.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 3, "tries, then the error");
    }

    #[tokio::test]
    async fn no_account_has_more_than_five_requests_in_flight() {
        let now = Arc::new(AtomicU32::new(0));
        let most = Arc::new(AtomicU32::new(0));
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..20 {
            let (now, most) = (Arc::clone(&now), Arc::clone(&most));
            tasks.spawn(async move {
                send(&POLICY, "test-gate", || async {
                    let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(n, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    now.fetch_sub(1, Ordering::SeqCst);
                    Ok::<_, PlatformError>(())
                })
                .await
            });
        }
        while let Some(done) = tasks.join_next().await {
            done.unwrap().unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), MAX_IN_FLIGHT as u32);
    }
}
