//! Stock (annex §5, *Stock*): the listings looked up 20 SKUs a request (a SKU with a comma
//! alone), FBA listings and unchanged levels left out, the rest in one `JSON_LISTINGS_FEED`
//! document (`merge` of the `DEFAULT` fulfillment availability), uploaded to Amazon's
//! presigned URL and submitted; the feed's id is the receipt the engine keeps, and a later
//! pass reads the feed's processing report for the levels Amazon refused.

use std::collections::HashMap;
use std::io::Read;

use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Client;
use super::pacing::Operation;
use super::transport::{FEED_CONTENT_TYPE, encode, segment};
use crate::platforms::PlatformError;
use crate::platforms::store::{Receipt, StockSent};

/// SKUs one lookup asks for.
const PER_LOOKUP: usize = 20;

/// Messages one feed holds at most (Amazon: 25,000 and 10 MiB).
pub const PER_FEED: usize = 25_000;
const MAX_FEED_BYTES: usize = 10 << 20;

/// A listing as a lookup shows it.
#[derive(Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
struct Listing {
    sku: String,
    #[serde(default)]
    summaries: Vec<Summary>,
    #[serde(default)]
    fulfillment_availability: Vec<Availability>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
struct Summary {
    marketplace_id: String,
    #[serde(default)]
    product_type: Option<String>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
struct Availability {
    fulfillment_channel_code: String,
    #[serde(default)]
    quantity: Option<i64>,
}

/// Sends the levels Amazon's MFN listings should show.
pub async fn set(client: &Client, levels: &[(String, i64)]) -> Result<StockSent, PlatformError> {
    let mut sent = StockSent::default();
    let listings = lookup(client, levels, &mut sent.requests).await?;
    let mut messages = Vec::new();
    for (sku, level) in levels {
        let level = (*level).max(0);
        let Some(listing) = listings.get(sku) else {
            sent.skipped.push((sku.clone(), "the seller has no listing with that SKU".to_string()));
            continue;
        };
        let default =
            listing.fulfillment_availability.iter().find(|a| a.fulfillment_channel_code == "DEFAULT");
        match default {
            // Fulfilled by Amazon: not ours to set, and it stands as it is.
            None if !listing.fulfillment_availability.is_empty() => continue,
            Some(a) if a.quantity == Some(level) => {
                // Amazon shows it already.
                continue;
            }
            _ => {}
        }
        let product_type = listing
            .summaries
            .iter()
            .find(|s| client.seller.marketplace_ids.contains(&s.marketplace_id))
            .and_then(|s| s.product_type.clone())
            .ok_or_else(|| {
                PlatformError::BadData(format!(
                    "Amazon's listing {sku} names no product type in the adapter's marketplaces."
                ))
            })?;
        messages.push((sku.clone(), product_type, level));
    }
    let taken = messages.len();
    let mut start = 0;
    while start < messages.len() {
        let (document, count) = document(client, &messages[start..]);
        let feed = submit(client, document, &mut sent.requests).await?;
        sent.receipts.push(feed);
        start += count;
    }
    sent.accepted = taken;
    Ok(sent)
}

/// The listings of the levels' SKUs, by SKU.
async fn lookup(
    client: &Client,
    levels: &[(String, i64)],
    requests: &mut usize,
) -> Result<HashMap<String, Listing>, PlatformError> {
    let seller = &client.seller;
    let (alone, batched): (Vec<&str>, Vec<&str>) =
        levels.iter().map(|(sku, _)| sku.as_str()).partition(|sku| sku.contains(','));
    let mut found = HashMap::new();
    for chunk in batched.chunks(PER_LOOKUP) {
        let identifiers: Vec<String> = chunk.iter().map(|s| encode(s)).collect();
        let target = format!(
            "/listings/2021-08-01/items/{}?marketplaceIds={}&identifiers={}&identifiersType=SKU&includedData=summaries,fulfillmentAvailability&pageSize={PER_LOOKUP}",
            segment(&seller.seller_id),
            seller.marketplaces(),
            identifiers.join(","),
        );
        *requests += 1;
        let answer = seller.call(Operation::SearchListingsItems, Method::GET, &target, None).await?;
        if answer.status != StatusCode::OK {
            return Err(client.seller.refusal(&answer, "the listings lookup"));
        }
        #[derive(Deserialize)]
        struct Found {
            #[serde(default)]
            items: Vec<Listing>,
        }
        let page: Found = answer.json(Operation::SearchListingsItems)?;
        for listing in page.items {
            if chunk.contains(&listing.sku.as_str()) {
                found.insert(listing.sku.clone(), listing);
            }
        }
    }
    for sku in alone {
        let target = format!(
            "/listings/2021-08-01/items/{}/{}?marketplaceIds={}&includedData=summaries,fulfillmentAvailability",
            segment(&seller.seller_id),
            segment(sku),
            seller.marketplaces(),
        );
        *requests += 1;
        let answer = seller.call(Operation::GetListingsItem, Method::GET, &target, None).await?;
        match answer.status {
            StatusCode::OK => {
                let listing: Listing = answer.json(Operation::GetListingsItem)?;
                if listing.sku == sku {
                    found.insert(listing.sku.clone(), listing);
                }
            }
            StatusCode::NOT_FOUND => {}
            _ => return Err(client.seller.refusal(&answer, "the listings lookup")),
        }
    }
    Ok(found)
}

/// One feed document of the first messages that fit, and how many it holds.
fn document(client: &Client, messages: &[(String, String, i64)]) -> (Vec<u8>, usize) {
    let mut count = messages.len().min(PER_FEED);
    loop {
        let body: Vec<Value> = messages[..count]
            .iter()
            .enumerate()
            .map(|(n, (sku, product_type, level))| {
                json!({
                    "messageId": n + 1,
                    "sku": sku,
                    "operationType": "PATCH",
                    "productType": product_type,
                    "patches": [{"op": "merge", "path": "/attributes/fulfillment_availability",
                                 "value": [{"fulfillment_channel_code": "DEFAULT", "quantity": level}]}],
                })
            })
            .collect();
        let doc = json!({
            "header": {"sellerId": client.seller.seller_id, "version": "2.0", "issueLocale": "en_US"},
            "messages": body,
        });
        let bytes = doc.to_string().into_bytes();
        if bytes.len() <= MAX_FEED_BYTES || count <= 1 {
            return (bytes, count);
        }
        count /= 2;
    }
}

/// Uploads a feed document and submits it; the feed's id.
async fn submit(client: &Client, document: Vec<u8>, requests: &mut usize) -> Result<String, PlatformError> {
    let seller = &client.seller;
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Created {
        feed_document_id: String,
        url: String,
    }
    *requests += 1;
    let body = json!({"contentType": FEED_CONTENT_TYPE});
    let answer = seller
        .call(Operation::CreateFeedDocument, Method::POST, "/feeds/2021-06-30/documents", Some(&body))
        .await?;
    if !answer.status.is_success() {
        return Err(client.seller.refusal(&answer, "the feed document"));
    }
    let created: Created = answer.json(Operation::CreateFeedDocument)?;
    *requests += 1;
    let (status, _) = seller.document(Method::PUT, &created.url, Some(document), "the feed upload").await?;
    if status != StatusCode::OK {
        return Err(PlatformError::unreachable(format!(
            "Amazon's document store did not take the stock feed (HTTP {}).",
            crate::platforms::http::status_text(status)
        )));
    }
    *requests += 1;
    let body = json!({
        "feedType": "JSON_LISTINGS_FEED",
        "marketplaceIds": seller.marketplace_ids,
        "inputFeedDocumentId": created.feed_document_id,
    });
    let answer =
        seller.call(Operation::CreateFeed, Method::POST, "/feeds/2021-06-30/feeds", Some(&body)).await?;
    if !answer.status.is_success() {
        return Err(client.seller.refusal(&answer, "the stock feed"));
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Submitted {
        feed_id: String,
    }
    Ok(answer.json::<Submitted>(Operation::CreateFeed)?.feed_id)
}

/// What became of each feed.
pub async fn receipts(client: &Client, feeds: &[String]) -> Result<Vec<(String, Receipt)>, PlatformError> {
    let mut answers = Vec::with_capacity(feeds.len());
    for feed in feeds {
        answers.push((feed.clone(), receipt(client, feed).await?));
    }
    Ok(answers)
}

async fn receipt(client: &Client, feed: &str) -> Result<Receipt, PlatformError> {
    let seller = &client.seller;
    let answer = seller
        .call(Operation::GetFeed, Method::GET, &format!("/feeds/2021-06-30/feeds/{}", segment(feed)), None)
        .await?;
    if answer.status == StatusCode::NOT_FOUND {
        return Ok(Receipt::Failed(format!("Amazon has no stock feed {feed}.")));
    }
    if answer.status != StatusCode::OK {
        return Err(client.seller.refusal(&answer, "the stock feed's status"));
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Feed {
        processing_status: String,
        #[serde(default)]
        result_feed_document_id: Option<String>,
    }
    let status: Feed = answer.json(Operation::GetFeed)?;
    match status.processing_status.as_str() {
        "IN_QUEUE" | "IN_PROGRESS" => return Ok(Receipt::Pending),
        "DONE" => {}
        other => return Ok(Receipt::Failed(format!("Amazon did not process stock feed {feed} ({other})."))),
    }
    let Some(report) = status.result_feed_document_id else {
        return Err(PlatformError::BadData(format!("Amazon's stock feed {feed} is DONE without a report.")));
    };
    let answer = seller
        .call(
            Operation::GetFeedDocument,
            Method::GET,
            &format!("/feeds/2021-06-30/documents/{}", segment(&report)),
            None,
        )
        .await?;
    if answer.status != StatusCode::OK {
        return Err(client.seller.refusal(&answer, "the stock feed's report"));
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Document {
        url: String,
        #[serde(default)]
        compression_algorithm: Option<String>,
    }
    let document: Document = answer.json(Operation::GetFeedDocument)?;
    let (status, bytes) =
        seller.document(Method::GET, &document.url, None, "the stock feed's report").await?;
    if status != StatusCode::OK {
        return Err(PlatformError::unreachable(format!(
            "Amazon's document store did not give the report of stock feed {feed} (HTTP {}).",
            crate::platforms::http::status_text(status)
        )));
    }
    let bytes = if document.compression_algorithm.as_deref() == Some("GZIP") {
        gunzip(&bytes, seller.max_body())?
    } else {
        bytes
    };
    let report: Value = serde_json::from_slice(&bytes).map_err(|_| {
        PlatformError::BadData(format!("The report of Amazon's stock feed {feed} is not JSON."))
    })?;
    Ok(refusals(feed, &report, &|text| client.seller.quote(text)))
}

/// The levels a processing report refuses (issues of severity `ERROR`).
/// `quote` keeps the account's credentials out of Amazon's messages.
fn refusals(feed: &str, report: &Value, quote: &dyn Fn(&str) -> String) -> Receipt {
    let processed = report.pointer("/summary/messagesProcessed").and_then(Value::as_u64).unwrap_or(0);
    let issues = report.get("issues").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let errors: Vec<&Value> =
        issues.iter().filter(|i| i.get("severity").and_then(Value::as_str) == Some("ERROR")).collect();
    if errors.is_empty() {
        return Receipt::Applied;
    }
    let text = |i: &Value, key: &str| i.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    if let Some(whole) = errors.iter().find(|i| i.get("sku").and_then(Value::as_str).is_none()) {
        return Receipt::Failed(format!(
            "Amazon refused every stock level of feed {feed}: {}",
            quote(&text(whole, "message"))
        ));
    }
    let mut levels: Vec<(String, String)> = Vec::new();
    let mut first = None;
    for issue in errors {
        let sku = text(issue, "sku");
        if levels.iter().any(|(s, _)| *s == sku) {
            continue;
        }
        let message = quote(&text(issue, "message"));
        first.get_or_insert_with(|| format!("SKU {sku}: {message}"));
        levels.push((sku.clone(), format!("Amazon refused the stock level of SKU {sku}: {message}")));
    }
    let first = first.unwrap_or_default();
    let message = format!(
        "Amazon refused {} of {} stock levels of feed {feed}; first: {first}",
        levels.len(),
        processed.max(levels.len() as u64)
    );
    Receipt::Refused { message, levels }
}

/// A gzipped report, unpacked up to `limit` bytes.
fn gunzip(bytes: &[u8], limit: usize) -> Result<Vec<u8>, PlatformError> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|_| PlatformError::BadData("Amazon's feed report is not gzip.".into()))?;
    if out.len() > limit {
        return Err(crate::platforms::http::too_large("Amazon", "a feed report", limit));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_names_each_refused_level_once_and_an_error_without_sku_fails_the_feed() {
        let report = json!({"header": {}, "issues": [
            {"messageId": 1, "sku": "MUG-BLU", "code": "4000001", "message": "The product type is wrong", "severity": "ERROR"},
            {"messageId": 1, "sku": "MUG-BLU", "code": "4000002", "message": "again", "severity": "ERROR"},
            {"messageId": 2, "sku": "TEA", "code": "1", "message": "just a warning", "severity": "WARNING"}],
            "summary": {"messagesProcessed": 3}});
        let Receipt::Refused { message, levels } = refusals("F1", &report, &str::to_string) else { panic!() };
        assert_eq!(levels.len(), 1);
        assert_eq!(
            message,
            "Amazon refused 1 of 3 stock levels of feed F1; first: SKU MUG-BLU: The product type is wrong"
        );
        assert_eq!(
            refusals("F1", &json!({"issues": [], "summary": {"messagesProcessed": 1}}), &str::to_string),
            Receipt::Applied
        );
        let whole = json!({"issues": [{"code": "9", "message": "Bad header", "severity": "ERROR"}]});
        assert!(
            matches!(refusals("F2", &whole, &str::to_string), Receipt::Failed(m) if m.contains("Bad header"))
        );
    }
}
