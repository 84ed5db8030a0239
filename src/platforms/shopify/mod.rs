//! Shopify stores (`shopify`), through the Admin GraphQL API of version
//! [`documents::API_VERSION`] (`shared/spec/platforms/shopify.md`): the adapter's rules, the
//! ping's check (the shop's name and the app's scopes), and the store client of a pass.
//!
//! - [`documents`]: every GraphQL document sent, each checked against Shopify's schema by a
//!   test;
//! - [`transport`]: tokens, the POST itself, throttling and what Shopify's answers mean;
//! - [`orders`], [`fulfill`], [`stock`]: the pull with its mapping, notifications through
//!   fulfillment orders, and stock levels.

pub mod documents;
pub mod fulfill;
pub mod orders;
pub mod stock;
pub mod transport;

use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::retry::RetryPolicy;
use super::seam::{Known, Platform, StorePlatform, StoreSettings, StoreSide};
use super::store::{
    Ask, ListedOrder, Notified, Page, PullPlan, PulledOrder, ShipmentNotice, StockSent, StoreClient,
};
use super::{Adapter, PingError, PlatformError, Settings, api};
use crate::fields::{Fields, Patch};
use transport::{Credentials, Shop};

pub const TOKEN: &str = "shopify";
pub const NAME: &str = transport::NAME;

/// The financial statuses whose orders are written unless the adapter says otherwise:
/// the analogue of BigCommerce's Awaiting Fulfillment (COD merchants add `PENDING`).
pub const DEFAULT_FINANCIAL_STATUSES: [&str; 3] = ["PAID", "PARTIALLY_REFUNDED", "AUTHORIZED"];

/// Shopify's `OrderDisplayFinancialStatus` values.
pub const FINANCIAL_STATUSES: [&str; 8] = [
    "AUTHORIZED",
    "EXPIRED",
    "PAID",
    "PARTIALLY_PAID",
    "PARTIALLY_REFUNDED",
    "PENDING",
    "REFUNDED",
    "VOIDED",
];

/// The scope without which every pull is refused.
const READ_ORDERS: &str = "read_orders";

/// Whether `shop` is a shop's permanent domain, `NAME.myshopify.com` (any case), NAME being
/// letters, digits and hyphens.
pub fn is_shop_domain(shop: &str) -> bool {
    let lower = shop.to_ascii_lowercase();
    let Some(name) = lower.strip_suffix(".myshopify.com") else { return false };
    !name.is_empty()
        && name.len() <= 63
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !name.starts_with('-')
}

/// The adapter (annex A.1): `shop`; `access_token`, or `client_id` with `client_secret`;
/// optional `location_id`, `import_financial_statuses` and `notify_customer`.
pub fn validate(adapter: &mut Fields) {
    if let Some(shop) = adapter.required("shop", Fields::text)
        && !is_shop_domain(&shop)
    {
        adapter.error(
            "shop",
            "must be the shop's permanent domain, NAME.myshopify.com (not a custom domain or a URL)",
        );
    }
    let given = |key: &str, adapter: &mut Fields| match adapter.text(key) {
        Patch::Value(v) if v.trim().is_empty() => {
            adapter.error(key, "must not be empty");
            true
        }
        Patch::Value(_) => true,
        Patch::Null | Patch::Absent => false,
    };
    let token = given("access_token", adapter);
    let id = given("client_id", adapter);
    let secret = given("client_secret", adapter);
    match (token, id, secret) {
        (true, false, false) | (false, true, true) => {}
        (false, false, false) => {
            adapter.error("access_token", "is required, unless client_id and client_secret are given");
        }
        (true, _, _) => adapter
            .error("access_token", "give either access_token or client_id with client_secret, not both"),
        (false, true, false) => adapter.error("client_secret", "is required with client_id"),
        (false, false, true) => adapter.error("client_id", "is required with client_secret"),
    }
    adapter.id("location_id");
    let statuses = adapter.array("import_financial_statuses");
    if let Patch::Value(statuses) = statuses {
        if statuses.is_empty() {
            adapter.error("import_financial_statuses", "must name at least one financial status");
        }
        // Each bad name under `adapter[import_financial_statuses][i]`.
        let mut names = adapter.child("import_financial_statuses", serde_json::Map::new());
        for (i, status) in statuses.iter().enumerate() {
            if !status.as_str().is_some_and(|s| FINANCIAL_STATUSES.contains(&s)) {
                names.error(&i.to_string(), format!("must be one of {}", FINANCIAL_STATUSES.join(", ")));
            }
        }
        adapter.absorb(names);
    }
    adapter.boolean("notify_customer");
}

/// Shopify as the registry knows it.
pub struct Shopify;

/// Shopify in the registry.
pub const PLATFORM: Known<dyn StorePlatform> = Known { name: NAME, validate, platform: &Shopify };

#[async_trait]
impl Platform for Shopify {
    async fn check(&self, settings: &Settings, adapter: &Adapter) -> Result<(), PingError> {
        let shop = shop(settings, adapter, api::one_try(settings.timeout))?;
        check(&shop).await.map_err(PingError::from)
    }
}

impl StorePlatform for Shopify {
    fn client(&self, adapter: &Adapter, with: &StoreSettings) -> Result<StoreSide, PlatformError> {
        let shop = shop(&with.platforms, adapter, with.policy)?;
        Ok(Box::new(Client::new(shop, adapter)))
    }
}

/// The shop a validated adapter opens.
pub fn shop(settings: &Settings, adapter: &Adapter, policy: RetryPolicy) -> Result<Shop, PlatformError> {
    let text = |key: &str| adapter.get(key).and_then(Value::as_str).filter(|s| !s.is_empty());
    let domain = text("shop").filter(|s| is_shop_domain(s)).ok_or_else(|| {
        PlatformError::Refused("The Shopify adapter names no NAME.myshopify.com shop.".into())
    })?;
    let credentials = match (text("access_token"), text("client_id"), text("client_secret")) {
        (Some(token), _, _) => Credentials::Token(token.to_string()),
        (None, Some(id), Some(secret)) => {
            Credentials::App { client_id: id.to_string(), client_secret: secret.to_string() }
        }
        _ => return Err(PlatformError::Refused("The Shopify adapter has no credentials.".into())),
    };
    Ok(Shop::new(&settings.shopify_api_base, domain, credentials, policy, settings.max_body_bytes))
}

/// The ping (annex A.3): the shop's name, and `read_orders` among the app's scopes.
pub async fn check(shop: &Shop) -> Result<(), PlatformError> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Answer {
        #[serde(rename = "shop")]
        _shop: Named,
        current_app_installation: Installation,
    }
    /// A string at `data.shop.name` is what says the shop answered.
    #[derive(Deserialize)]
    struct Named {
        #[serde(rename = "name")]
        _name: String,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Installation {
        access_scopes: Vec<Scope>,
    }
    #[derive(Deserialize)]
    struct Scope {
        handle: String,
    }
    let answer: Answer = shop.api.ask_once(shop.query(&documents::PING, json!({}))).await?;
    // A write scope includes its read scope.
    let reads_orders = answer
        .current_app_installation
        .access_scopes
        .iter()
        .any(|s| s.handle == READ_ORDERS || s.handle == "write_orders");
    if !reads_orders {
        return Err(PlatformError::Refused(format!(
            "The Shopify app on {} lacks the {READ_ORDERS} access scope, so orderbridge cannot read its orders.",
            shop.domain
        )));
    }
    Ok(())
}

/// The store side of a pass on one shop.
pub struct Client {
    /// The shop, under the pass's retry policy.
    pub(crate) shop: Shop,
    pub(crate) financial_statuses: Vec<String>,
    pub(crate) notify_customer: bool,
    pub(crate) location_id: Option<i64>,
    /// The location stock is set at, once looked up in this pass.
    pub(crate) location: Mutex<Option<String>>,
}

impl Client {
    pub fn new(shop: Shop, adapter: &Adapter) -> Client {
        let financial_statuses = match adapter.get("import_financial_statuses") {
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).map(str::to_string).collect(),
            _ => DEFAULT_FINANCIAL_STATUSES.iter().map(|s| s.to_string()).collect(),
        };
        let notify_customer = match adapter.get("notify_customer") {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => !matches!(s.as_str(), "false" | "0"),
            Some(Value::Number(n)) => n.as_i64() != Some(0),
            _ => true,
        };
        let location_id = adapter.get("location_id").and_then(super::store::integer);
        Client { shop, financial_statuses, notify_customer, location_id, location: Mutex::new(None) }
    }

    /// One request through the account's gate and the retry policy.
    pub(crate) async fn send<T: serde::de::DeserializeOwned>(
        &self,
        doc: &documents::Document,
        variables: Value,
    ) -> Result<T, PlatformError> {
        self.shop.api.send(|| self.shop.query(doc, variables.clone())).await
    }
}

#[async_trait]
impl StoreClient for Client {
    fn pull_plan(&self) -> PullPlan {
        // Modification times may lag their commit by a little.
        PullPlan::orders(Duration::from_secs(5 * 60))
    }

    async fn page(&self, ask: Ask<'_>) -> Result<Page, PlatformError> {
        orders::page(self, ask.since_ms, ask.at).await
    }

    async fn record(&self, order: &ListedOrder) -> Result<PulledOrder, PlatformError> {
        orders::record(self, order).await
    }

    async fn notify(&self, notice: &ShipmentNotice) -> Result<Notified, PlatformError> {
        fulfill::notify(self, notice).await
    }

    fn stock_per_request(&self) -> usize {
        stock::PER_MUTATION
    }

    /// Only the SKUs whose level Shopify set count as taken: untracked items, items not
    /// stocked at the location and SKUs the shop lacks are left alone, and said so.
    async fn set_stock(&self, levels: &[(String, i64)]) -> Result<StockSent, PlatformError> {
        stock::set(self, levels).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(adapter: Value) -> Vec<String> {
        crate::fields::adapter_problems(validate, adapter).into_iter().map(|(key, _)| key).collect()
    }

    #[test]
    fn shop_domains_are_permanent_myshopify_domains() {
        for good in ["acme.myshopify.com", "Acme-2.MyShopify.com", "a.myshopify.com"] {
            assert!(is_shop_domain(good), "{good}");
        }
        for bad in [
            "acme.com",
            "https://acme.myshopify.com",
            "acme.myshopify.com/",
            ".myshopify.com",
            "a.b.myshopify.com",
            "acme",
            "ac me.myshopify.com",
            "-a.myshopify.com",
        ] {
            assert!(!is_shop_domain(bad), "{bad}");
        }
    }

    #[test]
    fn each_malformed_adapter_names_its_field() {
        let shop = "acme.myshopify.com";
        let cases: [(Value, &[&str]); 12] = [
            (json!({"shop": shop, "access_token": "shpat_1"}), &[]),
            (json!({"shop": shop, "client_id": "id", "client_secret": "s"}), &[]),
            (json!({"access_token": "t"}), &["adapter[shop]"]),
            (json!({"shop": "acme.com", "access_token": "t"}), &["adapter[shop]"]),
            (json!({"shop": shop}), &["adapter[access_token]"]),
            (
                json!({"shop": shop, "access_token": "t", "client_id": "i", "client_secret": "s"}),
                &["adapter[access_token]"],
            ),
            (json!({"shop": shop, "client_id": "i"}), &["adapter[client_secret]"]),
            (json!({"shop": shop, "client_secret": "s"}), &["adapter[client_id]"]),
            (json!({"shop": shop, "access_token": ""}), &["adapter[access_token]"]),
            (json!({"shop": shop, "access_token": "t", "location_id": "x1"}), &["adapter[location_id]"]),
            (
                json!({"shop": shop, "access_token": "t", "import_financial_statuses": ["PAID", "paid"]}),
                &["adapter[import_financial_statuses][1]"],
            ),
            (
                json!({"shop": shop, "access_token": "t", "notify_customer": "maybe"}),
                &["adapter[notify_customer]"],
            ),
        ];
        for (adapter, expected) in cases {
            assert_eq!(problems(adapter.clone()), expected, "{adapter}");
        }
        assert!(
            problems(json!({"shop": shop, "access_token": "t", "location_id": 71183532067_i64,
                                "import_financial_statuses": ["PENDING"], "notify_customer": false}))
            .is_empty()
        );
        assert_eq!(
            problems(json!({"shop": shop, "access_token": "t", "import_financial_statuses": []})),
            ["adapter[import_financial_statuses]"]
        );
    }
}
