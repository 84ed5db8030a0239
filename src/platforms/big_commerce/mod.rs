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

use super::retry::RetryPolicy;
use super::seam::{Platform, StorePlatform};
use super::store::{
    ListedOrder, Listing, Notified, PullPlan, PulledOrder, ShipmentNotice, StoreClient, Walk,
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

#[async_trait]
impl Platform for BigCommerce {
    fn name(&self) -> &'static str {
        NAME
    }

    fn validate(&self, adapter: &mut Fields) {
        validate(adapter);
    }

    async fn check(&self, settings: &Settings, adapter: &Adapter) -> Result<(), PingError> {
        check(settings, adapter).await.map_err(PingError::from)
    }
}

impl StorePlatform for BigCommerce {
    fn client(
        &self,
        settings: &Settings,
        adapter: &Adapter,
        policy: RetryPolicy,
    ) -> Result<Box<dyn StoreClient>, PlatformError> {
        Ok(Box::new(client::BigCommerce::new(settings, adapter, Some(policy))?))
    }
}

#[async_trait]
impl StoreClient for client::BigCommerce {
    fn pull_plan(&self) -> PullPlan {
        PullPlan {
            listings: &[Listing::Orders],
            page_size: client::BigCommerce::PAGE_SIZE as usize,
            // Modification times may lag their commit by a little.
            overlap: Duration::from_secs(5 * 60),
            walk: Walk::ByKey,
            rewrites_sent_orders: true,
        }
    }

    async fn orders_page(
        &self,
        listing: Listing,
        since_ms: Option<i64>,
        page: u32,
    ) -> Result<Vec<ListedOrder>, PlatformError> {
        match listing {
            Listing::Orders => client::BigCommerce::orders_page(self, since_ms, page).await,
            Listing::Cancellations => Ok(Vec::new()),
        }
    }

    async fn order_record(&self, order: &ListedOrder) -> Result<PulledOrder, PlatformError> {
        client::BigCommerce::order_record(self, order).await
    }

    async fn notify(&self, notice: &ShipmentNotice) -> Result<Notified, PlatformError> {
        client::BigCommerce::notify(self, notice).await
    }

    fn stock_per_request(&self) -> usize {
        client::STOCK_PER_REQUEST
    }

    async fn set_stock(&self, levels: &[(String, i64)]) -> Result<usize, PlatformError> {
        client::BigCommerce::set_stock(self, levels).await
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
