//! What the simulated shop holds (orders with their lines, fulfillment orders and
//! fulfillments; locations; inventory items) and how it looks through the Admin API: each
//! record as the JSON object of its Shopify type, and the two mutations orderbridge makes,
//! applied as Shopify applies them (one location per fulfillment, quantities no larger than
//! what is left, `@idempotent` keys, `changeFromQuantity` required).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::graphql::owned_map;
use crate::simulate::{CITIES, FIRST, LAST, Rng};

mod writes;

#[derive(Debug, Clone)]
pub struct Address {
    pub first_name: String,
    pub last_name: String,
    pub address1: String,
    pub address2: Option<String>,
    pub city: String,
    pub province: String,
    pub province_code: String,
    pub zip: String,
    pub country: String,
    pub phone: String,
}

#[derive(Debug, Clone)]
pub struct Line {
    pub id: i64,
    pub name: String,
    pub sku: Option<String>,
    pub quantity: i64,
    pub current_quantity: i64,
    pub requires_shipping: bool,
    pub price: String,
    pub discount: String,
    pub taxes: Vec<String>,
    /// (unit, value).
    pub weight: Option<(&'static str, f64)>,
    /// (variant id, barcode).
    pub variant: Option<(i64, Option<String>)>,
}

#[derive(Debug, Clone)]
pub struct FoLine {
    pub id: i64,
    pub line_id: i64,
    pub total: i64,
    pub remaining: i64,
}

#[derive(Debug, Clone)]
pub struct FulfillmentOrder {
    pub id: i64,
    pub location_id: i64,
    pub status: &'static str,
    pub lines: Vec<FoLine>,
}

/// A fulfillment the shop made, as a test reads it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fulfillment {
    pub id: i64,
    pub order_id: i64,
    pub status: &'static str,
    pub tracking_number: Option<String>,
    pub company: Option<String>,
    pub notify_customer: bool,
    /// (line item id, units).
    pub units: Vec<(i64, i64)>,
    pub created_ms: i64,
}

#[derive(Debug, Clone)]
pub struct Order {
    pub id: i64,
    pub number: i64,
    pub processed_ms: i64,
    pub updated_ms: i64,
    pub cancelled_ms: Option<i64>,
    pub closed: bool,
    pub financial_status: String,
    pub email: Option<String>,
    pub note: Option<String>,
    pub tags: Vec<String>,
    pub discount_codes: Vec<String>,
    pub gateways: Vec<String>,
    pub shipping_price: String,
    pub total_tax: String,
    pub total_discounts: String,
    pub shipping_title: Option<String>,
    pub shipping_taxes: Vec<String>,
    pub shipping_address: Option<Address>,
    pub billing_address: Option<Address>,
    pub lines: Vec<Line>,
    pub fulfillment_orders: Vec<FulfillmentOrder>,
    pub fulfillments: Vec<Fulfillment>,
}

#[derive(Debug, Clone)]
pub struct Location {
    pub id: i64,
    pub name: String,
}

#[derive(Debug, Clone)]
pub struct Item {
    pub id: i64,
    pub sku: String,
    pub tracked: bool,
    /// Levels by location: (level id, available).
    pub levels: BTreeMap<i64, (i64, i64)>,
}

/// One shop's records.
#[derive(Debug)]
pub struct ShopData {
    pub domain: String,
    pub name: String,
    pub weight_unit: &'static str,
    pub currency: String,
    pub orders: BTreeMap<i64, Order>,
    /// (updated ms, id): the `UPDATED_AT` sort.
    pub by_updated: BTreeSet<(i64, i64)>,
    /// The first is the primary location.
    pub locations: Vec<Location>,
    pub items: BTreeMap<i64, Item>,
    /// Mutations by idempotency key: their input and their payload.
    pub idempotency: HashMap<String, (Value, Value)>,
    /// Idempotency keys whose next use Shopify answers as a failed earlier attempt.
    pub failed_keys: BTreeSet<String>,
    /// While set, `fulfillmentCreate` answers this message as its `userErrors`.
    pub refuse_fulfillments: Option<String>,
    next_id: i64,
    next_number: i64,
}

pub fn iso(ms: i64) -> String {
    OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000))
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
        .format(&Rfc3339)
        .unwrap_or_default()
}

fn gid(kind: &str, id: i64) -> String {
    format!("gid://shopify/{kind}/{id}")
}

/// The number at the end of a global id of `kind`.
pub fn gid_number(kind: &str, gid: &str) -> Option<i64> {
    gid.strip_prefix("gid://shopify/")?.strip_prefix(kind)?.strip_prefix('/')?.split('?').next()?.parse().ok()
}

fn money(amount: &str) -> Value {
    json!({"shopMoney": {"amount": amount, "currencyCode": "USD"}, "presentmentMoney": {"amount": amount, "currencyCode": "USD"}})
}

fn cents(n: i64) -> String {
    format!("{}.{:02}", n / 100, n % 100)
}

impl ShopData {
    pub fn new(domain: &str) -> ShopData {
        let name = domain.split('.').next().unwrap_or(domain).to_string();
        ShopData {
            domain: domain.to_string(),
            name: format!("{name} (simulated)"),
            weight_unit: "KILOGRAMS",
            currency: "USD".into(),
            orders: BTreeMap::new(),
            by_updated: BTreeSet::new(),
            locations: vec![
                Location { id: 71_183_532_067, name: "Main warehouse".into() },
                Location { id: 71_183_532_068, name: "Shop floor".into() },
            ],
            items: BTreeMap::new(),
            idempotency: HashMap::new(),
            failed_keys: BTreeSet::new(),
            refuse_fulfillments: None,
            next_id: 5_611_239_014_000,
            next_number: 1001,
        }
    }

    pub fn next_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    pub fn primary_location(&self) -> i64 {
        self.locations[0].id
    }

    /// Adds an order and its fulfillment order at the primary location; returns its id.
    pub fn insert(&mut self, mut order: Order) -> i64 {
        if order.id == 0 {
            order.id = self.next_id();
        }
        if order.number == 0 {
            order.number = self.next_number;
            self.next_number += 1;
        }
        if order.fulfillment_orders.is_empty() {
            let fo_lines: Vec<FoLine> = order
                .lines
                .iter()
                .filter(|l| l.requires_shipping && l.current_quantity > 0)
                .map(|l| (l.id, l.current_quantity))
                .collect::<Vec<_>>()
                .into_iter()
                .map(|(line_id, n)| FoLine { id: self.next_id(), line_id, total: n, remaining: n })
                .collect();
            if !fo_lines.is_empty() {
                let id = self.next_id();
                order.fulfillment_orders.push(FulfillmentOrder {
                    id,
                    location_id: self.primary_location(),
                    status: "OPEN",
                    lines: fo_lines,
                });
            }
        }
        if let Some(old) = self.orders.get(&order.id) {
            self.by_updated.remove(&(old.updated_ms, old.id));
        }
        self.by_updated.insert((order.updated_ms, order.id));
        let id = order.id;
        self.orders.insert(id, order);
        id
    }

    /// Changes an order; its `updatedAt` becomes `now_ms` (seconds, as Shopify keeps it).
    pub fn change(&mut self, id: i64, now_ms: i64, f: impl FnOnce(&mut Order)) -> bool {
        let Some(order) = self.orders.get_mut(&id) else { return false };
        self.by_updated.remove(&(order.updated_ms, id));
        f(order);
        order.updated_ms = (now_ms / 1000 * 1000).max(order.updated_ms);
        self.by_updated.insert((order.updated_ms, id));
        true
    }

    /// A generated order: paid, unfulfilled, one to three lines of `SKU-nnnn`.
    pub(super) fn generated(&mut self, rng: &mut Rng, updated_ms: i64) -> Order {
        let lines = (0..1 + rng.below(3))
            .map(|_| {
                let sku = rng.below(200);
                let quantity = 1 + rng.below(3) as i64;
                Line {
                    id: self.next_id(),
                    name: format!("Product {sku}"),
                    sku: Some(format!("SKU-{sku:04}")),
                    quantity,
                    current_quantity: quantity,
                    requires_shipping: true,
                    price: cents(500 + rng.below(20_000) as i64),
                    discount: "0.0".into(),
                    taxes: vec![cents(rng.below(300) as i64)],
                    weight: Some(("GRAMS", (10 + rng.below(2000)) as f64)),
                    variant: Some((44_311_002_000_000 + sku as i64, Some(format!("560{:010}", sku)))),
                }
            })
            .collect();
        let first = FIRST[rng.below(8) as usize].to_string();
        let last = LAST[rng.below(8) as usize].to_string();
        let address = Address {
            first_name: first,
            last_name: last,
            address1: format!("{} Main Street", 1 + rng.below(200)),
            address2: None,
            city: CITIES[rng.below(6) as usize].to_string(),
            province: "Texas".into(),
            province_code: "TX".into(),
            zip: "73301".into(),
            country: "US".into(),
            phone: "+15550100".into(),
        };
        Order {
            id: 0,
            number: 0,
            processed_ms: updated_ms - 60_000,
            updated_ms,
            cancelled_ms: None,
            closed: false,
            financial_status: "PAID".into(),
            email: Some(format!("buyer{}@example.com", rng.below(100_000))),
            note: None,
            tags: Vec::new(),
            discount_codes: Vec::new(),
            gateways: vec!["shopify_payments".into()],
            shipping_price: "4.90".into(),
            total_tax: cents(rng.below(900) as i64),
            total_discounts: "0.00".into(),
            shipping_title: Some("Standard".into()),
            shipping_taxes: vec!["0.93".into()],
            shipping_address: Some(address.clone()),
            billing_address: Some(address),
            lines,
            fulfillment_orders: Vec::new(),
            fulfillments: Vec::new(),
        }
    }

    /// `UNFULFILLED`, `PARTIALLY_FULFILLED` or `FULFILLED`, from the fulfillment orders.
    fn fulfillment_status(order: &Order) -> &'static str {
        let (total, remaining) = order
            .fulfillment_orders
            .iter()
            .filter(|fo| fo.status != "CANCELLED")
            .flat_map(|fo| &fo.lines)
            .fold((0, 0), |(t, r), l| (t + l.total, r + l.remaining));
        match (total, remaining) {
            (0, _) => "FULFILLED",
            (t, r) if r == t => "UNFULFILLED",
            (_, 0) => "FULFILLED",
            _ => "PARTIALLY_FULFILLED",
        }
    }

    fn address_json(a: &Address) -> Value {
        json!({"firstName": a.first_name, "lastName": a.last_name, "name": format!("{} {}", a.first_name, a.last_name),
               "address1": a.address1, "address2": a.address2, "city": a.city, "company": null, "country": "United States",
               "province": a.province, "provinceCode": a.province_code, "zip": a.zip, "countryCodeV2": a.country,
               "phone": a.phone})
    }

    fn line_json(&self, line: &Line) -> Value {
        json!({
            "id": gid("LineItem", line.id), "name": line.name, "title": line.name, "variantTitle": null, "sku": line.sku,
            "quantity": line.quantity, "currentQuantity": line.current_quantity, "requiresShipping": line.requires_shipping,
            "originalUnitPriceSet": money(&line.price), "totalDiscountSet": money(&line.discount),
            "taxLines": line.taxes.iter().map(|t| json!({"priceSet": money(t), "rate": 0.2, "title": "VAT"})).collect::<Vec<_>>(),
            "weight": line.weight.map(|(unit, value)| json!({"unit": unit, "value": value})),
            "variant": line.variant.as_ref().map(|(id, barcode)| json!({"id": gid("ProductVariant", *id),
                "legacyResourceId": id.to_string(), "barcode": barcode, "sku": line.sku, "title": "Default Title"})),
        })
    }

    fn location_json(&self, id: i64) -> Value {
        let name = self.locations.iter().find(|l| l.id == id).map_or("Location", |l| l.name.as_str());
        json!({"id": gid("Location", id), "legacyResourceId": id.to_string(), "name": name, "isActive": true})
    }

    fn fulfillment_order_json(&self, order: &Order, fo: &FulfillmentOrder) -> Value {
        let open = matches!(fo.status, "OPEN" | "IN_PROGRESS");
        let actions: &[&str] = if open { &["CREATE_FULFILLMENT", "HOLD", "MOVE"] } else { &[] };
        json!({
            "id": gid("FulfillmentOrder", fo.id), "orderId": gid("Order", order.id), "status": fo.status,
            "supportedActions": actions.iter().map(|a| json!({"action": a})).collect::<Vec<_>>(),
            "assignedLocation": {"location": self.location_json(fo.location_id), "name": "Assigned"},
            "lineItems": fo.lines.iter().map(|l| {
                let line = order.lines.iter().find(|x| x.id == l.line_id);
                json!({"id": gid("FulfillmentOrderLineItem", l.id), "remainingQuantity": l.remaining, "totalQuantity": l.total,
                       "sku": line.and_then(|x| x.sku.clone()), "lineItem": line.map(|x| self.line_json(x))})
            }).collect::<Vec<_>>(),
        })
    }

    /// An order as the `Order` type shows it.
    pub fn order_json(&self, order: &Order) -> Map<String, Value> {
        let shipping_line = order.shipping_title.as_ref().map(|title| {
            json!({"title": title, "code": title, "originalPriceSet": money(&order.shipping_price),
                   "taxLines": order.shipping_taxes.iter().map(|t| json!({"priceSet": money(t), "rate": 0.2, "title": "VAT"})).collect::<Vec<_>>()})
        });
        let fulfillments: Vec<Value> = order
            .fulfillments
            .iter()
            .map(|f| {
                json!({
                    "id": gid("Fulfillment", f.id), "legacyResourceId": f.id.to_string(), "name": format!("#{}-F", order.number),
                    "status": f.status, "createdAt": iso(f.created_ms), "totalQuantity": f.units.iter().map(|(_, n)| n).sum::<i64>(),
                    "trackingInfo": [{"number": f.tracking_number, "company": f.company, "url": null}],
                })
            })
            .collect();
        let lines: Vec<Value> = order.lines.iter().map(|l| self.line_json(l)).collect();
        let fulfillment_orders: Vec<Value> =
            order.fulfillment_orders.iter().map(|fo| self.fulfillment_order_json(order, fo)).collect();
        let mut map = owned_map(json!({
            "id": gid("Order", order.id), "legacyResourceId": order.id.to_string(), "name": format!("#{}", order.number),
            "processedAt": iso(order.processed_ms), "createdAt": iso(order.processed_ms), "updatedAt": iso(order.updated_ms),
            "cancelledAt": order.cancelled_ms.map(iso), "closed": order.closed,
            "closedAt": if order.closed { Some(iso(order.updated_ms)) } else { None },
            "requiresShipping": order.lines.iter().any(|l| l.requires_shipping),
            "displayFinancialStatus": order.financial_status, "displayFulfillmentStatus": Self::fulfillment_status(order),
            "email": order.email, "phone": null, "note": order.note, "tags": order.tags, "poNumber": null, "sourceName": "web",
            "discountCodes": order.discount_codes, "paymentGatewayNames": order.gateways, "currencyCode": self.currency,
            "test": false,
            "currentShippingPriceSet": money(&order.shipping_price), "currentTotalTaxSet": money(&order.total_tax),
            "currentTotalDiscountsSet": money(&order.total_discounts), "currentTotalPriceSet": money("0.00"),
            "shippingLine": shipping_line,
            "shippingAddress": order.shipping_address.as_ref().map(Self::address_json),
            "billingAddress": order.billing_address.as_ref().map(Self::address_json),
        }));
        map.insert("lineItems".into(), Value::Array(lines));
        map.insert("fulfillmentOrders".into(), Value::Array(fulfillment_orders));
        map.insert("fulfillments".into(), Value::Array(fulfillments));
        map
    }

    pub fn fulfillment_order_by_id(&self, id: i64) -> Option<Map<String, Value>> {
        self.orders.values().find_map(|order| {
            let fo = order.fulfillment_orders.iter().find(|fo| fo.id == id)?;
            Some(owned_map(self.fulfillment_order_json(order, fo)))
        })
    }

    pub fn location_by_id(&self, id: Option<i64>) -> Option<Map<String, Value>> {
        let id = id.unwrap_or_else(|| self.primary_location());
        self.locations.iter().any(|l| l.id == id).then(|| owned_map(self.location_json(id)))
    }

    pub fn item_json(&self, item: &Item) -> Map<String, Value> {
        let levels: Map<String, Value> = item
            .levels
            .iter()
            .map(|(location, (level, _))| {
                (gid("Location", *location), json!({"id": format!("gid://shopify/InventoryLevel/{level}?inventory_item_id={}", item.id), "isActive": true}))
            })
            .collect();
        owned_map(
            json!({"id": gid("InventoryItem", item.id), "legacyResourceId": item.id.to_string(), "sku": item.sku,
                         "tracked": item.tracked, "inventoryLevel": levels}),
        )
    }

    /// Adds an inventory item; `stocked` puts a level of 0 at the primary location.
    pub fn add_item(&mut self, sku: &str, tracked: bool, stocked: bool) -> i64 {
        let id = self.next_id();
        let mut levels = BTreeMap::new();
        if stocked {
            levels.insert(self.primary_location(), (self.next_id(), 0));
        }
        self.items.insert(id, Item { id, sku: sku.to_string(), tracked, levels });
        id
    }

    /// Available units by SKU at the primary location, for the items stocked there.
    pub fn available(&self) -> BTreeMap<String, i64> {
        let primary = self.primary_location();
        self.items.values().filter_map(|i| i.levels.get(&primary).map(|(_, n)| (i.sku.clone(), *n))).collect()
    }

    /// Every fulfillment the shop made, oldest first.
    pub fn fulfillments(&self) -> Vec<Fulfillment> {
        let mut all: Vec<Fulfillment> = self.orders.values().flat_map(|o| o.fulfillments.clone()).collect();
        all.sort_by_key(|f| f.id);
        all
    }

    /// Each order's lines by SKU, for a caller that needs to find one.
    pub fn order_ids(&self) -> Vec<i64> {
        self.orders.keys().copied().collect()
    }
}

/// A search query (`orders`' and `inventoryItems`' `query`): terms joined by spaces (and)
/// or `OR`, each `field:value` with an optional comparator; values quoted with `'` or `"`.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    pub field: String,
    pub comparator: String,
    pub value: String,
}

/// The query's alternatives (joined by `OR`), each a list of terms all of which hold; or
/// why the query cannot be read.
pub fn parse_search(query: &str) -> Result<Vec<Vec<Term>>, String> {
    let mut alternatives = vec![Vec::new()];
    let chars: Vec<char> = query.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && !chars[i].is_whitespace() && chars[i] != ':' {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        if i >= chars.len() || chars[i] != ':' {
            match word.as_str() {
                "OR" => alternatives.push(Vec::new()),
                "AND" => {}
                _ => return Err(format!("free-text search {word:?} is not supported by the simulator")),
            }
            continue;
        }
        i += 1;
        let mut comparator = String::new();
        while i < chars.len() && matches!(chars[i], '<' | '>' | '=') {
            comparator.push(chars[i]);
            i += 1;
        }
        let mut value = String::new();
        if i < chars.len() && (chars[i] == '\'' || chars[i] == '"') {
            let quote = chars[i];
            i += 1;
            let mut closed = false;
            while i < chars.len() {
                match chars[i] {
                    '\\' if i + 1 < chars.len() => {
                        value.push(chars[i + 1]);
                        i += 2;
                    }
                    c if c == quote => {
                        closed = true;
                        i += 1;
                        break;
                    }
                    c => {
                        value.push(c);
                        i += 1;
                    }
                }
            }
            if !closed {
                return Err(format!("the value of {word} has no closing quote"));
            }
        } else {
            while i < chars.len() && !chars[i].is_whitespace() {
                value.push(chars[i]);
                i += 1;
            }
        }
        if let Some(terms) = alternatives.last_mut() {
            terms.push(Term { field: word, comparator, value });
        }
    }
    alternatives.retain(|a| !a.is_empty());
    Ok(alternatives)
}

/// A date value of a search term, in ms.
pub fn search_date(value: &str) -> Option<i64> {
    OffsetDateTime::parse(value, &Rfc3339).ok().map(crate::dates::to_ms)
}

/// Orders generated for a first load end a minute ago, a minute apart.
pub fn first_load_times(count: usize, now_ms: i64) -> impl Iterator<Item = i64> {
    let end = now_ms / 1000 * 1000 - 60_000;
    (0..count).map(move |i| end - (count - 1 - i) as i64 * 60_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_queries_read_terms_comparators_quotes_and_or() {
        let q = parse_search(r#"updated_at:>='2026-11-25T10:15:00Z' status:open"#).unwrap();
        assert_eq!(q.len(), 1);
        assert_eq!(
            q[0][0],
            Term {
                field: "updated_at".into(),
                comparator: ">=".into(),
                value: "2026-11-25T10:15:00Z".into()
            }
        );
        assert_eq!(q[0][1].value, "open");
        let q = parse_search(r#"sku:"MUG-BLU" OR sku:"MUG \"XL\"""#).unwrap();
        assert_eq!(q.len(), 2);
        assert_eq!(q[1][0].value, "MUG \"XL\"");
        assert!(parse_search("sku:'open").is_err());
        assert_eq!(
            gid_number("InventoryLevel", "gid://shopify/InventoryLevel/12?inventory_item_id=4"),
            Some(12)
        );
    }

    #[test]
    fn a_fulfillment_takes_units_at_one_location_and_never_more_than_are_left() {
        let mut shop = ShopData::new("t.myshopify.com");
        let mut rng = Rng::new(1);
        let order = shop.generated(&mut rng, 1_000_000);
        let id = shop.insert(order);
        let fo = shop.orders[&id].fulfillment_orders[0].clone();
        let too_many = json!({"lineItemsByFulfillmentOrder": [{"fulfillmentOrderId": gid("FulfillmentOrder", fo.id),
            "fulfillmentOrderLineItems": [{"id": gid("FulfillmentOrderLineItem", fo.lines[0].id), "quantity": fo.lines[0].remaining + 1}]}]});
        let refused = shop.fulfillment_create(&too_many, 2_000_000);
        assert_eq!(
            refused["userErrors"][0]["message"],
            "Invalid fulfillment order line item quantity requested."
        );
        let all = json!({"notifyCustomer": true, "trackingInfo": {"number": "1Z", "company": "UPS"},
                         "lineItemsByFulfillmentOrder": [{"fulfillmentOrderId": gid("FulfillmentOrder", fo.id)}]});
        let made = shop.fulfillment_create(&all, 2_000_000);
        assert_eq!(made["userErrors"], json!([]), "{made}");
        assert_eq!(ShopData::fulfillment_status(&shop.orders[&id]), "FULFILLED");
        assert_eq!(shop.fulfillments().len(), 1);
        assert_eq!(shop.orders[&id].updated_ms, 2_000_000);
    }
}
