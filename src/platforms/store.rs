//! What a store platform gives a sync pass and takes from it, whatever the platform: orders
//! as its list shows them, a whole order as an import record, a shipment to report and stock
//! levels to set. Each store client implements [`StoreClient`], so the pass never names one.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::PlatformError;

/// The store side of a connection, as the engine drives it (CONTRACT §11 steps 1, 4 and 5).
#[async_trait]
pub trait StoreClient: Send + Sync {
    /// How a pull walks this store's orders.
    fn pull_plan(&self) -> PullPlan;

    /// One page of a listing (see [`Ask`]). How pages follow each other is the platform's
    /// ([`super::paging`] for walks by key and by number).
    async fn page(&self, ask: Ask<'_>) -> Result<Page, PlatformError>;

    /// Whether `error`, the answer to the first page of a walk continued from an earlier
    /// pass, says the store no longer takes the continuation: the walk then starts again
    /// from the cursor, once. By default no answer says so.
    fn continuation_refused(&self, error: &PlatformError) -> bool {
        let _ = error;
        false
    }

    /// The whole order (items, addresses) of a listed [`Listed::Entry`] as an import record.
    async fn record(&self, order: &ListedOrder) -> Result<PulledOrder, PlatformError>;

    /// Reports a shipment, unless the store already has it (CONTRACT §11, notify).
    async fn notify(&self, notice: &ShipmentNotice) -> Result<Notified, PlatformError>;

    /// Whether a shipment whose notice was not sent, because the store's rate limit allows
    /// the request only after this pass ([`PlatformError::NotYet`]), is shown
    /// `delayed_notifying_of_shipment` (eBay's annex) rather than keeping its state (Amazon's).
    /// Neither counts a try, and both go again at the next pass.
    fn shows_paced_shipments_delayed(&self) -> bool {
        false
    }

    /// Levels in one stock request: what a crash can make the store hear twice.
    fn stock_per_request(&self) -> usize;

    /// Sends absolute stock levels and says which the store took, refused or left alone:
    /// a store whose requests succeed or fail whole answers [`StockSent::whole`].
    async fn set_stock(&self, levels: &[(String, i64)]) -> Result<StockSent, PlatformError>;

    /// What became of stock levels a store took to apply later ([`StockSent::receipts`]:
    /// Amazon's feeds), each receipt asked once. A receipt left out of the answer, or
    /// [`Receipt::Pending`], is asked again at a later pass. By default a store applies
    /// levels as it takes them and hands out no receipt.
    async fn read_receipts(&self, receipts: &[String]) -> Result<Vec<(String, Receipt)>, PlatformError> {
        let _ = receipts;
        Ok(Vec::new())
    }
}

/// What a store did with the levels of one receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Receipt {
    /// Not processed yet.
    Pending,
    /// Every level applied.
    Applied,
    /// Some levels refused, by SKU, each with the store's reason (a sentence fragment naming
    /// the SKU); `message` is the sentence the stock step fails with. The rest stand.
    Refused { message: String, levels: Vec<(String, String)> },
    /// Not processed at all: the sentence the stock step fails with.
    Failed(String),
}

/// What the store did with the levels of one [`StoreClient::set_stock`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StockSent {
    pub requests: usize,
    /// The levels the store took now; a level it already showed is not counted, but it
    /// stands as sent.
    pub accepted: usize,
    /// The levels refused, by SKU, each with the store's reason (a sentence fragment naming
    /// the SKU).
    pub refused: Vec<(String, String)>,
    /// The levels left unapplied without a refusal (a SKU the store has no single product
    /// for, an item it does not track), by SKU, each with the reason (a sentence fragment
    /// naming the SKU). Like refused ones they are not recorded as sent, so they go again
    /// at the next pass, once the merchant may have fixed the product. Every level in
    /// neither list stands as sent.
    pub skipped: Vec<(String, String)>,
    /// Receipts for levels taken now but applied later (a feed's id): the engine keeps them
    /// with the store, in the transaction that records the levels as sent, and reads what
    /// became of them at later passes ([`StoreClient::read_receipts`]).
    pub receipts: Vec<String>,
}

/// How a store's order lists are read.
#[derive(Debug, Clone, Copy)]
pub struct PullPlan {
    /// The lists a pull reads, in order.
    pub listings: &'static [Listing],
    /// How far before its cursor a pull starts reading again.
    pub overlap: Duration,
    /// Whether a changed order is written again after it went to the warehouse.
    pub rewrites_sent_orders: bool,
    /// How long a continuation stays usable, for a store whose walk is kept between passes
    /// (Amazon's `nextToken`): a walk that stops short (the platform's rate limit, a failure,
    /// a restart) is continued by a later pass, in any process, from the page it stopped at,
    /// while its continuation is younger than this. `None`: a walk is not kept; the next pass
    /// reads again from the cursor, which each page of a list read oldest change first moves.
    pub continuation_lifetime: Option<Duration>,
}

/// Which page of a listing a pull asks for.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    pub listing: Listing,
    /// The orders changed since this time (the platform's own, already moved back by the
    /// overlap; `None` for a store's first pull).
    pub since_ms: Option<i64>,
    /// `None` for the first page; else the [`Page::next`] of the page before, in this pass
    /// or, for a walk kept between passes ([`PullPlan::continuation_lifetime`]), an earlier
    /// one in any process.
    pub at: Option<&'a str>,
}

impl PullPlan {
    /// One list of the orders (the canceled among them), read again `overlap` before the
    /// cursor; a changed order is written again even after it went to the warehouse, and a
    /// walk is not kept between passes.
    pub const fn orders(overlap: Duration) -> PullPlan {
        PullPlan {
            listings: &[Listing::Orders],
            overlap,
            rewrites_sent_orders: true,
            continuation_lifetime: None,
        }
    }
}

impl StockSent {
    /// `levels` levels taken whole in `requests` requests.
    pub fn whole(requests: usize, levels: usize) -> StockSent {
        StockSent { requests, accepted: levels, ..StockSent::default() }
    }
}

/// A page of a listing.
#[derive(Debug, Clone, Default)]
pub struct Page {
    pub orders: Vec<ListedOrder>,
    /// Where the next page starts, in the platform's own words; `None` when this page was the
    /// last.
    pub next: Option<String>,
    /// The cursor this page's transaction moves the store's to (never back; a list of
    /// cancellations moves none): where a list comes oldest change first, the latest change
    /// on the page; where it comes in no order, only at the walk's last page, the latest
    /// change of the whole walk, which a store may cap at its own clock.
    pub cursor: Option<i64>,
    /// Orders the page left out that the run names (a problem of step `pull_orders`, kind
    /// `order`): the store's order id and why, each named once a pass however often it is
    /// read (eBay's orders without a shipping address).
    pub remarks: Vec<(String, String)>,
}

/// An order as the store's list shows it.
#[derive(Debug, Clone)]
pub struct ListedOrder {
    pub external_id: String,
    /// The time the pull's cursor follows: BigCommerce's `date_modified`, Sellbrite's
    /// `ordered_at` (it has no modification time).
    pub cursor_ms: i64,
    /// What tells a change of an order already held: BigCommerce's `date_modified`, a
    /// fingerprint of the listed order for Sellbrite. An order whose version is the one held
    /// is not read or written again.
    pub version: i64,
    pub disposition: Disposition,
    pub listed: Listed,
}

/// What a store's list holds of an order.
#[derive(Debug, Clone)]
pub enum Listed {
    /// The list's entry as the store sent it: [`StoreClient::record`] makes the import record
    /// of it, asking the store for the rest where the list lacks it.
    Entry(Value),
    /// The whole order, made from the list (Amazon's carries items, addresses and money), or
    /// why it cannot be one: an error that fails the pull only if the order is written.
    Whole(Result<PulledOrder, PlatformError>),
}

impl ListedOrder {
    /// The list's entry: [`Value::Null`] for a [`Listed::Whole`] order.
    pub fn entry(&self) -> &Value {
        match &self.listed {
            Listed::Entry(value) => value,
            Listed::Whole(_) => &Value::Null,
        }
    }
}

/// What a pull does with a listed order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// Its status is one the adapter imports: write it.
    Import,
    /// The store canceled it: cancel it here if known.
    Cancel,
    /// Any other status: leave it.
    Skip,
}

/// The lists one pull reads, in order. Most stores have one list whose statuses say
/// everything; Sellbrite's is filtered to open orders, so its cancellations are a second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// The orders to import (and, where the list shows them, the canceled).
    Orders,
    /// Only canceled orders: they cancel what is held and never move the cursor.
    Cancellations,
}

/// A whole order: the import record (CONTRACT §9, without `store_id`) and the shipping
/// address id a shipment is reported against, where the store has one.
#[derive(Debug, Clone)]
pub struct PulledOrder {
    pub record: Map<String, Value>,
    pub address_id: Option<String>,
}

/// What the store is told of a shipment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShipmentNotice {
    /// orderbridge's id of the shipment, for a store that keys a package by the sender's own
    /// reference (Amazon's `packageReferenceId`).
    pub shipment_id: i64,
    pub external_order_id: String,
    pub address_id: Option<String>,
    pub tracking_number: String,
    pub carrier: Option<String>,
    pub shipping_method: Option<String>,
    /// When the warehouse shipped it (ms), where it said.
    pub shipped_at: Option<i64>,
    pub items: Vec<NoticeItem>,
    /// Every item of the order, for a store that counts what is left to ship of each line
    /// itself (eBay: a shipment without items ships what is left).
    pub order_items: Vec<NoticeItem>,
    /// When the order was placed (ms), where known: eBay refuses a shipment dated before it.
    pub ordered_at: Option<i64>,
    /// An earlier try may have reached the store (a crash after it was claimed, or a try
    /// that got no answer): the client looks before it posts.
    pub in_doubt: bool,
    /// Units per SKU of this order that the store was told of in other shipments, for a
    /// store that can only be asked how much of each line shipped (Sellbrite).
    pub units_told_before: Vec<(String, i64)>,
    /// Whether this shipment, with the order's earlier ones, ships every unit of every item
    /// of the order: a store that completes orders itself (WooCommerce) does it then.
    pub completes_order: bool,
}

impl ShipmentNotice {
    /// A notice of `tracking_number` for the store's order `external_order_id`, with these
    /// items and nothing else said: no address, carrier, method or time, not in doubt, no
    /// units told before, not completing the order.
    pub fn new(external_order_id: &str, tracking_number: &str, items: Vec<NoticeItem>) -> ShipmentNotice {
        ShipmentNotice {
            shipment_id: 1,
            external_order_id: external_order_id.to_string(),
            address_id: None,
            tracking_number: tracking_number.to_string(),
            carrier: None,
            shipping_method: None,
            shipped_at: None,
            items,
            order_items: Vec::new(),
            ordered_at: None,
            in_doubt: false,
            units_told_before: Vec::new(),
            completes_order: false,
        }
    }
}

/// One line of a shipment: the store's line id and the SKU, as each store needs one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoticeItem {
    pub line: Option<String>,
    pub sku: Option<String>,
    pub quantity: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notified {
    Posted,
    /// The store already had this shipment: nothing was posted.
    AlreadyThere,
}

/// A text field of a platform's record; empty text is null, a number is its text.
pub fn text(v: &Value, field: &str) -> Value {
    match v.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => Value::String(s.clone()),
        Some(Value::Number(n)) => Value::String(n.to_string()),
        _ => Value::Null,
    }
}

/// A whole number, sent as a JSON number or as text.
pub fn integer(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A decimal (a JSON number or text like `"12.5000"`), rounded half-even to 2 places, as text.
pub fn decimal(v: &Value) -> Option<String> {
    use rust_decimal::{Decimal, RoundingStrategy};
    let amount: Decimal = match v {
        Value::String(s) => s.trim().parse().ok()?,
        Value::Number(n) => n.to_string().parse().ok()?,
        _ => return None,
    };
    let rounded = amount.round_dp_with_strategy(2, RoundingStrategy::MidpointNearestEven);
    Some(format!("{rounded:.2}"))
}
