//! Live credential checks behind `POST /stores/ping` and `POST /warehouses/ping` (CONTRACT §8).
//!
//! Each platform with a check is one variant of [`StorePlatform`] or [`WarehousePlatform`]; adding
//! a platform means adding a variant, its token and its check. Every check runs under one deadline
//! (`PingSettings::timeout`) and reports a sentence for a person that never contains a credential.

mod ftp;
pub(crate) mod http;
pub(crate) mod sftp;
pub mod target;

use std::future::Future;
use std::time::Duration;

use serde_json::{Map, Value};

/// Where and how long the live checks may ask the platforms.
#[derive(Debug, Clone)]
pub struct PingSettings {
    /// Bound on a whole check: connect, authenticate and the one request.
    pub timeout: Duration,
    pub bigcommerce_api_base: String,
    pub sellbrite_api_base: String,
}

impl Default for PingSettings {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(10),
            bigcommerce_api_base: "https://api.bigcommerce.com".to_owned(),
            sellbrite_api_base: "https://api.sellbrite.com".to_owned(),
        }
    }
}

#[derive(Debug)]
pub enum PingError {
    /// The platform refused the credentials (401/403, refused login, unknown store hash).
    /// The String is a sentence for a person giving the platform's reason (status and, if the
    /// platform sent one, its error text) and never any credential.
    AuthenticationFailed(String),
    /// Nothing answered in time, connection refused, DNS failure, TLS failure etc. Sentence, no credentials.
    Unreachable(String),
    /// No live check exists for this platform.
    UnsupportedPlatform,
}

impl std::fmt::Display for PingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::AuthenticationFailed(reason) | Self::Unreachable(reason) => f.write_str(reason),
            Self::UnsupportedPlatform => f.write_str("No live credential check exists for this platform."),
        }
    }
}

impl std::error::Error for PingError {}

type Adapter = Map<String, Value>;

/// Store platforms that can be asked whether credentials work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StorePlatform {
    BigCommerce,
    Sellbrite,
}

impl StorePlatform {
    fn from_token(token: &str) -> Option<Self> {
        match token {
            "big_commerce" | "bigcommerce" => Some(Self::BigCommerce),
            "sellbrite" => Some(Self::Sellbrite),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::BigCommerce => "BigCommerce",
            Self::Sellbrite => "Sellbrite",
        }
    }

    async fn check(self, settings: &PingSettings, adapter: &Adapter) -> Result<(), PingError> {
        match self {
            Self::BigCommerce => http::check_bigcommerce(&settings.bigcommerce_api_base, adapter).await,
            Self::Sellbrite => http::check_sellbrite(&settings.sellbrite_api_base, adapter).await,
        }
    }
}

/// Warehouse platforms that can be asked whether credentials work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WarehousePlatform {
    Sftp,
    Ftp,
    Folder,
}

impl WarehousePlatform {
    fn from_token(token: &str) -> Option<Self> {
        match token {
            "sftp" | "dropstream" => Some(Self::Sftp),
            "ftp" => Some(Self::Ftp),
            "folder" => Some(Self::Folder),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Sftp => "The SFTP server",
            Self::Ftp => "The FTP server",
            Self::Folder => "The warehouse folder",
        }
    }

    async fn check(self, settings: &PingSettings, adapter: &Adapter) -> Result<(), PingError> {
        match self {
            Self::Sftp => sftp::check(adapter, settings.timeout).await,
            Self::Ftp => ftp::check(adapter).await,
            Self::Folder => {
                let url = adapter.get("connection_string").and_then(Value::as_str).unwrap_or_default();
                let location =
                    crate::platforms::files::Location::parse("folder", url).map_err(|problem| {
                        PingError::AuthenticationFailed(format!("The folder's connection_string {problem}."))
                    })?;
                crate::platforms::files::check(&location, settings.timeout).await.map_err(|e| match e {
                    crate::platforms::PlatformError::Unreachable { message, .. } => {
                        PingError::Unreachable(message)
                    }
                    other => PingError::AuthenticationFailed(other.message().to_string()),
                })
            }
        }
    }
}

/// Checks a store adapter. `platform` is the store's snake_case platform token; `adapter` is the
/// adapter JSON object, already validated by the caller (bigcommerce: access_token + store_hash
/// strings present, client_id optional; sellbrite: auth_token + secret_key strings present).
pub async fn check_store(
    settings: &PingSettings,
    platform: &str,
    adapter: &Map<String, Value>,
) -> Result<(), PingError> {
    let platform = StorePlatform::from_token(platform).ok_or(PingError::UnsupportedPlatform)?;
    within(settings.timeout, platform.name(), platform.check(settings, adapter)).await
}

/// Checks a warehouse adapter: `sftp` and `ftp` use `adapter["connection_string"]`, an
/// `sftp://user:password@host[:port]/path` (or `ftp://...`) URL.
pub async fn check_warehouse(
    settings: &PingSettings,
    platform: &str,
    adapter: &Map<String, Value>,
) -> Result<(), PingError> {
    let platform = WarehousePlatform::from_token(platform).ok_or(PingError::UnsupportedPlatform)?;
    within(settings.timeout, platform.name(), platform.check(settings, adapter)).await
}

/// Runs a whole check under the deadline; dropping the future closes its sockets.
async fn within(
    limit: Duration,
    who: &str,
    check: impl Future<Output = Result<(), PingError>>,
) -> Result<(), PingError> {
    tokio::time::timeout(limit, check).await.unwrap_or_else(|_| {
        Err(PingError::Unreachable(format!("{who} did not answer within {}.", describe_duration(limit))))
    })
}

fn describe_duration(limit: Duration) -> String {
    if limit.subsec_millis() == 0 {
        format!("{} s", limit.as_secs())
    } else {
        format!("{} ms", limit.as_millis())
    }
}

/// A string field of the adapter. The caller validated the adapter, so a missing field is its
/// bug; it still answers as a refusal rather than a panic.
fn adapter_field<'a>(adapter: &'a Adapter, key: &str, platform: &str) -> Result<&'a str, PingError> {
    adapter
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| PingError::AuthenticationFailed(format!("The {platform} adapter has no {key}.")))
}

/// Longest piece of a platform's own text quoted in a message.
const MAX_REASON_CHARS: usize = 200;

/// Makes text that came from a platform fit to quote: one line, no control characters,
/// capped, and with every credential we sent replaced, in case the platform echoed one back.
pub(crate) fn quote_platform_text(raw: &str, secrets: &[&str]) -> String {
    let redact = |mut text: String| {
        for secret in secrets.iter().filter(|s| !s.is_empty()) {
            text = text.replace(secret, "[redacted]");
        }
        text
    };
    // Redacted before and after tidying, so a secret with odd whitespace is caught either way.
    let text = redact(raw.to_owned()).replace(|c: char| c.is_control(), " ");
    let mut text = redact(text.split_whitespace().collect::<Vec<_>>().join(" "));
    if text.chars().count() > MAX_REASON_CHARS {
        text = text.chars().take(MAX_REASON_CHARS).collect::<String>() + "…";
    }
    text
}

/// Ends a message with a full stop unless the quoted server text already ended it.
fn end_sentence(mut message: String) -> String {
    if !message.ends_with(['.', '!', '?']) {
        message.push('.');
    }
    message
}

/// The innermost cause of an error: the part a person can act on ("Connection refused").
pub(crate) fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_platform_text_is_one_capped_line_without_secrets() {
        let raw = "bad\r\n token tok-1 \u{7} here ".repeat(40);
        let quoted = quote_platform_text(&raw, &["tok-1", ""]);
        assert!(!quoted.contains("tok-1"));
        assert!(!quoted.contains('\n') && !quoted.contains('\u{7}'));
        assert!(quoted.starts_with("bad token [redacted] here"));
        assert_eq!(quoted.chars().count(), MAX_REASON_CHARS + 1);
    }

    #[test]
    fn durations_are_described_in_whole_seconds_or_milliseconds() {
        assert_eq!(describe_duration(Duration::from_secs(10)), "10 s");
        assert_eq!(describe_duration(Duration::from_millis(1500)), "1500 ms");
    }

    #[test]
    fn platform_tokens_without_a_check_are_not_recognised() {
        assert_eq!(StorePlatform::from_token("bigcommerce"), Some(StorePlatform::BigCommerce));
        assert_eq!(StorePlatform::from_token("shopify"), None);
        assert_eq!(WarehousePlatform::from_token("ftp"), Some(WarehousePlatform::Ftp));
        assert_eq!(WarehousePlatform::from_token("shipbob"), None);
    }
}
