//! Everything that talks to a store or warehouse platform: one folder per platform, each
//! owning its adapter rules, its credential check, its client and its mapping, known to the
//! rest of orderbridge through the traits and the one token list of [`registry`]. This
//! module holds what they share: the operator's settings for reaching them, the dispatch of
//! adapter validation and of the ping's credential check (CONTRACT §6, §8), and the deadline
//! every check runs under.

pub mod amazon;
pub mod api;
pub mod big_commerce;
pub mod documents;
pub mod ebay;
pub mod error;
pub mod files;
pub mod http;
pub mod paging;
pub mod reach;
pub mod reference;
pub mod registry;
pub mod retry;
pub mod seam;
pub mod sellbrite;
pub mod shipbob;
pub mod shipstation;
pub mod shopify;
pub mod store;
pub mod token;
pub mod warehouse;
pub mod woocommerce;

pub use error::PlatformError;

use std::time::Duration;

use serde_json::{Map, Value};

use crate::config::Config;
use crate::fields::Fields;

/// Where and how long orderbridge may ask the platforms: the operator's choice (CONTRACT §10),
/// the same for pings and for sync passes.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Bound on a whole check, and on one answer in a pass.
    pub timeout: Duration,
    pub bigcommerce_api_base: String,
    pub sellbrite_api_base: String,
    /// Where an adapter's own address may lead (CONTRACT §6): `Anywhere` as configured; a
    /// customer user's ping, and a pass over a row whose address a customer user set, put
    /// their own policy here.
    pub reach: reach::Reach,
    /// Where Shopify shops are: `{shop}` becomes the adapter's shop in lower case.
    pub shopify_api_base: String,
    /// Where ShipBob's API is (`shipbob_api_base`), without a trailing `/`.
    pub shipbob_api_base: String,
    /// Where ShipStation's API V2 is (`shipstation_api_base`), without a trailing `/`.
    pub shipstation_api_base: String,
    /// Where Amazon's Selling Partner API is (`amazon_api_base`, `{region}` to fill in),
    /// without a trailing `/`.
    pub amazon_api_base: String,
    /// Where Amazon's access tokens come from (`amazon_lwa_base`), without a trailing `/`.
    pub amazon_lwa_base: String,
    /// Where eBay's APIs and token endpoint are for production keysets (`ebay_api_base`)
    /// and sandbox ones (`ebay_sandbox_api_base`), without a trailing `/`.
    pub ebay_api_base: String,
    pub ebay_sandbox_api_base: String,
    /// The largest answer read from a platform's API (`max_platform_body_mib`).
    pub max_body_bytes: usize,
    /// The largest file or listing read from a file warehouse (`max_warehouse_file_mib`).
    pub max_file_bytes: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(10),
            bigcommerce_api_base: "https://api.bigcommerce.com".to_owned(),
            sellbrite_api_base: "https://api.sellbrite.com".to_owned(),
            reach: reach::Reach::Anywhere,
            shopify_api_base: "https://{shop}".to_owned(),
            shipbob_api_base: "https://api.shipbob.com".to_owned(),
            shipstation_api_base: "https://api.shipstation.com".to_owned(),
            amazon_api_base: "https://sellingpartnerapi-{region}.amazon.com".to_owned(),
            amazon_lwa_base: "https://api.amazon.com".to_owned(),
            ebay_api_base: "https://api.ebay.com".to_owned(),
            ebay_sandbox_api_base: "https://api.sandbox.ebay.com".to_owned(),
            max_body_bytes: 16 << 20,
            max_file_bytes: 64 << 20,
        }
    }
}

impl Settings {
    pub fn from_config(config: &Config) -> Settings {
        Settings {
            timeout: Duration::from_secs(config.ping_timeout_secs),
            bigcommerce_api_base: config.bigcommerce_api_base.clone(),
            sellbrite_api_base: config.sellbrite_api_base.clone(),
            reach: reach::Reach::Anywhere,
            shopify_api_base: config.shopify_api_base.clone(),
            shipbob_api_base: config.shipbob_api_base.trim_end_matches('/').to_owned(),
            shipstation_api_base: config.shipstation_api_base.trim_end_matches('/').to_owned(),
            amazon_api_base: config.amazon_api_base.trim_end_matches('/').to_owned(),
            amazon_lwa_base: config.amazon_lwa_base.trim_end_matches('/').to_owned(),
            ebay_api_base: config.ebay_api_base.trim_end_matches('/').to_owned(),
            ebay_sandbox_api_base: config.ebay_sandbox_api_base.trim_end_matches('/').to_owned(),
            max_body_bytes: config.max_platform_body_bytes(),
            max_file_bytes: config.max_warehouse_file_bytes(),
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
    /// The adapter's address is one its policy may not reach (CONTRACT §6): a sentence
    /// naming the host, never an address it resolved to.
    NotAllowed(String),
}

impl std::fmt::Display for PingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::AuthenticationFailed(reason) | Self::Unreachable(reason) | Self::NotAllowed(reason) => {
                f.write_str(reason)
            }
            Self::UnsupportedPlatform => f.write_str("No live credential check exists for this platform."),
        }
    }
}

impl std::error::Error for PingError {}

/// Which resource an adapter belongs to: the same platform name may mean different things.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    Store,
    Warehouse,
}

/// Checks the adapter shape of the platforms we know; problems are named `adapter[field]`
/// under `fields`. Other platforms accept any object.
pub fn validate(fields: &mut Fields, owner: Owner, platform: &str, settings: &Map<String, Value>) {
    let mut adapter = fields.child("adapter", settings.clone());
    if let Some(known) = registry::platform(owner, platform) {
        (known.validate)(&mut adapter);
    }
    fields.absorb(adapter);
}

/// Where a store or warehouse of a known platform connects, as its platform names it
/// ([`seam::Platform::address`]): a file warehouse's `connection_string` today.
pub fn address_of(owner: Owner, platform: &str, adapter: &Map<String, Value>) -> Option<reach::Address> {
    registry::platform(owner, platform)?.platform.address(adapter)
}

/// Where a platform keeps its data on this machine, if it does: `Some` with the problem of a
/// place the operator does not allow (see [`seam::Platform::on_this_machine`]).
pub fn on_this_machine(
    owner: Owner,
    platform: &str,
    adapter: &Map<String, Value>,
    config: &Config,
) -> Option<Result<(), (&'static str, String)>> {
    registry::platform(owner, platform)?.platform.on_this_machine(adapter, config)
}

/// A platform's adapter, unmasked: for the platform modules only.
pub type Adapter = Map<String, Value>;

/// Checks a store adapter, already validated by the caller. `platform` is the store's token.
pub async fn check_store(
    settings: &Settings,
    platform: &str,
    adapter: &Map<String, Value>,
) -> Result<(), PingError> {
    check(settings, Owner::Store, platform, adapter).await
}

/// Checks a warehouse adapter, already validated by the caller: the file warehouses use
/// `adapter["connection_string"]`.
pub async fn check_warehouse(
    settings: &Settings,
    platform: &str,
    adapter: &Map<String, Value>,
) -> Result<(), PingError> {
    check(settings, Owner::Warehouse, platform, adapter).await
}

async fn check(
    settings: &Settings,
    owner: Owner,
    platform: &str,
    adapter: &Map<String, Value>,
) -> Result<(), PingError> {
    let platform = registry::platform(owner, platform).ok_or(PingError::UnsupportedPlatform)?;
    let outcome = tokio::time::timeout(settings.timeout, platform.platform.check(settings, adapter)).await;
    match outcome {
        Ok(result) => result,
        Err(_) => Err(PingError::Unreachable(format!(
            "{} did not answer within {}.",
            platform.name,
            describe_duration(settings.timeout)
        ))),
    }
}

/// What a ping tells its caller (CONTRACT §8): refused, no answer, or no check at all.
/// A platform request refused for good for another reason (a 4xx other than 401/403, or a
/// redirect) says nothing about the credentials, so a ping reports it as no verdict.
impl From<PlatformError> for PingError {
    fn from(error: PlatformError) -> Self {
        match error {
            PlatformError::Refused(message) => PingError::AuthenticationFailed(message),
            PlatformError::NotAllowed(message) => PingError::NotAllowed(message),
            PlatformError::Unreachable { message, .. }
            | PlatformError::Rejected { message, .. }
            | PlatformError::BadData(message)
            | PlatformError::NotYet(message) => PingError::Unreachable(message),
        }
    }
}

fn describe_duration(limit: Duration) -> String {
    if limit.subsec_millis() == 0 {
        format!("{} s", limit.as_secs())
    } else {
        format!("{} ms", limit.as_millis())
    }
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
pub(crate) fn end_sentence(mut message: String) -> String {
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
    fn file_warehouses_name_the_server_of_their_connection_string_and_others_no_address() {
        let adapter = |url: &str| Map::from_iter([("connection_string".to_string(), Value::from(url))]);
        let address = address_of(Owner::Warehouse, "dropstream", &adapter("sftp://u:p@files.example.com"));
        assert_eq!(
            address,
            Some(reach::Address {
                field: "adapter[connection_string]",
                host: "files.example.com".into(),
                port: 22
            })
        );
        let address = address_of(Owner::Warehouse, "ftp", &adapter("ftp://u:p@[::1]:2121/x")).unwrap();
        assert_eq!((address.host.as_str(), address.port), ("::1", 2121));
        assert_eq!(address_of(Owner::Warehouse, "folder", &adapter("file:///srv/wh")), None);
        assert_eq!(address_of(Owner::Store, "big_commerce", &adapter("sftp://u:p@h")), None);
        assert_eq!(address_of(Owner::Warehouse, "skubana", &adapter("sftp://u:p@h")), None);
    }
}
