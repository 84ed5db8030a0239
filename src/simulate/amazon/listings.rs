//! Listings Items API 2021-08-01 as far as orderbridge reads it: `searchListingsItems` by
//! SKU identifiers (at most 20, `pageSize` at most 20, pages by token without identifiers)
//! and `getListingsItem` (404 for no listing), with `summaries` and
//! `fulfillmentAvailability`: `DEFAULT` for MFN listings, `AMAZON_NA` (or `_EU`, `_JP`) for
//! FBA ones.

use base64::Engine as _;
use serde_json::{Value, json};

use super::Account;
use super::catalog::Marketplace;
use super::wire::iso;
use super::wire::{bad_request, error};
use crate::simulate::http::{Request, Response};

const INCLUDED: [&str; 8] = [
    "summaries",
    "attributes",
    "issues",
    "offers",
    "fulfillmentAvailability",
    "procurement",
    "relationships",
    "productTypes",
];

/// A listing of the seller, in every marketplace of the account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    pub sku: String,
    pub asin: String,
    pub title: String,
    pub product_type: String,
    /// Fulfilled by Amazon: `AMAZON_NA` availability, never written by orderbridge.
    pub fba: bool,
    pub quantity: i64,
    /// `BUYABLE`, `DISCOVERABLE`.
    pub status: Vec<String>,
    /// The attributes a `merge` keeps and a `replace` drops.
    pub handling_time: Option<u32>,
    pub restock_date: Option<String>,
    /// Simulator seconds.
    pub created: i64,
    pub updated: i64,
}

impl Listing {
    /// A merchant-fulfilled listing with `quantity` units, a handling time of 2 days.
    pub fn mfn(sku: &str, product_type: &str, quantity: i64) -> Listing {
        let asin = format!("B0{:08X}", super::orders::walk_key(sku) as u32);
        Listing {
            sku: sku.into(),
            asin,
            title: format!("Product {sku}"),
            product_type: product_type.into(),
            fba: false,
            quantity,
            status: vec!["BUYABLE".into(), "DISCOVERABLE".into()],
            handling_time: Some(2),
            restock_date: None,
            created: 1_740_787_200,
            updated: 1_740_787_200,
        }
    }

    /// A listing fulfilled by Amazon with `quantity` units in Amazon's warehouses.
    pub fn fba(sku: &str, product_type: &str, quantity: i64) -> Listing {
        Listing { fba: true, handling_time: None, ..Listing::mfn(sku, product_type, quantity) }
    }
}

fn view(
    listing: &Listing,
    region: &str,
    marketplaces: &[&Marketplace],
    summaries: bool,
    availability: bool,
) -> Value {
    let mut v = json!({"sku": listing.sku});
    if summaries {
        v["summaries"] = marketplaces
            .iter()
            .map(|m| {
                json!({"marketplaceId": m.id, "asin": listing.asin, "productType": listing.product_type,
                       "status": listing.status, "itemName": listing.title,
                       "createdDate": iso(listing.created), "lastUpdatedDate": iso(listing.updated)})
            })
            .collect();
    }
    if availability {
        let code = if listing.fba { Marketplace::afn_code(region) } else { "DEFAULT" };
        v["fulfillmentAvailability"] =
            json!([{"fulfillmentChannelCode": code, "quantity": listing.quantity}]);
    }
    v
}

/// The marketplaces asked for (required, each the seller's) and the datasets.
fn common<'a>(
    account: &'a Account,
    request: &Request,
) -> Result<(Vec<&'a Marketplace>, bool, bool), Response> {
    let ids = request.param("marketplaceIds").ok_or_else(|| bad_request("marketplaceIds is required."))?;
    let mut marketplaces = Vec::new();
    for id in ids.split(',') {
        match account.seller.marketplaces.iter().find(|m| m.id == id) {
            Some(m) => marketplaces.push(m),
            None => return Err(bad_request(&format!("Invalid marketplaceId: {id}."))),
        }
    }
    let included = request.param("includedData").unwrap_or("summaries");
    if let Some(v) = included.split(',').find(|v| !INCLUDED.contains(v)) {
        return Err(bad_request(&format!("Invalid includedData value: {v}")));
    }
    let has = |name: &str| included.split(',').any(|v| v == name);
    Ok((marketplaces, has("summaries"), has("fulfillmentAvailability")))
}

/// `GET /listings/2021-08-01/items/{sellerId}`.
pub(super) fn search(account: &Account, request: &Request) -> Response {
    match search_listings(account, request) {
        Ok(response) | Err(response) => response,
    }
}

fn search_listings(account: &Account, request: &Request) -> Result<Response, Response> {
    let (marketplaces, summaries, availability) = common(account, request)?;
    let identifiers: Option<Vec<&str>> = request.param("identifiers").map(|v| v.split(',').collect());
    match (&identifiers, request.param("identifiersType")) {
        (Some(ids), Some("SKU")) if ids.len() <= 20 => {}
        (Some(_), Some("SKU")) => return Err(bad_request("identifiers takes at most 20 values.")),
        (Some(_), Some(other)) => {
            return Err(bad_request(&format!("identifiersType {other} is not supported for this seller.")));
        }
        (Some(_), None) | (None, Some(_)) => {
            return Err(bad_request("identifiers and identifiersType must be provided together."));
        }
        (None, None) => {}
    }
    let size = match request.param("pageSize").map(str::parse::<usize>) {
        None => 10,
        Some(Ok(n)) if (1..=20).contains(&n) => n,
        Some(_) => return Err(bad_request("pageSize must be an integer between 1 and 20.")),
    };
    let offset = match request.param("pageToken") {
        None => 0,
        Some(token) => base64::engine::general_purpose::STANDARD
            .decode(token)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|t| t.strip_prefix("offset:").and_then(|n| n.parse::<usize>().ok()))
            .ok_or_else(|| bad_request("Invalid pageToken."))?,
    };
    let found: Vec<&Listing> = match &identifiers {
        Some(skus) => account.listings.values().filter(|l| skus.contains(&l.sku.as_str())).collect(),
        None => account.listings.values().collect(),
    };
    let region = account.seller.region.as_str();
    let items: Vec<Value> = found
        .iter()
        .skip(offset)
        .take(size)
        .map(|l| view(l, region, &marketplaces, summaries, availability))
        .collect();
    let mut body = json!({"numberOfResults": found.len(), "items": items});
    let mut pagination = serde_json::Map::new();
    if offset + size < found.len() {
        let next = base64::engine::general_purpose::STANDARD.encode(format!("offset:{}", offset + size));
        pagination.insert("nextToken".into(), json!(next));
    }
    if offset > 0 {
        let previous = base64::engine::general_purpose::STANDARD
            .encode(format!("offset:{}", offset.saturating_sub(size)));
        pagination.insert("previousToken".into(), json!(previous));
    }
    if !pagination.is_empty() {
        body["pagination"] = Value::Object(pagination);
    }
    Ok(Response::json(200, &body))
}

/// `GET /listings/2021-08-01/items/{sellerId}/{sku}`.
pub(super) fn get(account: &Account, sku: &str, request: &Request) -> Response {
    let (marketplaces, summaries, availability) = match common(account, request) {
        Ok(found) => found,
        Err(response) => return response,
    };
    match account.listings.get(sku) {
        Some(listing) => Response::json(
            200,
            &view(listing, &account.seller.region, &marketplaces, summaries, availability),
        ),
        None => error(
            404,
            "NotFound",
            &format!("SKU '{sku}' not found in marketplace {}", marketplaces[0].id),
            "",
        ),
    }
}
