//! Amazon stores (`amazon`), a seller's merchant-fulfilled orders through the Selling Partner
//! API (`shared/spec/platforms/amazon.md`): the adapter's rules, the ping's three checks, and
//! the store client of a pass.
//!
//! - [`transport`]: the regional base, headers, Login with Amazon's tokens, and what
//!   Amazon's answers mean; [`pacing`]: the token buckets per account and operation;
//! - [`orders`], [`notify`], [`stock`]: the pull with its mapping, shipment confirmations
//!   after the `getOrder` check, and stock through `JSON_LISTINGS_FEED` feeds.

pub mod notify;
pub mod orders;
pub mod pacing;
pub mod stock;
pub mod transport;
pub mod wire;

use std::collections::HashSet;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::StatusCode;
use serde::Deserialize;
use serde_json::Value;

use super::seam::{Known, Platform, StorePlatform, StoreSettings, StoreSide};
use super::store::{
    Ask, ListedOrder, Notified, Page, PullPlan, PulledOrder, Receipt, ShipmentNotice, StockSent, StoreClient,
};
use super::{Adapter, PingError, PlatformError, Settings};
use crate::fields::Fields;
use pacing::Operation;
use transport::Seller;

pub const TOKEN: &str = "amazon";
pub const NAME: &str = "Amazon";

/// The regions of the Selling Partner API.
pub const REGIONS: [&str; 3] = ["na", "eu", "fe"];

fn upper_alphanumeric(s: &str, min: usize, max: usize) -> bool {
    (min..=max).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

/// The adapter (annex §2).
pub fn validate(adapter: &mut Fields) {
    if let Some(region) = adapter.required("region", Fields::text)
        && !REGIONS.contains(&region.to_ascii_lowercase().as_str())
    {
        adapter.error("region", "must be na, eu or fe");
    }
    // Empty is "must not be empty", absent "is required", each under the key.
    if let Some(ids) = adapter.required("marketplace_ids", Fields::array) {
        let texts: Vec<Option<&str>> = ids.iter().map(Value::as_str).collect();
        let distinct: HashSet<&str> = texts.iter().flatten().copied().collect();
        if ids.len() > 25 {
            adapter.error("marketplace_ids", "must name 1 to 25 marketplace ids");
        } else if texts.iter().any(|t| !t.is_some_and(|t| upper_alphanumeric(t, 10, 20))) {
            adapter.error(
                "marketplace_ids",
                "must be marketplace ids: 10 to 20 upper-case letters and digits (ATVPDKIKX0DER)",
            );
        } else if distinct.len() != ids.len() {
            adapter.error("marketplace_ids", "must not name a marketplace twice");
        }
    }
    if let Some(seller) = adapter.required("seller_id", Fields::text)
        && !upper_alphanumeric(&seller, 8, 20)
    {
        adapter
            .error("seller_id", "must be the seller's merchant token: 8 to 20 upper-case letters and digits");
    }
    // The annex gives no length; Amazon's are far shorter (a client id of 61 characters, a
    // refresh token of a few hundred). A bound keeps what a ping sends from growing memory.
    for (key, longest) in CREDENTIAL_LENGTHS {
        if let Some(value) = adapter.required(key, Fields::text)
            && value.chars().count() > longest
        {
            adapter.error(key, format!("must be at most {longest} characters"));
        }
    }
}

/// The longest credential the adapter takes, by key.
const CREDENTIAL_LENGTHS: [(&str, usize); 3] =
    [("client_id", 256), ("client_secret", 256), ("refresh_token", 2048)];

/// Amazon as the registry knows it.
pub struct Amazon;

/// Amazon in the registry.
pub const PLATFORM: Known<dyn StorePlatform> = Known { name: NAME, validate, platform: &Amazon };

#[async_trait]
impl Platform for Amazon {
    async fn check(&self, settings: &Settings, adapter: &Adapter) -> Result<(), PingError> {
        let seller = Seller::new(settings, adapter, None)?;
        check(&seller).await
    }
}

impl StorePlatform for Amazon {
    fn client(&self, adapter: &Adapter, with: &StoreSettings) -> Result<StoreSide, PlatformError> {
        let (settings, policy) = (&with.platforms, with.policy);
        let settings = Settings { timeout: policy.request_timeout, ..settings.clone() };
        Ok(Box::new(Client { seller: Seller::new(&settings, adapter, Some(policy))? }))
    }
}

/// The ping (annex §3): a fresh token, the seller's marketplace participations, the listings
/// check. While the account's buckets have no token for either check, nothing is sent.
pub async fn check(seller: &Seller) -> Result<(), PingError> {
    seller.may_ask_now(&[Operation::GetMarketplaceParticipations, Operation::SearchListingsItems])?;
    let token = seller.token(true).await?;
    let (status, body) = seller
        .ask_once(Operation::GetMarketplaceParticipations, &token, "/sellers/v1/marketplaceParticipations")
        .await?;
    match status {
        s if s.is_success() => {}
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            return Err(PingError::AuthenticationFailed(format!(
                "Amazon refused the seller's marketplace participations ({}).",
                seller.said(status, &body, &token)
            )));
        }
        s => return Err(PingError::Unreachable(unanswered(seller, s, &body, &token))),
    }
    #[derive(Deserialize)]
    struct Participations {
        payload: Vec<Participation>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Participation {
        marketplace: Marketplace,
        participation: Taking,
    }
    #[derive(Deserialize)]
    struct Marketplace {
        id: String,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Taking {
        is_participating: bool,
    }
    let taken: Participations = serde_json::from_slice(&body).map_err(|_| {
        PingError::Unreachable(
            "Amazon's answer to getMarketplaceParticipations is not the documented JSON.".into(),
        )
    })?;
    let taking: HashSet<&str> = taken
        .payload
        .iter()
        .filter(|p| p.participation.is_participating)
        .map(|p| p.marketplace.id.as_str())
        .collect();
    if let Some(missing) = seller.marketplace_ids.iter().find(|id| !taking.contains(id.as_str())) {
        return Err(PingError::AuthenticationFailed(format!(
            "{missing} is not a marketplace of this seller in region {}.",
            seller.region
        )));
    }
    let target = format!(
        "/listings/2021-08-01/items/{}?marketplaceIds={}&includedData=summaries&pageSize=1",
        transport::segment(&seller.seller_id),
        transport::encode(&seller.marketplace_ids[0]),
    );
    let (status, body) = seller.ask_once(Operation::SearchListingsItems, &token, &target).await?;
    match status {
        s if s.is_success() => serde_json::from_slice::<Value>(&body).map(|_| ()).map_err(|_| {
            PingError::Unreachable(
                "Amazon's answer to searchListingsItems is not the documented JSON.".into(),
            )
        }),
        StatusCode::BAD_REQUEST
        | StatusCode::UNAUTHORIZED
        | StatusCode::FORBIDDEN
        | StatusCode::NOT_FOUND => Err(PingError::AuthenticationFailed(format!(
            "Amazon refused listings access for seller_id {}: wrong seller_id, or the application lacks the Product Listing role.",
            seller.seller_id
        ))),
        s => Err(PingError::Unreachable(unanswered(seller, s, &body, &token))),
    }
}

fn unanswered(seller: &Seller, status: StatusCode, body: &[u8], token: &str) -> String {
    format!("Amazon gave no verdict ({}).", seller.said(status, body, token))
}

/// The store side of a pass on one seller account.
pub struct Client {
    pub(crate) seller: Seller,
}

#[async_trait]
impl StoreClient for Client {
    fn pull_plan(&self) -> PullPlan {
        PullPlan {
            // An order re-read before it is sent carries Amazon's new quantities; after, the
            // notify check holds a shipment to what Amazon still expects.
            rewrites_sent_orders: false,
            continuation_lifetime: Some(orders::CONTINUATION_LIFETIME),
            // `lastUpdatedAfter` is the cursor less 5 minutes.
            ..PullPlan::orders(Duration::from_secs(5 * 60))
        }
    }

    async fn page(&self, ask: Ask<'_>) -> Result<Page, PlatformError> {
        orders::page(self, ask.since_ms, ask.at).await
    }

    fn continuation_refused(&self, error: &PlatformError) -> bool {
        // A token past its life, or one Amazon no longer matches to the filters.
        matches!(error, PlatformError::Rejected { status: 400, .. })
    }

    /// Amazon's list carries whole orders ([`orders::page`] makes each one's record), so
    /// there is no entry to read the rest of.
    async fn record(&self, order: &ListedOrder) -> Result<PulledOrder, PlatformError> {
        Err(PlatformError::BadData(format!("Amazon listed order {} without its record.", order.external_id)))
    }

    async fn notify(&self, notice: &ShipmentNotice) -> Result<Notified, PlatformError> {
        notify::notify(self, notice).await
    }

    fn stock_per_request(&self) -> usize {
        stock::PER_FEED
    }

    /// Levels go as one feed, applied later: its receipt is read at later passes.
    async fn set_stock(&self, levels: &[(String, i64)]) -> Result<StockSent, PlatformError> {
        stock::set(self, levels).await
    }

    async fn read_receipts(&self, receipts: &[String]) -> Result<Vec<(String, Receipt)>, PlatformError> {
        stock::receipts(self, receipts).await
    }
}

#[cfg(test)]
mod client_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(adapter: Value) -> Vec<String> {
        crate::fields::adapter_problems(validate, adapter).into_iter().map(|(key, _)| key).collect()
    }

    fn good() -> Value {
        json!({"region": "NA", "marketplace_ids": ["ATVPDKIKX0DER", "A2EUQ1WTGCTBG2"], "seller_id": "A2EXAMPLE12345",
               "client_id": "amzn1.application-oa2-client.0123", "client_secret": "s", "refresh_token": "Atzr|x"})
    }

    #[test]
    fn each_malformed_adapter_key_is_named() {
        assert!(problems(good()).is_empty());
        let with = |key: &str, value: Value| {
            let mut adapter = good();
            adapter[key] = value;
            problems(adapter)
        };
        let without = |key: &str| {
            let mut adapter = good();
            adapter.as_object_mut().unwrap().remove(key);
            problems(adapter)
        };
        for key in ["region", "marketplace_ids", "seller_id", "client_id", "client_secret", "refresh_token"] {
            assert_eq!(without(key), [format!("adapter[{key}]")], "{key}");
        }
        assert_eq!(with("region", json!("us")), ["adapter[region]"]);
        assert_eq!(with("marketplace_ids", json!([])), ["adapter[marketplace_ids]"]);
        assert_eq!(with("marketplace_ids", json!(["atvpdkikx0der"])), ["adapter[marketplace_ids]"]);
        assert_eq!(
            with("marketplace_ids", json!(["ATVPDKIKX0DER", "ATVPDKIKX0DER"])),
            ["adapter[marketplace_ids]"]
        );
        assert_eq!(with("marketplace_ids", json!("ATVPDKIKX0DER")), ["adapter[marketplace_ids]"]);
        let many: Vec<String> = (0..26).map(|i| format!("ATVPDKIKX0D{i:02}")).collect();
        assert_eq!(with("marketplace_ids", json!(many)), ["adapter[marketplace_ids]"]);
        assert_eq!(with("seller_id", json!("short")), ["adapter[seller_id]"]);
        assert_eq!(with("seller_id", json!("a2example12345")), ["adapter[seller_id]"]);
        assert_eq!(with("client_secret", json!("  ")), ["adapter[client_secret]"]);
        assert!(with("unknown", json!(1)).is_empty());
    }

    #[test]
    fn absurdly_long_credentials_are_refused_by_name() {
        for (key, longest) in [("client_id", 256), ("client_secret", 256), ("refresh_token", 2048)] {
            let mut adapter = good();
            adapter[key] = json!("a".repeat(longest));
            assert!(problems(adapter.clone()).is_empty(), "{key} of {longest} characters");
            adapter[key] = json!("a".repeat(longest + 1));
            assert_eq!(problems(adapter.clone()), [format!("adapter[{key}]")], "{key}");
            adapter[key] = json!("a".repeat(900 * 1024));
            assert_eq!(problems(adapter), [format!("adapter[{key}]")], "{key}");
        }
    }
}
