//! ShipBob (Developer API 2026-01) on loopback, answering the six operations orderbridge uses
//! as the annex (`spec/platforms/shipbob.md` §10) and ShipBob's OpenAPI file
//! (`../shared/vendor/shipbob/openapi-2026-01.json`) describe them: bearer tokens per merchant
//! account, each with its channels (the token's `SMA` channel with `orders_write`, the
//! read-only "ShipBob Default", now and then a store's), creates held to
//! `Orders.CreateOrderModel` (400 member -> messages, 422 for a reference it holds), orders
//! that ship by themselves after a settable delay (split in two now and then, or held in
//! `Exception` first), cancels as ShipBob answers them, inventory levels in cursor pages, a
//! sliding window of 150 requests a minute, and faults to switch on. Tests, the demo and the
//! benchmark drive the real client against it; `vendor_tests` holds what crosses the wire to
//! the file.
//!
//! This module owns the state and the owner's controls; `api` the wire, `data` the account's
//! records, `create` the create body's check.

mod api;
mod create;
mod data;
#[cfg(test)]
mod sim_tests;
#[cfg(test)]
pub mod vendor;
#[cfg(test)]
mod vendor_tests;
mod views;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

use super::Rng;
use super::running::Faults;
use data::{Account, Channel, Ids, READ_SCOPES, SMA_SCOPES, Tracking};

/// The operations ShipBob's simulator serves, for counting requests and aiming faults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    GetChannels,
    CreateOrder,
    GetOrders,
    GetOrder,
    CancelOrder,
    GetInventoryLevels,
}

impl Operation {
    pub const ALL: [Operation; 6] = [
        Operation::GetChannels,
        Operation::CreateOrder,
        Operation::GetOrders,
        Operation::GetOrder,
        Operation::CancelOrder,
        Operation::GetInventoryLevels,
    ];

    /// ShipBob's summary of the operation: `Create Order`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::GetChannels => "Get Channels",
            Operation::CreateOrder => "Create Order",
            Operation::GetOrders => "Get Orders",
            Operation::GetOrder => "Get Order",
            Operation::CancelOrder => "Cancel Order",
            Operation::GetInventoryLevels => "Get All Inventory Levels",
        }
    }

    /// The operations under `/2026-01/order`, whose answers carry `x-remaining-calls`.
    fn is_order_operation(self) -> bool {
        !matches!(self, Operation::GetChannels | Operation::GetInventoryLevels)
    }
}

/// The carriers the simulated fulfillment centers ship with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carrier {
    Usps,
    Ups,
    FedEx,
    DhlExpress,
}

impl Carrier {
    pub const ALL: [Carrier; 4] = [Carrier::Usps, Carrier::Ups, Carrier::FedEx, Carrier::DhlExpress];

    /// As ShipBob writes `tracking.carrier`.
    pub fn name(self) -> &'static str {
        match self {
            Carrier::Usps => "USPS",
            Carrier::Ups => "UPS",
            Carrier::FedEx => "FedEx",
            Carrier::DhlExpress => "DHL Express",
        }
    }
}

/// How orders ship by themselves: each `after` its create plus up to `spread`; one in
/// `split_one_in` (0: never) in two parcels from two centers, the second `split_gap` later;
/// one in `exception_one_in` (0: never) held in `Exception` (out of stock) for
/// `exception_wait` first.
#[derive(Debug, Clone)]
pub struct AutoShip {
    pub after: Duration,
    pub spread: Duration,
    pub split_one_in: u64,
    pub split_gap: Duration,
    pub exception_one_in: u64,
    pub exception_wait: Duration,
}

impl AutoShip {
    /// Every order ships in one parcel as soon as the next request arrives.
    pub fn immediately() -> AutoShip {
        AutoShip {
            after: Duration::ZERO,
            spread: Duration::ZERO,
            split_one_in: 0,
            split_gap: Duration::ZERO,
            exception_one_in: 0,
            exception_wait: Duration::ZERO,
        }
    }

    /// The demo's pace: one to three minutes, a split one order in five, an exception one
    /// in eight that ships two minutes later.
    pub fn demo() -> AutoShip {
        AutoShip {
            after: Duration::from_secs(60),
            spread: Duration::from_secs(120),
            split_one_in: 5,
            split_gap: Duration::from_secs(45),
            exception_one_in: 8,
            exception_wait: Duration::from_secs(120),
        }
    }
}

/// An account's channel ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Channels {
    /// "ShipBob Default": read-only (no `orders_write`).
    pub default: i64,
    /// The Personal Access Token's own channel (`SMA`, with `orders_write`).
    pub sma: i64,
}

/// A parcel shipped on request: the carrier and tracking number drawn when `None`.
#[derive(Debug, Clone, Default)]
pub struct Parcel {
    pub carrier: Option<Carrier>,
    pub tracking_number: Option<String>,
}

/// What one shipment shipped on request became.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shipped {
    pub shipment_id: i64,
    pub carrier: &'static str,
    pub tracking_number: String,
}

#[derive(Debug, Clone, Copy)]
enum Fault {
    Status(u16),
    /// 429 with `x-retry-after` seconds.
    RateLimited(u64),
}

/// One token's merchant account with its admission: what answers before the account does.
struct Sandbox {
    account: Account,
    revoked: bool,
    latency: Duration,
    /// Keyed by an operation's name; empty: any.
    faults: Faults<Fault>,
    /// Creates or cancels applied and then answered 502.
    lost_answers: HashMap<Operation, usize>,
    /// Creates that find their reference already there.
    duplicates: usize,
    /// Creates refused by reference: 400 or 422.
    refusals: HashMap<String, u16>,
    per_minute: usize,
    window: VecDeque<Instant>,
}

/// The simulator's accounts, by token; reached through a [`Handle`].
pub struct State {
    sandboxes: HashMap<String, Sandbox>,
    ids: Ids,
    rng: Rng,
    auto_ship: Option<AutoShip>,
    counts: BTreeMap<Operation, usize>,
    #[cfg(test)]
    recording: bool,
    #[cfg(test)]
    exchanges: Vec<super::openapi_check::Exchange>,
}

/// A running ShipBob simulator; dropping it stops it. Its methods are its [`Handle`]'s.
pub type Simulator = super::Simulator<State>;

/// What a simulator's owner (a test, the demo, a benchmark's child) uses to set up, steer and
/// read it.
pub type Handle = super::Handle<State>;

fn now_ms() -> i64 {
    crate::dates::now_ms()
}

impl Simulator {
    /// No accounts; orders ship only on request until [`Handle::set_auto_ship`].
    pub async fn start() -> Simulator {
        let state = State {
            sandboxes: HashMap::new(),
            ids: Ids::default(),
            rng: Rng::new(2026),
            auto_ship: None,
            counts: BTreeMap::new(),
            #[cfg(test)]
            recording: false,
            #[cfg(test)]
            exchanges: Vec::new(),
        };
        Simulator::serve(state, "ShipBob", api::answer).await
    }

    /// Where orderbridge's `shipbob_api_base` should point.
    pub fn base_url(&self) -> String {
        self.origin()
    }
}

impl Handle {
    fn with<T>(&self, token: &str, f: impl FnOnce(&mut Sandbox, &mut Ids, &mut Rng) -> T) -> T {
        let mut state = self.lock();
        let State { sandboxes, ids, rng, .. } = &mut *state;
        let sandbox = sandboxes.get_mut(token).unwrap_or_else(|| panic!("no ShipBob account has that token"));
        sandbox.account.advance(ids, rng, now_ms());
        f(sandbox, ids, rng)
    }

    /// A merchant account reached with `token`, with its "ShipBob Default" and `SMA` channels.
    pub fn add_account(&self, token: &str) -> Channels {
        let mut state = self.lock();
        let default = Ids::next(&mut state.ids.channel);
        let sma = Ids::next(&mut state.ids.channel);
        let account = Account {
            channels: vec![
                Channel {
                    id: default,
                    application_name: "ShipBob",
                    name: "ShipBob Default".into(),
                    scopes: READ_SCOPES,
                },
                Channel {
                    id: sma,
                    application_name: "SMA",
                    name: format!("Personal Access Token {}", &token[..token.len().min(6)]),
                    scopes: SMA_SCOPES,
                },
            ],
            ..Account::default()
        };
        state.sandboxes.insert(
            token.to_string(),
            Sandbox {
                account,
                revoked: false,
                latency: Duration::ZERO,
                faults: Faults::default(),
                lost_answers: HashMap::new(),
                duplicates: 0,
                refusals: HashMap::new(),
                per_minute: 150,
                window: VecDeque::new(),
            },
        );
        Channels { default, sma }
    }

    /// Another integration's channel on the account (a Shopify store's, say): it can write
    /// orders, but it is not the token's. Its id.
    pub fn add_store_channel(&self, token: &str, name: &str) -> i64 {
        self.with(token, |sandbox, ids, _| {
            let id = Ids::next(&mut ids.channel);
            sandbox.account.channels.push(Channel {
                id,
                application_name: "Shopify",
                name: name.to_string(),
                scopes: SMA_SCOPES,
            });
            id
        })
    }

    /// `count` inventory items `SKU-0000`, `SKU-0001`, … with on-hand quantities drawn from
    /// `seed`, one in eight at 0; and one more item for `SKU-0000`, which ShipBob may hold
    /// twice (two products with one SKU).
    pub fn generate_inventory(&self, token: &str, count: usize, seed: u64) {
        let mut rng = Rng::new(seed);
        self.with(token, |sandbox, ids, _| {
            for i in 0..count {
                let on_hand = if rng.below(8) == 0 { 0 } else { 1 + rng.below(400) as i64 };
                let awaiting = rng.below(3) as i64 * 12;
                sandbox.account.add_item(
                    ids,
                    &format!("SKU-{i:04}"),
                    &format!("Product {i}"),
                    on_hand,
                    awaiting,
                );
            }
            if count > 0 {
                sandbox.account.add_item(ids, "SKU-0000", "Product 0 (second lot)", 5, 0);
            }
        });
    }

    /// An inventory item with `on_hand` units; its inventory id.
    pub fn add_inventory(&self, token: &str, sku: &str, name: &str, on_hand: i64) -> i64 {
        self.with(token, |sandbox, ids, _| {
            let at = sandbox.account.add_item(ids, sku, name, on_hand, 0);
            sandbox.account.items[at].inventory_id
        })
    }

    /// The account's fulfillable quantity of a SKU, over every item with that SKU.
    pub fn fulfillable(&self, token: &str, sku: &str) -> i64 {
        self.with(token, |sandbox, _, _| {
            sandbox.account.items.iter().filter(|i| i.sku == sku).map(|i| i.on_hand - i.committed).sum()
        })
    }

    /// Orders the account holds that orderbridge did not send: half on a store's channel
    /// (added if the account has none), half on the token's channel with references of
    /// orderbridge's form (`ob-N`, N from 900,000) never sent. Their ids; they ship like the
    /// others.
    pub fn add_foreign_orders(&self, token: &str, count: usize, seed: u64) -> Vec<i64> {
        let has_store =
            self.with(token, |s, _, _| s.account.channels.iter().any(|c| c.application_name == "Shopify"));
        if !has_store {
            self.add_store_channel(token, "ShipBobs-Shopify-Store");
        }
        let mut rng = Rng::new(seed);
        let mut state = self.lock();
        let State { sandboxes, ids, rng: shared, auto_ship, .. } = &mut *state;
        let Some(sandbox) = sandboxes.get_mut(token) else { return Vec::new() };
        let account = &mut sandbox.account;
        let store = account.channels.iter().position(|c| c.application_name == "Shopify").unwrap_or(0);
        let sma = account.channels.iter().position(|c| c.application_name == "SMA").unwrap_or(0);
        (0..count)
            .map(|i| {
                let (channel, reference) = if i % 2 == 0 {
                    (store, format!("#{}", 1001 + rng.below(90_000)))
                } else {
                    (sma, format!("ob-{}", 900_000 + rng.below(90_000)))
                };
                let sku = format!("SKU-{:04}", rng.below(200));
                let new = data::NewOrder {
                    reference_id: reference,
                    order_number: None,
                    purchase_date: None,
                    shipping_method: "Standard".into(),
                    kind: "DTC".into(),
                    gift_message: None,
                    recipient: serde_json::json!({"name": "Pat Foreign", "address":
                        {"address1": "1 Elsewhere Road", "city": "Gotham City", "country": "US"}}),
                    products: vec![(sku.clone(), Some(sku), 1 + rng.below(3) as i64, None)],
                };
                account.create(ids, shared, auto_ship.as_ref(), channel, new, now_ms())
            })
            .collect()
    }

    /// Orders ship by themselves as `auto` says (every account, orders created from now on);
    /// `None`: only on request.
    pub fn set_auto_ship(&self, auto: Option<AutoShip>) {
        self.lock().auto_ship = auto;
    }

    /// Ships everything of the order not yet shipped, in one parcel. Its shipment.
    pub fn ship_order(&self, token: &str, order_id: i64, parcel: Parcel) -> Result<Shipped, String> {
        self.ship(token, order_id, None, parcel)
    }

    /// Ships `units` of the order's SKUs (`(sku, units)`) in one parcel, out of what is not
    /// yet shipped; the rest keeps waiting. Its shipment.
    pub fn ship_units(
        &self,
        token: &str,
        order_id: i64,
        units: &[(&str, i64)],
        parcel: Parcel,
    ) -> Result<Shipped, String> {
        self.ship(token, order_id, Some(units), parcel)
    }

    fn ship(
        &self,
        token: &str,
        order_id: i64,
        units: Option<&[(&str, i64)]>,
        parcel: Parcel,
    ) -> Result<Shipped, String> {
        self.with(token, |sandbox, ids, rng| {
            let tracking = Tracking::draw(rng, parcel.carrier, parcel.tracking_number, now_ms());
            let (carrier, tracking_number) = (tracking.carrier.name(), tracking.number.clone());
            let shipment_id = sandbox.account.ship_units(ids, order_id, units, tracking)?;
            Ok(Shipped { shipment_id, carrier, tracking_number })
        })
    }

    /// The order's shipments not yet shipped wait in `Exception` (out of stock) until they
    /// are shipped on request.
    pub fn hold_in_exception(&self, token: &str, order_id: i64) {
        self.with(token, |sandbox, _, _| {
            if let Some(order) = sandbox.account.orders.get_mut(&order_id) {
                for shipment in order.shipments.iter_mut().filter(|s| data::unshipped(s.status)) {
                    shipment.status = data::Status::Exception;
                    shipment.ship_due = None;
                    shipment.exception_due = None;
                    shipment.updated_ms = now_ms();
                }
            }
        });
    }

    /// Voids a shipped label: the shipment turns `Cancelled`. Whether it had shipped.
    pub fn void_label(&self, token: &str, shipment_id: i64) -> bool {
        self.with(token, |sandbox, _, _| sandbox.account.void(shipment_id, now_ms()))
    }

    /// The order ShipBob holds under a reference, if any.
    pub fn order_by_reference(&self, token: &str, reference: &str) -> Option<i64> {
        self.with(token, |sandbox, _, _| sandbox.account.by_reference(reference))
    }

    /// An order's status (`Processing`, `Exception`, `PartiallyFulfilled`, `Fulfilled`,
    /// `Cancelled`).
    pub fn order_status(&self, token: &str, order_id: i64) -> Option<&'static str> {
        self.with(token, |sandbox, _, _| sandbox.account.orders.get(&order_id).map(data::Order::status))
    }

    /// Ships every order of the account with something not yet shipped (and not cancelled),
    /// each in one parcel; how many.
    pub fn ship_all(&self, token: &str) -> usize {
        let waiting: Vec<i64> = self.with(token, |sandbox, _, _| {
            let orders = sandbox.account.orders.values();
            let waiting = orders.filter(|o| {
                o.cancelled_ms.is_none() && o.shipments.iter().any(|s| data::unshipped(s.status))
            });
            waiting.map(|o| o.id).collect()
        });
        waiting.into_iter().filter(|id| self.ship_order(token, *id, Parcel::default()).is_ok()).count()
    }

    /// How many orders the account holds.
    pub fn order_count(&self, token: &str) -> usize {
        self.with(token, |sandbox, _, _| sandbox.account.orders.len())
    }

    /// The next `count` requests of `operation` (any: `None`) answer `status` (500, 503…),
    /// after the faults already set.
    pub fn fail_next(&self, token: &str, operation: Option<Operation>, status: u16, count: usize) {
        self.with(token, |s, _, _| {
            s.faults.add(operation.map_or("", Operation::as_str), Fault::Status(status), count)
        });
    }

    /// Every fault set and not yet met is dropped: the account answers as usual again.
    pub fn clear_faults(&self, token: &str) {
        self.with(token, |s, _, _| s.faults.clear());
    }

    /// The next `count` requests answer 429 with `x-retry-after: retry_after_secs` and
    /// `x-remaining-calls: 0`, after the faults already set.
    pub fn rate_limit_next(&self, token: &str, count: usize, retry_after_secs: u64) {
        self.with(token, |s, _, _| s.faults.add("", Fault::RateLimited(retry_after_secs), count));
    }

    /// Every walk of shipments (Get Orders by `LastTrackingUpdateStartDate`) lists `count`
    /// orders before the account's own, of no channel of the token and with no shipment: a
    /// backlog after an outage, whatever its size, made as each page is asked for.
    pub fn list_backlog_first(&self, token: &str, count: usize) {
        self.with(token, |s, _, _| s.account.backlog = count);
    }

    /// The sliding window: `per_minute` requests in any 60 seconds (150 unless set).
    pub fn set_rate_limit(&self, token: &str, per_minute: usize) {
        self.with(token, |s, _, _| s.per_minute = per_minute);
    }

    /// The next `count` creates or cancels (`operation`) are applied, then answered 502.
    pub fn lose_answers(&self, token: &str, operation: Operation, count: usize) {
        self.with(token, |s, _, _| *s.lost_answers.entry(operation).or_default() += count);
    }

    /// The next create finds its reference already there (an earlier try applied): 422.
    pub fn duplicate_next_create(&self, token: &str) {
        self.with(token, |s, _, _| s.duplicates += 1);
    }

    /// Creates of `reference` are refused with `status`: 400 (a member's message) or 422.
    pub fn refuse_create(&self, token: &str, reference: &str, status: u16) {
        self.with(token, |s, _, _| s.refusals.insert(reference.to_string(), status));
    }

    /// The token is revoked: every request with it answers 401.
    pub fn revoke_token(&self, token: &str) {
        self.with(token, |s, _, _| s.revoked = true);
    }

    /// Every answer to the token waits this long first.
    pub fn set_latency(&self, token: &str, latency: Duration) {
        self.with(token, |s, _, _| s.latency = latency);
    }

    /// Requests received per operation (every token, refused ones too).
    pub fn requests(&self, operation: Operation) -> usize {
        self.lock().counts.get(&operation).copied().unwrap_or_default()
    }

    /// Requests received over every operation.
    pub fn total_requests(&self) -> usize {
        self.lock().counts.values().sum()
    }

    /// From now on every exchange is kept for [`Handle::exchanges`].
    #[cfg(test)]
    pub fn record_exchanges(&self) {
        self.lock().recording = true;
    }

    /// Every request and answer since [`Handle::record_exchanges`], as they crossed the wire.
    #[cfg(test)]
    pub fn exchanges(&self) -> Vec<super::openapi_check::Exchange> {
        self.lock().exchanges.clone()
    }
}
