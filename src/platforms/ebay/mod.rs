//! eBay stores (`ebay`): a seller's orders that the seller ships, through the Sell
//! Fulfillment API, and stock of the seller's Inventory API listings
//! (`shared/spec/platforms/ebay.md`): the adapter's rules, the ping's three requests, and the
//! store client of a pass.
//!
//! - [`transport`]: the environment's base, the refresh-token grant, the waits eBay's quotas
//!   make per keyset and API, and eBay's error bodies; [`wire`]: eBay's JSON as read;
//! - [`orders`], [`notify`], [`stock`]: the pull with its mapping, shipping fulfillments after
//!   the look at the order's, and stock through the Inventory API.

pub mod notify;
pub mod orders;
pub mod stock;
pub mod transport;
pub mod wire;

use std::time::Duration;

use async_trait::async_trait;
use reqwest::StatusCode;

use super::seam::{Known, Platform, StorePlatform, StoreSettings, StoreSide};
use super::store::{
    Ask, ListedOrder, Notified, Page, PullPlan, PulledOrder, ShipmentNotice, StockSent, StoreClient,
};
use super::{Adapter, PingError, PlatformError, Settings};
use crate::fields::{Fields, Patch};
use transport::{Quota, Seller};

pub const TOKEN: &str = "ebay";
pub const NAME: &str = transport::NAME;

/// The longest credential the adapter takes, by key: eBay's are far shorter (a refresh token
/// of a few hundred characters); a bound keeps what a ping sends from growing memory.
const CREDENTIAL_LENGTHS: [(&str, usize); 3] =
    [("client_id", 256), ("client_secret", 256), ("refresh_token", 4096)];

/// Whether `id` is an eBay marketplace id: `EBAY_` and 2 to 10 upper-case letters or `_`.
pub fn is_marketplace_id(id: &str) -> bool {
    id.strip_prefix("EBAY_").is_some_and(|rest| {
        (2..=10).contains(&rest.len()) && rest.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
    })
}

/// The adapter (annex §2).
pub fn validate(adapter: &mut Fields) {
    for (key, longest) in CREDENTIAL_LENGTHS {
        if let Some(value) = adapter.required(key, Fields::text) {
            if value.chars().count() > longest {
                adapter.error(key, format!("must be at most {longest} characters"));
            } else if key == "client_id" && value.chars().any(char::is_whitespace) {
                adapter.error(key, "must be the keyset's App ID, without whitespace");
            }
        }
    }
    match adapter.text("environment") {
        Patch::Value(e) if !["production", "sandbox"].contains(&e.trim().to_ascii_lowercase().as_str()) => {
            adapter.error("environment", "must be production or sandbox");
        }
        _ => {}
    }
    match adapter.text("marketplace_id") {
        Patch::Value(m) if !is_marketplace_id(&m) => adapter.error(
            "marketplace_id",
            "must be an eBay marketplace id: EBAY_ and 2 to 10 upper-case letters or _ (EBAY_US, EBAY_MOTORS_US)",
        ),
        _ => {}
    }
}

/// eBay as the registry knows it.
pub struct Ebay;

/// eBay in the registry.
pub const PLATFORM: Known<dyn StorePlatform> = Known { name: NAME, validate, platform: &Ebay };

#[async_trait]
impl Platform for Ebay {
    async fn check(&self, settings: &Settings, adapter: &Adapter) -> Result<(), PingError> {
        let seller = Seller::new(settings, adapter, None)?;
        check(&seller).await
    }
}

impl StorePlatform for Ebay {
    fn client(&self, adapter: &Adapter, with: &StoreSettings) -> Result<StoreSide, PlatformError> {
        let (settings, policy) = (&with.platforms, with.policy);
        let settings = Settings { timeout: policy.request_timeout, ..settings.clone() };
        Ok(Box::new(Client { seller: Seller::new(&settings, adapter, Some(policy))? }))
    }
}

/// The ping (annex §3): a fresh token, one order, one inventory item. While eBay asked us to
/// wait, nothing is sent.
pub async fn check(seller: &Seller) -> Result<(), PingError> {
    seller.may_ask_now()?;
    seller.api(Quota::Token).ask_once(seller.access_token(true)).await?;
    let steps = [
        (Quota::Fulfillment, "/sell/fulfillment/v1/order?limit=1", "getOrders"),
        (Quota::Inventory, "/sell/inventory/v1/inventory_item?limit=1&offset=0", "getInventoryItems"),
    ];
    for (quota, target, op) in steps {
        let answer = match seller.ask_once(quota, target, op).await {
            Err(PlatformError::Refused(said)) if quota == Quota::Inventory && said.contains("HTTP 403") => {
                return Err(PingError::AuthenticationFailed(format!(
                    "{} The refresh token lacks the sell.inventory scope.",
                    said
                )));
            }
            other => other?,
        };
        let empty_inventory = quota == Quota::Inventory
            && (answer.status == StatusCode::NOT_FOUND
                || (answer.status == StatusCode::BAD_REQUEST && Seller::has_error(&answer, 25710)));
        match answer.status {
            s if s.is_success() => {
                serde_json::from_slice::<serde_json::Value>(&answer.body).map_err(|_| {
                    PingError::Unreachable(format!("eBay's answer to {op} is not the documented JSON."))
                })?;
            }
            _ if empty_inventory => {}
            _ => {
                return Err(PingError::Unreachable(format!(
                    "eBay gave no verdict on {op} ({}).",
                    seller.said(&answer)
                )));
            }
        }
    }
    Ok(())
}

/// The store side of a pass on one seller account.
pub struct Client {
    pub(crate) seller: Seller,
}

#[async_trait]
impl StoreClient for Client {
    fn pull_plan(&self) -> PullPlan {
        PullPlan {
            // A sent order changes at eBay when we report its shipments; its items do not.
            rewrites_sent_orders: false,
            // `A` is the cursor less 5 minutes: eBay's index lags.
            ..PullPlan::orders(Duration::from_secs(5 * 60))
        }
    }

    async fn page(&self, ask: Ask<'_>) -> Result<Page, PlatformError> {
        orders::page(self, ask.since_ms, ask.at).await
    }

    /// eBay's list carries whole orders ([`orders::page`] makes each one's record).
    async fn record(&self, order: &ListedOrder) -> Result<PulledOrder, PlatformError> {
        Err(PlatformError::BadData(format!("eBay listed order {} without its record.", order.external_id)))
    }

    async fn notify(&self, notice: &ShipmentNotice) -> Result<Notified, PlatformError> {
        notify::notify(self, notice).await
    }

    /// Annex §5, *Rate limits*: a shipment met by a wait longer than the pass becomes
    /// `delayed_notifying_of_shipment`, no try counted.
    fn shows_paced_shipments_delayed(&self) -> bool {
        true
    }

    fn stock_per_request(&self) -> usize {
        stock::PER_STEP
    }

    async fn set_stock(&self, levels: &[(String, i64)]) -> Result<StockSent, PlatformError> {
        stock::set(self, levels).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn problems(adapter: Value) -> Vec<String> {
        crate::fields::adapter_problems(validate, adapter).into_iter().map(|(key, _)| key).collect()
    }

    fn good() -> Value {
        json!({"client_id": "AcmeMugs-orderbri-PRD-1a2b3c4d5-6e7f8a9b", "client_secret": "PRD-1a2b3c4d5e6f-7a8b",
               "refresh_token": "v^1.1#i^1#r^1#I^3#p^3#f^0#t^Ul4xMF8wOkV4YW1wbGU="})
    }

    #[test]
    fn each_malformed_adapter_key_is_named() {
        assert!(problems(good()).is_empty());
        let with = |key: &str, value: Value| {
            let mut adapter = good();
            adapter[key] = value;
            problems(adapter)
        };
        for key in ["client_id", "client_secret", "refresh_token"] {
            let mut adapter = good();
            adapter.as_object_mut().unwrap().remove(key);
            assert_eq!(problems(adapter), [format!("adapter[{key}]")], "{key}");
            assert_eq!(with(key, json!("  ")), [format!("adapter[{key}]")], "{key} blank");
        }
        assert_eq!(with("client_id", json!("Acme Mugs")), ["adapter[client_id]"]);
        assert!(with("environment", json!("Sandbox")).is_empty(), "case-insensitive");
        assert!(with("environment", json!("PRODUCTION")).is_empty());
        assert_eq!(with("environment", json!("staging")), ["adapter[environment]"]);
        for good in ["EBAY_US", "EBAY_GB", "EBAY_MOTORS_US", "EBAY_DE"] {
            assert!(with("marketplace_id", json!(good)).is_empty(), "{good}");
        }
        for bad in ["ebay_us", "EBAY_U", "US", "EBAY_ABCDEFGHIJK", "EBAY_U5"] {
            assert_eq!(with("marketplace_id", json!(bad)), ["adapter[marketplace_id]"], "{bad}");
        }
        assert!(with("unknown", json!(1)).is_empty());
        assert_eq!(with("refresh_token", json!("v".repeat(4097))), ["adapter[refresh_token]"]);
    }
}

#[cfg(test)]
mod client_tests;
