//! Feeds API 2021-06-30 with `JSON_LISTINGS_FEED`: documents uploaded to a presigned URL on
//! this server (valid 5 minutes), feeds `IN_QUEUE` until a later read and then processed in
//! submission order, the document checked by the rules of `listings-feed-schema-v2.json`
//! (`feed_check`), quantities applied to the listings, and a gzipped processing report.

use std::collections::HashMap;
use std::io::Write as _;

use serde_json::{Value, json};

use super::feed_check::{self, Issue};
use super::wire::iso;
use super::wire::{bad_request, error};
use super::{Account, FeedEnd, State};
use crate::simulate::http::{Request, Response};

/// A presigned URL lives this long.
const URL_LIFE_SECS: i64 = 300;

pub(super) struct Document {
    pub content_type: String,
    pub bytes: Option<Vec<u8>>,
    pub gzip: bool,
    /// When its latest URL was handed out (simulator seconds).
    pub url_issued: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Status {
    InQueue,
    Done,
    Cancelled,
    Fatal,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::InQueue => "IN_QUEUE",
            Status::Done => "DONE",
            Status::Cancelled => "CANCELLED",
            Status::Fatal => "FATAL",
        }
    }
}

pub(super) struct Feed {
    pub id: String,
    pub feed_type: String,
    pub marketplaces: Vec<String>,
    pub input: String,
    pub created: i64,
    pub status: Status,
    /// `getFeed` reads still answered `IN_QUEUE`.
    pub reads_left: usize,
    pub ended: Option<i64>,
    pub result: Option<String>,
    pub report: Option<Value>,
}

/// An account's documents and feeds.
#[derive(Default)]
pub(super) struct Desk {
    pub documents: HashMap<String, Document>,
    pub feeds: Vec<Feed>,
    /// Reads a new feed stays `IN_QUEUE` for (`None`: one).
    pub hold: Option<usize>,
    next: u64,
}

impl Desk {
    fn next_document_id(&mut self, region: &str, kind: &str) -> String {
        self.next += 1;
        format!(
            "amzn1.tortuga.4.{region}.{kind}{:08x}-{:04}",
            self.next.wrapping_mul(0x9E37_79B9) as u32,
            self.next
        )
    }
}

fn url(origin: &str, kind: &str, id: &str, now: i64) -> String {
    let stamp = iso(now).replace(['-', ':'], "");
    let signature = xxhash_rust::xxh3::xxh3_64(format!("{id}{now}").as_bytes());
    format!(
        "{origin}/s3/{kind}/{id}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date={stamp}&X-Amz-Expires={URL_LIFE_SECS}&X-Amz-SignedHeaders=host&X-Amz-Signature={signature:016x}"
    )
}

/// `POST /feeds/2021-06-30/documents`.
pub(super) fn create_document(account: &mut Account, origin: &str, request: &Request, now: i64) -> Response {
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let Some(content_type) = body.get("contentType").and_then(Value::as_str) else {
        return bad_request("contentType is required.");
    };
    let id = account.feeds.next_document_id(&account.seller.region, "");
    let document =
        Document { content_type: content_type.to_string(), bytes: None, gzip: false, url_issued: now };
    account.feeds.documents.insert(id.clone(), document);
    Response::json(201, &json!({"feedDocumentId": id, "url": url(origin, "upload", &id, now)}))
}

/// `POST /feeds/2021-06-30/feeds`.
pub(super) fn create_feed(account: &mut Account, request: &Request, now: i64) -> Response {
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let feed_type = body.get("feedType").and_then(Value::as_str).unwrap_or_default();
    let input = body.get("inputFeedDocumentId").and_then(Value::as_str).unwrap_or_default();
    let marketplaces: Vec<String> = body
        .get("marketplaceIds")
        .and_then(Value::as_array)
        .map(|ids| ids.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    if feed_type != "JSON_LISTINGS_FEED" {
        return bad_request(&format!(
            "Invalid feedType: {feed_type}. This seller takes JSON_LISTINGS_FEED only."
        ));
    }
    if marketplaces.is_empty() {
        return bad_request("marketplaceIds is required.");
    }
    if let Some(id) = marketplaces.iter().find(|id| !account.seller.marketplaces.iter().any(|m| m.id == **id))
    {
        return bad_request(&format!("Invalid marketplaceId: {id}."));
    }
    match account.feeds.documents.get(input) {
        None => return bad_request(&format!("Invalid inputFeedDocumentId: {input}.")),
        Some(document) if document.bytes.is_none() => {
            return bad_request(&format!("The feed document {input} has no content: upload it first."));
        }
        Some(_) => {}
    }
    let id = (50_123_019_000u64 + account.feeds.feeds.len() as u64 * 7 + 1).to_string();
    let reads_left = account.feeds.hold.unwrap_or(1);
    account.feeds.feeds.push(Feed {
        id: id.clone(),
        feed_type: feed_type.to_string(),
        marketplaces,
        input: input.to_string(),
        created: now,
        status: Status::InQueue,
        reads_left,
        ended: None,
        result: None,
        report: None,
    });
    Response::json(202, &json!({"feedId": id}))
}

/// `GET /feeds/2021-06-30/feeds/{feedId}`: `IN_QUEUE` while it is held, then the feed and
/// every feed submitted before it are processed.
pub(super) fn get_feed(account: &mut Account, feed_id: &str, now: i64) -> Response {
    let Some(at) = account.feeds.feeds.iter().position(|f| f.id == feed_id) else {
        return error(404, "NotFound", &format!("Feed {feed_id} was not found."), "");
    };
    let feed = &mut account.feeds.feeds[at];
    if feed.status == Status::InQueue {
        if feed.reads_left > 0 {
            feed.reads_left -= 1;
        } else {
            process_through(account, at, now);
        }
    }
    let feed = &account.feeds.feeds[at];
    let mut body = json!({"feedId": feed.id, "feedType": feed.feed_type, "marketplaceIds": feed.marketplaces,
                          "createdTime": iso(feed.created), "processingStatus": feed.status.as_str()});
    if let Some(ended) = feed.ended {
        body["processingStartTime"] = json!(iso(ended.max(feed.created)));
        body["processingEndTime"] = json!(iso(ended));
    }
    if let Some(result) = &feed.result {
        body["resultFeedDocumentId"] = json!(result);
    }
    Response::json(200, &body)
}

/// Processes every feed up to `last` still in the queue, in submission order.
pub(super) fn process_through(account: &mut Account, last: usize, now: i64) {
    for at in 0..=last.min(account.feeds.feeds.len().saturating_sub(1)) {
        if account.feeds.feeds[at].status == Status::InQueue {
            process(account, at, now);
        }
    }
}

fn process(account: &mut Account, at: usize, now: i64) {
    let input = account.feeds.feeds[at].input.clone();
    let bytes = account.feeds.documents.get(&input).and_then(|d| d.bytes.clone()).unwrap_or_default();
    let outcome = feed_check::apply(account, &bytes);
    let (status, issues, processed) = match outcome {
        Ok((issues, processed)) => (Status::Done, issues, processed),
        Err(reason) => (Status::Fatal, vec![Issue::fatal(&reason)], 0),
    };
    finish(account, at, status, issues, processed, now);
}

fn finish(account: &mut Account, at: usize, status: Status, issues: Vec<Issue>, processed: usize, now: i64) {
    let report =
        feed_check::report(&account.seller.seller_id, &account.feeds.feeds[at].id, &issues, processed);
    let id = account.feeds.next_document_id(&account.seller.region, "report-");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let bytes = gz.write_all(report.to_string().as_bytes()).and_then(|()| gz.finish()).unwrap_or_default();
    let document =
        Document { content_type: "application/json".into(), bytes: Some(bytes), gzip: true, url_issued: now };
    account.feeds.documents.insert(id.clone(), document);
    let feed = &mut account.feeds.feeds[at];
    feed.status = status;
    feed.ended = Some(now);
    feed.result = Some(id);
    feed.report = Some(report);
}

/// Ends a feed as asked: `CANCELLED` (only while queued) or `FATAL`. Whether it did.
pub(super) fn end(account: &mut Account, feed_id: &str, how: FeedEnd, now: i64) -> bool {
    let Some(at) = account.feeds.feeds.iter().position(|f| f.id == feed_id) else { return false };
    match how {
        FeedEnd::Cancelled if account.feeds.feeds[at].status == Status::InQueue => {
            let feed = &mut account.feeds.feeds[at];
            feed.status = Status::Cancelled;
            feed.ended = Some(now);
            true
        }
        FeedEnd::Cancelled => false,
        FeedEnd::Fatal => {
            let issue = Issue::fatal("The feed could not be processed because of an internal error.");
            finish(account, at, Status::Fatal, vec![issue], 0, now);
            true
        }
    }
}

/// `GET /feeds/2021-06-30/documents/{feedDocumentId}`.
pub(super) fn get_document(account: &mut Account, origin: &str, id: &str, now: i64) -> Response {
    let Some(document) = account.feeds.documents.get_mut(id) else {
        return error(404, "NotFound", &format!("Feed document {id} was not found."), "");
    };
    document.url_issued = now;
    let mut body = json!({"feedDocumentId": id, "url": url(origin, "document", id, now)});
    if document.gzip {
        body["compressionAlgorithm"] = json!("GZIP");
    }
    Response::json(200, &body)
}

fn s3_error(status: u16, code: &str, message: &str) -> Response {
    Response {
        status,
        headers: vec![("Content-Type".into(), "application/xml".into())],
        body: format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code><Message>{message}</Message></Error>")
            .into_bytes(),
    }
}

/// `PUT /s3/upload/{id}` and `GET /s3/document/{id}`: no token, only the URL, which lives
/// five minutes from when it was handed out.
pub(super) fn transfer(state: &mut State, request: &Request, now: i64) -> Response {
    let (upload, id) = match (request.method.as_str(), request.path.strip_prefix("/s3/")) {
        ("PUT", Some(rest)) if rest.starts_with("upload/") => (true, &rest["upload/".len()..]),
        ("GET", Some(rest)) if rest.starts_with("document/") => (false, &rest["document/".len()..]),
        _ => {
            return s3_error(
                405,
                "MethodNotAllowed",
                "The specified method is not allowed against this resource.",
            );
        }
    };
    let found = state.accounts.values_mut().find_map(|a| a.feeds.documents.get_mut(id));
    let Some(document) = found else {
        return s3_error(404, "NoSuchKey", "The specified key does not exist.");
    };
    if request.param("X-Amz-Signature").is_none() {
        return s3_error(
            403,
            "AccessDenied",
            "Query-string authentication requires the Signature parameter.",
        );
    }
    if now > document.url_issued + URL_LIFE_SECS {
        return s3_error(403, "AccessDenied", "Request has expired");
    }
    if upload {
        // The URL is signed for the content type the document was created with.
        let sent = request.header("content-type").unwrap_or_default();
        if !sent.eq_ignore_ascii_case(&document.content_type) {
            return s3_error(
                403,
                "SignatureDoesNotMatch",
                "The request signature we calculated does not match the signature you provided.",
            );
        }
        document.bytes = Some(request.body.clone());
        let mut response = Response::empty(200);
        response
            .headers
            .push(("ETag".into(), format!("\"{:016x}\"", xxhash_rust::xxh3::xxh3_64(&request.body))));
        return response;
    }
    let content_type =
        if document.gzip { "application/octet-stream".to_string() } else { document.content_type.clone() };
    Response {
        status: 200,
        headers: vec![("Content-Type".into(), content_type)],
        body: document.bytes.clone().unwrap_or_default(),
    }
}
