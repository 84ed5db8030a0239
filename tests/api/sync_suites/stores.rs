//! The store conformance suite (CONTRACT §11): every store platform runs every scenario here,
//! through its simulator's [`StoreSim`] adapter, against a `folder` warehouse. A new platform's
//! tests are its adapter and a line in `store_suite!`, plus its own quirks in its file.

use std::time::{Duration, Instant};

use orderbridge::simulate::amazon::{Listing, NewOrder, Operation};
use orderbridge::simulate::big_commerce::Simulator as BigCommerce;
use orderbridge::simulate::ebay::{Fault as EbayFault, Operation as EbayOperation};
use orderbridge::simulate::shopify::{self, Fault};
use orderbridge::simulate::{sellbrite, woocommerce};
use serde_json::{Value, json};

use crate::sync_rig::{
    AmazonStore, EbayStore, HASH, Rig, SB_SECRET, SB_TOKEN, SHOP, SHOP_TOKEN, StoreKind, StoreSimulator,
    TOKEN, WOO_KEY, WOO_SECRET, assert_failed, assert_hidden,
};

/// What the suite asks of a store simulator: its own controls, in the platform's own terms.
pub trait StoreSim {
    /// Adds `count` orders ready to ship.
    fn add_ready_orders(&self, count: usize);
    /// The tracking numbers the store holds, one entry each time it was told of one.
    fn told(&self) -> Vec<String>;
    /// How many requests told the store of a shipment (lookups not counted).
    fn notify_posts(&self) -> usize;
    /// The next shipment the store is told of is applied, and the answer lost.
    fn lose_next_notify_answer(&self);
    /// An adapter change the store refuses, what the refusal says, and every credential
    /// (right or wrong) that must never be shown.
    fn wrong_credentials(&self) -> (Value, &'static str, Vec<String>);
    /// The store asks, in its own way, to wait about `wait` before the next request; the
    /// wait the client must take (Sellbrite's 403 names none: zero).
    fn ask_to_wait(&self, wait: Duration) -> Duration;
    /// The next request is answered 429 asking for `secs` seconds in a header; false when the
    /// platform has no such header (Sellbrite's 403 names no wait; Amazon paces its walk to a
    /// later pass instead: `sync_suites::crash`'s paced walk).
    fn ask_long_wait(&self, _secs: u64) -> bool {
        false
    }
    /// Every request the store received.
    fn request_count(&self) -> usize;
    /// Items with these SKUs at the store, stocked and tracked, level 0.
    fn add_items(&self, _skus: &[&str]) {}
    /// The store's level of `sku`.
    fn level(&self, sku: &str) -> Option<i64>;
    /// Requests that set stock levels.
    fn stock_writes(&self) -> usize;
    /// Every answer slow enough (or not) that a pass is under way when a kill comes.
    fn slow_down(&self, _slow: bool) {}
}

fn delay(slow: bool) -> Duration {
    Duration::from_millis(if slow { 3 } else { 0 })
}

impl StoreSimulator {
    pub fn sim(&self) -> &dyn StoreSim {
        match self {
            StoreSimulator::BigCommerce(sim) => sim,
            StoreSimulator::Sellbrite(sim, _) => sim,
            StoreSimulator::WooCommerce(sim) => sim,
            StoreSimulator::Shopify(sim) => sim,
            StoreSimulator::Amazon(amazon) => amazon,
            StoreSimulator::Ebay(ebay) => ebay,
        }
    }
}

fn count(requests: &[String], prefix: &str, part: &str) -> usize {
    requests.iter().filter(|r| r.starts_with(prefix) && r.contains(part)).count()
}

impl StoreSim for BigCommerce {
    fn add_ready_orders(&self, count: usize) {
        self.add_orders(HASH, count, 31);
    }
    fn told(&self) -> Vec<String> {
        self.shipments(HASH).into_iter().map(|s| s.tracking_number).collect()
    }
    fn notify_posts(&self) -> usize {
        count(&self.requests(), "POST", "/shipments")
    }
    fn lose_next_notify_answer(&self) {
        self.lose_shipment_answers(HASH, 1);
    }
    fn wrong_credentials(&self) -> (Value, &'static str, Vec<String>) {
        let wrong = "wrong-token-ABCDEFGH";
        (json!({"access_token": wrong}), "", vec![TOKEN.into(), wrong.into()])
    }
    fn ask_to_wait(&self, wait: Duration) -> Duration {
        self.rate_limit_next(HASH, 1, wait.as_millis() as u64);
        wait
    }
    fn ask_long_wait(&self, secs: u64) -> bool {
        self.rate_limit_next(HASH, 1, secs * 1000);
        true
    }
    fn request_count(&self) -> usize {
        self.requests().len()
    }
    fn level(&self, sku: &str) -> Option<i64> {
        self.stock(HASH).get(sku).copied()
    }
    fn stock_writes(&self) -> usize {
        count(&self.requests(), "PUT ", "")
    }
    fn slow_down(&self, slow: bool) {
        self.set_delay(HASH, delay(slow));
    }
}

impl StoreSim for sellbrite::Simulator {
    fn add_ready_orders(&self, count: usize) {
        self.add_orders(SB_TOKEN, count, 31);
    }
    fn told(&self) -> Vec<String> {
        self.shipments(SB_TOKEN).into_iter().map(|s| s.tracking_number).collect()
    }
    fn notify_posts(&self) -> usize {
        count(&self.requests(), "POST", "/v1/shipments")
    }
    fn lose_next_notify_answer(&self) {
        self.lose_answers(SB_TOKEN, "/v1/shipments", 504, 1);
    }
    fn wrong_credentials(&self) -> (Value, &'static str, Vec<String>) {
        let wrong = "wrong-secret-QWERTY";
        (json!({"secret_key": wrong}), "", vec![SB_TOKEN.into(), SB_SECRET.into(), wrong.into()])
    }
    fn ask_to_wait(&self, _: Duration) -> Duration {
        // 403 `Rate Limit Exceeded`, twice: waited out, not taken for refused credentials.
        self.rate_limit_next(SB_TOKEN, 2);
        Duration::ZERO
    }
    fn request_count(&self) -> usize {
        self.requests().len()
    }
    fn level(&self, sku: &str) -> Option<i64> {
        self.stock(SB_TOKEN).get(sku).copied()
    }
    fn stock_writes(&self) -> usize {
        self.inventory_requests(SB_TOKEN)
    }
}

impl StoreSim for woocommerce::Simulator {
    fn add_ready_orders(&self, count: usize) {
        self.add_orders(count, 31);
    }
    fn told(&self) -> Vec<String> {
        self.trackings().into_iter().map(|t| t.tracking_number).collect()
    }
    fn notify_posts(&self) -> usize {
        count(&self.requests(), "POST", "shipment-trackings")
    }
    fn lose_next_notify_answer(&self) {
        self.lose_answers("POST wc-shipment-tracking", 502, 1);
    }
    fn wrong_credentials(&self) -> (Value, &'static str, Vec<String>) {
        let wrong = "cs_WRONG_0000000000000000000000000000000000";
        let secrets = vec![WOO_KEY.into(), WOO_SECRET.into(), wrong.into()];
        (json!({"consumer_secret": wrong}), "Invalid signature", secrets)
    }
    fn ask_to_wait(&self, wait: Duration) -> Duration {
        let secs = wait.as_secs().max(1);
        self.retry_after_next(429, secs, 1);
        Duration::from_secs(secs)
    }
    fn ask_long_wait(&self, secs: u64) -> bool {
        self.retry_after_next(429, secs, 1);
        true
    }
    fn request_count(&self) -> usize {
        self.requests().len()
    }
    fn add_items(&self, skus: &[&str]) {
        for sku in skus {
            self.add_product(sku, Some(0));
        }
    }
    fn level(&self, sku: &str) -> Option<i64> {
        self.stock().get(sku).copied()
    }
    fn stock_writes(&self) -> usize {
        self.batch_sizes().len()
    }
    fn slow_down(&self, slow: bool) {
        self.set_delay(delay(slow));
    }
}

fn operations(shop: &shopify::Simulator, operation: &str) -> usize {
    shop.log(SHOP).iter().filter(|l| l.operation == operation).count()
}

impl StoreSim for shopify::Simulator {
    fn add_ready_orders(&self, count: usize) {
        self.add_orders(SHOP, count, 31);
    }
    fn told(&self) -> Vec<String> {
        self.fulfillments(SHOP).into_iter().filter_map(|f| f.tracking_number).collect()
    }
    fn notify_posts(&self) -> usize {
        operations(self, "OrderbridgeFulfillmentCreate")
    }
    fn lose_next_notify_answer(&self) {
        self.fail_next(SHOP, "OrderbridgeFulfillmentCreate", Fault::LoseAnswer, 1);
    }
    fn wrong_credentials(&self) -> (Value, &'static str, Vec<String>) {
        let wrong = "shpat_WRONG_token_000000";
        (json!({"access_token": wrong}), "refused the credentials", vec![SHOP_TOKEN.into(), wrong.into()])
    }
    fn ask_to_wait(&self, wait: Duration) -> Duration {
        self.fail_next(SHOP, "OrderbridgeOrders", Fault::RetryAfter(wait.as_secs_f64()), 1);
        wait
    }
    fn ask_long_wait(&self, secs: u64) -> bool {
        self.fail_next(SHOP, "", Fault::RetryAfter(secs as f64), 1);
        true
    }
    fn request_count(&self) -> usize {
        self.log(SHOP).len()
    }
    fn add_items(&self, skus: &[&str]) {
        for sku in skus {
            self.add_item(SHOP, sku, true, true);
        }
    }
    fn level(&self, sku: &str) -> Option<i64> {
        self.available(SHOP).get(sku).copied()
    }
    fn stock_writes(&self) -> usize {
        operations(self, "OrderbridgeSetAvailable")
    }
    fn slow_down(&self, slow: bool) {
        // Shopify's pace is not what a crash is about: a bucket that never runs dry.
        self.set_bucket(SHOP, 1e9, 1e9, 1e9);
        self.set_delay(SHOP, delay(slow));
    }
}

impl StoreSim for AmazonStore {
    fn add_ready_orders(&self, count: usize) {
        for _ in 0..count {
            self.sim.add_order(&self.seller.seller_id, NewOrder::mfn(&[("MUG-BLU", 1)]));
        }
    }
    fn told(&self) -> Vec<String> {
        let id = &self.seller.seller_id;
        let orders = self.sim.order_ids(id).into_iter().filter_map(|o| self.sim.order(id, &o));
        let packages = orders.flat_map(|o| o.packages);
        packages.flat_map(|p| vec![p.tracking_number; p.confirmations as usize]).collect()
    }
    fn notify_posts(&self) -> usize {
        self.sim.requests(Operation::ConfirmShipment)
    }
    fn lose_next_notify_answer(&self) {
        self.sim.lose_confirmations(&self.seller.seller_id, 1);
    }
    fn wrong_credentials(&self) -> (Value, &'static str, Vec<String>) {
        let wrong = "Atzr|WRONG-refresh-token-0000";
        let secrets =
            vec![self.seller.client_secret.clone(), self.seller.refresh_token.clone(), wrong.into()];
        (json!({"refresh_token": wrong}), "invalid_grant", secrets)
    }
    fn ask_to_wait(&self, wait: Duration) -> Duration {
        // Amazon's wait is its bucket's rate (`x-amzn-RateLimit-Limit`): one search now, the
        // next a wait away; the client learns the rate from the answer and paces by it.
        self.sim.set_rate(&self.seller.seller_id, Operation::SearchOrders, 1.0 / wait.as_secs_f64(), 1);
        wait
    }
    fn request_count(&self) -> usize {
        self.sim.sp_api_requests()
    }
    fn add_items(&self, skus: &[&str]) {
        for sku in skus {
            self.sim.add_listing(&self.seller.seller_id, Listing::mfn(sku, "DRINKING_CUP", 0));
        }
    }
    fn level(&self, sku: &str) -> Option<i64> {
        self.sim.listing(&self.seller.seller_id, sku).map(|l| l.quantity)
    }
    fn stock_writes(&self) -> usize {
        self.sim.feeds(&self.seller.seller_id).len()
    }
    fn slow_down(&self, slow: bool) {
        // Pages and confirmations a few dozen a second.
        for (op, rate) in
            [(Operation::SearchOrders, 20.0), (Operation::GetOrder, 40.0), (Operation::ConfirmShipment, 40.0)]
        {
            let (rate, burst) = if slow { (rate, 2) } else { (1_000.0, 1_000) };
            self.sim.set_rate(&self.seller.seller_id, op, rate, burst);
        }
    }
}

impl StoreSim for EbayStore {
    fn add_ready_orders(&self, count: usize) {
        self.sim.add_ready_orders(self.name(), count);
    }
    fn told(&self) -> Vec<String> {
        self.sim.tracking_numbers(self.name())
    }
    fn notify_posts(&self) -> usize {
        self.sim.requests(EbayOperation::CreateShippingFulfillment)
    }
    fn lose_next_notify_answer(&self) {
        self.sim.lose_next_fulfillment_answers(self.name(), 1);
    }
    fn wrong_credentials(&self) -> (Value, &'static str, Vec<String>) {
        let wrong = "v^1.1#i^1#r^1#I^3#p^3#f^0#t^WRONG-refresh-token";
        let secrets =
            vec![self.seller.client_secret.clone(), self.seller.refresh_token.clone(), wrong.into()];
        (json!({"refresh_token": wrong}), "invalid_grant", secrets)
    }
    fn ask_to_wait(&self, wait: Duration) -> Duration {
        let secs = wait.as_secs().max(1);
        self.sim.fail_next(EbayOperation::GetOrders, EbayFault::RateLimit { retry_after: Some(secs) }, 1);
        Duration::from_secs(secs)
    }
    // A wait longer than the pass stops eBay's pull without an error (annex §5, *Rate
    // limits*): `sync_ebay`'s own test.
    fn request_count(&self) -> usize {
        self.sim.request_count()
    }
    fn add_items(&self, skus: &[&str]) {
        for sku in skus {
            self.sim.add_item(self.name(), sku, 0);
        }
    }
    fn level(&self, sku: &str) -> Option<i64> {
        self.sim.listed_quantity(self.name(), sku)
    }
    fn stock_writes(&self) -> usize {
        self.sim.requests(EbayOperation::BulkUpdatePriceQuantity)
    }
    fn slow_down(&self, slow: bool) {
        self.sim.set_delay(delay(slow));
    }
}

/// Ships every order whole through the folder warehouse's shipment file; the tracking numbers.
fn ship(rig: &Rig, name: &str, orders: &[Value]) -> Vec<String> {
    let mut file = String::from("order_id,tracking_number,carrier_name\n");
    let mut tracking = Vec::new();
    for order in orders {
        let id = order["id"].as_i64().unwrap();
        tracking.push(format!("1ZSUITE{id:06}"));
        file.push_str(&format!("{id},1ZSUITE{id:06},UPS\n"));
    }
    rig.drop_shipments(name, &file);
    tracking
}

/// Passes (bounded, a retry's wait apart) until every shipment is `notified_shipped`.
async fn until_notified(rig: &Rig, kind: StoreKind) {
    for _ in 0..4 {
        let run = rig.sync().await;
        let shipments = rig.shipments().await;
        if !shipments.is_empty() && shipments.iter().all(|s| s["state"] == "notified_shipped") {
            return;
        }
        assert!(run["status"] == "succeeded" || run["error"]["step"] == "notify", "{kind:?}: {run}");
        tokio::time::sleep(Duration::from_millis(1100)).await;
    }
    panic!("{kind:?}: not every shipment was told: {:?}", rig.shipments().await);
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

pub async fn pull_and_notify_once(kind: StoreKind) {
    let rig = Rig::with_store(kind, 3, |f| f).await;
    let run = rig.sync().await;
    assert_eq!((run["orders_pulled"].as_i64(), run["orders_sent"].as_i64()), (Some(3), Some(3)), "{run}");
    let orders = rig.orders().await;
    assert!(orders.iter().all(|o| o["fulfillment_state"] == "pending_shipment"), "{kind:?}: {orders:?}");
    let tracking = ship(&rig, "s.csv", &orders);
    until_notified(&rig, kind).await;
    let sim = rig.store.sim();
    assert_eq!(sorted(sim.told()), sorted(tracking), "{kind:?}: each shipment told once");
    assert!(rig.orders().await.iter().all(|o| o["fulfillment_state"] == "shipped"), "{kind:?}");
    let (posts, asked) = (sim.notify_posts(), sim.request_count());
    let run = rig.sync().await;
    for key in ["orders_pulled", "orders_sent", "shipments_pulled", "shipments_notified"] {
        assert_eq!(run[key], 0, "{kind:?}: nothing new, nothing moves: {key}: {run}");
    }
    assert_eq!((sim.told().len(), sim.notify_posts()), (3, posts), "{kind:?}: nothing told again");
    assert!(sim.request_count() > asked, "{kind:?}: the idle pass did ask the store");
}

pub async fn an_overlap_doubles_nothing(kind: StoreKind) {
    let rig = Rig::with_store(kind, 3, |f| f).await;
    assert_eq!(rig.sync().await["orders_pulled"], 3);
    // The next pull reads again from before its cursor, and writes none of what it read.
    let run = rig.sync().await;
    let moved = (run["orders_pulled"].as_i64(), run["orders_sent"].as_i64());
    assert_eq!(moved, (Some(0), Some(0)), "{kind:?}: {run}");
    rig.store.sim().add_ready_orders(1);
    let run = rig.sync().await;
    let moved = (run["orders_pulled"].as_i64(), run["orders_sent"].as_i64());
    assert_eq!(moved, (Some(1), Some(1)), "{kind:?}: only the new order: {run}");
    let orders = rig.orders().await;
    let external: std::collections::BTreeSet<&str> =
        orders.iter().map(|o| o["external_id"].as_str().unwrap()).collect();
    assert_eq!((orders.len(), external.len()), (4, 4), "{kind:?}: every order once");
    let mut files_of = std::collections::BTreeMap::<i64, std::collections::BTreeSet<String>>::new();
    for (file, order, _, _) in rig.order_file_rows() {
        files_of.entry(order).or_default().insert(file);
    }
    assert_eq!(files_of.len(), 4, "{kind:?}");
    assert!(files_of.values().all(|f| f.len() == 1), "{kind:?}: no order in two files: {files_of:?}");
}

pub async fn a_lost_answer_is_never_posted_twice(kind: StoreKind) {
    let rig = Rig::with_store(kind, 1, |f| f).await;
    rig.sync().await;
    let tracking = ship(&rig, "s.csv", &rig.orders().await);
    let sim = rig.store.sim();
    sim.lose_next_notify_answer();
    until_notified(&rig, kind).await;
    assert_eq!(sim.told(), tracking, "{kind:?}: the lost post landed, and only it");
    assert_eq!(sim.notify_posts(), 1, "{kind:?}: looked for, never posted blindly again");
}

pub async fn refused_credentials_are_never_shown(kind: StoreKind) {
    let rig = Rig::with_store(kind, 2, |f| f).await;
    let (wrong, says, secrets) = rig.store.sim().wrong_credentials();
    rig.patch_store_adapter(wrong).await;
    let run = rig.sync().await;
    assert_failed(&run, Some("pull_orders"), "adapter_authentication_failed", &[says]);
    assert!(rig.orders().await.is_empty());
    let runs = rig.app.get(&format!("/connections/{}/sync_runs", rig.connection_id), rig.admin()).await;
    let store = rig.app.get(&format!("/stores/{}", rig.store_id), rig.admin()).await;
    assert_hidden(&[run.to_string(), runs.text, store.text], &secrets);
}

pub async fn a_429_is_waited_out_and_a_long_wait_carries_over(kind: StoreKind) {
    // A pass waits inside itself up to sync_interval_secs (10 s here).
    let rig = Rig::with_store(kind, 1, |f| f.merge(("sync_interval_secs", 10))).await;
    assert_eq!(rig.sync().await["orders_pulled"], 1);
    let sim = rig.store.sim();
    sim.add_ready_orders(1);
    let (asked, started) = (sim.request_count(), Instant::now());
    let wait = sim.ask_to_wait(Duration::from_millis(1500));
    // Waited out, not a failure.
    let (first, second) = (rig.sync_ok().await, rig.sync_ok().await);
    let pulled = first["orders_pulled"].as_i64().unwrap() + second["orders_pulled"].as_i64().unwrap();
    assert_eq!(pulled, 1, "{kind:?}: {first} {second}");
    let waited = started.elapsed();
    assert!(waited >= wait, "{kind:?}: asked again {waited:?} after, before {wait:?}");
    assert!(sim.request_count() >= asked + 3, "{kind:?}: the refused request, its retry and the next pass");

    let asked = sim.request_count();
    if sim.ask_long_wait(30) {
        let run = rig.sync().await;
        assert_eq!(sim.request_count(), asked + 1, "{kind:?}: the refused request, not tried again");
        assert_failed(&run, None, "adapter_unreachable", &["not to call again before"]);
        let asked = sim.request_count();
        // The wait carries over.
        assert_failed(&rig.sync().await, None, "adapter_unreachable", &["not to call again before"]);
        assert_eq!(sim.request_count(), asked, "{kind:?}: no request inside the wait the store asked for");
    }
}

pub async fn stock_is_sent_once(kind: StoreKind) {
    let rig = Rig::with_store(kind, 0, |f| f).await;
    rig.enable_channel("inventory").await;
    let sim = rig.store.sim();
    sim.add_items(&["SUITE-A", "SUITE-B"]);
    rig.add_products(&["SUITE-A", "SUITE-B"]).await;
    let file = "sku,quantity\nSUITE-A,7\nSUITE-B,3\nSUITE-GHOST,4\n";
    rig.drop_stock("stock-1.csv", file);
    let run = rig.sync_ok().await;
    assert_eq!(run["stock_levels_sent"], 2, "{kind:?}: the unknown SKU skipped: {run}");
    let writes = sim.stock_writes();
    assert!(writes >= 1, "{kind:?}");
    // The same levels again send nothing; the store has them (Amazon applies a feed later).
    rig.drop_stock("stock-2.csv", file);
    for _ in 0..3 {
        let run = rig.sync().await;
        assert_eq!(run["stock_levels_sent"], 0, "{kind:?}: {run}");
        if sim.level("SUITE-A") == Some(7) {
            break;
        }
    }
    assert_eq!((sim.level("SUITE-A"), sim.level("SUITE-B")), (Some(7), Some(3)), "{kind:?}");
    assert_eq!(sim.level("SUITE-GHOST"), None, "{kind:?}");
    assert_eq!(sim.stock_writes(), writes, "{kind:?}: sent once");
}

/// Every scenario, for every store platform.
macro_rules! store_suite {
    ($($platform:ident: $kind:expr;)*) => {$(
        mod $platform {
            store_suite!(@ $kind; pull_and_notify_once, an_overlap_doubles_nothing,
                         a_lost_answer_is_never_posted_twice, refused_credentials_are_never_shown,
                         a_429_is_waited_out_and_a_long_wait_carries_over, stock_is_sent_once);
        }
    )*};
    (@ $kind:expr; $($scenario:ident),*) => {$(
        #[rocket::async_test]
        async fn $scenario() {
            super::$scenario($kind).await;
        }
    )*};
}

store_suite! {
    on_big_commerce: crate::sync_rig::StoreKind::BigCommerce;
    on_sellbrite: crate::sync_rig::StoreKind::Sellbrite;
    on_woocommerce: crate::sync_rig::StoreKind::WooCommerce;
    on_shopify: crate::sync_rig::StoreKind::Shopify;
    on_amazon: crate::sync_rig::StoreKind::Amazon;
    on_ebay: crate::sync_rig::StoreKind::Ebay;
}
