//! Stock levels (annex §11, "Stock"). WooCommerce addresses stock by product id, so each
//! pass looks its SKUs up first (products and variations alike), skips the levels the store
//! already shows, and sends the rest in batches of at most 100: products through
//! `products/batch`, variations through their parent's `variations/batch` (WooCommerce
//! refuses a variation in `products/batch`). A batch answers 200 even when it refused some
//! items; those are reported, and the rest stand.

use std::collections::{BTreeMap, HashMap};

use reqwest::Method;
use serde_json::{Value, json};

use super::Client;
use crate::platforms::PlatformError;
use crate::platforms::store::{StockSent, integer};

/// Items in one batch, WooCommerce's limit; also the levels of one engine commit.
pub const PER_BATCH: usize = 100;

/// SKUs in one lookup, and the longest lookup URL's share for them.
const SKUS_PER_LOOKUP: usize = 50;
const MAX_SKU_CHARS: usize = 3_000;

const LOOKUP_FIELDS: &str = "id,parent_id,type,sku,manage_stock,stock_quantity";

/// A product or variation as the lookup shows it.
#[derive(Debug, Clone)]
struct Found {
    id: i64,
    /// The variable product a variation belongs to; `None` for a product.
    parent: Option<i64>,
    level: Option<i64>,
}

impl Client {
    pub(super) async fn send_stock(&self, levels: &[(String, i64)]) -> Result<StockSent, PlatformError> {
        let mut requests = 0;
        let mut found: HashMap<String, Vec<Found>> = HashMap::new();
        for group in lookups(levels.iter().map(|(sku, _)| sku.as_str())) {
            let query = [
                ("sku", group.join(",")),
                ("per_page", "100".to_string()),
                ("_fields", LOOKUP_FIELDS.to_string()),
            ];
            let listed = self.call(Method::GET, "wc/v3/products", &query, None).await?;
            requests += 1;
            let listed = listed.json(&self.api, "wc/v3/products")?;
            for product in listed.as_array().map_or(&[][..], Vec::as_slice) {
                let (Some(sku), Some(id)) =
                    (product.get("sku").and_then(Value::as_str), product.get("id").and_then(integer))
                else {
                    continue;
                };
                let variation = product.get("type").and_then(Value::as_str) == Some("variation");
                let parent = product.get("parent_id").and_then(integer).filter(|p| variation && *p != 0);
                let managed = product.get("manage_stock").and_then(Value::as_bool) == Some(true);
                let level = product.get("stock_quantity").and_then(integer).filter(|_| managed);
                found.entry(sku.to_string()).or_default().push(Found { id, parent, level });
            }
        }
        // Batches by where they go: `None` for products/batch, a parent for its variations.
        let mut batches: BTreeMap<Option<i64>, Vec<(i64, String, i64)>> = BTreeMap::new();
        let mut skipped = Vec::new();
        for (sku, level) in levels {
            match found.get(sku).map(Vec::as_slice) {
                Some([one]) if one.level == Some(*level) => {}
                Some([one]) => batches.entry(one.parent).or_default().push((one.id, sku.clone(), *level)),
                // No product has it, or several do: which one the warehouse means is unknown.
                None | Some([]) => {
                    skipped.push((sku.clone(), format!("SKU {sku}: no WooCommerce product has it")))
                }
                Some(several) => skipped.push((
                    sku.clone(),
                    format!("SKU {sku}: {} WooCommerce products have it", several.len()),
                )),
            }
        }
        if !skipped.is_empty() {
            log::info!(
                "WooCommerce at {}: {} SKU(s) match no single product; skipped",
                self.api.site(),
                skipped.len()
            );
        }
        let mut refused = Vec::new();
        let mut accepted = 0;
        for (parent, items) in batches {
            let route = match parent {
                None => "wc/v3/products/batch".to_string(),
                Some(parent) => format!("wc/v3/products/{parent}/variations/batch"),
            };
            for chunk in items.chunks(PER_BATCH) {
                let update: Vec<Value> = chunk
                    .iter()
                    .map(|(id, _, level)| json!({"id": id, "manage_stock": true, "stock_quantity": level}))
                    .collect();
                let body = json!({"update": update});
                // Absolute levels: sent again, they leave the store as it was.
                let answer =
                    self.call(Method::POST, &route, &[], Some(&body)).await?.json(&self.api, &route)?;
                requests += 1;
                let errors = item_errors(&answer, chunk, &[&self.api.shop.key, &self.api.shop.secret]);
                // A store may name one item's error more than once.
                accepted += chunk.len().saturating_sub(errors.len());
                refused.extend(errors);
            }
        }
        Ok(StockSent { requests, accepted, refused, skipped, receipts: Vec::new() })
    }
}

/// The SKUs in lookup groups: at most 50 and a bounded URL each, and a SKU holding a comma
/// alone (WooCommerce splits the parameter at commas).
fn lookups<'a>(skus: impl Iterator<Item = &'a str>) -> Vec<Vec<&'a str>> {
    let mut groups: Vec<Vec<&str>> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let mut chars = 0;
    for sku in skus {
        if sku.contains(',') {
            groups.push(vec![sku]);
            continue;
        }
        let cost = super::oauth::encode(sku).len() + 3;
        if !current.is_empty() && (current.len() == SKUS_PER_LOOKUP || chars + cost > MAX_SKU_CHARS) {
            groups.push(std::mem::take(&mut current));
            chars = 0;
        }
        current.push(sku);
        chars += cost;
    }
    if !current.is_empty() {
        groups.push(current);
    }
    groups
}

/// The items of a batch's `update` answer that carry an `error`, as (sku, reason).
/// `secrets` are kept out of the store's reasons.
fn item_errors(answer: &Value, sent: &[(i64, String, i64)], secrets: &[&str]) -> Vec<(String, String)> {
    let items = answer.get("update").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    items
        .iter()
        .filter_map(|item| {
            let error = item.get("error")?;
            let id = item.get("id").and_then(integer);
            let sku =
                sent.iter().find(|(sent_id, _, _)| Some(*sent_id) == id).map(|(_, sku, _)| sku.clone())?;
            let code = error.get("code").and_then(Value::as_str).unwrap_or("error");
            let message = error.get("message").and_then(Value::as_str).unwrap_or_default();
            let reason = format!(
                "SKU {sku} (id {}): {}: {}",
                id.unwrap_or_default(),
                crate::platforms::quote_platform_text(code, secrets),
                crate::platforms::quote_platform_text(message, secrets)
            );
            Some((sku, reason))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_take_fifty_skus_and_a_sku_with_a_comma_alone() {
        let skus: Vec<String> = (0..120).map(|i| format!("SKU-{i}")).collect();
        let mut all: Vec<&str> = skus.iter().map(String::as_str).collect();
        all.insert(3, "A,B");
        let groups = lookups(all.into_iter());
        assert_eq!(groups.iter().map(Vec::len).collect::<Vec<_>>(), [1, 50, 50, 20]);
        assert_eq!(groups[0], ["A,B"]);
        let long: Vec<String> = (0..50).map(|i| format!("{i}-{}", "x".repeat(200))).collect();
        let groups = lookups(long.iter().map(String::as_str));
        assert!(
            groups.len() > 1 && groups.iter().all(|g| g.iter().map(|s| s.len() + 3).sum::<usize>() <= 3_000)
        );
    }

    #[test]
    fn refused_items_name_their_sku_id_and_reason() {
        let answer = json!({"update": [
            {"id": 93, "stock_quantity": 12},
            {"id": 999, "error": {"code": "woocommerce_rest_product_invalid_id", "message": "Invalid ID.", "data": {"status": 400}}}
        ]});
        let sent = [(93, "WS-1".to_string(), 12), (999, "GONE".to_string(), 3)];
        assert_eq!(
            item_errors(&answer, &sent, &[]),
            [(
                "GONE".to_string(),
                "SKU GONE (id 999): woocommerce_rest_product_invalid_id: Invalid ID.".to_string()
            )]
        );
    }
}
