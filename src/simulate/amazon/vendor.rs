//! Amazon's own models (`../shared/vendor/amazon/`, README there), loaded once, for any test
//! in the crate that holds what the Amazon client sends or what the simulator answers to
//! them: `amazon_vendor::problems(&exchanges)` is empty when every exchange follows them. It
//! checks what Amazon's Python validator in that folder checks (`validate_requests.py`), with
//! the five Swagger 2.0 models converted ([`crate::simulate::swagger2`]) for [`crate::simulate::openapi_check`]:
//! - an exchange's path is the simulator's: `/{region}/…` (`na`, `eu`, `fe`) is the Selling
//!   Partner API: the path matches one operation that is not deprecated, its parameters as
//!   the model declares them (types, enums, ranges, comma-separated arrays, date-times, no
//!   undeclared or repeated ones), the rules the models state only in prose ([`prose`],
//!   [`body_prose`]), a
//!   JSON body with no member the model does not name, and the answer against the
//!   operation's schema for its status;
//! - `/auth/o2/token` is Login with Amazon, which has no model: the form Amazon's own clients
//!   send, and the answer the annex gives (a token, or `{"error", "error_description"}`);
//! - anything else is a presigned document URL: a `PUT` is a feed document upload, checked
//!   against `listings-feed-schema-v2.json`; a `GET`'s JSON answer is a processing report
//!   (or, with `messages`, an uploaded document),
//!   checked against `listings-feed-processing-report-schema-v2.json` (unpacked first when it
//!   comes gzipped, as Amazon's `GZIP` reports do).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::Value;

use crate::simulate::openapi_check::{Description, Exchange, Readings};
use crate::simulate::swagger2;

/// The five API models, in the order Amazon's validator loads them.
const MODELS: [&str; 5] = [
    "orders_2026-01-01.json",
    "ordersV0.json",
    "sellers.json",
    "listingsItems_2021-08-01.json",
    "feeds_2021-06-30.json",
];
const FEED_SCHEMA: &str = "listings-feed-schema-v2.json";
const REPORT_SCHEMA: &str = "listings-feed-processing-report-schema-v2.json";
const REGIONS: [&str; 3] = ["na", "eu", "fe"];
const LWA_PATH: &str = "/auth/o2/token";
const LWA_FIELDS: [&str; 4] = ["client_id", "client_secret", "grant_type", "refresh_token"];

/// Where the models are (`shared/vendor/amazon`).
fn folder() -> PathBuf {
    crate::simulate::shared_files::shared("vendor/amazon")
}

/// A file of `shared/vendor/amazon/`.
pub fn file(name: &str) -> PathBuf {
    folder().join(name)
}

fn read_json(name: &str) -> Value {
    let path = folder().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One of Amazon's API models: the file as it is, and converted for the checker.
struct Model {
    name: &'static str,
    swagger: Value,
    description: Description,
}

impl Model {
    /// The operation `id` of the model as the file has it: (path template, method, object).
    fn operation(&self, id: &str) -> Option<(&str, &str, &Value)> {
        let paths = self.swagger.get("paths")?.as_object()?;
        paths.iter().find_map(|(template, item)| {
            let ops = item.as_object()?;
            ops.iter()
                .find(|(_, op)| op.get("operationId").and_then(Value::as_str) == Some(id))
                .map(|(method, op)| (template.as_str(), method.as_str(), op))
        })
    }
}

fn models() -> &'static [Model] {
    static LOADED: OnceLock<Vec<Model>> = OnceLock::new();
    LOADED.get_or_init(|| {
        let mut ranges = 0;
        let models = MODELS.map(|name| {
            let mut swagger = read_json(name);
            ranges += read_prose_ranges(&mut swagger);
            let mut converted = swagger2::to_openapi3(&swagger).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(swagger2::close_objects(&mut converted) > 0, "{name}: no object schema to close");
            let description = Description::parse_read(name, &converted.to_string(), &[], Readings::default())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            Model { name, swagger, description }
        });
        // A model that states its ranges as `maximum`/`minimum` makes the reading stale.
        assert!(ranges > 0, "no parameter states its range only in prose: read_prose_ranges is stale");
        models.into()
    })
}

/// The reading for integer parameters whose range is stated only in prose, as Amazon's
/// validator reads them: `maxResultsPerPage` "The value must be between 1 and 100." becomes
/// `minimum: 1, maximum: 100` (kept to any range the file also states). Returns how many.
fn read_prose_ranges(swagger: &mut Value) -> usize {
    let mut read = 0;
    let Some(paths) = swagger.get_mut("paths").and_then(Value::as_object_mut) else { return 0 };
    for item in paths.values_mut().filter_map(Value::as_object_mut) {
        for op in item.values_mut() {
            let list = if op.is_array() { Some(op) } else { op.get_mut("parameters") };
            for p in list.and_then(Value::as_array_mut).into_iter().flatten() {
                let integer = p.get("type").and_then(Value::as_str) == Some("integer");
                let Some((low, high)) = p.get("description").and_then(Value::as_str).and_then(prose_range)
                else {
                    continue;
                };
                if !integer {
                    continue;
                }
                let min = p.get("minimum").and_then(Value::as_i64).map_or(low, |m| m.max(low));
                let max = p.get("maximum").and_then(Value::as_i64).map_or(high, |m| m.min(high));
                p["minimum"] = Value::from(min);
                p["maximum"] = Value::from(max);
                read += 1;
            }
        }
    }
    read
}

/// `(1, 100)` from "… must be between 1 and 100 …".
fn prose_range(text: &str) -> Option<(i64, i64)> {
    let number = |s: &str| {
        let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<i64>().ok().map(|n| (n, digits.len()))
    };
    text.match_indices("between ").find_map(|(at, word)| {
        let rest = &text[at + word.len()..];
        let (low, used) = number(rest)?;
        let (high, _) = number(rest[used..].strip_prefix(" and ")?)?;
        Some((low, high))
    })
}

/// Everything in `exchanges` that Amazon's models (or, for the token endpoint, Amazon's
/// clients) do not allow, one line each; empty when all hold.
pub fn problems(exchanges: &[Exchange]) -> Vec<String> {
    exchanges.iter().flat_map(|e| check(e, true, true)).collect()
}

/// One exchange's problems, its request's side, its answer's side or both (for a request
/// sent on purpose to be refused, check the answer alone).
pub fn check(exchange: &Exchange, request: bool, answer: bool) -> Vec<String> {
    let line = exchange.line();
    if exchange.path == LWA_PATH {
        let mut found = Vec::new();
        if request {
            if exchange.method != "POST" {
                found.push(format!("{line}: the token endpoint takes POST"));
            }
            let content_type = header(&exchange.headers, "content-type");
            found.extend(lwa_problems(content_type, &String::from_utf8_lossy(&exchange.body)));
        }
        if answer {
            found.extend(lwa_answer_problems(exchange.status, &exchange.answer_body));
        }
        return found.into_iter().map(|p| format!("{line} (LWA): {p}")).collect();
    }
    let (first, rest) = exchange.path.strip_prefix('/').and_then(|p| p.split_once('/')).unwrap_or(("", ""));
    if REGIONS.contains(&first) {
        let mut sp_api = exchange.clone();
        sp_api.path = format!("/{rest}");
        return sp_api_problems(&sp_api, request, answer)
            .into_iter()
            .map(|p| format!("{line}: {p}"))
            .collect();
    }
    if operation(exchange).is_some() {
        return vec![format!("{line}: an SP-API path without a region segment (na, eu or fe)")];
    }
    document_problems(exchange, request, answer).into_iter().map(|p| format!("{line}: {p}")).collect()
}

/// The model and operation id an SP-API path (without its region) reaches.
fn operation(exchange: &Exchange) -> Option<(&'static Model, String)> {
    models().iter().find_map(|m| m.description.operation_id(exchange).map(|id| (m, id)))
}

/// An SP-API exchange, its path without the region segment.
fn sp_api_problems(exchange: &Exchange, request: bool, answer: bool) -> Vec<String> {
    let reached: Vec<(&Model, String)> =
        models().iter().filter_map(|m| m.description.operation_id(exchange).map(|id| (m, id))).collect();
    let (model, id) = match reached.as_slice() {
        [one] => one,
        [] => {
            return vec![format!(
                "{} {} matches no operation of Amazon's models",
                exchange.method, exchange.path
            )];
        }
        many => {
            let ids: Vec<String> = many.iter().map(|(m, id)| format!("{id} ({})", m.name)).collect();
            return vec![format!("{} matches {} operations: {}", exchange.path, ids.len(), ids.join(", "))];
        }
    };
    let strip = |p: String| p.split_once("): ").map_or(p.clone(), |(_, what)| format!("({id}) {what}"));
    let mut found: Vec<String> =
        model.description.check_parts(exchange, request, answer).into_iter().map(strip).collect();
    if request {
        let Some((_, _, op)) = model.operation(id) else { return found };
        if op.get("deprecated").and_then(Value::as_bool) == Some(true) {
            found.push(format!("({id}) {id} ({}) is deprecated in the model", model.name));
        }
        found.extend(query_problems(op, exchange).into_iter().map(|p| format!("({id}) {p}")));
        let given: BTreeSet<&str> = exchange.query.iter().map(|(k, _)| k.as_str()).collect();
        found.extend(prose(id, &given).into_iter().map(|p| format!("({id}) {p}")));
        if let Ok(body) = serde_json::from_slice::<Value>(&exchange.body) {
            found.extend(body_prose(id, &body).into_iter().map(|p| format!("({id}) {p}")));
        }
    }
    found
}

/// What the converted description does not see of a query: empty values (also one part of
/// a comma-separated list), and date-times as Amazon's validator reads ISO 8601
/// (`2026-11-25T10:15:00Z`, `…00.000+01:00`; RFC 3339 also allows a lower-case `t` and `z`).
fn query_problems(op: &Value, exchange: &Exchange) -> Vec<String> {
    let declared = op.get("parameters").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let mut found = Vec::new();
    for (name, value) in &exchange.query {
        let Some(p) = declared.iter().find(|p| p["in"] == "query" && p["name"] == name.as_str()) else {
            continue;
        };
        let array = p["type"] == "array";
        let parts: Vec<&str> = if array { value.split(',').collect() } else { vec![value.as_str()] };
        if parts.iter().any(|v| v.is_empty()) {
            found.push(format!("query parameter {name}: an empty value"));
            continue;
        }
        let format = if array { &p["items"]["format"] } else { &p["format"] };
        if format == "date-time" {
            for v in parts.iter().filter(|v| !is_date_time(v)) {
                found.push(format!("query parameter {name}={v:?} is not an ISO 8601 date-time"));
            }
        }
    }
    found
}

/// `\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`, Amazon's validator's
/// reading of ISO 8601.
fn is_date_time(text: &str) -> bool {
    fn shaped(text: &str, shape: &str) -> bool {
        text.len() == shape.len()
            && text
                .bytes()
                .zip(shape.bytes())
                .all(|(c, s)| if s == b'9' { c.is_ascii_digit() } else { c == s })
    }
    let Some((stamp, rest)) = text.split_at_checked(19) else { return false };
    if !shaped(stamp, "9999-99-99T99:99:99") {
        return false;
    }
    let zone = match rest.strip_prefix('.') {
        Some(fraction) => {
            let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                return false;
            }
            &fraction[digits..]
        }
        None => rest,
    };
    zone == "Z" || shaped(zone, "+99:99") || shaped(zone, "-99:99")
}

/// The rules the models state only in prose, quoted from them; `given` is the query's
/// parameter names.
fn prose(id: &str, given: &BTreeSet<&str>) -> Vec<&'static str> {
    let has = |name: &str| given.contains(name);
    let rules: &[(bool, &'static str)] = match id {
        "searchOrders" => &[
            // createdAfter: "You must provide exactly one of `createdAfter` and `lastUpdatedAfter`".
            (
                has("createdAfter") != has("lastUpdatedAfter"),
                "exactly one of createdAfter and lastUpdatedAfter (searchOrders description)",
            ),
            // "If `createdAfter` is provided, neither `lastUpdatedAfter` nor `lastUpdatedBefore` may be provided."
            (!(has("createdAfter") && has("lastUpdatedBefore")), "createdAfter excludes lastUpdatedBefore"),
            // "If `lastUpdatedAfter` is provided, neither `createdAfter` nor `createdBefore` may be provided."
            (!(has("lastUpdatedAfter") && has("createdBefore")), "lastUpdatedAfter excludes createdBefore"),
        ],
        "searchListingsItems" => &[
            // identifiers: "This is required when you specify `identifiersType`"; identifiersType:
            // "This is required when `identifiers` is provided."
            (
                has("identifiers") == has("identifiersType"),
                "identifiers and identifiersType go together (searchListingsItems description)",
            ),
            // "You cannot use 'identifiers' if you specify `variationParentSku` or `packageHierarchySku`."
            (
                !(has("identifiers") && (has("variationParentSku") || has("packageHierarchySku"))),
                "identifiers excludes variationParentSku and packageHierarchySku",
            ),
            // variationParentSku: "You cannot use `variationParentSku` if you include … `packageHierarchySku`"
            // (a rule Amazon's Python validator does not check).
            (
                !(has("variationParentSku") && has("packageHierarchySku")),
                "variationParentSku excludes packageHierarchySku",
            ),
        ],
        _ => &[],
    };
    rules.iter().filter(|(holds, _)| !holds).map(|(_, why)| *why).collect()
}

/// The rules a model states only in a body member's prose, quoted from it (Amazon's Python
/// validator checks neither; Amazon refuses both, and the simulator does too).
fn body_prose(id: &str, body: &Value) -> Vec<&'static str> {
    let mut found = Vec::new();
    if id == "confirmShipment" {
        let package = &body["packageDetail"];
        // PackageDetail.carrierName: "Required when `carrierCode` is \"Other\""
        let named = package["carrierName"].as_str().is_some_and(|n| !n.trim().is_empty());
        if package["carrierCode"] == "Other" && !named {
            found.push(
                "carrierName is required when carrierCode is Other (PackageDetail.carrierName description)",
            );
        }
        // PackageReferenceId: "Only positive numeric values are supported."
        let reference = package["packageReferenceId"].as_str();
        let positive = |r: &str| r.bytes().all(|b| b.is_ascii_digit()) && r.bytes().any(|b| b != b'0');
        if reference.is_some_and(|r| !positive(r)) {
            found.push("packageReferenceId must be a positive number (PackageReferenceId description)");
        }
    }
    found
}

/// An answer `body` of operation `operation_id` (the one that is not deprecated, as the
/// annex's `amazon-response=OP status=N` blocks name it) against the model's schema for
/// `status`.
pub fn response_problems(operation_id: &str, status: u16, body: &Value) -> Vec<String> {
    let found = models().iter().find_map(|m| {
        let (template, method, op) = m.operation(operation_id)?;
        let deprecated = op.get("deprecated").and_then(Value::as_bool) == Some(true);
        (!deprecated).then_some((m, template, method))
    });
    let Some((model, template, method)) = found else { return vec![format!("no operation {operation_id}")] };
    // The template's own path: each `{variable}` a value no literal segment has.
    let path: String =
        template.split('/').map(|s| if s.starts_with('{') { "x0" } else { s }).collect::<Vec<_>>().join("/");
    let answer = if body.is_null() { Vec::new() } else { body.to_string().into_bytes() };
    let exchange = Exchange {
        method: method.to_uppercase(),
        path,
        query: Vec::new(),
        headers: Vec::new(),
        body: Vec::new(),
        status,
        answer_headers: vec![("Content-Type".into(), "application/json".into())],
        answer_body: answer,
    };
    let line = exchange.line();
    let found = model.description.check_parts(&exchange, false, true);
    found.into_iter().map(|p| p.replacen(&line, &format!("{operation_id} {status} answer"), 1)).collect()
}

/// A validator for one of the listings-feed JSON Schemas (draft 7; formats unasserted, as
/// Amazon's validator reads them).
fn feed_validator(name: &'static str) -> &'static jsonschema::Validator {
    static FEED: OnceLock<jsonschema::Validator> = OnceLock::new();
    static REPORT: OnceLock<jsonschema::Validator> = OnceLock::new();
    let cell = if name == FEED_SCHEMA { &FEED } else { &REPORT };
    cell.get_or_init(|| {
        jsonschema::draft7::options()
            .should_validate_formats(false)
            .build(&read_json(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    })
}

fn schema_problems(name: &'static str, what: &str, doc: &Value) -> Vec<String> {
    let errors = feed_validator(name).iter_errors(doc).take(5);
    errors
        .map(|e| {
            let at = e.instance_path().as_str().to_string();
            format!("{what}: {e} at {}", if at.is_empty() { "(root)" } else { &at })
        })
        .collect()
}

/// A `JSON_LISTINGS_FEED` document against `listings-feed-schema-v2.json`.
pub fn feed_document_problems(doc: &Value) -> Vec<String> {
    schema_problems(FEED_SCHEMA, "feed document", doc)
}

/// A feed's processing report against `listings-feed-processing-report-schema-v2.json`.
pub fn feed_report_problems(doc: &Value) -> Vec<String> {
    schema_problems(REPORT_SCHEMA, "processing report", doc)
}

/// The refresh-token exchange's form as Amazon's official clients send it (`LwaRequest.py`):
/// `application/x-www-form-urlencoded`, exactly the four fields once each, `grant_type`
/// `refresh_token`.
pub fn lwa_problems(content_type: Option<&str>, form: &str) -> Vec<String> {
    let mut found = Vec::new();
    if media_type(content_type) != "application/x-www-form-urlencoded" {
        found.push(format!("Content-Type must be application/x-www-form-urlencoded (got {content_type:?})"));
    }
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(form.as_bytes()).into_owned().collect();
    let names: BTreeSet<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
    if names.len() != pairs.len() {
        found.push("a form field given twice".into());
    }
    if names != BTreeSet::from(LWA_FIELDS) {
        found.push(format!("form fields {names:?} are not {LWA_FIELDS:?}"));
    }
    if !pairs.iter().any(|(k, v)| k == "grant_type" && v == "refresh_token") {
        found.push("grant_type must be refresh_token".into());
    }
    found
}

/// The token endpoint's answer as the annex gives it: 200 a bearer token, a 4xx (but 429)
/// `{"error", "error_description"}`; a 429 or 5xx is not read.
fn lwa_answer_problems(status: u16, body: &[u8]) -> Vec<String> {
    let value: Option<Value> = serde_json::from_slice(body).ok();
    let value = value.as_ref();
    let text = |k: &str| value.and_then(|v| v.get(k)).is_some_and(Value::is_string);
    match status {
        200 => {
            let bearer = value.and_then(|v| v.get("token_type")) == Some(&Value::from("bearer"));
            let expires = value.and_then(|v| v.get("expires_in")).is_some_and(|n| n.is_u64() || n.is_i64());
            if text("access_token") && bearer && expires {
                vec![]
            } else {
                vec!["a 200 answer needs access_token, token_type bearer and an integer expires_in".into()]
            }
        }
        429 | 500..=599 => vec![],
        400..=499
            if text("error")
                && value.and_then(|v| v.get("error_description")).is_none_or(Value::is_string) =>
        {
            vec![]
        }
        400..=499 => vec![format!("a {status} answer needs {{\"error\", \"error_description\"}}")],
        _ => vec![format!("{status} is not an answer of the token endpoint")],
    }
}

/// A presigned document URL: a `PUT` uploads a feed document, a `GET`'s 200 gives a
/// processing report (or the document uploaded there).
fn document_problems(exchange: &Exchange, request: bool, answer: bool) -> Vec<String> {
    match exchange.method.as_str() {
        "PUT" if request => {
            let content_type = header(&exchange.headers, "content-type");
            let mut found = Vec::new();
            if media_type(content_type) != "application/json" {
                found.push(format!(
                    "a feed document upload needs Content-Type application/json (got {content_type:?})"
                ));
            }
            match serde_json::from_slice::<Value>(&exchange.body) {
                Ok(doc) => found.extend(feed_document_problems(&doc)),
                Err(e) => found.push(format!("the feed document is not JSON: {e}")),
            }
            found
        }
        "GET" if answer && exchange.status == 200 => {
            // A processing report comes gzipped when its document says `GZIP`.
            let mut body = exchange.answer_body.clone();
            if body.starts_with(&[0x1f, 0x8b]) {
                use std::io::Read;
                let mut unpacked = Vec::new();
                if let Err(e) = flate2::read::GzDecoder::new(body.as_slice()).read_to_end(&mut unpacked) {
                    return vec![format!("the downloaded document is not valid gzip: {e}")];
                }
                body = unpacked;
            }
            // The same URLs may give back an uploaded document, which has messages.
            match serde_json::from_slice::<Value>(&body) {
                Ok(doc) if doc.get("messages").is_some() => feed_document_problems(&doc),
                Ok(doc) => feed_report_problems(&doc),
                Err(e) => vec![format!("the downloaded document is not JSON: {e}")],
            }
        }
        "PUT" | "GET" => vec![],
        other => vec![format!("{other} on a presigned document URL")],
    }
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

/// `application/json; charset=UTF-8` → `application/json`.
fn media_type(header: Option<&str>) -> String {
    header.unwrap_or_default().split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
}

/// One line of `validate_requests.py --exchanges`: the SP-API path without its region, the
/// query as it was sent.
pub fn jsonl(e: &Exchange) -> String {
    let query = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(&e.query).finish();
    let content_type = e.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("content-type")).map(|(_, v)| v);
    let answer: Option<Value> = serde_json::from_slice(&e.answer_body).ok();
    serde_json::json!({"method": e.method, "path": &e.path[3..], "query": query, "content_type": content_type,
           "body": String::from_utf8_lossy(&e.body), "status": (e.status != 0).then_some(e.status), "answer": answer})
    .to_string()
}

/// Amazon's own validator (`validate_requests.py --exchanges`) on the SP-API exchanges among
/// `exchanges`: `None` when it cannot run here, else what it printed when it found a problem.
pub fn python_problems(exchanges: &[Exchange]) -> Option<Result<(), String>> {
    if !crate::simulate::shared_files::python_validator_here() {
        return None;
    }
    let regional: Vec<String> = exchanges
        .iter()
        .filter(|e| ["/na/", "/eu/", "/fe/"].iter().any(|r| e.path.starts_with(r)))
        .map(jsonl)
        .collect();
    let dir = tempfile::tempdir().ok()?;
    let file = dir.path().join("exchanges.jsonl");
    std::fs::write(&file, regional.join("\n")).ok()?;
    let output = std::process::Command::new("python3")
        .arg(folder().join("validate_requests.py"))
        .arg("--exchanges")
        .arg(&file)
        .output()
        .ok()?;
    if output.status.success() {
        Some(Ok(()))
    } else {
        Some(Err(format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )))
    }
}
