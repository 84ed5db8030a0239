//! The simulated store's inventory (`inventory.v3.yml`): absolute adjustments set a SKU's
//! level at a location, and the two reads a client may use, every item at every location
//! and the items of one location. Errors are `application/problem+json`, as declared.
//!
//! Items are identified by `sku`: the simulated catalog has no variant or product ids, so an
//! adjustment naming an item by `variant_id` or `product_id` is refused (422), and a read
//! filtered by them finds nothing.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::http::Response;
use super::{Call, number_param};

/// Items in one adjustment (the operation's documented limit), and in one page of a read.
const MAX_ADJUSTED: usize = 2_000;
const MAX_LIMIT: i64 = 1_000;
const DEFAULT_LIMIT: i64 = 50;

/// The store's locations (id → code, name) and each SKU's level at each.
pub struct Stock {
    locations: BTreeMap<i64, (String, String)>,
    levels: BTreeMap<String, BTreeMap<i64, i64>>,
}

impl Default for Stock {
    /// One location, BigCommerce's default one.
    fn default() -> Self {
        let locations = BTreeMap::from([(1, ("BC-LOCATION-1".to_string(), "Default location".to_string()))]);
        Stock { locations, levels: BTreeMap::new() }
    }
}

impl Stock {
    /// Each SKU's level, summed over the locations.
    pub fn totals(&self) -> BTreeMap<String, i64> {
        self.levels.iter().map(|(sku, at)| (sku.clone(), at.values().sum())).collect()
    }
}

/// `PUT v3/inventory/adjustments/absolute`: every item is checked before any is set.
pub fn set_absolute(stock: &mut Stock, call: &Call) -> Response {
    let refuse = |message: String| call.error(422, &message);
    let Ok(body) = serde_json::from_slice::<Value>(&call.request.body) else {
        return call.error(400, "The request body is not JSON.");
    };
    let Some(items) = body.get("items").and_then(Value::as_array) else {
        return refuse("The field 'items' is required.".into());
    };
    if items.len() > MAX_ADJUSTED {
        return refuse(format!("At most {MAX_ADJUSTED} items may be adjusted at once, not {}.", items.len()));
    }
    let mut levels = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let number = |name: &str| item.get(name).and_then(Value::as_i64);
        let (Some(location), Some(quantity)) = (number("location_id"), number("quantity")) else {
            return refuse(format!("Item {i} needs a whole location_id and quantity."));
        };
        if !stock.locations.contains_key(&location) {
            return refuse(format!("Item {i}: no location has id {location}."));
        }
        if quantity < 0 {
            return refuse(format!("Item {i}: an absolute quantity cannot be negative."));
        }
        let Some(sku) = item.get("sku").and_then(Value::as_str) else {
            return refuse(format!("Item {i}: items are identified by sku in this store."));
        };
        levels.push((sku.to_string(), location, quantity));
    }
    for (sku, location, quantity) in &levels {
        stock.levels.entry(sku.clone()).or_default().insert(*location, *quantity);
    }
    crate::logging::notice(format_args!(
        "simulated BigCommerce: stock set for {} SKUs: {}",
        items.len(),
        crate::simulate::levels(items, "quantity")
    ));
    Response::json(200, &json!({"transaction_id": format!("sim-{}", stock.levels.len())}))
}

/// A `…:in` filter: its comma-separated values, `None` when absent.
fn list_param(call: &Call, name: &str) -> Option<Vec<String>> {
    call.request.param(name).map(|text| text.split(',').map(|v| v.trim().to_string()).collect())
}

/// The SKUs a read lists, by `sku:in`; `variant_id:in` and `product_id:in` match nothing.
fn skus<'a>(stock: &'a Stock, call: &Call) -> Vec<&'a String> {
    let wanted = list_param(call, "sku:in");
    let by_id =
        call.request.param("variant_id:in").is_some() || call.request.param("product_id:in").is_some();
    stock
        .levels
        .keys()
        .filter(|sku| !by_id && wanted.as_ref().is_none_or(|w| w.iter().any(|s| s == *sku)))
        .collect()
}

/// One page of a read and its `meta` (`Meta`), or the 400 for a bad `page`/`limit`.
fn page<T>(call: &Call, all: Vec<T>) -> Result<(Vec<T>, Value), Response> {
    let page = number_param(call, "page")?.unwrap_or(1);
    let limit = number_param(call, "limit")?.unwrap_or(DEFAULT_LIMIT);
    if page < 1 || !(1..=MAX_LIMIT).contains(&limit) {
        return Err(call.error(400, &format!("page must be at least 1 and limit from 1 to {MAX_LIMIT}.")));
    }
    let total = all.len() as i64;
    let pages = (total + limit - 1) / limit;
    let items: Vec<T> = all.into_iter().skip(((page - 1) * limit) as usize).take(limit as usize).collect();
    let mut links = json!({"current": format!("?limit={limit}&page={page}")});
    if page > 1 {
        links["previous"] = json!(format!("?limit={limit}&page={}", page - 1));
    }
    if page < pages {
        links["next"] = json!(format!("?limit={limit}&page={}", page + 1));
    }
    let meta = json!({"pagination": {"total": total, "count": items.len(), "per_page": limit,
                                     "current_page": page, "total_pages": pages, "links": links}});
    Ok((items, meta))
}

fn settings() -> Value {
    json!({"safety_stock": 0, "is_in_stock": true, "warning_level": 0, "bin_picking_number": ""})
}

/// `GET v3/inventory/items`: each item with its level at every location asked
/// (`location_id:in`, `location_code:in`; all by default).
pub fn items(stock: &Stock, call: &Call) -> Response {
    let ids = list_param(call, "location_id:in");
    let codes = list_param(call, "location_code:in");
    let locations: Vec<(&i64, &(String, String))> = stock
        .locations
        .iter()
        .filter(|(id, (code, _))| {
            ids.as_ref().is_none_or(|w| w.contains(&id.to_string()))
                && codes.as_ref().is_none_or(|w| w.contains(code))
        })
        .collect();
    let data: Vec<Value> = skus(stock, call)
        .into_iter()
        .map(|sku| {
            let at = &stock.levels[sku];
            let here: Vec<Value> = locations
                .iter()
                .map(|(id, (code, name))| {
                    let level = at.get(id).copied().unwrap_or(0);
                    json!({"location_id": id, "location_code": code, "location_name": name,
                           "available_to_sell": level, "total_inventory_onhand": level,
                           "location_enabled": true, "settings": settings()})
                })
                .collect();
            json!({"identity": {"sku": sku}, "locations": here})
        })
        .collect();
    match page(call, data) {
        Ok((data, meta)) => Response::json(200, &json!({"data": data, "meta": meta})),
        Err(response) => response,
    }
}

/// `GET v3/inventory/locations/{location_id}/items`; 404 for an unknown location.
pub fn location_items(stock: &Stock, call: &Call, location: &str) -> Response {
    let Some(location) = location.parse::<i64>().ok().filter(|id| stock.locations.contains_key(id)) else {
        return call.error(404, "No location has this id.");
    };
    let data: Vec<Value> = skus(stock, call)
        .into_iter()
        .map(|sku| {
            let level = stock.levels[sku].get(&location).copied().unwrap_or(0);
            json!({"identity": {"sku": sku}, "available_to_sell": level, "total_inventory_onhand": level,
                   "settings": settings()})
        })
        .collect();
    match page(call, data) {
        Ok((data, meta)) => Response::json(200, &json!({"data": data, "meta": meta})),
        Err(response) => response,
    }
}
