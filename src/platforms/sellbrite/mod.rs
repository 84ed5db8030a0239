//! Sellbrite stores (`sellbrite`): the adapter's rules and the credential check,
//! `GET {api_base}/v1/warehouses` with HTTP Basic (CONTRACT §6, §8). Sellbrite answers its
//! rate limit with a 403 `Rate Limit Exceeded`, which `http::classify` tells from a refusal.

pub mod client;

use std::time::Duration;

use async_trait::async_trait;

use super::paging::Place;
use super::seam::{Known, Platform, StorePlatform, StoreSettings, StoreSide};
use super::store::{
    Ask, ListedOrder, Listing, Notified, Page, PullPlan, PulledOrder, ShipmentNotice, StockSent, StoreClient,
};
use super::{Adapter, PingError, PlatformError, Settings, api};
use crate::fields::Fields;

pub const NAME: &str = "Sellbrite";

/// `auth_token` and `secret_key` required; `warehouse_uuid` (the Sellbrite warehouse whose
/// fulfillments orderbridge handles) optional.
pub fn validate(adapter: &mut Fields) {
    adapter.required("auth_token", Fields::text);
    adapter.required("secret_key", Fields::text);
    adapter.text("warehouse_uuid");
}

/// Sellbrite as the registry knows it.
pub struct Sellbrite;

/// Sellbrite in the registry.
pub const PLATFORM: Known<dyn StorePlatform> = Known { name: NAME, validate, platform: &Sellbrite };

#[async_trait]
impl Platform for Sellbrite {
    async fn check(&self, settings: &Settings, adapter: &Adapter) -> Result<(), PingError> {
        // The token and secret may list the warehouses.
        client::Sellbrite::new(settings, adapter, None)?.ping().await.map_err(PingError::from)
    }
}

impl StorePlatform for Sellbrite {
    fn client(&self, adapter: &Adapter, with: &StoreSettings) -> Result<StoreSide, PlatformError> {
        Ok(Box::new(client::Sellbrite::new(&with.platforms, adapter, Some(with.policy))?))
    }
}

#[async_trait]
impl StoreClient for client::Sellbrite {
    fn pull_plan(&self) -> PullPlan {
        PullPlan {
            // The order list is filtered to open orders, so cancellations are a second list.
            listings: &[Listing::Orders, Listing::Cancellations],
            // Its lists change as the order is fulfilled (units fulfilled, a warehouse's
            // fulfillments shrinking to what is left), which our own notifications cause: an
            // order already sent keeps the lines the warehouse was sent.
            rewrites_sent_orders: false,
            // The cursor is the order's placing, and an order can reach its list well after
            // it was placed on the channel.
            ..PullPlan::orders(Duration::from_secs(24 * 3600))
        }
    }

    /// Sellbrite documents no order for its lists: walked by number.
    async fn page(&self, ask: Ask<'_>) -> Result<Page, PlatformError> {
        let place = Place::of(ask.since_ms, ask.at)?;
        let orders = client::Sellbrite::orders_page(self, ask.listing, place.since, place.page).await?;
        Ok(place.by_number(orders, client::Sellbrite::PAGE_SIZE as usize))
    }

    async fn record(&self, order: &ListedOrder) -> Result<PulledOrder, PlatformError> {
        client::Sellbrite::order_record(self, order)
    }

    async fn notify(&self, notice: &ShipmentNotice) -> Result<Notified, PlatformError> {
        client::Sellbrite::notify(self, notice).await
    }

    fn stock_per_request(&self) -> usize {
        client::STOCK_PER_REQUEST
    }

    async fn set_stock(&self, levels: &[(String, i64)]) -> Result<StockSent, PlatformError> {
        Ok(StockSent::whole(client::Sellbrite::set_stock(self, levels).await?, levels.len()))
    }
}

/// The account whose rate limit a request spends, named by a fingerprint of its token,
/// never the token.
pub(crate) fn account(api_base: &str, auth_token: &str) -> String {
    api::account("sellbrite", &format!("{}/v1", api_base.trim_end_matches('/')), auth_token)
}
