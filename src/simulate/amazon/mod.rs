//! Amazon (Selling Partner API and Login with Amazon) on loopback, as the annex
//! (`spec/platforms/amazon.md` §8) asks: one server for both bases (SP-API paths under
//! `/{region}/`, LWA at `/auth/o2/token`, presigned document URLs under `/s3/`), any number
//! of seller accounts told apart by the access tokens it issued, orders generated from a seed
//! (MFN and FBA, every status orderbridge meets, proceeds that add up), `searchOrders` with
//! Amazon's rules (one time filter, opaque tokens bound to the first request's filters, an
//! order that is not the modification order), `getOrder`, `confirmShipment` with its checks,
//! the listings lookups, the `JSON_LISTINGS_FEED` cycle with gzipped reports, token buckets
//! per account and operation, and faults to switch on.
//!
//! This module owns the state; `controls` the owner's controls; `api` the routing and
//! admission, `wire` Amazon's error body and date-times, `lwa` the token endpoint,
//! `orders`/`order_view`/`confirm` the orders, `listings`, `feeds` and `feed_check` the
//! stock path, `catalog` the marketplaces and what orders are drawn from; `validator` (tests)
//! holds recorded exchanges to Amazon's vendored models.

mod api;
mod catalog;
mod confirm;
mod controls;
mod feed_check;
mod feeds;
mod listings;
mod lwa;
mod order_view;
mod orders;
#[cfg(test)]
mod sim_tests;
#[cfg(test)]
mod sim_tests_models;
#[cfg(test)]
mod sim_tests_ship;
#[cfg(test)]
mod sim_tests_stock;
#[cfg(test)]
pub(crate) mod vendor;
#[cfg(test)]
mod vendor_tests;
mod wire;

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use super::Rng;
use super::running::Faults;

pub use catalog::Marketplace;
pub use controls::{FeedView, NewOrder, OrderView, PackageView};
pub use listings::Listing;

/// The operations the simulator serves, by Amazon's `operationId`, plus the token exchange
/// and the document transfers, for counting requests and aiming faults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    SearchOrders,
    GetOrder,
    ConfirmShipment,
    GetMarketplaceParticipations,
    SearchListingsItems,
    GetListingsItem,
    CreateFeedDocument,
    CreateFeed,
    GetFeed,
    GetFeedDocument,
    /// `POST /auth/o2/token`.
    Token,
    /// `PUT` to a presigned upload URL.
    Upload,
    /// `GET` of a presigned document URL.
    Download,
}

impl Operation {
    pub const ALL: [Operation; 13] = [
        Operation::SearchOrders,
        Operation::GetOrder,
        Operation::ConfirmShipment,
        Operation::GetMarketplaceParticipations,
        Operation::SearchListingsItems,
        Operation::GetListingsItem,
        Operation::CreateFeedDocument,
        Operation::CreateFeed,
        Operation::GetFeed,
        Operation::GetFeedDocument,
        Operation::Token,
        Operation::Upload,
        Operation::Download,
    ];

    /// Amazon's `operationId` (`searchOrders`); `token`, `upload`, `download` for the rest.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::SearchOrders => "searchOrders",
            Operation::GetOrder => "getOrder",
            Operation::ConfirmShipment => "confirmShipment",
            Operation::GetMarketplaceParticipations => "getMarketplaceParticipations",
            Operation::SearchListingsItems => "searchListingsItems",
            Operation::GetListingsItem => "getListingsItem",
            Operation::CreateFeedDocument => "createFeedDocument",
            Operation::CreateFeed => "createFeed",
            Operation::GetFeed => "getFeed",
            Operation::GetFeedDocument => "getFeedDocument",
            Operation::Token => "token",
            Operation::Upload => "upload",
            Operation::Download => "download",
        }
    }

    /// An SP-API operation (token bucket, `x-amz-access-token`), not LWA or a document URL.
    pub fn is_sp_api(self) -> bool {
        !matches!(self, Operation::Token | Operation::Upload | Operation::Download)
    }

    /// Amazon's default usage plan (annex §5): requests a second and burst.
    pub fn amazon_plan(self) -> (f64, u32) {
        match self {
            Operation::SearchOrders => (0.0056, 20),
            Operation::GetOrder => (0.5, 30),
            Operation::ConfirmShipment => (2.0, 10),
            Operation::GetMarketplaceParticipations => (0.016, 15),
            Operation::SearchListingsItems => (5.0, 5),
            Operation::GetListingsItem => (5.0, 10),
            Operation::CreateFeedDocument => (0.5, 15),
            // JSON_LISTINGS_FEED: 5 submissions per 5 minutes.
            Operation::CreateFeed => (1.0 / 60.0, 5),
            Operation::GetFeed => (2.0, 15),
            Operation::GetFeedDocument => (0.0222, 10),
            Operation::Token | Operation::Upload | Operation::Download => (0.0, 0),
        }
    }
}

/// An order's status as Amazon shows it, for orders put in and moved on request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderStatus {
    Pending,
    Unshipped,
    PartiallyShipped,
    Shipped,
    Cancelled,
}

/// How to end a feed on request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedEnd {
    Cancelled,
    Fatal,
}

/// A seller account: its application's credentials, its region and marketplaces.
#[derive(Debug, Clone)]
pub struct Seller {
    /// The merchant token (`A2EXAMPLE12345`).
    pub seller_id: String,
    /// `na`, `eu` or `fe`.
    pub region: String,
    pub client_id: String,
    pub client_secret: String,
    pub refresh_token: String,
    pub store_name: String,
    pub marketplaces: Vec<Marketplace>,
}

impl Seller {
    /// The annex's example seller: `A2EXAMPLE12345` in `na` on Amazon.com, with the
    /// annex's credentials.
    pub fn example() -> Seller {
        Seller {
            seller_id: "A2EXAMPLE12345".into(),
            region: "na".into(),
            client_id: "amzn1.application-oa2-client.0123456789abcdef".into(),
            client_secret: "amzn1.oa2-cs.v1.example".into(),
            refresh_token: "Atzr|IwEBIexample".into(),
            store_name: "Acme Mugs".into(),
            marketplaces: vec![Marketplace::by_id("ATVPDKIKX0DER").expect("Amazon.com")],
        }
    }

    /// A seller in `region` on the given marketplaces (ids of [`Marketplace::by_id`]; an
    /// unknown id becomes a made-up marketplace), with credentials derived from its id.
    pub fn new(seller_id: &str, region: &str, marketplace_ids: &[&str]) -> Seller {
        let lower = seller_id.to_ascii_lowercase();
        Seller {
            seller_id: seller_id.into(),
            region: region.to_ascii_lowercase(),
            client_id: format!("amzn1.application-oa2-client.{lower}"),
            client_secret: format!("amzn1.oa2-cs.v1.{lower}-secret"),
            refresh_token: format!("Atzr|IwEB{lower}"),
            store_name: format!("Store {seller_id}"),
            marketplaces: marketplace_ids.iter().map(|id| Marketplace::or_made_up(id)).collect(),
        }
    }
}

/// A token bucket: `rate` tokens a second up to `burst`.
#[derive(Debug, Clone)]
struct Bucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn new(rate: f64, burst: u32) -> Bucket {
        Bucket { rate, burst: f64::from(burst), tokens: f64::from(burst), at: Instant::now() }
    }

    /// Takes a token if there is one.
    fn take(&mut self) -> bool {
        let now = Instant::now();
        let elapsed = now.duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// The generous plan every operation has until set otherwise.
const DEFAULT_RATE: f64 = 100.0;
const DEFAULT_BURST: u32 = 1000;

#[derive(Debug, Clone, Copy)]
enum Fault {
    /// 429 `QuotaExceeded`, or a 5xx with Amazon's body.
    Status(u16),
    /// This status with Amazon's error body quoting the request's access token back.
    EchoToken(u16),
}

/// One seller's account and what answers before it does.
struct Account {
    seller: Seller,
    refresh_revoked: bool,
    orders: orders::Book,
    listings: BTreeMap<String, Listing>,
    feeds: feeds::Desk,
    buckets: HashMap<Operation, Bucket>,
    faults: Faults<Fault>,
    /// Confirmations applied and then answered 502.
    lost_confirmations: usize,
    /// New packages stay out of `getOrder` for this many reads of their order.
    package_delay: usize,
    /// Orders are answered without `recipient` (the application lacks the role).
    hide_recipients: bool,
    rng: Rng,
    /// Numbers the account's order items.
    next_item: u64,
}

impl Account {
    fn new(seller: Seller) -> Account {
        let seed = seller.seller_id.bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
        Account {
            seller,
            refresh_revoked: false,
            orders: orders::Book::default(),
            listings: BTreeMap::new(),
            feeds: feeds::Desk::default(),
            buckets: HashMap::new(),
            faults: Faults::default(),
            lost_confirmations: 0,
            package_delay: 0,
            hide_recipients: false,
            rng: Rng::new(seed),
            next_item: 0,
        }
    }

    fn bucket(&mut self, op: Operation) -> &mut Bucket {
        self.buckets.entry(op).or_insert_with(|| Bucket::new(DEFAULT_RATE, DEFAULT_BURST))
    }
}

/// An access token the simulator issued: whose, and until when (simulator seconds).
struct Issued {
    seller_id: String,
    expires: i64,
}

/// The demo's pace: a new order every `every`, one in `fba_one_in` fulfilled by Amazon.
#[derive(Debug, Clone)]
struct Demo {
    every: Duration,
    next_s: i64,
    made: u64,
}

/// One `searchOrders` request as it came and was answered: which page of a walk it asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search {
    /// Its `paginationToken` (`None`: the first page of a walk).
    pub token: Option<String>,
    pub status: u16,
}

/// The simulator's accounts, by seller id; reached through a [`Handle`].
pub struct State {
    accounts: BTreeMap<String, Account>,
    tokens: HashMap<String, Issued>,
    /// The simulator's clock is the real one plus this (a skewed `Date`).
    clock_offset_ms: i64,
    /// `http://127.0.0.1:PORT`, for presigned URLs.
    origin: String,
    demo: Option<Demo>,
    rng: Rng,
    counts: BTreeMap<Operation, usize>,
    searches: Vec<Search>,
    #[cfg(test)]
    recording: bool,
    #[cfg(test)]
    exchanges: Vec<super::openapi_check::Exchange>,
}

impl State {
    /// The simulator's clock in milliseconds.
    fn now_ms(&self) -> i64 {
        crate::dates::now_ms() + self.clock_offset_ms
    }

    /// The simulator's clock in whole seconds (Amazon's times have no fraction).
    fn now(&self) -> i64 {
        self.now_ms().div_euclid(1000)
    }
}

/// A running Amazon simulator; dropping it stops it. Its methods are its [`Handle`]'s.
pub type Simulator = super::Simulator<State>;

/// What a simulator's owner (a test, the demo, a benchmark) uses to set up, steer and read it.
pub type Handle = super::Handle<State>;

impl Simulator {
    /// No accounts until [`Handle::add_seller`].
    pub async fn start() -> Simulator {
        let state = State {
            accounts: BTreeMap::new(),
            tokens: HashMap::new(),
            clock_offset_ms: 0,
            origin: String::new(),
            demo: None,
            rng: Rng::new(2026),
            counts: BTreeMap::new(),
            searches: Vec::new(),
            #[cfg(test)]
            recording: false,
            #[cfg(test)]
            exchanges: Vec::new(),
        };
        let sim = Simulator::serve(state, "Amazon", api::answer).await;
        let origin = sim.origin();
        sim.lock().origin = origin;
        sim
    }

    /// Where orderbridge's `amazon_api_base` should point: `http://127.0.0.1:PORT/{region}`
    /// (the client puts the region in).
    pub fn api_base(&self) -> String {
        format!("{}/{{region}}", self.origin())
    }

    /// Where orderbridge's `amazon_lwa_base` should point: `http://127.0.0.1:PORT`.
    pub fn lwa_base(&self) -> String {
        self.origin()
    }
}
