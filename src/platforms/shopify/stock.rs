//! Stock levels (annex §11 Shopify, *Stock*): SKUs are looked up as inventory items at the
//! location (the adapter's, or the shop's primary one), and their `available` quantities
//! set with `inventorySetQuantities`, at most 250 to a mutation. Each batch carries a new
//! UUID idempotency key, the same when the batch is sent again after a passing failure, so
//! a lost answer never applies a batch twice. Untracked items and items not stocked at the
//! location are skipped; orderbridge never creates inventory levels.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Deserialize;
use serde_json::{Value, json};

use super::Client;
use super::documents::{INVENTORY_ITEMS, PRIMARY_LOCATION, SET_AVAILABLE};
use super::orders::Connection;
use crate::platforms::PlatformError;
use crate::platforms::store::StockSent;

/// Quantities in one mutation: Shopify's limit on an input array.
pub const PER_MUTATION: usize = 250;

/// SKUs looked up in one search.
const SKUS_PER_SEARCH: usize = 50;

/// Pages of one search read at most.
const MAX_PAGES: usize = 100;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Item {
    id: String,
    sku: Option<String>,
    tracked: bool,
    inventory_level: Option<Value>,
}

/// Sets the levels of `levels` (SKU, units; negative as 0). Counted as taken: the SKUs
/// with at least one tracked item stocked at the location whose level Shopify set. SKUs the
/// shop has no such item for were left as they were: skipped, with the reason.
pub(super) async fn set(client: &Client, levels: &[(String, i64)]) -> Result<StockSent, PlatformError> {
    let location = location(client).await?;
    let wanted: BTreeMap<&str, i64> = levels.iter().map(|(sku, n)| (sku.as_str(), (*n).max(0))).collect();
    // (inventory item, units) to send, and the SKU of each.
    let mut quantities: Vec<(String, i64)> = Vec::new();
    let mut sku_of: HashMap<String, &str> = HashMap::new();
    // Why each SKU with no item to set was left, by SKU.
    let mut left: BTreeMap<&str, &str> = BTreeMap::new();
    let skus: Vec<&str> = wanted.keys().copied().collect();
    for batch in skus.chunks(SKUS_PER_SEARCH) {
        let items = items(client, batch, &location).await?;
        for sku in batch {
            let mine: Vec<&Item> = items.iter().filter(|i| i.sku.as_deref() == Some(*sku)).collect();
            if mine.is_empty() {
                left.insert(sku, "the shop has no inventory item with it");
            } else if !mine.iter().any(|i| i.tracked) {
                left.insert(sku, "its inventory item is not tracked");
            } else if !mine.iter().any(|i| i.tracked && i.inventory_level.is_some()) {
                left.insert(sku, "its inventory item is not stocked at the location");
            }
            // A SKU held by several items sets each; untracked or unstocked ones are left.
            for item in mine.into_iter().filter(|i| i.tracked && i.inventory_level.is_some()) {
                if !sku_of.contains_key(&item.id) {
                    sku_of.insert(item.id.clone(), sku);
                    quantities.push((item.id.clone(), wanted[sku]));
                }
            }
        }
    }
    let mut requests = 0;
    let mut set_skus: HashSet<&str> = HashSet::new();
    let mut dropped_skus: HashSet<&str> = HashSet::new();
    for batch in quantities.chunks(PER_MUTATION) {
        let (mutations, dropped) = send_batch(client, batch, &location).await?;
        requests += mutations;
        for (item, _) in batch {
            if dropped.contains(item) { &mut dropped_skus } else { &mut set_skus }.insert(sku_of[item]);
        }
    }
    for sku in dropped_skus.difference(&set_skus) {
        left.insert(sku, "Shopify did not set its inventory item at the location");
    }
    if !left.is_empty() {
        log::info!(
            "sync: Shopify shop {}: {} SKU(s) left as they were; skipped",
            client.shop.domain,
            left.len()
        );
    }
    let skipped = left.into_iter().map(|(sku, why)| (sku.to_string(), format!("SKU {sku}: {why}"))).collect();
    Ok(StockSent { requests, accepted: set_skus.len(), refused: Vec::new(), skipped, receipts: Vec::new() })
}

/// Where levels are set: the adapter's location, or the shop's primary one (read once a
/// pass).
async fn location(client: &Client) -> Result<String, PlatformError> {
    if let Some(id) = client.location_id {
        return Ok(format!("gid://shopify/Location/{id}"));
    }
    if let Some(known) = client.location.lock().unwrap_or_else(|p| p.into_inner()).clone() {
        return Ok(known);
    }
    #[derive(Deserialize)]
    struct Data {
        location: Option<Location>,
    }
    #[derive(Deserialize)]
    struct Location {
        id: String,
    }
    let data: Data = client.send(&PRIMARY_LOCATION, json!({})).await?;
    let id = data
        .location
        .ok_or_else(|| {
            PlatformError::BadData("Shopify named no primary location for the shop's stock.".into())
        })?
        .id;
    *client.location.lock().unwrap_or_else(|p| p.into_inner()) = Some(id.clone());
    Ok(id)
}

/// Shopify's search for these SKUs: `sku:"…"` terms joined by ` OR `, each quoted with `\`
/// and `"` escaped.
pub fn sku_search(skus: &[&str]) -> String {
    let terms: Vec<String> = skus
        .iter()
        .map(|sku| format!("sku:\"{}\"", sku.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect();
    terms.join(" OR ")
}

/// Every inventory item the search for these SKUs finds (Shopify may find more than asked).
async fn items(client: &Client, skus: &[&str], location: &str) -> Result<Vec<Item>, PlatformError> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Data {
        inventory_items: Connection<Item>,
    }
    let query = sku_search(skus);
    let mut found = Vec::new();
    let mut after: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let data: Data = client
            .send(&INVENTORY_ITEMS, json!({"query": query, "locationId": location, "after": after}))
            .await?;
        found.extend(data.inventory_items.nodes);
        let info = data.inventory_items.page_info;
        if !info.has_next_page {
            return Ok(found);
        }
        after = info.end_cursor;
    }
    Err(PlatformError::BadData("Shopify's inventory search found more items than orderbridge reads.".into()))
}

/// What one `inventorySetQuantities` answered.
enum Answer {
    Done,
    /// Entries Shopify refused (by index): dropped, and the rest sent again.
    Refused(Vec<usize>),
    /// The key's earlier try failed at Shopify: the batch goes again under a new key.
    AgainUnderNewKey,
}

/// Sends one batch; returns the mutations it took and the inventory items whose entries
/// Shopify refused (dropped, the rest sent again).
async fn send_batch(
    client: &Client,
    batch: &[(String, i64)],
    location: &str,
) -> Result<(usize, HashSet<String>), PlatformError> {
    let mut entries: Vec<(String, i64)> = batch.to_vec();
    let mut dropped = HashSet::new();
    let mut sent = 0;
    // The first try, and once more after Shopify refused entries or a failed earlier attempt.
    for _ in 0..2 {
        if entries.is_empty() {
            return Ok((sent, dropped));
        }
        let key = uuid_v4();
        let variables = json!({
            "idempotencyKey": key,
            "input": {
                "name": "available",
                "reason": "correction",
                "referenceDocumentUri": format!("gid://orderbridge/StockBatch/{key}"),
                "quantities": entries.iter().map(|(item, quantity)| json!({
                    "inventoryItemId": item, "locationId": location, "quantity": quantity,
                    "changeFromQuantity": null,
                })).collect::<Vec<_>>(),
            },
        });
        // Sent again as it is (same key) after a passing failure: Shopify applies it once.
        let variables = &variables;
        let answer = client
            .shop
            .api
            .send(|| async move {
                let data: Value = client.shop.query(&SET_AVAILABLE, variables.clone()).await?;
                read_answer(&data, &|text| client.shop.quote(text))
            })
            .await?;
        sent += 1;
        match answer {
            Answer::Done => return Ok((sent, dropped)),
            Answer::AgainUnderNewKey => {}
            Answer::Refused(indexes) => {
                let refused: HashSet<usize> = indexes.into_iter().collect();
                let (out, kept): (Vec<_>, Vec<_>) =
                    entries.into_iter().enumerate().partition(|(i, _)| refused.contains(i));
                dropped.extend(out.into_iter().map(|(_, (item, _))| item));
                entries = kept.into_iter().map(|(_, e)| e).collect();
            }
        }
    }
    Err(PlatformError::BadData("Shopify refused a batch of stock levels twice.".into()))
}

/// `quote` keeps the shop's credentials out of Shopify's messages.
fn read_answer(data: &Value, quote: &dyn Fn(&str) -> String) -> Result<Answer, PlatformError> {
    let payload = data.get("inventorySetQuantities").filter(|p| p.is_object()).ok_or_else(|| {
        PlatformError::BadData("Shopify answered inventorySetQuantities with nothing.".into())
    })?;
    let errors = payload.get("userErrors").and_then(Value::as_array).cloned().unwrap_or_default();
    if errors.is_empty() {
        return Ok(Answer::Done);
    }
    let code = |e: &Value| e.get("code").and_then(Value::as_str).unwrap_or_default().to_string();
    if errors.iter().any(|e| code(e) == "IDEMPOTENCY_CONCURRENT_REQUEST") {
        return Err(PlatformError::unreachable(
            "Shopify was still applying the same batch of stock levels; it is sent again under its key.",
        ));
    }
    if errors.iter().any(|e| code(e) == "IDEMPOTENCY_PREVIOUS_ATTEMPT_FAILED") {
        return Ok(Answer::AgainUnderNewKey);
    }
    let entry = |e: &Value| -> Option<usize> {
        let field = e.get("field")?.as_array()?;
        let at = |i: usize| field.get(i).and_then(Value::as_str);
        (at(0) == Some("input") && at(1) == Some("quantities")).then_some(())?;
        at(2)?.parse().ok()
    };
    let indexes: Option<Vec<usize>> = errors.iter().map(entry).collect();
    match indexes {
        Some(indexes) => Ok(Answer::Refused(indexes)),
        None => {
            let message = errors
                .iter()
                .map(|e| e.get("message").and_then(Value::as_str).unwrap_or("(no message)"))
                .collect::<Vec<_>>()
                .join("; ");
            Err(PlatformError::BadData(format!("Shopify refused the stock levels: {}", quote(&message))))
        }
    }
}

/// A random (version 4) UUID, as Shopify's idempotency keys are.
fn uuid_v4() -> String {
    let mut bytes: [u8; 16] = rand::random();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skus_are_searched_quoted_with_quotes_and_backslashes_escaped() {
        assert_eq!(sku_search(&["MUG-BLU", "MUG \"XL\""]), r#"sku:"MUG-BLU" OR sku:"MUG \"XL\"""#);
        assert_eq!(sku_search(&[r"A\B"]), r#"sku:"A\\B""#);
    }

    #[test]
    fn idempotency_keys_are_version_4_uuids() {
        let key = uuid_v4();
        assert_eq!(key.len(), 36);
        assert_eq!(&key[14..15], "4");
        assert!(matches!(&key[19..20], "8" | "9" | "a" | "b"), "{key}");
        assert_ne!(key, uuid_v4());
    }

    #[test]
    fn user_errors_are_sorted_by_what_they_ask_of_the_client() {
        let answer = |errors: Value| {
            read_answer(&json!({"inventorySetQuantities": {"userErrors": errors}}), &str::to_string)
        };
        assert!(matches!(answer(json!([])), Ok(Answer::Done)));
        assert!(matches!(
            answer(json!([{"code": "ITEM_NOT_STOCKED_AT_LOCATION", "field": ["input", "quantities", "3", "locationId"], "message": "x"}])),
            Ok(Answer::Refused(i)) if i == [3]
        ));
        assert!(
            matches!(answer(json!([{"code": "IDEMPOTENCY_CONCURRENT_REQUEST", "field": null, "message": "busy"}])),
                         Err(e) if e.is_passing())
        );
        assert!(matches!(
            answer(json!([{"code": "IDEMPOTENCY_PREVIOUS_ATTEMPT_FAILED", "field": null, "message": "x"}])),
            Ok(Answer::AgainUnderNewKey)
        ));
        let other = answer(
            json!([{"code": "INVALID_REASON", "field": ["input", "reason"], "message": "Bad reason"}]),
        );
        assert!(
            matches!(&other, Err(PlatformError::BadData(m)) if m.contains("Bad reason")),
            "{:?}",
            other.err()
        );
    }
}
