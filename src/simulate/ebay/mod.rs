//! eBay's Sell Fulfillment and Sell Inventory APIs and its OAuth token endpoint, simulated as
//! `spec/platforms/ebay.md` §8 asks: production at the server's root, sandbox under
//! `/sandbox`, sellers told apart by the access tokens issued to them, `getOrders` with eBay's
//! filter grammar and offset paging, shipping fulfillments keyed by tracking number, inventory
//! items, offers and their listings, daily quotas, and faults to switch on.

/// `YYYY-MM-DDTHH:MM:SS.sssZ` of a Unix time in milliseconds, as eBay writes date-times.
use crate::dates::format_ms as iso;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::running::Faults;

mod api;
mod call;
mod controls;
mod fulfillment;
mod generate;
mod inventory;
mod orders;
#[cfg(test)]
mod sim_tests;
#[cfg(test)]
mod sim_tests_mix;
#[cfg(test)]
mod sim_tests_ship;
#[cfg(test)]
mod sim_tests_stock;
mod token;
#[cfg(test)]
pub(crate) mod vendor;
#[cfg(test)]
mod vendor_tests;

/// The simulator: a loopback server answering as eBay does, and its owner's controls.
pub type Simulator = super::Simulator<State>;

/// The OAuth scope of the Sell Fulfillment API.
pub const SCOPE_FULFILLMENT: &str = "https://api.ebay.com/oauth/api_scope/sell.fulfillment";
/// The OAuth scope of the Sell Inventory API.
pub const SCOPE_INVENTORY: &str = "https://api.ebay.com/oauth/api_scope/sell.inventory";

/// Most exchanges kept for the OpenAPI checks.
#[cfg(test)]
const MAX_EXCHANGES: usize = 10_000;

/// The operations the simulator answers, counted one by one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    Token,
    GetOrders,
    GetShippingFulfillments,
    CreateShippingFulfillment,
    GetInventoryItems,
    BulkGetInventoryItem,
    GetOffers,
    BulkUpdatePriceQuantity,
}

/// Which of eBay's APIs (each with its own daily quota) an operation belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    Token,
    Fulfillment,
    Inventory,
}

impl Operation {
    /// Every operation, in the order of the enum.
    pub const ALL: [Operation; 8] = [
        Operation::Token,
        Operation::GetOrders,
        Operation::GetShippingFulfillments,
        Operation::CreateShippingFulfillment,
        Operation::GetInventoryItems,
        Operation::BulkGetInventoryItem,
        Operation::GetOffers,
        Operation::BulkUpdatePriceQuantity,
    ];

    /// eBay's `operationId` (`token` for the token endpoint).
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Token => "token",
            Operation::GetOrders => "getOrders",
            Operation::GetShippingFulfillments => "getShippingFulfillments",
            Operation::CreateShippingFulfillment => "createShippingFulfillment",
            Operation::GetInventoryItems => "getInventoryItems",
            Operation::BulkGetInventoryItem => "bulkGetInventoryItem",
            Operation::GetOffers => "getOffers",
            Operation::BulkUpdatePriceQuantity => "bulkUpdatePriceQuantity",
        }
    }

    /// The API whose quota and scope the operation uses.
    pub fn api(self) -> Api {
        match self {
            Operation::Token => Api::Token,
            Operation::GetOrders
            | Operation::GetShippingFulfillments
            | Operation::CreateShippingFulfillment => Api::Fulfillment,
            _ => Api::Inventory,
        }
    }
}

/// A fault answered instead of the next requests of an operation.
#[derive(Debug, Clone)]
pub enum Fault {
    /// 429 with eBay's error body, and `Retry-After` when given.
    RateLimit { retry_after: Option<u64> },
    /// This status (500, 503, …) with an eBay error body.
    Status(u16),
}

/// One seller's consent: a keyset (client id + secret) in one environment and a refresh token.
#[derive(Debug, Clone)]
pub struct Seller {
    pub username: String,
    pub client_id: String,
    pub client_secret: String,
    pub refresh_token: String,
    pub sandbox: bool,
    pub scopes: Vec<String>,
}

impl Seller {
    /// Production, both scopes; credentials derived from `username` deterministically.
    pub fn new(username: &str) -> Seller {
        Seller::derived(username, false)
    }

    /// As [`Seller::new`], in the sandbox (`SBX` in the ids).
    pub fn sandbox(username: &str) -> Seller {
        Seller::derived(username, true)
    }

    fn derived(username: &str, sandbox: bool) -> Seller {
        use base64::Engine;
        let env = if sandbox { "SBX" } else { "PRD" };
        let hex = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(format!("{env}:{username}").as_bytes()));
        let mut name: Vec<char> = username.chars().filter(char::is_ascii_alphanumeric).collect();
        if let Some(first) = name.first_mut() {
            *first = first.to_ascii_uppercase();
        }
        let name: String = name.into_iter().collect();
        let tail = base64::engine::general_purpose::STANDARD.encode(format!("{env}:{username}"));
        Seller {
            username: username.to_string(),
            client_id: format!("{name}-orderbri-{env}-{}", &hex[..10]),
            client_secret: format!("{env}-{hex}"),
            refresh_token: format!("v^1.1#i^1#r^1#I^3#p^3#f^0#t^{tail}"),
            sandbox,
            scopes: vec![SCOPE_FULFILLMENT.to_string(), SCOPE_INVENTORY.to_string()],
        }
    }
}

/// An order to add, in terms a test thinks in; the simulator writes eBay's JSON of it.
#[derive(Debug, Clone)]
pub struct NewOrder {
    /// At least one.
    pub lines: Vec<NewLine>,
    /// `orderPaymentStatus`: `PAID`, `PENDING`, `FULLY_REFUNDED`, `PARTIALLY_REFUNDED`.
    pub payment_status: &'static str,
    /// `cancelStatus.cancelState`: `NONE_REQUESTED`, `CANCELED`, `IN_PROGRESS`.
    pub cancel_state: &'static str,
    /// `fulfillmentInstructionsType`: `SHIP_TO`, `DIGITAL`, `PREPARE_FOR_PICKUP`, `FULFILLED_BY_EBAY`.
    pub instructions_type: &'static str,
    /// Global Shipping Program etc.: `shipTo` is a hub's address.
    pub ebay_supported: bool,
    /// The buyer's `fullName`.
    pub full_name: String,
    /// false: `contactAddress` without `addressLine1` (an order over 90 days old).
    pub with_address: bool,
    /// `creationDate`; default the simulator's now.
    pub created_ms: Option<i64>,
    pub currency: &'static str,
    pub marketplace: &'static str,
}

/// A line of a [`NewOrder`].
#[derive(Debug, Clone)]
pub struct NewLine {
    pub sku: Option<String>,
    pub title: String,
    pub quantity: i64,
    /// `"12.50"`.
    pub unit_price: String,
    /// One variation aspect: (name, value).
    pub variation: Option<(String, String)>,
    /// A promotion's discount amount.
    pub promotion: Option<String>,
    /// The line's tax amount.
    pub tax: Option<String>,
}

impl NewOrder {
    /// Paid, `SHIP_TO`, one line per (sku, quantity), 12.50 a unit.
    pub fn ready(lines: &[(&str, i64)]) -> NewOrder {
        NewOrder {
            lines: lines
                .iter()
                .map(|(sku, quantity)| NewLine {
                    sku: Some(sku.to_string()),
                    title: format!("Item {sku}"),
                    quantity: *quantity,
                    unit_price: "12.50".into(),
                    variation: None,
                    promotion: None,
                    tax: None,
                })
                .collect(),
            payment_status: "PAID",
            cancel_state: "NONE_REQUESTED",
            instructions_type: "SHIP_TO",
            ebay_supported: false,
            full_name: "Ana Maria Lima".into(),
            with_address: true,
            created_ms: None,
            currency: "USD",
            marketplace: "EBAY_US",
        }
    }
}

/// One order as the simulator keeps it: eBay's JSON, and beside it what filters and sorts read.
struct OrderRec {
    id: String,
    json: Value,
    created_ms: i64,
    modified_ms: i64,
    /// `orderFulfillmentStatus`, kept in step with the JSON.
    status: String,
    /// The listing order: a hash of the id, so neither creation nor modification order.
    key: u64,
    fulfillments: Vec<Value>,
}

/// An inventory item.
struct Item {
    /// `availability.shipToLocationAvailability.quantity`.
    quantity: i64,
    /// `inventoryItemGroupKeys` (empty: not shown).
    groups: Vec<String>,
}

/// An inventory item's offer.
struct Offer {
    id: String,
    sku: String,
    marketplace: String,
    published: bool,
    quantity: i64,
    listing_id: Option<String>,
    sold: i64,
}

/// One seller's account.
struct Account {
    seller: Seller,
    orders: Vec<OrderRec>,
    by_id: HashMap<String, usize>,
    items: BTreeMap<String, Item>,
    offers: Vec<Offer>,
    hub_listings: BTreeMap<String, i64>,
    lose_answers: usize,
    modify_between_pages: Vec<String>,
    /// (listingId, UTC day) → revisions made.
    revisions: HashMap<(String, i64), u32>,
}

/// An access token the token endpoint issued.
struct Issued {
    username: String,
    scopes: Vec<String>,
    sandbox: bool,
    expires_ms: i64,
}

/// Everything the simulator holds.
pub struct State {
    accounts: BTreeMap<String, Account>,
    tokens: HashMap<String, Issued>,
    revoked: Vec<String>,
    faults: Faults<Fault>,
    counts: BTreeMap<Operation, usize>,
    total: usize,
    log: Vec<String>,
    token_lifetime: u64,
    clock_offset_ms: i64,
    delay: Duration,
    quotas: HashMap<(String, Api), u64>,
    used: HashMap<(String, bool, Api, i64), u64>,
    one_sku: bool,
    index_lag_ms: i64,
    serial: u64,
    /// Every fulfillment's tracking number, all sellers, in creation order: (seller, number).
    tracking: Vec<(String, String)>,
    #[cfg(test)]
    exchanges: Vec<super::openapi_check::Exchange>,
}

impl State {
    fn new() -> State {
        State {
            accounts: BTreeMap::new(),
            tokens: HashMap::new(),
            revoked: Vec::new(),
            faults: Faults::default(),
            counts: BTreeMap::new(),
            total: 0,
            log: Vec::new(),
            token_lifetime: 7200,
            clock_offset_ms: 0,
            delay: Duration::ZERO,
            quotas: HashMap::new(),
            used: HashMap::new(),
            one_sku: false,
            index_lag_ms: 0,
            serial: 0,
            tracking: Vec::new(),
            #[cfg(test)]
            exchanges: Vec::new(),
        }
    }

    /// The simulator's clock: real now plus the offset set.
    fn now_ms(&self) -> i64 {
        let real = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
        real.saturating_add(self.clock_offset_ms)
    }

    fn next_serial(&mut self) -> u64 {
        self.serial += 1;
        self.serial
    }
}

/// A Unix time in milliseconds of an ISO 8601 UTC date-time, if it is one.
fn parse_iso(text: &str) -> Option<i64> {
    let at = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    i64::try_from(at.unix_timestamp_nanos() / 1_000_000).ok()
}

/// `target[key] = value` when `target` is an object (an order added as JSON may be anything;
/// indexing a non-object to write would panic).
fn set(target: &mut Value, key: &str, value: Value) {
    if let Some(object) = target.as_object_mut() {
        object.insert(key.to_string(), value);
    }
}

/// The UTC day of a Unix time in milliseconds.
fn day(ms: i64) -> i64 {
    ms.div_euclid(86_400_000)
}

/// eBay's error body: `{"errors": [{errorId, domain, category, message, ...}]}`.
fn error(status: u16, id: u32, domain: &str, message: &str, long: Option<&str>) -> super::http::Response {
    super::http::Response::json(status, &json!({"errors": [error_entry(id, domain, message, long)]}))
}

/// One entry of eBay's `errors`.
fn error_entry(id: u32, domain: &str, message: &str, long: Option<&str>) -> Value {
    let mut entry = json!({"errorId": id, "domain": domain, "category": "REQUEST", "message": message});
    if let Some(long) = long {
        entry["longMessage"] = json!(long);
    }
    entry
}
