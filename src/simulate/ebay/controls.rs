//! The owner's controls: sellers, orders, items and offers to add and read, counts and the
//! log, and the faults to switch on. They are on the [`Handle`], so a clone of it (the demo's)
//! has them too; the [`Simulator`] derefs to it.

use std::time::Duration;

use serde_json::{Value, json};

use super::generate::{self, READY_SKUS};
use super::{
    Account, Api, Fault, Item, NewOrder, Offer, Operation, OrderRec, Seller, Simulator, State, api, iso,
    parse_iso,
};
use crate::simulate::Rng;

/// The simulator's handle, with the controls.
pub type Handle = crate::simulate::Handle<State>;

impl Simulator {
    /// A simulator on a loopback port, with no seller.
    pub async fn start() -> Simulator {
        Simulator::serve(State::new(), "eBay", api::answer).await
    }

    /// Production's base: `http://127.0.0.1:PORT`.
    pub fn api_base(&self) -> String {
        self.origin()
    }

    /// The sandbox's base: `http://127.0.0.1:PORT/sandbox`.
    pub fn sandbox_base(&self) -> String {
        format!("{}{}", self.origin(), api::SANDBOX)
    }
}

impl Account {
    fn new(seller: &Seller) -> Account {
        Account {
            seller: seller.clone(),
            orders: Vec::new(),
            by_id: Default::default(),
            items: Default::default(),
            offers: Vec::new(),
            hub_listings: Default::default(),
            lose_answers: 0,
            modify_between_pages: Vec::new(),
            revisions: Default::default(),
        }
    }

    /// Adds eBay's JSON of an order (its id, dates and status read from it).
    pub(super) fn push(&mut self, json: Value) -> String {
        let created_ms = json["creationDate"].as_str().and_then(parse_iso).unwrap_or_default();
        let modified_ms = json["lastModifiedDate"].as_str().and_then(parse_iso).unwrap_or(created_ms);
        self.push_dated(json, created_ms, modified_ms)
    }

    /// As [`Account::push`], its dates known (reading them back is the slow part of 100,000).
    fn push_dated(&mut self, json: Value, created_ms: i64, modified_ms: i64) -> String {
        let id = json["orderId"].as_str().unwrap_or_default().to_string();
        let status = json["orderFulfillmentStatus"].as_str().unwrap_or("NOT_STARTED").to_string();
        let key = xxhash_rust::xxh3::xxh3_64(id.as_bytes());
        let record =
            OrderRec { id: id.clone(), json, created_ms, modified_ms, status, key, fulfillments: Vec::new() };
        match self.by_id.get(&id) {
            Some(&at) => self.orders[at] = record,
            None => {
                self.by_id.insert(id.clone(), self.orders.len());
                self.orders.push(record);
            }
        }
        id
    }
}

/// How long ago a ready order was paid.
pub const READY_AGE_MS: i64 = 3 * 60 * 1000;

impl Handle {
    /// `f` on the seller's account (added on the fly, production, if unknown) and the clock.
    fn with<T>(&self, seller: &str, f: impl FnOnce(&mut Account, i64) -> T) -> T {
        let mut state = self.lock();
        let now = state.now_ms();
        let account =
            state.accounts.entry(seller.to_string()).or_insert_with(|| Account::new(&Seller::new(seller)));
        f(account, now)
    }

    /// Registers a seller's keyset, refresh token and consented scopes (replacing its
    /// credentials if it is known; its orders and items stay).
    pub fn add_seller(&self, seller: &Seller) {
        let mut state = self.lock();
        let account = state.accounts.entry(seller.username.clone()).or_insert_with(|| Account::new(seller));
        account.seller = seller.clone();
    }

    /// Adds an order; returns its `orderId`.
    pub fn add_order(&self, seller: &str, order: NewOrder) -> String {
        let mut state = self.lock();
        let serial = state.next_serial();
        let now = state.now_ms();
        let json = generate::order_json(serial, seller, &order, order.created_ms.unwrap_or(now));
        let account =
            state.accounts.entry(seller.to_string()).or_insert_with(|| Account::new(&Seller::new(seller)));
        account.push(json)
    }

    /// Adds an eBay `Order` as given, kept verbatim (fulfillments still move its statuses).
    pub fn add_order_json(&self, seller: &str, order: Value) {
        self.with(seller, |account, _| account.push(order));
    }

    /// Adds `count` orders of the realistic mix of annex §8, the same for the same seed.
    pub fn add_orders(&self, seller: &str, count: usize, seed: u64) {
        let mut rng = Rng::new(seed);
        for _ in 0..count {
            let now = self.lock().now_ms();
            let order = generate::mixed(&mut rng, now);
            let old = !order.with_address;
            let id = self.add_order(seller, order);
            if old {
                // An old order the pull meets is one changed lately (a refund, a return).
                self.touch(seller, &id);
            }
        }
    }

    /// Adds `count` importable orders of 1 to 3 lines of the ready SKUs, under one lock, paid
    /// three minutes ago: a pull's window ends two minutes before it starts (annex §5), so an
    /// order made this instant is read only by a pass two minutes later.
    pub fn add_ready_orders(&self, seller: &str, count: usize) {
        let mut state = self.lock();
        let now = state.now_ms() - READY_AGE_MS;
        let first = state.serial + 1;
        state.serial += count as u64;
        let account =
            state.accounts.entry(seller.to_string()).or_insert_with(|| Account::new(&Seller::new(seller)));
        // Twelve shapes (one to three lines, four SKU rotations), each built once and renumbered.
        let mut shapes: std::collections::HashMap<(usize, usize), Value> = Default::default();
        for n in 0..count {
            let shape = shapes.entry((n % 3, n % 4)).or_insert_with(|| {
                let lines: Vec<(&str, i64)> =
                    (0..=n % 3).map(|i| (READY_SKUS[(n + i) % READY_SKUS.len()], 1 + (i as i64))).collect();
                generate::order_json(0, seller, &NewOrder::ready(&lines), now)
            });
            let mut json = shape.clone();
            generate::renumber(&mut json, first + n as u64);
            account.push_dated(json, now, now);
        }
    }

    /// An order as `getOrders` shows it.
    pub fn order(&self, seller: &str, order_id: &str) -> Option<Value> {
        self.with(seller, |a, _| a.by_id.get(order_id).map(|&i| a.orders[i].json.clone()))
    }

    /// The seller's order ids, in the order they were added.
    pub fn order_ids(&self, seller: &str) -> Vec<String> {
        self.with(seller, |a, _| a.orders.iter().map(|o| o.id.clone()).collect())
    }

    /// `lastModifiedDate` = now.
    pub fn touch(&self, seller: &str, order_id: &str) {
        self.with(seller, |a, now| a.touch(order_id, now));
    }

    /// `cancelState` `CANCELED`, `orderPaymentStatus` `FULLY_REFUNDED`, modified now.
    pub fn cancel(&self, seller: &str, order_id: &str) {
        self.with(seller, |a, now| {
            if let Some(&i) = a.by_id.get(order_id) {
                let json = &mut a.orders[i].json;
                let cancel =
                    json!({"cancelState": "CANCELED", "cancelledDate": iso(now), "cancelRequests": []});
                super::set(json, "cancelStatus", cancel);
                super::set(json, "orderPaymentStatus", json!("FULLY_REFUNDED"));
                a.touch(order_id, now);
            }
        });
    }

    /// An order's fulfillments, as `getShippingFulfillments` lists them.
    pub fn fulfillments(&self, seller: &str, order_id: &str) -> Vec<Value> {
        self.with(seller, |a, _| {
            a.by_id.get(order_id).map(|&i| a.orders[i].fulfillments.clone()).unwrap_or_default()
        })
    }

    /// Every fulfillment's tracking number of the seller, all orders, in creation order.
    pub fn tracking_numbers(&self, seller: &str) -> Vec<String> {
        let state = self.lock();
        state.tracking.iter().filter(|(s, _)| s == seller).map(|(_, t)| t.clone()).collect()
    }

    /// An inventory item of `quantity` with one published `EBAY_US` offer and its listing;
    /// returns the offer's id.
    pub fn add_item(&self, seller: &str, sku: &str, quantity: i64) -> String {
        self.with(seller, |a, _| {
            a.items.insert(sku.to_string(), Item { quantity, groups: Vec::new() });
        });
        let id = self.add_offer(seller, sku, "EBAY_US", true);
        self.with(seller, |a, _| {
            if let Some(offer) = a.offers.iter_mut().find(|o| o.id == id) {
                offer.quantity = quantity;
            }
        });
        id
    }

    /// An offer of the SKU on `marketplace` (its item made if there is none, quantity 0);
    /// published offers get a listing. Returns the offer's id.
    pub fn add_offer(&self, seller: &str, sku: &str, marketplace: &str, published: bool) -> String {
        let serial = self.lock().next_serial();
        self.with(seller, |a, _| {
            a.items.entry(sku.to_string()).or_insert(Item { quantity: 0, groups: Vec::new() });
            let id = format!("{}", 5_005_300_000 + serial);
            let quantity = a.items.get(sku).map_or(0, |i| i.quantity);
            a.offers.push(Offer {
                id: id.clone(),
                sku: sku.to_string(),
                marketplace: marketplace.to_string(),
                published,
                quantity,
                listing_id: published.then(|| format!("{}", 256_000_000_000 + serial)),
                sold: 0,
            });
            id
        })
    }

    /// A listing made in Seller Hub: the Inventory API does not see it.
    pub fn add_seller_hub_listing(&self, seller: &str, sku: &str, quantity: i64) {
        self.with(seller, |a, _| {
            a.hub_listings.insert(sku.to_string(), quantity);
        });
    }

    /// The item's `shipToLocationAvailability.quantity`.
    pub fn item_quantity(&self, seller: &str, sku: &str) -> Option<i64> {
        self.with(seller, |a, _| a.items.get(sku).map(|i| i.quantity))
    }

    /// An offer's `availableQuantity`.
    pub fn offer_quantity(&self, seller: &str, offer_id: &str) -> Option<i64> {
        self.with(seller, |a, _| a.offers.iter().find(|o| o.id == offer_id).map(|o| o.quantity))
    }

    /// What the SKU's published `EBAY_US` listing shows: the smaller of item and offer quantity.
    pub fn listed_quantity(&self, seller: &str, sku: &str) -> Option<i64> {
        self.with(seller, |a, _| {
            let item = a.items.get(sku)?.quantity;
            let offer =
                a.offers.iter().find(|o| o.sku == sku && o.published && o.marketplace == "EBAY_US")?;
            Some(item.min(offer.quantity))
        })
    }

    /// Requests of one operation, all sellers.
    pub fn requests(&self, op: Operation) -> usize {
        self.lock().counts.get(&op).copied().unwrap_or_default()
    }

    /// Every API request, token exchanges included.
    pub fn request_count(&self) -> usize {
        self.lock().total
    }

    /// `GET /sell/... -> 200` lines, oldest first.
    pub fn log(&self) -> Vec<String> {
        self.lock().log.clone()
    }

    /// `fault` answered to the next `count` requests of `op` (replacing faults set before).
    pub fn fail_next(&self, op: Operation, fault: Fault, count: usize) {
        self.lock().faults.set(op.as_str(), fault, count);
    }

    /// The seller's next `count` fulfillments are created, then answered 502.
    pub fn lose_next_fulfillment_answers(&self, seller: &str, count: usize) {
        self.with(seller, |a, _| a.lose_answers = count);
    }

    /// Seconds a new access token lives (7,200 by default).
    pub fn set_token_lifetime(&self, secs: u64) {
        self.lock().token_lifetime = secs;
    }

    /// Every access token issued so far now answers 401 errorId 1001.
    pub fn expire_tokens(&self) {
        self.lock().tokens.values_mut().for_each(|t| t.expires_ms = i64::MIN);
    }

    /// The seller's refresh token now answers 400 `invalid_grant`.
    pub fn revoke(&self, seller: &str) {
        let token = self.with(seller, |a, _| a.seller.refresh_token.clone());
        self.lock().revoked.push(token);
    }

    /// The scopes the seller consented to (the tokens issued after this carry no more).
    pub fn set_scopes(&self, seller: &str, scopes: &[&str]) {
        self.with(seller, |a, _| a.seller.scopes = scopes.iter().map(|s| s.to_string()).collect());
    }

    /// Calls of `api` a keyset may make per UTC day (each environment counted apart), then 429.
    pub fn set_daily_quota(&self, client_id: &str, api: Api, calls: u64) {
        self.lock().quotas.insert((client_id.to_string(), api), calls);
    }

    /// `bulkUpdatePriceQuantity` refuses a request of more than one SKU (400, errorId 25002).
    pub fn one_sku_per_call(&self, on: bool) {
        self.lock().one_sku = on;
    }

    /// After the seller's next `getOrders` page is answered, the order is touched.
    pub fn modify_between_pages(&self, seller: &str, order_id: &str) {
        self.with(seller, |a, _| a.modify_between_pages.push(order_id.to_string()));
    }

    /// An order is visible to `getOrders` only `secs` after its `lastModifiedDate`.
    pub fn set_index_lag(&self, secs: u64) {
        self.lock().index_lag_ms = i64::try_from(secs).unwrap_or(i64::MAX / 4).saturating_mul(1000);
    }

    /// The simulator's clock = real now + `ms`.
    pub fn set_clock_offset(&self, ms: i64) {
        self.lock().clock_offset_ms = ms;
    }

    /// Every answer waits this long.
    pub fn set_delay(&self, delay: Duration) {
        self.lock().delay = delay;
    }

    /// Every exchange recorded since the last call (at most 10,000 are kept).
    #[cfg(test)]
    pub(crate) fn take_exchanges(&self) -> Vec<crate::simulate::openapi_check::Exchange> {
        std::mem::take(&mut self.lock().exchanges)
    }
}
