//! What can go wrong when orderbridge talks to a platform, sorted by what the caller does
//! about it: a passing failure is retried (after the wait the platform asked for), the rest
//! are not. Every message is a sentence for a person and never carries a credential.

use std::fmt;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlatformError {
    /// A passing failure: no answer in time, a refused connection, a 5xx, a 429 (or
    /// Sellbrite's 403 `Rate Limit Exceeded`). `wait` is how long the platform asked us to
    /// wait before the next request, when it said (`Retry-After`,
    /// `X-Rate-Limit-Time-Reset-Ms`); `rate_limited` tells a 429-like answer from the rest.
    Unreachable { message: String, wait: Option<Duration>, rate_limited: bool },
    /// The platform refused the credentials: 401/403, a refused login, an unknown store.
    Refused(String),
    /// The platform refused this request for good: a 404 for a record, another 4xx.
    /// `status` is the HTTP status, 0 where the platform does not speak HTTP.
    Rejected { status: u16, message: String },
    /// The platform answered something that cannot be read; the message names the record.
    BadData(String),
    /// The address is one the row's reach may not connect to (CONTRACT §6): nothing was
    /// sent, and it will be refused again until the address or the policy changes.
    NotAllowed(String),
    /// Nothing was sent: the platform's rate limit, which orderbridge paces itself (Amazon's
    /// token buckets), allows the request only later than this pass may wait. The work waits
    /// for a later pass without counting a try; the message names the time.
    NotYet(String),
}

impl PlatformError {
    /// A passing failure without a wait of its own.
    pub fn unreachable(message: impl Into<String>) -> Self {
        PlatformError::Unreachable { message: message.into(), wait: None, rate_limited: false }
    }

    /// A rate-limit answer; `wait` is what the platform asked for, if anything.
    pub fn rate_limited(message: impl Into<String>, wait: Option<Duration>) -> Self {
        PlatformError::Unreachable { message: message.into(), wait, rate_limited: true }
    }

    /// Whether trying again later may succeed (the engine retries only these).
    pub fn is_passing(&self) -> bool {
        matches!(self, PlatformError::Unreachable { .. } | PlatformError::NotYet(_))
    }

    /// The sentence for a person.
    pub fn message(&self) -> &str {
        match self {
            PlatformError::Unreachable { message, .. }
            | PlatformError::Refused(message)
            | PlatformError::Rejected { message, .. }
            | PlatformError::BadData(message)
            | PlatformError::NotAllowed(message)
            | PlatformError::NotYet(message) => message,
        }
    }

    /// The error code a sync run reports (CONTRACT §11). A request refused for good is the
    /// platform telling us our data cannot be used, which a person reads as bad data.
    pub fn code(&self) -> &'static str {
        match self {
            PlatformError::Unreachable { .. } | PlatformError::NotYet(_) => "adapter_unreachable",
            PlatformError::Refused(_) => "adapter_authentication_failed",
            PlatformError::Rejected { .. } | PlatformError::BadData(_) | PlatformError::NotAllowed(_) => {
                "bad_data"
            }
        }
    }
}

impl fmt::Display for PlatformError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for PlatformError {}
