//! The owner's controls: sellers, listings and orders put in, orders moved on as Amazon
//! moves them (a pending order becoming ready, a cancel, an Easy Ship package Amazon adds),
//! the demo's new orders, the clock's skew, rate plans, faults, and what a test reads back.

use std::time::Duration;

use serde_json::Value;

use super::feeds::{self, Status};
use super::order_view::{Datasets, view};
use super::orders::{self, Offers, Package, Phase, Plan};
use super::{
    Account, Bucket, Demo, Fault, FeedEnd, Handle, Listing, Operation, OrderStatus, Search, Seller, State,
};
use crate::simulate::Rng;

/// An order to add: what a test needs fixed; the buyer, address and prices are drawn.
#[derive(Debug, Clone)]
pub struct NewOrder {
    /// `(sku, units)`; a SKU with no listing gets a made-up product.
    pub lines: Vec<(String, u32)>,
    pub fulfilled_by_amazon: bool,
    pub status: OrderStatus,
    /// `PRIME`, `AMAZON_BUSINESS` (adds a company and a purchase order number),
    /// `AMAZON_EASY_SHIP`, `IN_STORE_PICK_UP`, …
    pub programs: Vec<String>,
    /// `None`: the seller's first marketplace.
    pub marketplace_id: Option<String>,
    /// On the first item, gift-wrapped now and then.
    pub gift_message: Option<String>,
    /// `signatureConfirmation` `MANDATORY` on the first item.
    pub signature: bool,
    /// Its `createdTime`, this long before now.
    pub created_secs_ago: i64,
}

impl NewOrder {
    /// An `UNSHIPPED` merchant-fulfilled order of these lines, created ten minutes ago.
    pub fn mfn(lines: &[(&str, u32)]) -> NewOrder {
        NewOrder {
            lines: lines.iter().map(|(sku, n)| (sku.to_string(), *n)).collect(),
            fulfilled_by_amazon: false,
            status: OrderStatus::Unshipped,
            programs: Vec::new(),
            marketplace_id: None,
            gift_message: None,
            signature: false,
            created_secs_ago: 600,
        }
    }

    /// Fulfilled by Amazon.
    pub fn fba(mut self) -> NewOrder {
        self.fulfilled_by_amazon = true;
        self
    }

    pub fn status(mut self, status: OrderStatus) -> NewOrder {
        self.status = status;
        self
    }

    pub fn program(mut self, program: &str) -> NewOrder {
        self.programs.push(program.to_string());
        self
    }

    pub fn gift(mut self, message: &str) -> NewOrder {
        self.gift_message = Some(message.to_string());
        self
    }

    pub fn signature(mut self) -> NewOrder {
        self.signature = true;
        self
    }

    pub fn in_marketplace(mut self, marketplace_id: &str) -> NewOrder {
        self.marketplace_id = Some(marketplace_id.to_string());
        self
    }
}

/// An order as the simulator holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderView {
    pub order_id: String,
    /// `fulfillmentStatus` with every package counted.
    pub status: &'static str,
    pub fulfilled_by_amazon: bool,
    pub marketplace_id: String,
    /// Unix seconds of `lastUpdatedTime`.
    pub last_updated: i64,
    /// `(orderItemId, sku, ordered, fulfilled)`.
    pub items: Vec<(String, String, u32, u32)>,
    pub packages: Vec<PackageView>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageView {
    pub package_reference_id: String,
    pub carrier: String,
    pub shipping_service: Option<String>,
    pub tracking_number: String,
    /// `(orderItemId, units)`.
    pub items: Vec<(String, u32)>,
    /// Confirmations that wrote it: more than one means it was edited.
    pub confirmations: u32,
    /// Whether `getOrder` shows it yet.
    pub visible: bool,
}

/// A feed as the simulator holds it.
#[derive(Debug, Clone)]
pub struct FeedView {
    pub feed_id: String,
    /// `IN_QUEUE`, `DONE`, `CANCELLED`, `FATAL`.
    pub status: &'static str,
    /// The uploaded document, when it is JSON.
    pub document: Option<Value>,
    /// The processing report, once processed.
    pub report: Option<Value>,
}

fn offers(account: &Account) -> Offers {
    let listings = account.listings.values();
    Offers::new(listings.map(|l| (l.sku.clone(), l.asin.clone(), l.title.clone(), l.fba)).collect())
}

fn place(account: &mut Account, plan: Plan, offers: &Offers, now: i64) -> String {
    let marketplace = account.seller.marketplaces[plan.marketplace].clone();
    let order = orders::build(
        plan,
        &mut account.rng,
        &marketplace,
        offers,
        &account.orders,
        &mut account.next_item,
        now,
    );
    let id = order.id.clone();
    account.orders.insert(order);
    id
}

/// The demo's new orders due by `now`, one for each account, one in four fulfilled by
/// Amazon; at most a few at once after a long quiet.
pub(super) fn advance_demo(state: &mut State, now: i64) {
    let State { demo, accounts, .. } = state;
    let Some(demo) = demo.as_mut() else { return };
    for _ in 0..5 {
        if now < demo.next_s {
            return;
        }
        demo.next_s += demo.every.as_secs().max(1) as i64;
        demo.made += 1;
        for account in accounts.values_mut().filter(|a| !a.seller.marketplaces.is_empty()) {
            let offers = offers(account);
            let marketplaces = account.seller.marketplaces.len();
            let mut plan = orders::random_plan(&mut account.rng, marketplaces, &offers, now, 1, true);
            plan.fba = demo.made % 4 == 0;
            plan.status = OrderStatus::Unshipped;
            plan.created = now;
            if let Some(sku) = offers.draw(&mut account.rng, plan.fba) {
                plan.lines = vec![(sku.to_string(), 1 + account.rng.below(2) as u32)];
            }
            place(account, plan, &offers, now);
        }
    }
    // After a long quiet, the next order comes one interval from now.
    if now >= demo.next_s {
        demo.next_s = now + demo.every.as_secs().max(1) as i64;
    }
}

fn order_view(account: &Account, order: &orders::Order) -> OrderView {
    OrderView {
        order_id: order.id.clone(),
        status: order.status(false),
        fulfilled_by_amazon: order.fba,
        marketplace_id: account.seller.marketplaces[order.marketplace].id.clone(),
        last_updated: order.updated,
        items: order
            .items
            .iter()
            .map(|i| (i.id.clone(), i.sku.clone(), i.ordered, order.fulfilled(i, false)))
            .collect(),
        packages: order.packages.iter().map(package_view).collect(),
    }
}

fn package_view(p: &Package) -> PackageView {
    PackageView {
        package_reference_id: p.reference.clone(),
        carrier: p.carrier.clone(),
        shipping_service: p.service.clone(),
        tracking_number: p.tracking.clone(),
        items: p.items.clone(),
        confirmations: p.confirmations,
        visible: p.hidden_reads == 0,
    }
}

impl Handle {
    fn with<T>(&self, seller_id: &str, f: impl FnOnce(&mut Account, i64) -> T) -> T {
        let mut state = self.lock();
        let now = state.now();
        let account =
            state.accounts.get_mut(seller_id).unwrap_or_else(|| panic!("no Amazon seller {seller_id}"));
        f(account, now)
    }

    /// A seller account (replacing one with the same seller id).
    pub fn add_seller(&self, seller: Seller) {
        let id = seller.seller_id.clone();
        self.lock().accounts.insert(id, Account::new(seller));
    }

    pub fn add_listing(&self, seller_id: &str, listing: Listing) {
        self.with(seller_id, |a, _| a.listings.insert(listing.sku.clone(), listing));
    }

    /// `count` listings drawn from `seed`: `SKU-0000`, … merchant-fulfilled, every eighth
    /// `FBA-0007`, … fulfilled by Amazon. Their SKUs.
    pub fn generate_listings(&self, seller_id: &str, count: usize, seed: u64) -> Vec<String> {
        let mut rng = Rng::new(seed);
        self.with(seller_id, |a, _| {
            (0..count)
                .map(|i| {
                    let kind = super::catalog::PRODUCT_TYPES[rng.below(4) as usize];
                    let quantity = rng.below(60) as i64;
                    let mut listing = match i % 8 {
                        7 => Listing::fba(&format!("FBA-{i:04}"), kind, quantity),
                        _ => Listing::mfn(&format!("SKU-{i:04}"), kind, quantity),
                    };
                    listing.title = format!("{} {i}", super::catalog::PRODUCTS[rng.below(6) as usize]);
                    let sku = listing.sku.clone();
                    a.listings.insert(sku.clone(), listing);
                    sku
                })
                .collect()
        })
    }

    pub fn listing(&self, seller_id: &str, sku: &str) -> Option<Listing> {
        self.with(seller_id, |a, _| a.listings.get(sku).cloned())
    }

    /// An order as asked; its id.
    pub fn add_order(&self, seller_id: &str, new: NewOrder) -> String {
        self.with(seller_id, |a, now| {
            let marketplace = new
                .marketplace_id
                .as_ref()
                .and_then(|id| a.seller.marketplaces.iter().position(|m| m.id == *id))
                .unwrap_or(0);
            let plan = Plan {
                marketplace,
                fba: new.fulfilled_by_amazon,
                status: new.status,
                lines: new.lines,
                programs: new.programs,
                gift_message: new.gift_message,
                signature: new.signature,
                created: now - new.created_secs_ago,
            };
            let offers = offers(a);
            place(a, plan, &offers, now)
        })
    }

    /// `count` orders drawn from `seed`, created over the last 30 days from the account's
    /// listings. Cheap enough for 100,000.
    pub fn generate_orders(&self, seller_id: &str, count: usize, seed: u64) {
        let now = self.now();
        self.generate(seller_id, count, seed, now, false);
    }

    /// `count` merchant orders waiting to ship (`UNSHIPPED`, none fulfilled by Amazon or
    /// picked up in store) drawn from `seed` over the last 30 days: what a benchmark pulls.
    pub fn generate_ready_orders(&self, seller_id: &str, count: usize, seed: u64) {
        let now = self.now();
        self.generate(seller_id, count, seed, now, true);
    }

    /// As [`Handle::generate_orders`], the 30 days ending at `until` (Unix seconds): the
    /// same seed, listings and `until` give the same orders.
    pub fn generate_orders_until(&self, seller_id: &str, count: usize, seed: u64, until: i64) {
        self.generate(seller_id, count, seed, until, false);
    }

    fn generate(&self, seller_id: &str, count: usize, seed: u64, until: i64, ready: bool) {
        self.with(seller_id, |a, _| {
            let now = until;
            let offers = offers(a);
            let mut rng = Rng::new(seed);
            let marketplaces = a.seller.marketplaces.len();
            for _ in 0..count {
                let plan = orders::random_plan(&mut rng, marketplaces, &offers, now, 30 * 86_400, ready);
                let marketplace = a.seller.marketplaces[plan.marketplace].clone();
                let order =
                    orders::build(plan, &mut rng, &marketplace, &offers, &a.orders, &mut a.next_item, now);
                a.orders.insert(order);
            }
        });
    }

    /// The account's order ids, in the order they were added.
    pub fn order_ids(&self, seller_id: &str) -> Vec<String> {
        self.with(seller_id, |a, _| a.orders.list.iter().map(|o| o.id.clone()).collect())
    }

    pub fn order_count(&self, seller_id: &str) -> usize {
        self.with(seller_id, |a, _| a.orders.list.len())
    }

    pub fn order(&self, seller_id: &str, order_id: &str) -> Option<OrderView> {
        self.with(seller_id, |a, _| a.orders.get(order_id).map(|o| order_view(a, o)))
    }

    /// The order as `getOrder` would answer it with every dataset, packages held back left out.
    pub fn order_json(&self, seller_id: &str, order_id: &str) -> Option<Value> {
        self.with(seller_id, |a, _| {
            let o = a.orders.get(order_id)?;
            Some(view(o, &a.seller.marketplaces[o.marketplace], Datasets::ALL, a.hide_recipients))
        })
    }

    /// Moves an order as Amazon would: `Unshipped` from `Pending` (payment cleared),
    /// `Cancelled` while nothing is shipped. `lastUpdatedTime` becomes now.
    pub fn set_order_status(
        &self,
        seller_id: &str,
        order_id: &str,
        status: OrderStatus,
    ) -> Result<(), String> {
        self.with(seller_id, |a, now| {
            let order = a.orders.get_mut(order_id).ok_or(format!("no order {order_id}"))?;
            match (status, order.phase) {
                (OrderStatus::Unshipped, Phase::Pending) => order.phase = Phase::Open,
                (OrderStatus::Cancelled, Phase::Pending | Phase::Open) if order.packages.is_empty() => {
                    order.phase = Phase::Cancelled;
                }
                (status, _) => {
                    return Err(format!("order {order_id} cannot become {status:?} from {:?}", order.phase));
                }
            }
            order.updated = now.max(order.updated + 1);
            Ok(())
        })
    }

    /// Amazon's own carrier picks up what is not shipped of an (Easy Ship) order: a package
    /// appears without a confirmation.
    pub fn ship_by_amazon(&self, seller_id: &str, order_id: &str) -> Result<PackageView, String> {
        self.with(seller_id, |a, now| {
            let tracking = format!("TBA{:012}", a.rng.below(1_000_000_000_000));
            let order = a.orders.get_mut(order_id).ok_or(format!("no order {order_id}"))?;
            if order.fba || order.phase != Phase::Open {
                return Err(format!("order {order_id} is not a merchant order waiting to ship"));
            }
            let items: Vec<(String, u32)> = order
                .items
                .iter()
                .map(|i| (i.id.clone(), i.ordered - order.fulfilled(i, false)))
                .filter(|(_, n)| *n > 0)
                .collect();
            if items.is_empty() {
                return Err(format!("order {order_id} is shipped"));
            }
            let reference = (9_000_000 + order.packages.len()).to_string();
            order.packages.push(Package {
                reference,
                carrier: "Amazon Shipping".into(),
                service: Some("Amazon Shipping Ground".into()),
                tracking,
                ship_time: now,
                created: now,
                items,
                confirmations: 0,
                hidden_reads: 0,
            });
            order.updated = now.max(order.updated + 1);
            Ok(package_view(order.packages.last().expect("just pushed")))
        })
    }

    /// A new order for each account every `every` (one in four fulfilled by Amazon);
    /// `None`: none.
    pub fn set_demo(&self, every: Option<Duration>) {
        let mut state = self.lock();
        let now = state.now();
        state.demo = every.map(|every| Demo { every, next_s: now + every.as_secs().max(1) as i64, made: 0 });
    }

    /// The simulator's clock runs `secs` ahead of the real one (behind when negative): its
    /// `Date` headers, `lastUpdatedTime`s, token and URL lifetimes.
    pub fn set_clock_skew(&self, secs: i64) {
        self.lock().clock_offset_ms = secs * 1000;
    }

    /// The simulator's clock, in Unix seconds.
    pub fn now(&self) -> i64 {
        self.lock().now()
    }

    /// The operation's bucket: `rate` a second up to `burst`, full now.
    pub fn set_rate(&self, seller_id: &str, op: Operation, rate: f64, burst: u32) {
        self.with(seller_id, |a, _| a.buckets.insert(op, Bucket::new(rate, burst)));
    }

    /// Every operation on Amazon's default usage plan (annex §5), buckets full.
    pub fn use_amazon_rates(&self, seller_id: &str) {
        for op in Operation::ALL.into_iter().filter(|op| op.is_sp_api()) {
            let (rate, burst) = op.amazon_plan();
            self.set_rate(seller_id, op, rate, burst);
        }
    }

    /// The next `count` requests of `op` answer `status`: 429 `QuotaExceeded`, 500, 503, …
    /// (`None`: any SP-API operation; `Some(Token)`: the seller's token exchanges, answered
    /// with LWA's error shape; document transfers take no faults).
    pub fn fail_next(&self, seller_id: &str, op: Option<Operation>, status: u16, count: usize) {
        self.with(seller_id, |a, _| {
            a.faults.add(op.map_or("", Operation::as_str), Fault::Status(status), count)
        });
    }

    /// The next `count` requests of `op` answer `status` with Amazon's error body quoting the
    /// request's own access token (a hostile or careless platform).
    pub fn echo_token_next(&self, seller_id: &str, op: Operation, status: u16, count: usize) {
        self.with(seller_id, |a, _| a.faults.add(op.as_str(), Fault::EchoToken(status), count));
    }

    /// The next `count` confirmations are applied, then answered 502.
    pub fn lose_confirmations(&self, seller_id: &str, count: usize) {
        self.with(seller_id, |a, _| a.lost_confirmations += count);
    }

    /// New packages stay out of `getOrder` for `reads` reads of their order (0: shown at once).
    pub fn delay_packages(&self, seller_id: &str, reads: usize) {
        self.with(seller_id, |a, _| a.package_delay = reads);
    }

    /// Orders are answered without `recipient`, as to an application without the role.
    pub fn hide_recipients(&self, seller_id: &str, hidden: bool) {
        self.with(seller_id, |a, _| a.hide_recipients = hidden);
    }

    /// Every access token of the seller expires now.
    pub fn expire_tokens(&self, seller_id: &str) {
        let mut state = self.lock();
        let now = state.now();
        for issued in state.tokens.values_mut().filter(|t| t.seller_id == seller_id) {
            issued.expires = now;
        }
    }

    /// The refresh token is revoked: LWA answers `invalid_grant` (issued tokens live on).
    pub fn revoke_refresh_token(&self, seller_id: &str) {
        self.with(seller_id, |a, _| a.refresh_revoked = true);
    }

    /// Whether the seller takes part in a marketplace of its account.
    pub fn set_participation(&self, seller_id: &str, marketplace_id: &str, participating: bool) {
        self.with(seller_id, |a, _| {
            for m in a.seller.marketplaces.iter_mut().filter(|m| m.id == marketplace_id) {
                m.participating = participating;
            }
        });
    }

    /// Feeds created from now on answer `IN_QUEUE` to their first `reads` reads (1 unless set).
    pub fn hold_feeds(&self, seller_id: &str, reads: usize) {
        self.with(seller_id, |a, _| a.feeds.hold = Some(reads));
    }

    /// Ends a feed `CANCELLED` (while queued) or `FATAL`. Whether it did.
    pub fn end_feed(&self, seller_id: &str, feed_id: &str, how: FeedEnd) -> bool {
        self.with(seller_id, |a, now| feeds::end(a, feed_id, how, now))
    }

    /// Processes every queued feed now, in submission order.
    pub fn process_feeds(&self, seller_id: &str) {
        self.with(seller_id, |a, now| feeds::process_through(a, usize::MAX, now));
    }

    pub fn feeds(&self, seller_id: &str) -> Vec<FeedView> {
        self.with(seller_id, |a, _| {
            let desk = &a.feeds;
            desk.feeds
                .iter()
                .map(|f| FeedView {
                    feed_id: f.id.clone(),
                    status: f.status.as_str(),
                    document: desk
                        .documents
                        .get(&f.input)
                        .and_then(|d| d.bytes.as_ref())
                        .and_then(|b| serde_json::from_slice(b).ok()),
                    report: f.report.clone().filter(|_| f.status != Status::InQueue),
                })
                .collect()
        })
    }

    /// Requests received for an operation (refused ones too).
    pub fn requests(&self, op: Operation) -> usize {
        self.lock().counts.get(&op).copied().unwrap_or_default()
    }

    /// Requests received over every SP-API operation (not the token or document transfers).
    pub fn sp_api_requests(&self) -> usize {
        self.lock().counts.iter().filter(|(op, _)| op.is_sp_api()).map(|(_, n)| n).sum()
    }

    /// Every `searchOrders` request so far, in the order they came (each walk's pages).
    pub fn searches(&self) -> Vec<Search> {
        self.lock().searches.clone()
    }

    /// Starts every count again from 0.
    pub fn reset_counts(&self) {
        self.lock().counts.clear();
    }

    /// From now on every exchange is kept for [`Handle::exchanges`].
    #[cfg(test)]
    pub fn record_exchanges(&self) {
        self.lock().recording = true;
    }

    /// Every request and answer since [`Handle::record_exchanges`], as they crossed the wire.
    #[cfg(test)]
    pub fn exchanges(&self) -> Vec<crate::simulate::openapi_check::Exchange> {
        self.lock().exchanges.clone()
    }
}
