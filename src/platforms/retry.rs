//! Trying a platform request again, not asking too much at once, and never asking before the
//! platform said we may.
//!
//! A passing failure (no answer, 5xx, a rate limit) is tried again within the pass: anything
//! but a rate limit waits the base delay, doubling with each try. A rate limit's wait (the
//! platform's `Retry-After` or reset header, or the doubling delay when it named none) is
//! remembered per platform account, shared by every pass, every connection and every ping of
//! that account: no request to the account leaves before it (CONTRACT §11, "Retries and
//! limits"). A pass that would have to wait longer than its policy allows ends with the time
//! the platform named, and a ping inside that time sends nothing.
//!
//! A request that creates something at the platform (a shipment, a note) goes through
//! [`create`] instead, which never sends it again after an answer that leaves its outcome
//! unknown: every try first looks whether the platform already has it. Only reads and writes
//! that leave the platform the same however often they arrive (an absolute stock level, a
//! mutation with an idempotency key) go through [`send`], which repeats them as they are.
//! A gate per platform account keeps at most 5 of its requests in flight, whatever the
//! number of passes.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

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
    /// The longest one answer may take, and the longest a request waits for the time its
    /// platform account may be asked again: beyond it, the request fails at once.
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

/// Runs `request`, which reads or leaves the platform the same however often it arrives,
/// under the account's gate, trying again on passing failures.
pub async fn send<T, F, Fut>(policy: &RetryPolicy, account: &str, mut request: F) -> Result<T, PlatformError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, PlatformError>>,
{
    let mut tries = 1;
    loop {
        match attempt(policy, account, tries, &mut request).await {
            Err(e) if e.is_passing() && tries < policy.tries.max(1) => {
                tries += 1;
                if !is_rate_limit(&e) {
                    tokio::time::sleep(wait_before(policy, tries, &e)).await;
                }
            }
            other => return other,
        }
    }
}

/// What [`create`] found or made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Created<T> {
    /// The platform had it already (an earlier try reached it): nothing was sent.
    AlreadyThere(T),
    /// It was sent now, and the platform took it.
    Now(T),
}

/// Creates something at the platform at most once. Each try first asks `look` whether the
/// platform already has it (`Some`), and sends `make` only when it does not. `make` is
/// never repeated after an answer that leaves its outcome unknown (no answer, a broken
/// connection, a 5xx): the next try, here or in a later pass, goes back through `look`.
/// Only a rate limit, which the platform answers before doing anything, is known to have
/// left nothing behind, and it too goes back through `look`.
pub async fn create<T, L, LFut, M, MFut>(
    policy: &RetryPolicy,
    account: &str,
    mut look: L,
    mut make: M,
) -> Result<Created<T>, PlatformError>
where
    L: FnMut() -> LFut,
    LFut: Future<Output = Result<Option<T>, PlatformError>>,
    M: FnMut() -> MFut,
    MFut: Future<Output = Result<T, PlatformError>>,
{
    let mut tries = 1;
    loop {
        if let Some(found) = send(policy, account, &mut look).await? {
            return Ok(Created::AlreadyThere(found));
        }
        match attempt(policy, account, tries, &mut make).await {
            Ok(made) => return Ok(Created::Now(made)),
            Err(e) if e.is_passing() && tries < policy.tries.max(1) => {
                tries += 1;
                if !is_rate_limit(&e) {
                    tokio::time::sleep(wait_before(policy, tries, &e)).await;
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// One request, unless the platform asked us to wait longer than the policy allows: after
/// any wait the platform asked for, under the gate. A rate limit it answers is remembered
/// for the account (try `tries` of the request, for the doubling wait of a limit that named
/// none).
async fn attempt<T, F, Fut>(
    policy: &RetryPolicy,
    account: &str,
    tries: u32,
    request: &mut F,
) -> Result<T, PlatformError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, PlatformError>>,
{
    wait_for(account, policy.request_timeout).await?;
    let outcome = {
        let _permit = permit(account).await;
        request().await
    };
    if let Err(e) = &outcome
        && is_rate_limit(e)
    {
        hold_off(account, wait_before(policy, tries + 1, e));
    }
    outcome
}

fn is_rate_limit(error: &PlatformError) -> bool {
    matches!(error, PlatformError::Unreachable { rate_limited: true, .. })
}

/// When an account may be asked again: the monotonic instant a wait is measured by, and the
/// wall-clock time a message names.
#[derive(Debug, Clone, Copy)]
struct NotBefore {
    at: Instant,
    wall: SystemTime,
}

fn not_before() -> &'static Mutex<HashMap<String, NotBefore>> {
    static NOT_BEFORE: OnceLock<Mutex<HashMap<String, NotBefore>>> = OnceLock::new();
    NOT_BEFORE.get_or_init(Default::default)
}

/// Remembers that the account may not be asked for `wait` from now (never shortening a
/// wait already known).
pub fn hold_off(account: &str, wait: Duration) {
    let until = NotBefore { at: Instant::now() + wait, wall: SystemTime::now() + wait };
    let mut all = not_before().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let now = Instant::now();
    all.retain(|_, nb| nb.at > now);
    let entry = all.entry(account.to_string()).or_insert(until);
    if entry.at < until.at {
        *entry = until;
    }
}

/// How long the account must still be left alone, and until when, if at all.
fn asked_to_wait(account: &str) -> Option<(Duration, SystemTime)> {
    let all = not_before().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let nb = all.get(account)?;
    let left = nb.at.checked_duration_since(Instant::now()).filter(|d| !d.is_zero())?;
    Some((left, nb.wall))
}

/// Waits out the time the platform asked for, or fails at once when that is longer than
/// `bound`, naming the time.
async fn wait_for(account: &str, bound: Duration) -> Result<(), PlatformError> {
    let Some((left, until)) = asked_to_wait(account) else { return Ok(()) };
    if left > bound {
        return Err(asked_until(
            until,
            "this pass ends, and the next one waits for that time instead of asking",
        ));
    }
    tokio::time::sleep(left).await;
    Ok(())
}

/// A ping's look at the account: fails at once, sending nothing, while the platform asked
/// us to wait.
pub fn may_ask_now(account: &str) -> Result<(), PlatformError> {
    match asked_to_wait(account) {
        Some((_, until)) => Err(asked_until(until, "nothing was sent")),
        None => Ok(()),
    }
}

/// A ping's one request: sent only when the account may be asked, and a rate limit it gets
/// is remembered for the passes.
pub async fn ask_once<T, Fut>(account: &str, request: Fut) -> Result<T, PlatformError>
where
    Fut: Future<Output = Result<T, PlatformError>>,
{
    may_ask_now(account)?;
    let outcome = {
        let _permit = permit(account).await;
        request.await
    };
    if let Err(PlatformError::Unreachable { wait: Some(wait), rate_limited: true, .. }) = &outcome {
        hold_off(account, *wait);
    }
    outcome
}

fn asked_until(until: SystemTime, then: &str) -> PlatformError {
    let ms = until
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    PlatformError::Unreachable {
        message: format!(
            "The platform limited our requests and asked orderbridge not to call again before {}; {then}.",
            crate::dates::format_ms(ms)
        ),
        wait: None,
        rate_limited: true,
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

    #[tokio::test]
    async fn a_write_whose_answer_was_lost_is_looked_for_before_it_is_sent_again() {
        // The platform applies the first post and loses its answer; the next try finds it.
        let applied = AtomicU32::new(0);
        let posts = AtomicU32::new(0);
        let outcome = create(
            &POLICY,
            "test-create-lost",
            || async { Ok((applied.load(Ordering::SeqCst) > 0).then_some("found")) },
            || async {
                posts.fetch_add(1, Ordering::SeqCst);
                applied.fetch_add(1, Ordering::SeqCst);
                Err::<&str, _>(PlatformError::unreachable("502 from the proxy"))
            },
        )
        .await;
        assert_eq!(outcome, Ok(Created::AlreadyThere("found")));
        assert_eq!(posts.load(Ordering::SeqCst), 1, "never posted twice");

        // A post that never arrived is sent again after the look finds nothing.
        let posts = AtomicU32::new(0);
        let outcome = create(
            &POLICY,
            "test-create-retry",
            || async { Ok(None) },
            || async {
                let n = posts.fetch_add(1, Ordering::SeqCst);
                if n == 0 { Err(PlatformError::unreachable("refused")) } else { Ok("made") }
            },
        )
        .await;
        assert_eq!(outcome, Ok(Created::Now("made")));
        assert_eq!(posts.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_rate_limit_holds_every_request_of_the_account_until_its_time() {
        let account = "test-hold";
        let calls = AtomicU32::new(0);
        let limited: Result<(), _> = send(&POLICY, account, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(PlatformError::rate_limited("slow down", Some(Duration::from_secs(30))))
        })
        .await;
        // 30 s is past the policy's bound of 1 s: the pass ends, naming the time.
        let Err(e) = limited else { panic!("expected an error") };
        assert!(e.message().contains("not to call again before"), "{e}");
        assert_eq!(calls.load(Ordering::SeqCst), 1, "nothing sent inside the wait");
        // Another caller of the same account (the next pass, another connection) sends nothing.
        let again: Result<(), _> = send(&POLICY, account, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
        .await;
        assert!(again.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(may_ask_now(account).is_err(), "a ping sends nothing either");
        assert!(may_ask_now("test-hold-other").is_ok(), "other accounts are not held");
    }

    #[tokio::test]
    async fn a_short_rate_limit_is_waited_out_and_then_asked_again() {
        let account = "test-short-hold";
        let calls = AtomicU32::new(0);
        let started = Instant::now();
        let answer = send(&POLICY, account, || async {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            if n == 0 {
                Err(PlatformError::rate_limited("slow down", Some(Duration::from_millis(300))))
            } else {
                Ok(n)
            }
        })
        .await;
        assert_eq!(answer, Ok(1));
        assert!(started.elapsed() >= Duration::from_millis(300), "never asked before the reset");
    }
}
