//! What a warehouse platform gives a sync pass and takes from it, whatever the platform: the
//! orders to send (as a stream, so a large send is never held whole), what became of each,
//! the warehouse's shipment lines and stock levels as they come in, and cancellations. Each
//! warehouse client implements [`WarehouseClient`], so the pass never names one: a file drop
//! (`files`) answers with files it writes and reads, an API warehouse with requests.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::{Decimal, RoundingStrategy};
use tokio::sync::mpsc;

use super::PlatformError;
#[cfg(test)]
pub use super::documents::NumbersInMemory;
pub use super::documents::{Counter, Documents, Numbered, SendKey};
use super::reach::Reach;
use super::retry::RetryPolicy;

/// The warehouse side of a connection for one pass (CONTRACT §11 steps 2, 3 and 5).
#[async_trait]
pub trait WarehouseClient: Send {
    /// Orders one send claims at once: `None` sends every waiting order together (one file);
    /// an API warehouse sends a bounded number per claim, so a crash repeats few creates.
    fn orders_per_send(&self) -> Option<usize>;

    /// Opens what the pass needs, if not open yet. Returns what the warehouse showed that its
    /// adapter should keep from now on (an SFTP server's host key), once. An API warehouse
    /// has nothing to open: each request stands alone.
    async fn connect(&mut self) -> Result<Option<Learned>, PlatformError> {
        Ok(None)
    }

    /// Sends the orders `orders` delivers. Says what became of each order it got to, and why
    /// it stopped early, if it did.
    async fn send_orders(&mut self, orders: OrderStream) -> Delivery;

    /// Cancels an order the warehouse holds. A warehouse that cannot be asked (a file drop)
    /// answers [`Cancelled::NotAsked`], and the order is cancelled here only.
    async fn cancel(&mut self, _order: &HeldOrder) -> Result<Cancelled, PlatformError> {
        Ok(Cancelled::NotAsked)
    }

    /// The warehouse's own id of order `order_id`, where it holds it under the order's
    /// reference (looked up for an order whose create may have reached it); `None` where it
    /// does not, or cannot be asked (a file drop).
    async fn find(&mut self, _order_id: i64) -> Result<Option<String>, PlatformError> {
        Ok(None)
    }

    /// Begins reading an inbox: shipments since `since` (a platform that keeps a cursor), or
    /// stock levels.
    async fn open_inbox(&mut self, inbox: Inbox, since: Since) -> Result<(), PlatformError>;

    /// The next piece of shipment lines of the inbox opened last, `None` when none is left.
    async fn next_shipments(&mut self) -> Result<Option<Inbound<LineRead>>, PlatformError>;

    /// The next piece of stock levels of the inbox opened last, `None` when none is left.
    async fn next_stock(&mut self) -> Result<Option<Inbound<StockRow>>, PlatformError>;

    /// What became of the piece handed out last: a file is moved to `processed/` or to
    /// `failed/` beside its bad lines; an API page needs nothing.
    async fn taken(&mut self, _outcome: Taken<'_>) -> Result<(), PlatformError> {
        Ok(())
    }

    /// Where a person finds the pieces of `inbox` that could not be read (`shipments/failed/`).
    fn failed_place(&self, _inbox: Inbox) -> String {
        String::new()
    }

    /// Whether a refused piece fails the step once the others are read (a CSV file: the run's
    /// `error` names it), or is only named in the run's problems (an X12 interchange,
    /// files-x12.md §9).
    fn refusal_fails_the_step(&self) -> bool {
        true
    }

    /// Ends what the pass opened; errors here change nothing.
    async fn close(&mut self) {}
}

/// What a warehouse client needs from the configuration and the engine.
#[derive(Clone)]
pub struct WarehouseSettings {
    /// Where the platforms are, and how long one answer may take.
    pub platforms: super::Settings,
    /// How long a file must look unchanged before it is read (`file_settle_secs`).
    pub settle: Duration,
    /// What outlives a pass: what earlier passes saw of the warehouses' files.
    pub memory: Memory,
    /// How requests are tried again.
    pub policy: RetryPolicy,
    /// The warehouse's row id: what the client keeps in memory across passes is keyed by it.
    pub warehouse_id: i64,
    /// The connection whose pass this is: a document it writes on its own (an X12 997) is
    /// named after it.
    pub connection_id: i64,
    /// The warehouse's document numbers, kept in the database.
    pub documents: Arc<dyn Documents>,
}

#[cfg(test)]
impl WarehouseSettings {
    /// An API warehouse's settings in a client test: warehouse 1, three quick tries, answers
    /// within 5 s.
    pub fn for_tests(platforms: super::Settings) -> WarehouseSettings {
        let policy = RetryPolicy {
            tries: 3,
            base: Duration::from_millis(10),
            request_timeout: Duration::from_secs(5),
            longest_wait: Duration::from_secs(5),
        };
        WarehouseSettings {
            platforms,
            settle: Duration::ZERO,
            memory: Memory::default(),
            policy,
            warehouse_id: 1,
            connection_id: 1,
            documents: Arc::new(NumbersInMemory::default()),
        }
    }
}

impl WarehouseSettings {
    /// Where the warehouse's own address may lead (CONTRACT §6).
    pub fn reach(&self) -> Reach {
        self.platforms.reach
    }
}

/// What the warehouse clients keep across passes, held by the engine: one value of each type
/// a platform asks for (a file drop's sightings of its files), made on first use. The engine
/// never looks inside.
#[derive(Clone, Default)]
pub struct Memory(Arc<Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>>);

impl Memory {
    /// The kept value of type `T` (shared: a `T` holds its state behind its own `Arc`).
    pub fn kept<T: Any + Send + Sync + Default + Clone>(&self) -> T {
        let mut all = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let value = all.entry(TypeId::of::<T>()).or_insert_with(|| Arc::new(T::default()));
        value.downcast_ref::<T>().cloned().unwrap_or_default()
    }
}

/// A value the warehouse showed that its adapter keeps from now on: `key` is set to `value`
/// unless someone set it meanwhile or changed `unless_changed` (where it connects).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Learned {
    pub key: &'static str,
    pub value: String,
    pub unless_changed: &'static str,
    /// For the log line: what it is ("the SFTP server's host key").
    pub what: &'static str,
}

/// What a send did, order by order.
#[derive(Debug, Default)]
pub struct Delivery {
    /// Each order the warehouse answered for, by orderbridge's order id.
    pub orders: Vec<(i64, SentOrder)>,
    /// Why the send stopped before every order was answered for; those left stay waiting.
    pub failure: Option<PlatformError>,
}

/// What became of one order sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SentOrder {
    /// The warehouse holds it, under its own id where it has one.
    Accepted { warehouse_order_id: Option<String> },
    /// The warehouse refused the order itself: a sentence naming it and quoting the reason.
    Refused(String),
}

/// An order the warehouse holds, to cancel.
#[derive(Debug, Clone)]
pub struct HeldOrder {
    pub order_id: i64,
    pub external_id: Option<String>,
    pub warehouse_order_id: String,
}

/// What a cancel came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cancelled {
    /// The warehouse cancelled it (now, or an earlier try did).
    Done,
    /// The warehouse will not: its reason, quoted.
    Refused(String),
    /// The warehouse is not asked (a file drop): the order is cancelled here only.
    NotAsked,
}

/// The files, or records, a pass reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inbox {
    Shipments,
    Stock,
}

/// Where a read of an inbox starts, for a warehouse that keeps a cursor: its last cursor
/// (the warehouse's own change time, ms), else the time the warehouse was created; and the
/// walk an earlier pass stopped part-way, to go on with ([`WalkPlace::Stopped`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Since {
    pub cursor: Option<i64>,
    pub created_at: i64,
    pub walk: Option<String>,
}

/// One piece of an inbox: a file, or a page of a platform's list.
#[derive(Debug)]
pub struct Inbound<T> {
    /// What a person calls it: the file's name, or the list and page.
    pub name: String,
    pub records: Parsed<T>,
    /// Set on the last piece of a complete walk: the cursor to keep with it.
    pub cursor: Option<i64>,
    /// What the database keeps of the walk with this piece.
    pub walk: WalkPlace,
    /// What a line of an order not found among the customer's means.
    pub strangers: Strangers,
    /// What else the piece says: orders the warehouse turned back, and records it skipped.
    pub reports: Reports,
}

/// What a piece says besides its records.
#[derive(Debug, Default)]
pub struct Reports {
    /// What the warehouse says of documents of ours it received (an X12 997 of our 940s): an
    /// order it rejects becomes `errored` while it waits for its shipment.
    pub acknowledged: Vec<Acknowledged>,
    /// Records of the piece left out, each named in the run's problems (an 846's line item
    /// without a SKU or a quantity); the rest of the piece is used.
    pub remarks: Vec<Remark>,
}

/// What the warehouse says of a part of a document of ours (an X12 997's AK2 of one of our
/// 940 sets), or of every part of it no other acknowledgement of the piece names (`part`
/// `None`: an AK9 that rejects the group). The document must be one of ours at this warehouse,
/// else the piece is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acknowledged {
    /// The document's number (the 940 group's control number) and the part (the set).
    pub document: i64,
    pub part: Option<i64>,
    /// How a person names what the warehouse pointed at ("the 997's AK1*OW*7 AK2*940*0001").
    pub reference: String,
    /// The warehouse's words when it rejects the part, as the order's `last_error` and the
    /// run's problem show them; `None` when it took it.
    pub rejected: Option<String>,
}

/// A record of a piece that was left out, as the run's problems name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remark {
    /// `true`: `reference` is a SKU (kind `sku`); `false`: the piece's name is (kind `file`).
    pub of_sku: bool,
    pub reference: String,
    pub message: String,
}

impl Inbound<StockRow> {
    /// An API warehouse's stock as one piece: its levels per SKU, read whole.
    pub fn levels(rows: Vec<StockRow>) -> Inbound<StockRow> {
        Inbound {
            name: "inventory levels".into(),
            records: Ok(rows),
            cursor: None,
            walk: WalkPlace::Unchanged,
            strangers: Strangers::Skip,
            reports: Reports::default(),
        }
    }
}

/// Where a walk of a warehouse's list stands after a piece, kept in the database in the
/// piece's transaction (CONTRACT §11 "Pulls that resume"), never in a process's memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum WalkPlace {
    /// Nothing to keep or forget (a file, a page in the middle of a walk).
    #[default]
    Unchanged,
    /// The walk stops here for this pass and the next pass goes on from here: where, in the
    /// platform's own words (given back in [`Since::walk`]).
    Stopped(String),
    /// The walk is whole: no pass goes on with it.
    Ended,
}

/// What a shipment line of an order that is not the customer's (or not sent here) means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strangers {
    /// The whole piece is refused (a file names an unknown order: a typo, fixed by a person).
    RefuseThePiece,
    /// The line is skipped and named once (an API warehouse lists other sellers' orders).
    Skip,
}

/// What became of a piece handed out.
#[derive(Debug, Clone, Copy)]
pub enum Taken<'a> {
    Imported,
    Refused(&'a [BadLine]),
}

/// A piece's records, or its bad lines.
pub type Parsed<T> = Result<Vec<T>, Vec<BadLine>>;

/// One line of a piece that cannot be used, numbered as people count (1 = a file's header);
/// line 0 for a problem whose text names its own place (an X12 file's "segment 13 (SE), set
/// 0001: …").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    pub line: u64,
    pub problem: String,
}

/// One item of one shipment as the warehouse gave it (or none: a shipment of every unit left),
/// read into what it means. The engine finds the order it names and writes the shipment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShipmentLine {
    /// Numbered as people count (a file's line); 0 for a platform's record.
    pub line: u64,
    pub order: OrderReference,
    /// How a person names the order the line names, for a line of no order of ours: a file's
    /// `order_id 12`, a platform's `ShipBob order 7 (reference "SHOP-77")`.
    pub reference: String,
    pub tracking_number: String,
    pub carrier_name: Option<String>,
    pub service_level: Option<String>,
    /// The warehouse's description of the shipping (its ship option).
    pub description: Option<String>,
    /// When it shipped (ms since the epoch); `None`: when the line was read.
    pub shipped_at: Option<i64>,
    /// Hundredths of the adapter's weight unit.
    pub weight: Option<i64>,
    /// The SKU shipped and how many of it; `None` ships every unit the order has left.
    pub item: Option<(String, Units)>,
}

/// How a shipment line names its order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrderReference {
    /// orderbridge's order id.
    Order(i64),
    /// The store's id of the order, with the store.
    External { store_id: i64, external_id: String },
    /// The warehouse's own id of the order, with the order id our reference on it names: the
    /// line is the order's only when the order was sent to this warehouse under that id.
    Warehouse { warehouse_order_id: String, order_id: i64 },
    /// An order of the store of the connection whose pass reads the line, by one of its keys
    /// (a CSV layout's order match field, files-csv-layouts.md §4.2); `store_id`, when the line
    /// gives one, must be that store's id, else the line names no order of ours.
    InStore { key: StoreKey, store_id: Option<i64> },
    /// An order this warehouse was sent (by any connection of it) under orderbridge's id
    /// (an X12 945's depositor order number).
    SentHere(i64),
    /// Nothing that names an order of ours (another seller's order at the warehouse, or a
    /// file's line without a usable reference).
    Stranger,
}

/// How a line names an order of the reading connection's store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreKey {
    /// orderbridge's order id.
    Id(i64),
    /// The order's `external_id`.
    External(String),
    /// The order's `external_display_id`: a value two orders of the store carry is ambiguous.
    Display(String),
}

/// How many units of its SKU a shipment line ships.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Units {
    /// A whole number, at least 1.
    Count(i64),
    /// Every unit of the SKU the order has left (a warehouse that does not say how many, such
    /// as a bundle it assembles).
    AllLeft,
}

/// A shipment line as read, or what is wrong with it. A file's line whose date is no date is
/// still one line of its piece: the piece's report names it beside the lines whose order the
/// engine does not know.
pub type LineRead = Result<ShipmentLine, BadLine>;

/// The heaviest shipment line, in hundredths: 8 digits before the point, as any shipment's
/// weight.
const MAX_WEIGHT: i64 = 9_999_999_999;

/// A weight in hundredths, rounded half-even; `None` when it is negative or heavier than any
/// shipment's weight.
pub fn weight_hundredths(weight: Decimal) -> Option<i64> {
    let rounded = weight.round_dp_with_strategy(2, RoundingStrategy::MidpointNearestEven);
    let hundredths = rounded.checked_mul(Decimal::ONE_HUNDRED)?.to_i64()?;
    (0..=MAX_WEIGHT).contains(&hundredths).then_some(hundredths)
}

/// A stock level as the warehouse gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StockRow {
    pub sku: String,
    /// A whole number; a negative count is 0.
    pub quantity: i64,
}

/// A warehouse's levels summed per SKU over its rows (a SKU in several locations or
/// warehouses), in SKU order; a negative sum counts as 0.
#[derive(Debug, Default)]
pub struct LevelsPerSku(BTreeMap<String, i64>);

impl LevelsPerSku {
    pub fn add(&mut self, sku: &str, units: i64) {
        let held = self.0.entry(sku.to_string()).or_default();
        *held = held.saturating_add(units);
    }

    pub fn into_rows(self) -> Vec<StockRow> {
        self.0.into_iter().map(|(sku, quantity)| StockRow { sku, quantity: quantity.max(0) }).collect()
    }
}

/// An order to send, with its items in order.
#[derive(Debug, Clone, Default)]
pub struct OutgoingOrder {
    pub order_id: i64,
    pub external_id: Option<String>,
    pub external_display_id: Option<String>,
    pub store_id: i64,
    /// Milliseconds since the epoch.
    pub ordered_at: Option<i64>,
    pub customer_email: Option<String>,
    pub ship_to: ShipTo,
    /// The billing address, where a warehouse falls back to it (a name, a phone).
    pub bill_to: ShipTo,
    pub carrier: Option<String>,
    pub service_level: Option<String>,
    pub gift_message: Option<String>,
    pub notes: Option<String>,
    pub purchase_order_id: Option<String>,
    /// Milliseconds since the epoch.
    pub requested_ship_date: Option<i64>,
    pub currency_code: Option<String>,
    /// Hundredths.
    pub shipping_amount: Option<i64>,
    /// Hundredths.
    pub tax_amount: Option<i64>,
    pub items: Vec<OutgoingItem>,
    /// An earlier send of this order ended without a verdict (a lost answer, a failed pass, a
    /// crash), so its create may already be at the warehouse: an API warehouse looks its
    /// reference up before it creates it (the mark is the unfinished send, kept in the
    /// database).
    pub in_doubt: bool,
}

/// An address of an order to send.
#[derive(Debug, Clone, Default)]
pub struct ShipTo {
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub street1: Option<String>,
    pub street2: Option<String>,
    pub city: Option<String>,
    pub region: Option<String>,
    pub postal_code: Option<String>,
    pub country: Option<String>,
    pub telephone: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct OutgoingItem {
    pub sku: Option<String>,
    pub name: Option<String>,
    pub quantity: i64,
    /// Hundredths.
    pub unit_price: Option<i64>,
    /// Hundredths.
    pub weight: Option<i64>,
    /// Hundredths.
    pub tax_amount: Option<i64>,
    pub upc: Option<String>,
    /// The store's id of the order line.
    pub external_order_item_id: Option<String>,
}

enum Feed {
    Orders(Vec<OutgoingOrder>),
    End,
}

/// The producing half of a send: the engine hands the orders in as it reads them, from a
/// blocking thread, and says when the last was sent. Made by [`order_feed`].
pub struct OrderFeed(mpsc::Sender<Feed>);

/// The consuming half, handed to [`WarehouseClient::send_orders`].
pub struct OrderStream {
    receiver: mpsc::Receiver<Feed>,
    /// Which send this is.
    pub send: SendKey,
}

/// The consumer stopped taking orders; its own error says why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriterStopped;

/// A feed of orders to a warehouse. Few batches wait in it at once, so a large send is
/// never held whole.
pub fn order_feed(send: SendKey) -> (OrderFeed, OrderStream) {
    let (sender, receiver) = mpsc::channel(2);
    (OrderFeed(sender), OrderStream { receiver, send })
}

impl OrderFeed {
    /// Orders per [`OrderFeed::send`]: enough to make the hand-over cheap.
    pub const BATCH: usize = 64;

    /// Hands orders to the warehouse, waiting while it is behind. Call from a blocking thread.
    pub fn send(&self, orders: Vec<OutgoingOrder>) -> Result<(), WriterStopped> {
        self.0.blocking_send(Feed::Orders(orders)).map_err(|_| WriterStopped)
    }

    /// Says the last orders were sent. Call from a blocking thread.
    pub fn finish(self) -> Result<(), WriterStopped> {
        self.0.blocking_send(Feed::End).map_err(|_| WriterStopped)
    }

    /// As [`OrderFeed::send`], from a task: the engine waits here for a slow warehouse, never
    /// on a database thread.
    pub async fn give(&self, orders: Vec<OutgoingOrder>) -> Result<(), WriterStopped> {
        self.0.send(Feed::Orders(orders)).await.map_err(|_| WriterStopped)
    }

    /// As [`OrderFeed::finish`], from a task.
    pub async fn end(self) -> Result<(), WriterStopped> {
        self.0.send(Feed::End).await.map_err(|_| WriterStopped)
    }
}

/// What an [`OrderStream`] gives next.
#[derive(Debug)]
pub enum Fed {
    Orders(Vec<OutgoingOrder>),
    /// The producer said the last orders were sent.
    End,
    /// The producer stopped without saying so (it failed, and says why).
    Stopped,
}

impl OrderStream {
    /// The next orders, or how the feed ended.
    pub async fn next(&mut self) -> Fed {
        match self.receiver.recv().await {
            Some(Feed::Orders(orders)) => Fed::Orders(orders),
            Some(Feed::End) => Fed::End,
            None => Fed::Stopped,
        }
    }
}
