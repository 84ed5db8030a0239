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
//! number of passes, or fewer where the platform names its own limit ([`Account::limited`]:
//! a self-hosted shop on shared hosting takes one at a time).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::PlatformError;

/// Requests one platform account may have in flight at once.
pub const MAX_IN_FLIGHT: usize = 5;

/// The platform account a request spends: its name (never a credential), and how many of
/// its requests may be in flight at once. A platform always names an account with the same
/// limit; the gate takes the limit the account's first request names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Account<'a> {
    pub name: &'a str,
    pub in_flight: usize,
}

impl<'a> Account<'a> {
    /// An account that takes at most `in_flight` requests at once (at least one).
    pub fn limited(name: &'a str, in_flight: usize) -> Account<'a> {
        Account { name, in_flight: in_flight.max(1) }
    }
}

impl<'a> From<&'a str> for Account<'a> {
    fn from(name: &'a str) -> Account<'a> {
        Account { name, in_flight: MAX_IN_FLIGHT }
    }
}

impl<'a> From<&'a String> for Account<'a> {
    fn from(name: &'a String) -> Account<'a> {
        Account::from(name.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries of one request, the first included.
    pub tries: u32,
    /// The first wait after a passing failure; it doubles with each try.
    pub base: Duration,
    /// The longest one answer may take (`ping_timeout_secs`).
    pub request_timeout: Duration,
    /// The longest a request waits for the time its platform account may be asked again: a
    /// pass's `sync_interval_secs` (CONTRACT §11), a ping's own timeout. Beyond it, the
    /// request fails at once naming that time, and the wait is kept for the account.
    pub longest_wait: Duration,
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
pub async fn send<'a, T, F, Fut>(
    policy: &RetryPolicy,
    account: impl Into<Account<'a>>,
    mut request: F,
) -> Result<T, PlatformError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, PlatformError>>,
{
    let account = account.into();
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
pub async fn create<'a, T, L, LFut, M, MFut>(
    policy: &RetryPolicy,
    account: impl Into<Account<'a>>,
    mut look: L,
    mut make: M,
) -> Result<Created<T>, PlatformError>
where
    L: FnMut() -> LFut,
    LFut: Future<Output = Result<Option<T>, PlatformError>>,
    M: FnMut() -> MFut,
    MFut: Future<Output = Result<T, PlatformError>>,
{
    let account = account.into();
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
    account: Account<'_>,
    tries: u32,
    request: &mut F,
) -> Result<T, PlatformError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, PlatformError>>,
{
    // The wait is looked at once the permit is ours: a request queued behind one that got a
    // rate limit must see that limit. The limit is remembered before the permit goes.
    let _permit = permit(account).await;
    wait_for(account.name, policy.longest_wait).await?;
    let outcome = request().await;
    if let Err(e) = &outcome
        && is_rate_limit(e)
    {
        hold_off(account.name, wait_before(policy, tries + 1, e));
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

/// The longest wait a platform can put on an account: a `Retry-After` past it (up to
/// 18446744073709551615 seconds, past any clock) is asked again after a day.
pub const MAX_HOLD: Duration = Duration::from_secs(24 * 60 * 60);

/// Remembers that the account may not be asked for `wait` from now, at most [`MAX_HOLD`]
/// (never shortening a wait already known).
pub fn hold_off(account: &str, wait: Duration) {
    let wait = wait.min(MAX_HOLD);
    let (now, wall_now) = (Instant::now(), SystemTime::now());
    let until = NotBefore {
        at: now.checked_add(wait).unwrap_or(now),
        wall: wall_now.checked_add(wait).unwrap_or(wall_now),
    };
    let mut all = not_before().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    all.retain(|_, nb| nb.at > now);
    let entry = all.entry(account.to_string()).or_insert(until);
    if entry.at < until.at {
        *entry = until;
    }
}

/// How long the account must still be left alone, and until when (ms), if at all: for a platform
/// that does not take a long wait inside a pass at all (eBay's pull stops instead).
pub fn waiting(account: &str) -> Option<(Duration, i64)> {
    asked_to_wait(account).map(|(left, until)| (left, wall_ms(until)))
}

/// A wall-clock time in ms since the epoch.
fn wall_ms(at: SystemTime) -> i64 {
    at.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
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
pub async fn ask_once<'a, T, Fut>(account: impl Into<Account<'a>>, request: Fut) -> Result<T, PlatformError>
where
    Fut: Future<Output = Result<T, PlatformError>>,
{
    let account = account.into();
    may_ask_now(account.name)?;
    let _permit = permit(account).await;
    // Again under the permit: a request ahead of this one may have been limited meanwhile.
    may_ask_now(account.name)?;
    let outcome = request.await;
    if let Err(PlatformError::Unreachable { wait: Some(wait), rate_limited: true, .. }) = &outcome {
        hold_off(account.name, *wait);
    }
    outcome
}

fn asked_until(until: SystemTime, then: &str) -> PlatformError {
    let ms = wall_ms(until);
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
pub async fn permit(account: Account<'_>) -> Option<OwnedSemaphorePermit> {
    static GATES: OnceLock<Mutex<HashMap<String, Arc<Semaphore>>>> = OnceLock::new();
    let gate = {
        let mut gates = GATES.get_or_init(Default::default).lock().ok()?;
        Arc::clone(
            gates
                .entry(account.name.to_string())
                .or_insert_with(|| Arc::new(Semaphore::new(account.in_flight.max(1)))),
        )
    };
    gate.acquire_owned().await.ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    const POLICY: RetryPolicy = RetryPolicy {
        tries: 3,
        base: Duration::from_millis(10),
        request_timeout: Duration::from_secs(1),
        longest_wait: Duration::from_secs(1),
    };

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
    async fn an_account_that_names_its_own_limit_has_no_more_in_flight() {
        let now = Arc::new(AtomicU32::new(0));
        let most = Arc::new(AtomicU32::new(0));
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..8 {
            let (now, most) = (Arc::clone(&now), Arc::clone(&most));
            tasks.spawn(async move {
                send(&POLICY, Account::limited("test-gate-one", 1), || async {
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
        assert_eq!(most.load(Ordering::SeqCst), 1);
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
    async fn a_request_queued_behind_a_rate_limit_waits_for_it() {
        // One request in flight at a time: the second is queued at the gate while the first
        // is out, and the first's answer is a 429 asking for a wait.
        let account = Account::limited("test-queued-hold", 1);
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let first = tokio::spawn(async move {
            let mut released = Some(released);
            let mut tries = 0;
            send(&POLICY, account, move || {
                tries += 1;
                let released = released.take();
                async move {
                    if let Some(released) = released {
                        let _ = released.await;
                    }
                    if tries == 1 {
                        Err(PlatformError::rate_limited("slow down", Some(Duration::from_millis(200))))
                    } else {
                        Ok(())
                    }
                }
            })
            .await
        });
        tokio::task::yield_now().await;
        let second = tokio::spawn(async move {
            send(&POLICY, account, || async { Ok::<_, PlatformError>(may_ask_now(account.name).is_ok()) })
                .await
        });
        // The single-threaded test runtime runs the second up to the gate, where it queues.
        for _ in 0..5 {
            tokio::task::yield_now().await;
        }
        release.send(()).unwrap();
        assert_eq!(first.await.unwrap(), Ok(()));
        assert_eq!(second.await.unwrap(), Ok(true), "the queued request went out inside the wait");
    }

    #[test]
    fn a_wait_past_any_clock_is_held_without_overflowing() {
        // `Retry-After: 18446744073709551615` seconds.
        let forever = Duration::from_secs(u64::MAX);
        let limited = PlatformError::rate_limited("slow down", Some(forever));
        let wait = wait_before(&POLICY, 2, &limited);
        hold_off("test-forever", wait);
        let Err(e) = may_ask_now("test-forever") else { panic!("the account is held") };
        assert!(e.message().contains("not to call again before"), "{e}");
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
