//! WooCommerce stores (`woocommerce`, and `woo_commerce` as the same platform): a
//! self-hosted WordPress shop reached through the REST API v3 at its own `url`
//! (`platforms/woocommerce.md`, the annex to CONTRACT §6, §8 and §11). The adapter's rules
//! live in [`adapter`], how requests are addressed, signed and answered in [`api`], and the
//! steps of a pass in [`orders`], [`notify`] and [`stock`]. A store is sent one request at a
//! time: shops on shared hosting run a few PHP workers.

pub mod adapter;
pub mod api;
mod notify;
pub mod oauth;
pub mod orders;
mod stock;

use std::sync::Mutex;

use async_trait::async_trait;
use reqwest::Method;
use serde_json::{Value, json};

use self::adapter::Shop;
use self::api::{Api, Reply};
use super::paging::Place;
use super::reach::Address;
use super::retry::{self, Account, RetryPolicy};
use super::seam::{Known, Platform, StorePlatform, StoreSettings, StoreSide};
use super::store::{
    Ask, ListedOrder, Notified, Page, PullPlan, PulledOrder, ShipmentNotice, StockSent, StoreClient,
};
use super::{Adapter, PingError, PlatformError, Settings};

pub const TOKEN: &str = "woocommerce";
/// The hosted service's spelling; the same platform, kept as a client sent it.
pub const OTHER_TOKEN: &str = "woo_commerce";
pub const NAME: &str = api::NAME;

/// Requests one store may have in flight.
const IN_FLIGHT: usize = 1;

/// WooCommerce as the registry knows it.
pub struct WooCommerce;

/// WooCommerce in the registry.
pub const PLATFORM: Known<dyn StorePlatform> =
    Known { name: NAME, validate: adapter::validate, platform: &WooCommerce };

#[async_trait]
impl Platform for WooCommerce {
    async fn check(&self, settings: &Settings, adapter: &Adapter) -> Result<(), PingError> {
        check(settings, adapter).await.map_err(PingError::from)
    }

    fn address(&self, adapter: &Adapter) -> Option<Address> {
        Address::of_url("adapter[url]", adapter.get("url")?.as_str()?.trim())
    }
}

impl StorePlatform for WooCommerce {
    fn client(&self, adapter: &Adapter, with: &StoreSettings) -> Result<StoreSide, PlatformError> {
        let (settings, policy) = (&with.platforms, with.policy);
        let api = Api::new(
            Shop::from_adapter(adapter)?,
            policy.request_timeout,
            settings.reach,
            settings.max_body_bytes,
        )?;
        Ok(Box::new(Client {
            api,
            policy,
            pull: Mutex::new(Pull::default()),
            extension: Mutex::new(None),
            providers: tokio::sync::OnceCell::new(),
        }))
    }
}

/// The ping (annex §1.2): a list of one order, then an empty batch, which WooCommerce
/// refuses for a key without write permission. What is not the WooCommerce API at all (no
/// route, no WordPress, a redirect, a web page) says the `url` is wrong: a refusal.
pub async fn check(settings: &Settings, adapter: &Adapter) -> Result<(), PlatformError> {
    let api =
        Api::new(Shop::from_adapter(adapter)?, settings.timeout, settings.reach, settings.max_body_bytes)?;
    let account = Account::limited(&api.transport.account, IN_FLIGHT);
    let wrong_address = |e: PlatformError| match e {
        PlatformError::BadData(message) => PlatformError::Refused(message),
        other => other,
    };
    let list = [("per_page", "1".to_string()), ("_fields", "id".to_string())];
    let read = retry::ask_once(account, api.once(&Method::GET, "wc/v3/orders", &list, None)).await;
    read.and_then(|reply| reply.json(&api, "wc/v3/orders")).map_err(wrong_address)?;
    let write =
        retry::ask_once(account, api.once(&Method::POST, "wc/v3/orders/batch", &[], Some(&json!({})))).await;
    write.and_then(|reply| reply.json(&api, "wc/v3/orders/batch")).map_err(wrong_address)?;
    Ok(())
}

/// The store side of one pass.
pub struct Client {
    api: Api,
    policy: RetryPolicy,
    pull: Mutex<Pull>,
    /// Whether the store has the Shipment Tracking extension, once a pass found out.
    extension: Mutex<Option<bool>>,
    /// The extension's provider names, read once per pass.
    providers: tokio::sync::OnceCell<Vec<String>>,
}

/// What the pull of this pass learned as it went.
#[derive(Debug, Default)]
struct Pull {
    /// The pull began with no cursor: it reads only the statuses to import.
    first: bool,
    /// The store's clock at the first answer of a first pull.
    clock: Option<i64>,
}

impl Client {
    fn account(&self) -> Account<'_> {
        Account::limited(&self.api.transport.account, IN_FLIGHT)
    }

    /// A read, or a write that leaves the store the same however often it arrives, retried.
    async fn call(
        &self,
        method: Method,
        route: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Reply, PlatformError> {
        retry::send(&self.policy, self.account(), || self.api.once(&method, route, query, body)).await
    }

    async fn list_orders(&self, since_ms: Option<i64>, page: u32) -> Result<Vec<ListedOrder>, PlatformError> {
        let first = {
            let mut pull = self.pull.lock().unwrap_or_else(|p| p.into_inner());
            if since_ms.is_none() && page == 1 {
                pull.first = true;
            }
            pull.first
        };
        // The engine asks from a time inclusively; the filter is exclusive and in seconds.
        let after = since_ms.map(|ms| ms.div_euclid(1000) - 1);
        let query = orders::query(&self.api.shop, after, page, first);
        let reply = self.call(Method::GET, "wc/v3/orders", &query, None).await?;
        if since_ms.is_none() && page == 1 {
            self.pull.lock().unwrap_or_else(|p| p.into_inner()).clock = reply.date_ms;
        }
        let listed = reply.objects(&self.api, "wc/v3/orders", "order list", orders::PAGE_SIZE)?;
        listed.into_iter().map(|raw| orders::listed(&self.api.shop, Value::Object(raw), after)).collect()
    }
}

#[async_trait]
impl StoreClient for Client {
    fn pull_plan(&self) -> PullPlan {
        // Modification times may lag their commit by a little.
        PullPlan::orders(std::time::Duration::from_secs(5 * 60))
    }

    /// Orders by `modified`, oldest first: walked by key. The first pull reads only the
    /// orders still to import, so it ends at the store's clock when it began, not at the last
    /// change read, which may be long ago.
    async fn page(&self, ask: Ask<'_>) -> Result<Page, PlatformError> {
        let place = Place::of(ask.since_ms, ask.at)?;
        let listed = self.list_orders(place.since, place.page).await?;
        let mut page = place.by_key(listed, orders::PAGE_SIZE);
        if page.next.is_none() {
            let pull = self.pull.lock().unwrap_or_else(|p| p.into_inner());
            page.cursor = page.cursor.max(pull.clock.filter(|_| pull.first));
        }
        Ok(page)
    }

    async fn record(&self, order: &ListedOrder) -> Result<PulledOrder, PlatformError> {
        orders::record(order.entry())
    }

    async fn notify(&self, notice: &ShipmentNotice) -> Result<Notified, PlatformError> {
        Client::notify(self, notice).await
    }

    fn stock_per_request(&self) -> usize {
        stock::PER_BATCH
    }

    /// A batch answers 200 with an error per refused item: the others stand.
    async fn set_stock(&self, levels: &[(String, i64)]) -> Result<StockSent, PlatformError> {
        self.send_stock(levels).await
    }
}
