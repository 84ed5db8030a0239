//! Stock (annex §5, *Stock*): levels go to the seller's Inventory API listings only. SKUs are
//! looked up 25 at a time (`bulkGetInventoryItem`: an unknown SKU is named, an unchanged one
//! not sent), the published offers of each changed SKU are read (`getOffers`), and the item's
//! and every offer's quantity set together (`bulkUpdatePriceQuantity`, 25 SKUs a request, or
//! one where eBay refuses more). A listing takes at most 200 levels a UTC day from us; a level
//! of 0 always goes.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard, OnceLock};

use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Client;
use super::transport::{Quota, Seller, encode};
use crate::dates::now_ms;
use crate::platforms::PlatformError;
use crate::platforms::store::StockSent;

/// SKUs in one lookup or update request.
pub const PER_REQUEST: usize = 25;

/// Levels the engine hands over at once: a whole step, as Amazon's feed takes them, so its
/// requests are the annex's count for the step (⌈S/25⌉ lookups, C offer reads, ⌈C/25⌉
/// updates) wherever the changed SKUs fall. A crash mid-step costs little: a level eBay
/// already shows is found unchanged by the next lookup and not sent again.
pub const PER_STEP: usize = 25_000;

/// Levels sent to one listing in a UTC day, past which only a level of 0 goes (eBay allows 250
/// revisions a listing a day; the margin is for revisions the seller makes).
pub const DAILY_REVISIONS: u32 = 200;

const UNKNOWN: &str =
    "not an Inventory API item on eBay (listings made in Seller Hub or with the Trading API are not updated)";

#[derive(Deserialize)]
struct Looked {
    #[serde(default)]
    responses: Vec<LookedItem>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LookedItem {
    status_code: Option<u16>,
    sku: Option<String>,
    inventory_item: Option<Value>,
}

#[derive(Deserialize)]
struct Offers {
    #[serde(default)]
    offers: Vec<Offer>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Offer {
    offer_id: Option<String>,
    marketplace_id: Option<String>,
    status: Option<String>,
    listing: Option<Listing>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Listing {
    listing_id: Option<String>,
}

#[derive(Deserialize)]
struct Updated {
    #[serde(default)]
    responses: Vec<UpdatedEntry>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdatedEntry {
    status_code: Option<u16>,
    sku: Option<String>,
    #[serde(default)]
    errors: Vec<Value>,
}

/// A SKU to update: its level, its published offers and their listings.
struct Change {
    sku: String,
    level: i64,
    offers: Vec<(String, Option<String>)>,
}

/// Sets `levels` (see the module doc).
pub async fn set(client: &Client, levels: &[(String, i64)]) -> Result<StockSent, PlatformError> {
    let seller = &client.seller;
    let mut sent = StockSent::default();
    let mut changed: Vec<(String, i64)> = Vec::new();
    for chunk in levels.chunks(PER_REQUEST) {
        let body = json!({"requests": chunk.iter().map(|(sku, _)| json!({"sku": sku})).collect::<Vec<_>>()});
        let answer =
            post(seller, "/sell/inventory/v1/bulk_get_inventory_item", &body, "bulkGetInventoryItem").await?;
        sent.requests += 1;
        let looked: Looked = seller.api(Quota::Inventory).decode(&answer.body, "bulkGetInventoryItem")?;
        let by_sku: HashMap<&str, &LookedItem> =
            looked.responses.iter().filter_map(|r| Some((r.sku.as_deref()?, r))).collect();
        for (sku, level) in chunk {
            let level = (*level).max(0);
            let Some(item) = by_sku.get(sku.as_str()).filter(|r| r.status_code == Some(200)) else {
                sent.skipped.push((sku.clone(), format!("SKU {sku} is {UNKNOWN}")));
                continue;
            };
            let held = item
                .inventory_item
                .as_ref()
                .and_then(|i| i.pointer("/availability/shipToLocationAvailability/quantity"))
                .and_then(Value::as_i64);
            if held != Some(level) {
                changed.push((sku.clone(), level));
            }
        }
    }
    let mut updates = Vec::with_capacity(changed.len());
    for (sku, level) in changed {
        let target = format!("/sell/inventory/v1/offer?sku={}", encode(&sku));
        let answer = seller.call(Quota::Inventory, Method::GET, &target, None, "getOffers").await?;
        sent.requests += 1;
        if answer.status == StatusCode::NOT_FOUND {
            sent.skipped.push((sku.clone(), format!("SKU {sku} is {UNKNOWN}")));
            continue;
        }
        if !answer.status.is_success() {
            return Err(seller.api(Quota::Inventory).rejected(
                &answer,
                "getOffers",
                &seller.reason(&answer.body),
            ));
        }
        let offers: Offers = seller.api(Quota::Inventory).decode(&answer.body, "getOffers")?;
        let marketplace = seller.marketplace_id.as_deref();
        let offers: Vec<(String, Option<String>)> = offers
            .offers
            .into_iter()
            .filter(|o| o.status.as_deref() == Some("PUBLISHED"))
            .filter(|o| marketplace.is_none_or(|m| o.marketplace_id.as_deref() == Some(m)))
            .filter_map(|o| Some((o.offer_id?, o.listing.and_then(|l| l.listing_id))))
            .collect();
        if offers.is_empty() {
            // Nothing is listed: nothing to set, and nothing wrong.
            continue;
        }
        if level > 0
            && let Some(listing) = offers
                .iter()
                .filter_map(|(_, l)| l.as_deref())
                .find(|l| revisions(seller, l) >= DAILY_REVISIONS)
        {
            sent.skipped.push((
                sku.clone(),
                format!("SKU {sku}'s level {level} is held until tomorrow (UTC): eBay listing {listing} took {DAILY_REVISIONS} levels today"),
            ));
            continue;
        }
        updates.push(Change { sku, level, offers });
    }
    let mut per_request = if one_at_a_time(seller) { 1 } else { PER_REQUEST };
    let mut rest: &[Change] = &updates;
    while !rest.is_empty() {
        let (chunk, after) = rest.split_at(per_request.min(rest.len()));
        match update(seller, chunk, &mut sent).await {
            Err(PlatformError::Rejected { status: 400, .. }) if chunk.len() > 1 => {
                // eBay's operation says one SKU a call: from now on, one.
                remember_one_at_a_time(seller);
                per_request = 1;
                continue;
            }
            other => other?,
        }
        rest = after;
    }
    Ok(sent)
}

/// One `bulkUpdatePriceQuantity` of `chunk`; what eBay took and refused goes into `sent`.
async fn update(seller: &Seller, chunk: &[Change], sent: &mut StockSent) -> Result<(), PlatformError> {
    let requests: Vec<Value> = chunk
        .iter()
        .map(|c| {
            let offers: Vec<Value> =
                c.offers.iter().map(|(id, _)| json!({"offerId": id, "availableQuantity": c.level})).collect();
            json!({"sku": c.sku, "shipToLocationAvailability": {"quantity": c.level}, "offers": offers})
        })
        .collect();
    let body = json!({"requests": requests});
    let answer =
        post(seller, "/sell/inventory/v1/bulk_update_price_quantity", &body, "bulkUpdatePriceQuantity")
            .await?;
    sent.requests += 1;
    let updated: Updated = seller.api(Quota::Inventory).decode(&answer.body, "bulkUpdatePriceQuantity")?;
    for change in chunk {
        let entries: Vec<&UpdatedEntry> =
            updated.responses.iter().filter(|e| e.sku.as_deref() == Some(change.sku.as_str())).collect();
        let refusals: Vec<String> = entries
            .iter()
            .filter(|e| e.status_code != Some(200))
            .map(|e| {
                let body = json!({"errors": e.errors}).to_string();
                let said = seller.reason(body.as_bytes());
                if said.is_empty() { format!("status {}", e.status_code.unwrap_or(0)) } else { said }
            })
            .collect();
        if entries.is_empty() {
            sent.refused.push((
                change.sku.clone(),
                format!("eBay did not say what became of SKU {}'s level", change.sku),
            ));
        } else if refusals.is_empty() {
            sent.accepted += 1;
            for listing in change.offers.iter().filter_map(|(_, l)| l.as_deref()) {
                revised(seller, listing);
            }
        } else {
            sent.refused.push((
                change.sku.clone(),
                format!("eBay refused SKU {}'s level ({})", change.sku, refusals.join("; ")),
            ));
        }
    }
    Ok(())
}

/// A POST to the Inventory API whose 200 or 207 is read; 400 is eBay's refusal.
async fn post(
    seller: &Seller,
    path: &str,
    body: &Value,
    op: &str,
) -> Result<crate::platforms::api::Answer, PlatformError> {
    let answer = seller.call(Quota::Inventory, Method::POST, path, Some(body), op).await?;
    if answer.status.is_success() {
        return Ok(answer);
    }
    Err(seller.api(Quota::Inventory).rejected(&answer, op, &seller.reason(&answer.body)))
}

/// Levels sent to listings, per (keyset, listing): (UTC day, count that day).
type Revisions = HashMap<(String, String), (i64, u32)>;

fn revision_counts() -> MutexGuard<'static, Revisions> {
    static COUNTS: OnceLock<Mutex<Revisions>> = OnceLock::new();
    COUNTS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

fn today() -> i64 {
    now_ms().div_euclid(24 * 3600 * 1000)
}

fn revisions(seller: &Seller, listing: &str) -> u32 {
    let key = (seller.api(Quota::Inventory).account.clone(), listing.to_string());
    revision_counts().get(&key).filter(|(day, _)| *day == today()).map_or(0, |(_, n)| *n)
}

fn revised(seller: &Seller, listing: &str) {
    let key = (seller.api(Quota::Inventory).account.clone(), listing.to_string());
    let day = today();
    let mut counts = revision_counts();
    counts.retain(|_, (d, _)| *d == day);
    let entry = counts.entry(key).or_insert((day, 0));
    entry.1 += 1;
}

/// Keysets whose updates go one SKU a request, until the process restarts.
fn one_sku() -> MutexGuard<'static, HashSet<String>> {
    static ONE: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    ONE.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

fn one_at_a_time(seller: &Seller) -> bool {
    one_sku().contains(&seller.api(Quota::Inventory).account)
}

fn remember_one_at_a_time(seller: &Seller) {
    one_sku().insert(seller.api(Quota::Inventory).account.clone());
}
