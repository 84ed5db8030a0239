//! BigCommerce stores (`big_commerce`, and `bigcommerce` as the same platform): the adapter's
//! rules and the credential check, `GET {api_base}/stores/{store_hash}/v2/store` with
//! `X-Auth-Token` (CONTRACT §6, §8).

pub mod carriers;
pub mod client;
#[cfg(test)]
mod client_tests;
mod wire;

use std::time::Duration;

use async_trait::async_trait;

use super::paging::Place;
use super::seam::{Known, Platform, StorePlatform, StoreSettings, StoreSide};
use super::store::{
    Ask, ListedOrder, Notified, Page, PullPlan, PulledOrder, ShipmentNotice, StockSent, StoreClient,
};
use super::{Adapter, PingError, PlatformError, Settings, api, quote_platform_text};
use crate::fields::Fields;

pub const NAME: &str = "BigCommerce";

/// `access_token` and `store_hash` required, `client_id` optional.
pub fn validate(adapter: &mut Fields) {
    adapter.required("access_token", Fields::text);
    adapter.required("store_hash", Fields::text);
    adapter.text("client_id");
}

/// BigCommerce as the registry knows it.
pub struct BigCommerce;

/// BigCommerce in the registry.
pub const PLATFORM: Known<dyn StorePlatform> = Known { name: NAME, validate, platform: &BigCommerce };

#[async_trait]
impl Platform for BigCommerce {
    async fn check(&self, settings: &Settings, adapter: &Adapter) -> Result<(), PingError> {
        check(settings, adapter).await.map_err(PingError::from)
    }
}

impl StorePlatform for BigCommerce {
    fn client(&self, adapter: &Adapter, with: &StoreSettings) -> Result<StoreSide, PlatformError> {
        Ok(Box::new(client::BigCommerce::new(&with.platforms, adapter, Some(with.policy))?))
    }
}

#[async_trait]
impl StoreClient for client::BigCommerce {
    fn pull_plan(&self) -> PullPlan {
        // Modification times may lag their commit by a little.
        PullPlan::orders(Duration::from_secs(5 * 60))
    }

    /// Orders by `date_modified`, oldest first: walked by key.
    async fn page(&self, ask: Ask<'_>) -> Result<Page, PlatformError> {
        let place = Place::of(ask.since_ms, ask.at)?;
        let orders = client::BigCommerce::orders_page(self, place.since, place.page).await?;
        Ok(place.by_key(orders, client::BigCommerce::PAGE_SIZE as usize))
    }

    async fn record(&self, order: &ListedOrder) -> Result<PulledOrder, PlatformError> {
        client::BigCommerce::order_record(self, order).await
    }

    async fn notify(&self, notice: &ShipmentNotice) -> Result<Notified, PlatformError> {
        client::BigCommerce::notify(self, notice).await
    }

    fn stock_per_request(&self) -> usize {
        client::STOCK_PER_REQUEST
    }

    async fn set_stock(&self, levels: &[(String, i64)]) -> Result<StockSent, PlatformError> {
        Ok(StockSent::whole(client::BigCommerce::set_stock(self, levels).await?, levels.len()))
    }
}

/// Asks BigCommerce whether the adapter's token opens its store. A 404 is an unknown store,
/// which for credentials is a refusal.
pub async fn check(settings: &Settings, adapter: &Adapter) -> Result<(), PlatformError> {
    let token = api::field(adapter, "access_token", NAME)?;
    let store_hash = api::field(adapter, "store_hash", NAME)?;
    if !is_store_hash(store_hash) {
        // It goes into the URL path; anything else could walk to another endpoint.
        return Err(PlatformError::Refused(format!(
            "BigCommerce has no store with hash '{}': store hashes are letters and digits only.",
            quote_platform_text(store_hash, &[token])
        )));
    }
    client::BigCommerce::new(settings, adapter, None)?.ping().await
}

/// The account whose rate limit a request spends: BigCommerce limits each store.
pub(crate) fn account(api_base: &str, store_hash: &str) -> String {
    format!("big_commerce:{}/stores/{store_hash}", api_base.trim_end_matches('/'))
}

/// BigCommerce store hashes are short lowercase alphanumerics (`abc123`); this also admits
/// upper case, `-` and `_`, never `/`, `.`, `%`, `?` or `#`.
pub(crate) fn is_store_hash(hash: &str) -> bool {
    !hash.is_empty()
        && hash.len() <= 64
        && hash.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_hashes_that_could_change_the_url_path_are_refused() {
        for hash in ["abc123", "ABC-1_2"] {
            assert!(is_store_hash(hash), "{hash}");
        }
        for hash in ["", "a/b", "..", "a?b", "a#b", "a%2F", "a b"] {
            assert!(!is_store_hash(hash), "{hash}");
        }
    }
}
