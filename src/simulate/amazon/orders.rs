//! An account's orders: how they are kept (a list, an index by order id, and the walk's
//! order, a hash of the id, which is not the modification order), and how they are drawn
//! from a seed: MFN and FBA, every status, one to several items from the account's
//! listings, proceeds in thousandths so three-decimal taxes add up exactly.

use std::collections::{BTreeSet, HashMap};

use super::OrderStatus;
use super::catalog::{self, Marketplace};
use crate::simulate::Rng;

/// Where an order stands apart from its packages: an MFN order's `UNSHIPPED`,
/// `PARTIALLY_SHIPPED` and `SHIPPED` follow from what its packages hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    Pending,
    Open,
    /// An FBA order Amazon shipped (FBA orders have no packages).
    ShippedByAmazon,
    Cancelled,
}

#[derive(Debug, Clone)]
pub(super) struct Address {
    pub name: &'static str,
    pub line1: &'static str,
    pub line2: Option<&'static str>,
    pub line3: Option<&'static str>,
    pub city: &'static str,
    pub region: Option<&'static str>,
    pub postal: &'static str,
    pub country: String,
    pub phone: &'static str,
    pub commercial: bool,
}

/// Amounts in thousandths of the currency unit.
#[derive(Debug, Clone)]
pub(super) struct Item {
    pub id: String,
    pub sku: String,
    pub asin: String,
    pub title: String,
    pub ordered: u32,
    pub unit: i64,
    pub shipping: i64,
    pub tax_item: i64,
    pub tax_shipping: i64,
    pub discount: i64,
    pub gift_message: Option<String>,
    pub gift_wrap: bool,
    pub signature: bool,
}

impl Item {
    pub fn subtotal(&self) -> i64 {
        self.unit * i64::from(self.ordered)
    }

    pub fn total(&self) -> i64 {
        self.subtotal() + self.shipping + self.tax_item + self.tax_shipping - self.discount
    }
}

#[derive(Debug, Clone)]
pub(super) struct Package {
    pub reference: String,
    pub carrier: String,
    pub service: Option<String>,
    pub tracking: String,
    pub ship_time: i64,
    pub created: i64,
    pub items: Vec<(String, u32)>,
    /// How many confirmations wrote it (1 for a new one; more: edits).
    pub confirmations: u32,
    /// Reads of the order by `getOrder` it stays out of the answer for.
    pub hidden_reads: usize,
}

#[derive(Debug, Clone)]
pub(super) struct Order {
    pub id: String,
    pub marketplace: usize,
    pub created: i64,
    pub updated: i64,
    pub phase: Phase,
    pub fba: bool,
    pub programs: Vec<String>,
    pub buyer_email: String,
    pub company: Option<&'static str>,
    pub purchase_order: Option<String>,
    pub address: Address,
    pub instruction: Option<&'static str>,
    pub service_level: &'static str,
    pub items: Vec<Item>,
    pub packages: Vec<Package>,
}

impl Order {
    /// Units of an item in the order's packages (those `getOrder` shows, when `visible`).
    pub fn fulfilled(&self, item: &Item, visible: bool) -> u32 {
        if self.phase == Phase::ShippedByAmazon {
            return item.ordered;
        }
        let packages = self.packages.iter().filter(|p| !visible || p.hidden_reads == 0);
        let units = packages.flat_map(|p| p.items.iter()).filter(|(id, _)| *id == item.id).map(|(_, n)| *n);
        units.sum::<u32>().min(item.ordered)
    }

    /// `fulfillment.fulfillmentStatus`.
    pub fn status(&self, visible: bool) -> &'static str {
        match self.phase {
            Phase::Pending => "PENDING",
            Phase::Cancelled => "CANCELLED",
            Phase::ShippedByAmazon => "SHIPPED",
            Phase::Open => {
                let shipped: u32 = self.items.iter().map(|i| self.fulfilled(i, visible)).sum();
                let ordered: u32 = self.items.iter().map(|i| i.ordered).sum();
                if shipped == 0 || self.fba {
                    "UNSHIPPED"
                } else if shipped >= ordered {
                    "SHIPPED"
                } else {
                    "PARTIALLY_SHIPPED"
                }
            }
        }
    }
}

/// The orders of an account.
#[derive(Default)]
pub(super) struct Book {
    pub list: Vec<Order>,
    index: HashMap<String, usize>,
    /// `(hash of the order id, position)`: the order `searchOrders` walks in.
    pub walk: BTreeSet<(u64, usize)>,
}

pub(super) fn walk_key(order_id: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(order_id.as_bytes())
}

impl Book {
    pub fn insert(&mut self, order: Order) {
        let at = self.list.len();
        self.index.insert(order.id.clone(), at);
        self.walk.insert((walk_key(&order.id), at));
        self.list.push(order);
    }

    pub fn get(&self, id: &str) -> Option<&Order> {
        self.index.get(id).map(|&at| &self.list[at])
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut Order> {
        self.index.get(id).map(|&at| &mut self.list[at])
    }

    pub fn contains(&self, id: &str) -> bool {
        self.index.contains_key(id)
    }
}

/// What an order is to be; the rest (buyer, address, prices) is drawn.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    pub marketplace: usize,
    pub fba: bool,
    pub status: OrderStatus,
    pub lines: Vec<(String, u32)>,
    pub programs: Vec<String>,
    pub gift_message: Option<String>,
    pub signature: bool,
    pub created: i64,
}

/// A listing an order can sell: (sku, asin, title, fulfilled by Amazon).
pub(super) type Offer = (String, String, String, bool);

/// The listings orders are drawn from, split by who fulfils them and indexed by SKU, so
/// drawing 100,000 orders does not scan them each time.
pub(super) struct Offers {
    list: Vec<Offer>,
    pools: [Vec<usize>; 2],
    by_sku: HashMap<String, usize>,
}

impl Offers {
    pub fn new(list: Vec<Offer>) -> Offers {
        let pool =
            |fba: bool| list.iter().enumerate().filter(|(_, o)| o.3 == fba).map(|(at, _)| at).collect();
        let by_sku = list.iter().enumerate().map(|(at, o)| (o.0.clone(), at)).collect();
        Offers { pools: [pool(false), pool(true)], by_sku, list }
    }

    pub fn find(&self, sku: &str) -> Option<&Offer> {
        self.by_sku.get(sku).map(|&at| &self.list[at])
    }

    /// A SKU of the listings fulfilled as asked (any listing when there is none such).
    pub fn draw(&self, rng: &mut Rng, fba: bool) -> Option<&str> {
        let pool = &self.pools[usize::from(fba)];
        let at = match pool.is_empty() {
            false => pool[rng.below(pool.len() as u64) as usize],
            true if self.list.is_empty() => return None,
            true => rng.below(self.list.len() as u64) as usize,
        };
        Some(self.list[at].0.as_str())
    }
}

/// A random plan: one order in six FBA; statuses mostly `UNSHIPPED`; programs, gifts and
/// signatures now and then; created within `window` seconds before `now`. `ready`: only
/// merchant orders waiting to ship (`UNSHIPPED`, none picked up in store).
pub(super) fn random_plan(
    rng: &mut Rng,
    marketplaces: usize,
    offers: &Offers,
    now: i64,
    window: i64,
    ready: bool,
) -> Plan {
    let fba = !ready && rng.below(6) == 0;
    let status = match rng.below(20) {
        _ if ready => OrderStatus::Unshipped,
        0..=11 => OrderStatus::Unshipped,
        12 | 13 => OrderStatus::Pending,
        14 | 15 => OrderStatus::Shipped,
        16 | 17 => OrderStatus::Cancelled,
        _ if fba => OrderStatus::Shipped,
        _ => OrderStatus::PartiallyShipped,
    };
    let count = match rng.below(10) {
        0..=5 => 1,
        6..=8 => 2,
        _ => 3 + rng.below(3) as usize,
    };
    let mut lines: Vec<(String, u32)> = Vec::with_capacity(count);
    for _ in 0..count {
        let sku = match offers.draw(rng, fba) {
            Some(sku) => sku.to_string(),
            None => format!("SKU-{:04}", rng.below(50)),
        };
        if !lines.iter().any(|(s, _)| *s == sku) {
            lines.push((sku, 1 + rng.below(3) as u32));
        }
    }
    let mut programs = Vec::new();
    if rng.below(3) == 0 {
        programs.push("PRIME".to_string());
    }
    if rng.below(8) == 0 {
        programs.push("AMAZON_BUSINESS".to_string());
    }
    if !fba && rng.below(10) == 0 {
        programs.push("AMAZON_EASY_SHIP".to_string());
    }
    if !fba && !ready && rng.below(40) == 0 {
        programs.push("IN_STORE_PICK_UP".to_string());
    }
    let gift_message = (rng.below(7) == 0).then(|| catalog::GIFT_MESSAGES[rng.below(3) as usize].to_string());
    Plan {
        marketplace: rng.below(marketplaces.max(1) as u64) as usize,
        fba,
        status,
        lines,
        programs,
        gift_message,
        signature: rng.below(9) == 0,
        created: now - rng.below(window.max(1) as u64) as i64,
    }
}

/// Draws what the plan leaves open. `next_item` numbers the account's order items.
pub(super) fn build(
    plan: Plan,
    rng: &mut Rng,
    marketplace: &Marketplace,
    offers: &Offers,
    book: &Book,
    next_item: &mut u64,
    now: i64,
) -> Order {
    let mut id = String::new();
    for _ in 0..64 {
        id = format!(
            "{:03}-{:07}-{:07}",
            marketplace.order_prefix(rng.next()),
            rng.below(10_000_000),
            rng.below(10_000_000)
        );
        if !book.contains(&id) {
            break;
        }
    }
    let whole = marketplace.decimals() == 0;
    let rate = marketplace.tax_basis_points(rng.next());
    let free_shipping = plan.programs.iter().any(|p| p == "PRIME");
    let items: Vec<Item> = plan
        .lines
        .iter()
        .enumerate()
        .map(|(at, (sku, ordered))| {
            *next_item += 1;
            // One unit cannot be partly shipped.
            let ordered = &match (plan.status, plan.lines.len(), plan.fba) {
                (OrderStatus::PartiallyShipped, 1, false) => (*ordered).max(2),
                _ => *ordered,
            };
            let offer = offers.find(sku);
            // Thousandths: cents times ten, or whole yen times a thousand.
            let unit = if whole {
                (500 + rng.below(19_500) as i64) * 1000
            } else {
                (399 + rng.below(9_600) as i64) * 10
            };
            let shipping = match (at, free_shipping, whole) {
                (0, false, true) => 350_000,
                (0, false, false) => 4990,
                _ => 0,
            };
            let subtotal = unit * i64::from(*ordered);
            let tax = |amount: i64| {
                if whole { amount * rate / 10_000 / 1000 * 1000 } else { amount * rate / 10_000 }
            };
            let discount = match rng.below(5) {
                0 if whole => 300_000,
                0 => 3000,
                _ => 0,
            };
            Item {
                id: format!("{:014}", 12_345_678_900_000u64 + *next_item * 7 + rng.below(7)),
                sku: sku.clone(),
                asin: offer.map_or_else(
                    || format!("B0{:08X}", super::orders::walk_key(sku) as u32),
                    |o| o.1.clone(),
                ),
                title: offer.map_or_else(|| format!("Product {sku}"), |o| o.2.clone()),
                ordered: *ordered,
                unit,
                shipping,
                tax_item: tax(subtotal),
                tax_shipping: tax(shipping),
                discount: discount.min(subtotal),
                gift_message: if at == 0 { plan.gift_message.clone() } else { None },
                gift_wrap: at == 0 && plan.gift_message.is_some() && rng.below(2) == 0,
                signature: at == 0 && plan.signature,
            }
        })
        .collect();
    let (street1, city, region, postal, phone) = catalog::street(&marketplace.country_code, rng.next());
    let business = plan.programs.iter().any(|p| p == "AMAZON_BUSINESS");
    let created = plan.created.min(now);
    let mut order = Order {
        id,
        marketplace: plan.marketplace,
        created,
        updated: (created + 60 + rng.below(3600) as i64).min(now),
        phase: match plan.status {
            OrderStatus::Pending => Phase::Pending,
            OrderStatus::Cancelled => Phase::Cancelled,
            OrderStatus::Shipped if plan.fba => Phase::ShippedByAmazon,
            _ => Phase::Open,
        },
        fba: plan.fba,
        programs: plan.programs,
        buyer_email: format!("{:012x}@marketplace.amazon.com", rng.next() >> 16),
        company: business.then_some("Acme Industries LLC"),
        purchase_order: business.then(|| format!("PO-{}", 1000 + rng.below(9000))),
        address: Address {
            name: catalog::NAMES[rng.below(catalog::NAMES.len() as u64) as usize],
            line1: street1,
            line2: (rng.below(2) == 0).then(|| catalog::LINE2[rng.below(3) as usize]),
            line3: (rng.below(5) == 0).then(|| catalog::LINE3[rng.below(2) as usize]),
            city,
            region,
            postal,
            country: marketplace.country_code.clone(),
            phone,
            commercial: business,
        },
        instruction: (rng.below(4) == 0).then(|| catalog::INSTRUCTIONS[rng.below(2) as usize]),
        service_level: catalog::SERVICE_LEVELS[rng.below(4) as usize],
        items,
        packages: Vec::new(),
    };
    if !plan.fba {
        let shipped: Vec<(String, u32)> = match plan.status {
            OrderStatus::Shipped => order.items.iter().map(|i| (i.id.clone(), i.ordered)).collect(),
            OrderStatus::PartiallyShipped => {
                let first = &order.items[0];
                let units = if order.items.len() > 1 {
                    first.ordered
                } else {
                    first.ordered.saturating_sub(1).max(1)
                };
                vec![(first.id.clone(), units)]
            }
            _ => Vec::new(),
        };
        if !shipped.is_empty() {
            let at = (order.updated).min(now);
            order.packages.push(Package {
                reference: "1".into(),
                carrier: "UPS".into(),
                service: Some("UPS Ground".into()),
                tracking: format!("1Z999AA1{:010}", rng.below(10_000_000_000)),
                ship_time: at,
                created: at,
                items: shipped,
                confirmations: 1,
                hidden_reads: 0,
            });
        }
    }
    order
}
