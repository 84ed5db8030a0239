//! Orders API 2026-01-01 as the simulator answers it: an order in Amazon's shape with only
//! the datasets asked for, `searchOrders` (one time filter, inclusive; filters; pages in
//! the order of a hash of the order id; opaque tokens bound to the first request's filters
//! and refused after 24 hours) and `getOrder` (packages held back by the delay fault).

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::Account;
use super::catalog::Marketplace;
use super::orders::{Order, Phase};
use super::wire::{bad_request, error, iso, parse_iso};
use crate::simulate::http::{Request, Response};

const STATUSES: [&str; 7] = [
    "PENDING_AVAILABILITY",
    "PENDING",
    "UNSHIPPED",
    "PARTIALLY_SHIPPED",
    "SHIPPED",
    "CANCELLED",
    "UNFULFILLABLE",
];
const DATASETS: [&str; 11] = [
    "BUYER",
    "RECIPIENT",
    "PROCEEDS",
    "EXPENSE",
    "PROMOTION",
    "CANCELLATION",
    "FULFILLMENT",
    "PACKAGES",
    "TAX",
    "PAYMENT",
    "FULFILLMENT_ORDERS",
];
/// A page token lives this long (Amazon: 24 hours).
const TOKEN_LIFE_SECS: i64 = 24 * 3600;

/// The `includedData` datasets the simulator fills (the others add nothing).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Datasets {
    pub buyer: bool,
    pub recipient: bool,
    pub proceeds: bool,
    pub fulfillment: bool,
    pub packages: bool,
}

impl Datasets {
    pub const ALL: Datasets =
        Datasets { buyer: true, recipient: true, proceeds: true, fulfillment: true, packages: true };

    fn parse(text: Option<&str>) -> Result<Datasets, Response> {
        let mut data = Datasets::default();
        for value in text.into_iter().flat_map(|t| t.split(',')) {
            match value {
                "BUYER" => data.buyer = true,
                "RECIPIENT" => data.recipient = true,
                "PROCEEDS" => data.proceeds = true,
                "FULFILLMENT" => data.fulfillment = true,
                "PACKAGES" => data.packages = true,
                v if DATASETS.contains(&v) => {}
                v => return Err(bad_request(&format!("Invalid includedData value: {v}"))),
            }
        }
        Ok(data)
    }
}

/// Thousandths as Amazon's decimal text: two places, three when the thousandth is not 0,
/// none for a currency without decimals.
pub(super) fn amount(milli: i64, decimals: u32) -> String {
    let sign = if milli < 0 { "-" } else { "" };
    let m = milli.unsigned_abs();
    match decimals {
        0 => format!("{sign}{}", m / 1000),
        _ if !m.is_multiple_of(10) => format!("{sign}{}.{:03}", m / 1000, m % 1000),
        _ => format!("{sign}{}.{:02}", m / 1000, (m % 1000) / 10),
    }
}

fn money(milli: i64, mk: &Marketplace) -> Value {
    json!({"amount": amount(milli, mk.decimals()), "currencyCode": mk.currency})
}

/// The order as Amazon answers it with `data`; packages `getOrder` does not show yet are
/// left out, and so are their units.
pub(super) fn view(order: &Order, mk: &Marketplace, data: Datasets, hide_recipient: bool) -> Value {
    let cancelled = order.phase == Phase::Cancelled;
    let mut o = Map::new();
    o.insert("orderId".into(), json!(order.id));
    o.insert("createdTime".into(), json!(iso(order.created)));
    o.insert("lastUpdatedTime".into(), json!(iso(order.updated)));
    if !order.programs.is_empty() {
        o.insert("programs".into(), json!(order.programs));
    }
    o.insert(
        "salesChannel".into(),
        json!({"channelName": "AMAZON", "marketplaceId": mk.id, "marketplaceName": mk.name}),
    );
    if data.buyer {
        let mut buyer = Map::new();
        if !order.fba {
            buyer.insert("buyerEmail".into(), json!(order.buyer_email));
        }
        if let Some(company) = order.company {
            buyer.insert("buyerCompanyName".into(), json!(company));
        }
        if let Some(po) = &order.purchase_order {
            buyer.insert("buyerPurchaseOrderNumber".into(), json!(po));
        }
        o.insert("buyer".into(), Value::Object(buyer));
    }
    // Amazon gives no address before an order is ready to ship, nor to an application
    // without the role.
    if data.recipient && order.phase != Phase::Pending && !hide_recipient {
        o.insert("recipient".into(), recipient(order));
    }
    if data.proceeds && !cancelled {
        o.insert("proceeds".into(), order_proceeds(order, mk));
    }
    if data.fulfillment {
        let mut f = Map::new();
        f.insert("fulfillmentStatus".into(), json!(order.status(true)));
        f.insert("fulfilledBy".into(), json!(if order.fba { "AMAZON" } else { "MERCHANT" }));
        f.insert("fulfillmentServiceLevel".into(), json!(order.service_level));
        if !cancelled {
            f.insert(
                "shipByWindow".into(),
                json!({"earliestDateTime": iso(order.created), "latestDateTime": iso(order.created + 2 * 86_400)}),
            );
            f.insert(
                "deliverByWindow".into(),
                json!({"earliestDateTime": iso(order.created + 4 * 86_400),
                       "latestDateTime": iso(order.created + 7 * 86_400)}),
            );
        }
        o.insert("fulfillment".into(), Value::Object(f));
    }
    let items: Vec<Value> = order.items.iter().map(|item| item_view(order, item, mk, data)).collect();
    o.insert("orderItems".into(), Value::Array(items));
    if data.packages && !order.fba {
        let packages: Vec<Value> = order
            .packages
            .iter()
            .filter(|p| p.hidden_reads == 0)
            .map(|p| {
                let mut v = json!({"packageReferenceId": p.reference, "createdTime": iso(p.created),
                    "packageStatus": {"status": "SHIPPED"}, "carrier": p.carrier,
                    "trackingNumber": p.tracking, "shipTime": iso(p.ship_time),
                    "packageItems": p.items.iter().map(|(id, n)| json!({"orderItemId": id, "quantity": n}))
                        .collect::<Vec<_>>()});
                if let Some(service) = &p.service {
                    v["shippingService"] = json!(service);
                }
                v
            })
            .collect();
        o.insert("packages".into(), Value::Array(packages));
    }
    Value::Object(o)
}

fn recipient(order: &Order) -> Value {
    let a = &order.address;
    let mut address = Map::new();
    address.insert("name".into(), json!(a.name));
    address.insert("addressLine1".into(), json!(a.line1));
    if let Some(line) = a.line2 {
        address.insert("addressLine2".into(), json!(line));
    }
    if let Some(line) = a.line3 {
        address.insert("addressLine3".into(), json!(line));
    }
    address.insert("city".into(), json!(a.city));
    if let Some(region) = a.region {
        address.insert("stateOrRegion".into(), json!(region));
    }
    address.insert("postalCode".into(), json!(a.postal));
    address.insert("countryCode".into(), json!(a.country));
    address.insert("phone".into(), json!(a.phone));
    address.insert("addressType".into(), json!(if a.commercial { "COMMERCIAL" } else { "RESIDENTIAL" }));
    if let Some(company) = order.company {
        address.insert("companyName".into(), json!(company));
    }
    let mut r = json!({"deliveryAddress": address});
    if let Some(text) = order.instruction {
        r["deliveryPreference"] = json!({"addressInstruction": text});
    }
    r
}

fn order_proceeds(order: &Order, mk: &Marketplace) -> Value {
    let sum = |f: &dyn Fn(&super::orders::Item) -> i64| order.items.iter().map(f).sum::<i64>();
    let (item, shipping) = (sum(&|i| i.subtotal()), sum(&|i| i.shipping));
    let (tax, discount) = (sum(&|i| i.tax_item + i.tax_shipping), sum(&|i| i.discount));
    let mut breakdowns = vec![json!({"type": "ITEM", "subtotal": money(item, mk)})];
    if shipping > 0 {
        breakdowns.push(json!({"type": "SHIPPING", "subtotal": money(shipping, mk)}));
    }
    if tax > 0 {
        breakdowns.push(json!({"type": "TAX", "subtotal": money(tax, mk)}));
    }
    if discount > 0 {
        breakdowns.push(json!({"type": "DISCOUNT", "subtotal": money(-discount, mk)}));
    }
    json!({"grandTotal": money(item + shipping + tax - discount, mk), "breakdowns": breakdowns})
}

fn item_view(order: &Order, item: &super::orders::Item, mk: &Marketplace, data: Datasets) -> Value {
    let cancelled = order.phase == Phase::Cancelled;
    let mut product = json!({"asin": item.asin, "title": item.title, "sellerSku": item.sku});
    if data.proceeds && !cancelled {
        product["price"] = json!({"unitPrice": money(item.unit, mk)});
    }
    let mut v = json!({"orderItemId": item.id, "quantityOrdered": if cancelled { 0 } else { item.ordered },
                       "product": product});
    if data.proceeds && !cancelled {
        let mut breakdowns = vec![json!({"type": "ITEM", "subtotal": money(item.subtotal(), mk)})];
        if item.shipping > 0 {
            breakdowns.push(json!({"type": "SHIPPING", "subtotal": money(item.shipping, mk)}));
        }
        if item.tax_item + item.tax_shipping > 0 {
            let mut details = vec![json!({"subtype": "ITEM", "value": money(item.tax_item, mk)})];
            if item.tax_shipping > 0 {
                details.push(json!({"subtype": "SHIPPING", "value": money(item.tax_shipping, mk)}));
            }
            breakdowns.push(json!({"type": "TAX", "subtotal": money(item.tax_item + item.tax_shipping, mk),
                                   "detailedBreakdowns": details}));
        }
        if item.discount > 0 {
            breakdowns.push(json!({"type": "DISCOUNT", "subtotal": money(-item.discount, mk),
                "detailedBreakdowns": [{"subtype": "ITEM", "value": money(-item.discount, mk)}]}));
        }
        v["proceeds"] = json!({"proceedsTotal": money(item.total(), mk), "breakdowns": breakdowns});
    }
    if data.fulfillment {
        let (ordered, fulfilled) =
            if cancelled { (0, 0) } else { (item.ordered, order.fulfilled(item, true)) };
        let mut f = json!({"quantityFulfilled": fulfilled, "quantityUnfulfilled": ordered - fulfilled});
        if let Some(message) = &item.gift_message {
            let mut gift = json!({"giftMessage": message});
            if item.gift_wrap {
                gift["giftWrapLevel"] = json!("Classic");
            }
            f["packing"] = json!({"giftOption": gift});
        }
        if item.signature {
            f["shipping"] = json!({"shippingConstraints": {"signatureConfirmation": "MANDATORY"}});
        }
        v["fulfillment"] = f;
    }
    v
}

/// A walk's page token: where the last page ended, a digest of the filters, when the walk
/// began and the upper time bound it keeps. Base64 with a head whose first characters are
/// `+/` and a length that needs `=`, so a client that does not encode them breaks at once.
struct Token {
    after: (u64, usize),
    filters: u64,
    issued: i64,
    bound: i64,
}

fn encode(token: &Token) -> String {
    let body = json!({"k": token.after.0.to_string(), "i": token.after.1, "f": token.filters.to_string(),
                      "t": token.issued, "b": token.bound})
    .to_string();
    let mut bytes = vec![0xFB, 0xFF];
    bytes.extend_from_slice(body.as_bytes());
    if bytes.len() % 3 == 0 {
        bytes.push(b' ');
    }
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn decode(text: &str) -> Option<Token> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(text).ok()?;
    let body: Value = serde_json::from_slice(bytes.strip_prefix(&[0xFB, 0xFF])?.trim_ascii_end()).ok()?;
    Some(Token {
        after: (body["k"].as_str()?.parse().ok()?, usize::try_from(body["i"].as_u64()?).ok()?),
        filters: body["f"].as_str()?.parse().ok()?,
        issued: body["t"].as_i64()?,
        bound: body["b"].as_i64()?,
    })
}

fn list<'a>(request: &'a Request, name: &str) -> Option<Vec<&'a str>> {
    request.param(name).map(|v| v.split(',').map(str::trim).collect())
}

/// `GET /orders/2026-01-01/orders`.
pub(super) fn search(account: &Account, request: &Request, now: i64) -> Response {
    match walk(account, request, now) {
        Ok(response) | Err(response) => response,
    }
}

fn walk(account: &Account, request: &Request, now: i64) -> Result<Response, Response> {
    let mut canonical: Vec<(&str, &str)> = request
        .query
        .iter()
        .filter(|(k, _)| k != "paginationToken")
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    canonical.sort();
    let filters = xxhash_rust::xxh3::xxh3_64(format!("{}{canonical:?}", account.seller.seller_id).as_bytes());
    let token = match request.param("paginationToken") {
        None => None,
        Some(text) => {
            let token = decode(text).ok_or_else(|| bad_request("Invalid paginationToken."))?;
            if token.filters != filters {
                return Err(bad_request(
                    "The request parameters must be the same as those of the request that returned the paginationToken.",
                ));
            }
            if now - token.issued > TOKEN_LIFE_SECS {
                return Err(bad_request("The paginationToken has expired."));
            }
            Some(token)
        }
    };
    let time = |name: &str| -> Result<Option<i64>, Response> {
        request
            .param(name)
            .map(|v| {
                parse_iso(v)
                    .ok_or_else(|| bad_request(&format!("Invalid {name}: {v} is not an ISO 8601 date-time.")))
            })
            .transpose()
    };
    let (created_after, created_before) = (time("createdAfter")?, time("createdBefore")?);
    let (updated_after, updated_before) = (time("lastUpdatedAfter")?, time("lastUpdatedBefore")?);
    let (by_created, after, before) = match (created_after, updated_after) {
        (Some(after), None) if updated_before.is_none() => (true, after, created_before),
        (None, Some(after)) if created_before.is_none() => (false, after, updated_before),
        _ => {
            return Err(bad_request(
                "Exactly one of createdAfter and lastUpdatedAfter must be provided, with only its own Before filter.",
            ));
        }
    };
    if before.is_some_and(|b| b < after) {
        return Err(bad_request("The Before filter must not be earlier than the After filter."));
    }
    if before.is_some_and(|b| b > now - 120) {
        return Err(bad_request(
            "The Before filter must be at least two minutes before the time of the request.",
        ));
    }
    let marketplaces =
        list(request, "marketplaceIds").ok_or_else(|| bad_request("marketplaceIds is required."))?;
    if let Some(unknown) =
        marketplaces.iter().find(|id| !account.seller.marketplaces.iter().any(|m| m.id == **id))
    {
        return Err(bad_request(&format!("Invalid marketplaceId: {unknown}.")));
    }
    let by = list(request, "fulfilledBy");
    if let Some(v) = by.iter().flatten().find(|v| !matches!(**v, "MERCHANT" | "AMAZON")) {
        return Err(bad_request(&format!("Invalid fulfilledBy value: {v}")));
    }
    let statuses = list(request, "fulfillmentStatuses");
    if let Some(v) = statuses.iter().flatten().find(|v| !STATUSES.contains(v)) {
        return Err(bad_request(&format!("Invalid fulfillmentStatuses value: {v}")));
    }
    let max = match request.param("maxResultsPerPage").map(str::parse::<usize>) {
        None => 100,
        Some(Ok(n)) if (1..=100).contains(&n) => n,
        Some(_) => return Err(bad_request("maxResultsPerPage must be an integer between 1 and 100.")),
    };
    let data = Datasets::parse(request.param("includedData"))?;
    let bound = before.or(token.as_ref().map(|t| t.bound)).unwrap_or(now);
    let fits = |o: &Order| {
        let mk = &account.seller.marketplaces[o.marketplace];
        let at = if by_created { o.created } else { o.updated };
        (after..=bound).contains(&at)
            && marketplaces.contains(&mk.id.as_str())
            && by.as_ref().is_none_or(|by| by.contains(&if o.fba { "AMAZON" } else { "MERCHANT" }))
            && statuses.as_ref().is_none_or(|s| s.contains(&o.status(true)))
    };
    let book = &account.orders;
    let start = match &token {
        Some(t) => std::ops::Bound::Excluded(t.after),
        None => std::ops::Bound::Unbounded,
    };
    let mut page = Vec::with_capacity(max);
    let mut more = false;
    let mut last = (0, 0);
    for &(key, at) in book.walk.range((start, std::ops::Bound::Unbounded)) {
        let order = &book.list[at];
        if !fits(order) {
            continue;
        }
        if page.len() == max {
            more = true;
            break;
        }
        last = (key, at);
        page.push(view(
            order,
            &account.seller.marketplaces[order.marketplace],
            data,
            account.hide_recipients,
        ));
    }
    let mut body = json!({"orders": page});
    if more {
        let issued = token.as_ref().map_or(now, |t| t.issued);
        body["pagination"] = json!({"nextToken": encode(&Token { after: last, filters, issued, bound })});
    }
    body[if by_created { "createdBefore" } else { "lastUpdatedBefore" }] = json!(iso(bound));
    Ok(Response::json(200, &body))
}

/// `GET /orders/2026-01-01/orders/{orderId}`; each read brings held-back packages nearer.
pub(super) fn get(account: &mut Account, order_id: &str, request: &Request) -> Response {
    let data = match Datasets::parse(request.param("includedData")) {
        Ok(data) => data,
        Err(response) => return response,
    };
    let hide = account.hide_recipients;
    let marketplaces = &account.seller.marketplaces;
    let Some(order) = account.orders.get_mut(order_id) else {
        return error(404, "NotFound", &format!("Order {order_id} was not found."), "");
    };
    let body = json!({"order": view(order, &marketplaces[order.marketplace], data, hide)});
    for package in &mut order.packages {
        package.hidden_reads = package.hidden_reads.saturating_sub(1);
    }
    Response::json(200, &body)
}
