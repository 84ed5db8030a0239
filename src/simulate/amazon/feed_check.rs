//! A `JSON_LISTINGS_FEED` document held to `listings-feed-schema-v2.json` by hand-written
//! rules (the `jsonschema` crate is only a dev-dependency, and the demo's release binary
//! runs this simulator; `sim_tests_stock` shows these rules and the schema agree), its
//! messages applied to the account's listings (a `merge` of
//! `/attributes/fulfillment_availability` sets the `DEFAULT` quantity and keeps the rest),
//! and the processing report of `listings-feed-processing-report-schema-v2.json`.

use serde_json::{Value, json};

use super::Account;

const OPERATIONS: [&str; 4] = ["UPDATE", "PARTIAL_UPDATE", "PATCH", "DELETE"];
const PATCH_OPS: [&str; 4] = ["add", "replace", "merge", "delete"];
const REQUIREMENTS: [&str; 3] = ["LISTING", "LISTING_PRODUCT_ONLY", "LISTING_OFFER_ONLY"];
const AVAILABILITY: &str = "/attributes/fulfillment_availability";

/// One line of a processing report.
#[derive(Debug, Clone)]
pub(super) struct Issue {
    pub message_id: Option<i64>,
    pub sku: Option<String>,
    pub code: &'static str,
    pub severity: &'static str,
    pub message: String,
}

impl Issue {
    /// An error of the whole feed: no message, no SKU.
    pub fn fatal(message: &str) -> Issue {
        Issue { message_id: None, sku: None, code: "4000000", severity: "ERROR", message: message.into() }
    }

    fn error(message_id: Option<i64>, sku: Option<&str>, code: &'static str, message: String) -> Issue {
        Issue { message_id, sku: sku.map(str::to_string), code, severity: "ERROR", message }
    }
}

/// Why the document as a whole breaks the schema (the feed is then `FATAL`).
pub(super) fn check_envelope(doc: &Value) -> Result<&Vec<Value>, String> {
    let header = doc.get("header").filter(|h| h.is_object()).ok_or("The feed has no header object.")?;
    if !header.get("sellerId").is_some_and(Value::is_string) {
        return Err("The feed header has no sellerId.".into());
    }
    if header.get("version").and_then(Value::as_str) != Some("2.0") {
        return Err("The feed header's version must be \"2.0\".".into());
    }
    if header.get("issueLocale").is_some_and(|l| !l.is_string()) {
        return Err("The feed header's issueLocale must be a string.".into());
    }
    if let Some(report) = header.get("report") {
        let data = report.get("includedData").and_then(Value::as_array).filter(|d| !d.is_empty());
        if !report.is_object()
            || data.is_none()
            || report.get("apiVersion").and_then(Value::as_str) != Some("2021-08-01")
        {
            return Err("The feed header's report needs includedData and apiVersion 2021-08-01.".into());
        }
    }
    let messages = doc.get("messages").and_then(Value::as_array).ok_or("The feed has no messages array.")?;
    if messages.is_empty() || messages.len() > 25_000 {
        return Err("A feed holds 1 to 25,000 messages.".into());
    }
    Ok(messages)
}

fn non_empty_text(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str).is_some_and(|s| !s.is_empty())
}

/// Why one message breaks the schema, if it does.
pub(super) fn check_message(m: &Value) -> Option<String> {
    let Some(object) = m.as_object() else { return Some("A message must be an object.".into()) };
    if !m.get("messageId").and_then(Value::as_i64).is_some_and(|id| (1..=2_147_483_647).contains(&id)) {
        return Some("'messageId' must be an integer from 1 to 2147483647.".into());
    }
    if !non_empty_text(m.get("sku")) {
        return Some("'sku' is required but not supplied.".into());
    }
    let op = m.get("operationType").and_then(Value::as_str).filter(|op| OPERATIONS.contains(op));
    let Some(op) = op else {
        return Some("'operationType' must be UPDATE, PARTIAL_UPDATE, PATCH or DELETE.".into());
    };
    if object.contains_key("productType") && !non_empty_text(m.get("productType")) {
        return Some("'productType' must be a non-empty string.".into());
    }
    if m.get("requirements").is_some_and(|r| !r.as_str().is_some_and(|r| REQUIREMENTS.contains(&r))) {
        return Some("'requirements' is not a valid value.".into());
    }
    if m.get("attributes").is_some_and(|a| a.as_object().is_none_or(|a| a.is_empty())) {
        return Some("'attributes' must be an object with at least one attribute.".into());
    }
    if let Some(patches) = m.get("patches") {
        let patches = patches.as_array().filter(|p| !p.is_empty());
        let Some(patches) = patches else { return Some("'patches' must hold at least one patch.".into()) };
        for p in patches {
            let op_ok = p.get("op").and_then(Value::as_str).is_some_and(|op| PATCH_OPS.contains(&op));
            let value_ok =
                p.get("value").is_none_or(|v| v.as_array().is_some_and(|v| v.iter().all(Value::is_object)));
            if !p.is_object() || !op_ok || !p.get("path").is_some_and(Value::is_string) || !value_ok {
                return Some("Each patch needs an op (add, replace, merge, delete), a path, and a value array of objects.".into());
            }
        }
    }
    let has = |name: &str| object.contains_key(name);
    let fits = match op {
        "UPDATE" => has("productType") && has("attributes") && !has("patches"),
        "PARTIAL_UPDATE" => {
            has("productType") && has("attributes") && !has("patches") && !has("requirements")
        }
        "PATCH" => has("productType") && has("patches") && !has("requirements") && !has("attributes"),
        _ => !has("productType") && !has("patches") && !has("requirements") && !has("attributes"),
    };
    (!fits).then(|| format!("The members of the message do not fit operationType {op}."))
}

/// The `DEFAULT` availability a value sets: (quantity, lead time) when it has one.
fn default_availability(value: Option<&Value>) -> Option<(i64, Option<u32>)> {
    let entry = value?
        .as_array()?
        .iter()
        .find(|e| e.get("fulfillment_channel_code").and_then(Value::as_str) == Some("DEFAULT"))?;
    let quantity = entry.get("quantity")?.as_i64().filter(|q| *q >= 0)?;
    let lead =
        entry.get("lead_time_to_ship_max_days").and_then(Value::as_u64).and_then(|d| u32::try_from(d).ok());
    Some((quantity, lead))
}

/// Applies the document to the account's listings: the issues and how many messages were
/// processed, or why the whole feed is `FATAL`.
pub(super) fn apply(account: &mut Account, bytes: &[u8]) -> Result<(Vec<Issue>, usize), String> {
    let doc: Value =
        serde_json::from_slice(bytes).map_err(|_| "The feed document is not JSON.".to_string())?;
    let messages = check_envelope(&doc)?;
    if doc["header"]["sellerId"].as_str() != Some(account.seller.seller_id.as_str()) {
        return Err("The feed header's sellerId is not the seller of the feed.".into());
    }
    let mut issues = Vec::new();
    for m in messages {
        let id = m.get("messageId").and_then(Value::as_i64);
        let sku = m.get("sku").and_then(Value::as_str);
        if let Some(why) = check_message(m) {
            issues.push(Issue::error(id, sku, "4000001", why));
            continue;
        }
        let sku = sku.unwrap_or_default();
        let op = m["operationType"].as_str().unwrap_or_default();
        if op == "DELETE" {
            if account.listings.remove(sku).is_none() {
                issues.push(Issue::error(id, Some(sku), "4000002", format!("SKU '{sku}' has no listing.")));
            }
            continue;
        }
        let product_type = m["productType"].as_str().unwrap_or_default();
        let Some(listing) = account.listings.get_mut(sku) else {
            issues.push(Issue::error(
                id,
                Some(sku),
                "4000002",
                format!("SKU '{sku}' has no listing to change."),
            ));
            continue;
        };
        if listing.product_type != product_type {
            issues.push(Issue::error(
                id,
                Some(sku),
                "4000003",
                format!(
                    "The product type '{product_type}' is not the listing's product type '{}'.",
                    listing.product_type
                ),
            ));
            continue;
        }
        // (op, value) pairs on the availability; other attributes are not simulated.
        let changes: Vec<(&str, Option<&Value>)> = match op {
            "PATCH" => m["patches"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["path"].as_str() == Some(AVAILABILITY))
                .map(|p| (p["op"].as_str().unwrap_or_default(), p.get("value")))
                .collect(),
            "UPDATE" => vec![("replace", m["attributes"].get("fulfillment_availability"))],
            _ => vec![("merge", m["attributes"].get("fulfillment_availability"))],
        };
        for (patch, value) in changes {
            if listing.fba {
                issues.push(Issue::error(
                    id,
                    Some(sku),
                    "4000004",
                    format!("SKU '{sku}' is fulfilled by Amazon."),
                ));
                break;
            }
            if patch == "delete" {
                listing.quantity = 0;
                continue;
            }
            let Some((quantity, lead)) = default_availability(value) else {
                let message = "fulfillment_availability needs a DEFAULT entry with a quantity of 0 or more."
                    .to_string();
                issues.push(Issue::error(id, Some(sku), "4000001", message));
                break;
            };
            listing.quantity = quantity;
            if patch == "replace" {
                listing.handling_time = lead;
                listing.restock_date = None;
            } else if lead.is_some() {
                listing.handling_time = lead;
            }
        }
    }
    Ok((issues, messages.len()))
}

/// The processing report.
pub(super) fn report(seller_id: &str, feed_id: &str, issues: &[Issue], processed: usize) -> Value {
    let errors = issues.iter().filter(|i| i.severity == "ERROR").count();
    let warnings = issues.iter().filter(|i| i.severity == "WARNING").count();
    let mut invalid: Vec<i64> =
        issues.iter().filter(|i| i.severity == "ERROR").filter_map(|i| i.message_id).collect();
    invalid.sort_unstable();
    invalid.dedup();
    let lines: Vec<Value> = issues
        .iter()
        .map(|i| {
            let mut v = json!({"code": i.code, "severity": i.severity, "message": i.message});
            if let Some(id) = i.message_id {
                v["messageId"] = json!(id);
            }
            if let Some(sku) = &i.sku {
                v["sku"] = json!(sku);
            }
            v
        })
        .collect();
    json!({"header": {"sellerId": seller_id, "version": "2.0", "feedId": feed_id}, "issues": lines,
           "summary": {"errors": errors, "warnings": warnings, "messagesProcessed": processed,
                       "messagesAccepted": processed.saturating_sub(invalid.len()),
                       "messagesInvalid": invalid.len()}})
}
