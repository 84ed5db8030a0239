//! ShipStation (API V2) on loopback, answering the seven operations orderbridge uses as the
//! annex (`spec/platforms/shipstation.md` §8) and ShipStation's OpenAPI file
//! (`../shared/vendor/shipstation/shipstation-v2-openapi.yaml`) describe them: accounts told
//! apart by the `api-key` header, each with a default warehouse; shipments created in batches
//! (a known `external_shipment_id` refused in its answer entry), looked up by external id and
//! cancelled while no label holds them; labels bought by themselves a settable delay after a
//! shipment arrives, or on request (deterministic from a seed), voided on request; labels
//! orderbridge did not cause (foreign references, returns); inventory rows in pages linked by
//! `links.next.href`, or 403 for an account without the Inventory add-on; ShipStation's limit
//! of 200 requests a minute; and faults to switch on. Tests, the demo and the benchmark drive
//! the real client against it.
//!
//! This module owns the state and the owner's controls; `api` the wire.

mod api;
#[cfg(test)]
pub mod vendor;
#[cfg(test)]
mod vendor_tests;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Rng;
use super::running::Faults;

/// The operations the simulator serves, by the file's `operationId`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    ListWarehouses,
    GetWarehouse,
    CreateShipments,
    GetShipmentByExternalId,
    CancelShipment,
    ListLabels,
    GetInventoryLevels,
}

impl Operation {
    pub const ALL: [Operation; 7] = [
        Operation::ListWarehouses,
        Operation::GetWarehouse,
        Operation::CreateShipments,
        Operation::GetShipmentByExternalId,
        Operation::CancelShipment,
        Operation::ListLabels,
        Operation::GetInventoryLevels,
    ];

    /// The file's `operationId`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::ListWarehouses => "list_warehouses",
            Operation::GetWarehouse => "get_warehouse_by_id",
            Operation::CreateShipments => "create_shipments",
            Operation::GetShipmentByExternalId => "get_shipment_by_external_id",
            Operation::CancelShipment => "cancel_shipments",
            Operation::ListLabels => "list_labels",
            Operation::GetInventoryLevels => "getInventoryLevels",
        }
    }
}

/// The carriers labels are bought with, by the file's `carrier_code`.
pub const CARRIERS: [(&str, &str); 4] = [
    ("stamps_com", "usps_priority_mail"),
    ("ups", "ups_ground"),
    ("fedex", "fedex_ground"),
    ("dhl_express", "dhl_express_worldwide"),
];

#[derive(Debug, Clone, Copy)]
enum Fault {
    Status(u16),
    /// 429 with `Retry-After` seconds.
    RateLimited(u64),
    /// 200 with a body that is not JSON (a proxy's page).
    NotJson,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShipmentStatus {
    Pending,
    LabelPurchased,
    Cancelled,
}

impl ShipmentStatus {
    fn as_str(self) -> &'static str {
        match self {
            ShipmentStatus::Pending => "pending",
            ShipmentStatus::LabelPurchased => "label_purchased",
            ShipmentStatus::Cancelled => "cancelled",
        }
    }
}

/// A shipment the account holds.
#[derive(Debug, Clone)]
struct Shipment {
    id: String,
    external: Option<String>,
    status: ShipmentStatus,
    created_ms: i64,
    modified_ms: i64,
    /// When a label is bought for it by itself.
    label_due: Option<i64>,
    /// The create's object, as sent.
    sent: Value,
}

/// A label the account bought.
#[derive(Debug, Clone)]
pub struct Label {
    pub label_id: String,
    pub shipment_id: String,
    pub external: Option<String>,
    pub created_ms: i64,
    pub tracking_number: String,
    pub carrier_code: &'static str,
    pub service_code: &'static str,
    pub voided_ms: Option<i64>,
    pub is_return: bool,
    /// Packages' weights in ounces.
    pub packages: Vec<u32>,
    pub processing: bool,
}

/// An inventory row.
#[derive(Debug, Clone)]
struct Stock {
    sku: String,
    warehouse: String,
    on_hand: i64,
    allocated: i64,
}

/// One API key's account with its admission: what answers before the account does.
struct Account {
    revoked: bool,
    no_inventory: bool,
    warehouse_id: String,
    shipments: Vec<Shipment>,
    labels: Vec<Label>,
    stock: Vec<Stock>,
    /// Keyed by an operation's id; empty: any.
    faults: Faults<Fault>,
    /// Creates applied and then answered 502 with no body.
    lost_creates: usize,
    /// References refused in their answer entry, with the message.
    refusals: HashMap<String, String>,
    /// Create requests refused whole (400).
    refused_batches: usize,
    per_minute: usize,
    window: VecDeque<Instant>,
}

/// The simulator's accounts, by key; reached through a [`Handle`].
pub struct State {
    accounts: HashMap<String, Account>,
    next_id: u64,
    rng: Rng,
    label_after: Option<Duration>,
    counts: BTreeMap<Operation, usize>,
    #[cfg(test)]
    recording: bool,
    #[cfg(test)]
    exchanges: Vec<super::openapi_check::Exchange>,
}

/// A running ShipStation simulator; dropping it stops it.
pub type Simulator = super::Simulator<State>;

/// What a simulator's owner uses to set up, steer and read it.
pub type Handle = super::Handle<State>;

fn now_ms() -> i64 {
    crate::dates::now_ms()
}

impl State {
    fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Buys the labels that are due, in every account.
    fn advance(&mut self, now: i64) {
        let keys: Vec<String> = self.accounts.keys().cloned().collect();
        for key in keys {
            let due: Vec<usize> = self.accounts[&key]
                .shipments
                .iter()
                .enumerate()
                .filter(|(_, s)| s.status == ShipmentStatus::Pending && s.label_due.is_some_and(|d| d <= now))
                .map(|(at, _)| at)
                .collect();
            for at in due {
                self.buy(&key, at, now, None);
            }
        }
    }

    /// A label for shipment `at` of account `key`, its carrier drawn unless given.
    fn buy(&mut self, key: &str, at: usize, now: i64, carrier: Option<usize>) -> Label {
        let id = self.next_id();
        let carrier =
            carrier.unwrap_or_else(|| self.rng.below(CARRIERS.len() as u64) as usize) % CARRIERS.len();
        let (carrier_code, service_code) = CARRIERS[carrier];
        let tracking_number = tracking(&mut self.rng, carrier_code, id);
        let packages = if self.rng.below(5) == 0 {
            vec![8 + self.rng.below(40) as u32, 8 + self.rng.below(40) as u32]
        } else {
            vec![4 + self.rng.below(60) as u32]
        };
        let account = self.accounts.get_mut(key).expect("the account");
        let shipment = &mut account.shipments[at];
        shipment.status = ShipmentStatus::LabelPurchased;
        shipment.modified_ms = now;
        shipment.label_due = None;
        let label = Label {
            label_id: format!("se-{}", 900_000 + id),
            shipment_id: shipment.id.clone(),
            external: shipment.external.clone(),
            created_ms: now,
            tracking_number,
            carrier_code,
            service_code,
            voided_ms: None,
            is_return: false,
            packages,
            processing: false,
        };
        account.labels.push(label.clone());
        label
    }
}

/// A tracking number shaped like the carrier's.
fn tracking(rng: &mut Rng, carrier: &str, id: u64) -> String {
    let digits =
        |rng: &mut Rng, n: usize| (0..n).map(|_| char::from(b'0' + rng.below(10) as u8)).collect::<String>();
    match carrier {
        "stamps_com" => format!("9400{}{:06}", digits(rng, 12), id % 1_000_000),
        "ups" => format!("1Z{}{:06}", digits(rng, 10), id % 1_000_000),
        "fedex" => format!("{}{:06}", digits(rng, 6), id % 1_000_000),
        _ => format!("{}{:06}", digits(rng, 4), id % 1_000_000),
    }
}

impl Simulator {
    /// No accounts; labels are bought only on request until [`Handle::set_label_after`].
    pub async fn start() -> Simulator {
        let state = State {
            accounts: HashMap::new(),
            next_id: 4416,
            rng: Rng::new(2026),
            label_after: None,
            counts: BTreeMap::new(),
            #[cfg(test)]
            recording: false,
            #[cfg(test)]
            exchanges: Vec::new(),
        };
        Simulator::serve(state, "ShipStation", api::answer).await
    }

    /// Where orderbridge's `shipstation_api_base` should point.
    pub fn base_url(&self) -> String {
        self.origin()
    }
}

impl Handle {
    fn with<T>(&self, key: &str, f: impl FnOnce(&mut Account) -> T) -> T {
        let mut state = self.lock();
        state.advance(now_ms());
        f(state.accounts.get_mut(key).unwrap_or_else(|| panic!("no ShipStation account has that key")))
    }

    /// An account reached with `key`, with one (default) warehouse; its `warehouse_id`.
    pub fn add_account(&self, key: &str) -> String {
        let mut state = self.lock();
        let warehouse_id = format!("se-{}", 270 + state.accounts.len());
        state.accounts.insert(
            key.to_string(),
            Account {
                revoked: false,
                no_inventory: false,
                warehouse_id: warehouse_id.clone(),
                shipments: Vec::new(),
                labels: Vec::new(),
                stock: Vec::new(),
                faults: Faults::default(),
                lost_creates: 0,
                refusals: HashMap::new(),
                refused_batches: 0,
                per_minute: 200,
                window: VecDeque::new(),
            },
        );
        warehouse_id
    }

    /// Labels are bought by themselves this long after their shipment is created (shipments
    /// created from now on); `None`: only on request.
    pub fn set_label_after(&self, after: Option<Duration>) {
        self.lock().label_after = after;
    }

    /// Buys a label for the shipment held under `external`, with the `carrier`-th carrier of
    /// [`CARRIERS`] (drawn when `None`). The label, or why not.
    pub fn buy_label(&self, key: &str, external: &str, carrier: Option<usize>) -> Result<Label, String> {
        let mut state = self.lock();
        let account = state.accounts.get(key).ok_or("no such account")?;
        let at = account
            .shipments
            .iter()
            .position(|s| s.external.as_deref() == Some(external))
            .ok_or_else(|| format!("no shipment {external}"))?;
        if account.shipments[at].status != ShipmentStatus::Pending {
            return Err(format!("shipment {external} is not pending"));
        }
        Ok(state.buy(key, at, now_ms(), carrier))
    }

    /// Buys a label for every shipment still pending; how many.
    pub fn buy_all(&self, key: &str) -> usize {
        let mut state = self.lock();
        let pending: Vec<usize> = match state.accounts.get(key) {
            Some(account) => (0..account.shipments.len())
                .filter(|&at| account.shipments[at].status == ShipmentStatus::Pending)
                .collect(),
            None => return 0,
        };
        for &at in &pending {
            state.buy(key, at, now_ms(), None);
        }
        pending.len()
    }

    /// Voids a label; whether there was one to void.
    pub fn void_label(&self, key: &str, label_id: &str) -> bool {
        self.with(key, |account| {
            let Some(label) =
                account.labels.iter_mut().find(|l| l.label_id == label_id && l.voided_ms.is_none())
            else {
                return false;
            };
            label.voided_ms = Some(now_ms());
            true
        })
    }

    /// A label orderbridge did not cause: a shipment under `external` (or none) made in the
    /// ShipStation app, labelled at once; `is_return` for a return label. Its tracking number.
    pub fn add_foreign_label(&self, key: &str, external: Option<&str>, is_return: bool) -> String {
        let mut state = self.lock();
        let id = state.next_id();
        let now = now_ms();
        let account = state.accounts.get_mut(key).expect("the account");
        account.shipments.push(Shipment {
            id: format!("se-{id}"),
            external: external.map(str::to_string),
            status: ShipmentStatus::Pending,
            created_ms: now,
            modified_ms: now,
            label_due: None,
            sent: serde_json::json!({}),
        });
        let at = account.shipments.len() - 1;
        let mut label = state.buy(key, at, now, Some(1));
        if is_return {
            let account = state.accounts.get_mut(key).expect("the account");
            if let Some(last) = account.labels.last_mut() {
                last.is_return = true;
            }
            label.is_return = true;
        }
        label.tracking_number
    }

    /// A label still being bought (`processing`) for the shipment under `external`; its
    /// `created_at` (ms).
    pub fn add_processing_label(&self, key: &str, external: &str) -> i64 {
        let mut state = self.lock();
        let id = state.next_id();
        let account = state.accounts.get_mut(key).expect("the account");
        let shipment_id =
            account.shipments.iter().find(|s| s.external.as_deref() == Some(external)).map(|s| s.id.clone());
        let created_ms = now_ms();
        account.labels.push(Label {
            label_id: format!("se-{}", 900_000 + id),
            shipment_id: shipment_id.unwrap_or_default(),
            external: Some(external.to_string()),
            created_ms,
            tracking_number: String::new(),
            carrier_code: "ups",
            service_code: "ups_ground",
            voided_ms: None,
            is_return: false,
            packages: vec![10],
            processing: true,
        });
        created_ms
    }

    /// An inventory row of `sku` in inventory warehouse `warehouse`.
    pub fn add_inventory(&self, key: &str, sku: &str, warehouse: &str, on_hand: i64, allocated: i64) {
        self.with(key, |account| {
            account.stock.push(Stock { sku: sku.into(), warehouse: warehouse.into(), on_hand, allocated })
        });
    }

    /// The account lacks the Inventory add-on: `GET /v2/inventory` answers 403.
    pub fn remove_inventory_add_on(&self, key: &str) {
        self.with(key, |account| account.no_inventory = true);
    }

    /// The shipment held under `external`: its `shipment_id` and status.
    pub fn shipment(&self, key: &str, external: &str) -> Option<(String, &'static str)> {
        self.with(key, |account| {
            account
                .shipments
                .iter()
                .find(|s| s.external.as_deref() == Some(external))
                .map(|s| (s.id.clone(), s.status.as_str()))
        })
    }

    /// How many shipments the account holds under `external`.
    pub fn shipments_under(&self, key: &str, external: &str) -> usize {
        self.with(key, |a| a.shipments.iter().filter(|s| s.external.as_deref() == Some(external)).count())
    }

    /// How many shipments the account holds.
    pub fn shipment_count(&self, key: &str) -> usize {
        self.with(key, |account| account.shipments.len())
    }

    /// The next `count` requests of `operation` (any: `None`) answer `status`.
    pub fn fail_next(&self, key: &str, operation: Option<Operation>, status: u16, count: usize) {
        self.with(key, |a| {
            a.faults.add(operation.map_or("", Operation::as_str), Fault::Status(status), count)
        });
    }

    /// The next `count` requests of `operation` (any: `None`) answer 429 with `Retry-After`.
    pub fn rate_limit_next(
        &self,
        key: &str,
        operation: Option<Operation>,
        count: usize,
        retry_after_secs: u64,
    ) {
        self.with(key, |a| {
            a.faults.add(operation.map_or("", Operation::as_str), Fault::RateLimited(retry_after_secs), count)
        });
    }

    /// Every fault set and not yet met is dropped: the account answers as usual again.
    pub fn clear_faults(&self, key: &str) {
        self.with(key, |a| a.faults.clear());
    }

    /// The next `count` requests of `operation` answer 200 with an HTML page, not JSON.
    pub fn answer_html_next(&self, key: &str, operation: Operation, count: usize) {
        self.with(key, |a| a.faults.add(operation.as_str(), Fault::NotJson, count));
    }

    /// The next `count` create requests are applied, then answered 502 with no body.
    pub fn lose_creates(&self, key: &str, count: usize) {
        self.with(key, |a| a.lost_creates += count);
    }

    /// Creates of `reference` are refused in their answer entry with `message`.
    pub fn refuse_reference(&self, key: &str, reference: &str, message: &str) {
        self.with(key, |a| a.refusals.insert(reference.to_string(), message.to_string()));
    }

    /// The next `count` create requests are refused whole (400, nothing created).
    pub fn refuse_batches(&self, key: &str, count: usize) {
        self.with(key, |a| a.refused_batches += count);
    }

    /// The key is revoked: every request with it answers 401.
    pub fn revoke(&self, key: &str) {
        self.with(key, |a| a.revoked = true);
    }

    /// ShipStation's limit: `per_minute` requests in any 60 seconds (200 unless set).
    pub fn set_rate_limit(&self, key: &str, per_minute: usize) {
        self.with(key, |a| a.per_minute = per_minute);
    }

    /// Requests received per operation (every key, refused ones too).
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

    /// Every request and answer since [`Handle::record_exchanges`].
    #[cfg(test)]
    pub fn exchanges(&self) -> Vec<super::openapi_check::Exchange> {
        self.lock().exchanges.clone()
    }
}
