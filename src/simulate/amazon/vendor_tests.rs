//! The annex's examples held to Amazon's models ([`super::vendor`]): every example
//! block of `spec/platforms/amazon.md` §7 validates, each way of breaking the models is
//! refused with its reason, and on the same exchanges the verdict is Amazon's Python
//! validator's (`shared/vendor/amazon/validate_requests.py`) wherever Python can run it.

use serde_json::{Value, json};

use super::vendor::{
    check, feed_document_problems, feed_report_problems, lwa_problems, problems, response_problems,
};
use crate::simulate::openapi_check::Exchange;

use crate::simulate::shared_files::shared;

/// The annex's fenced blocks: (info words, text).
fn annex_blocks() -> Vec<(Vec<String>, String)> {
    let annex = shared("spec/platforms/amazon.md");
    let text = std::fs::read_to_string(&annex).unwrap_or_else(|e| panic!("{}: {e}", annex.display()));
    let mut blocks = Vec::new();
    let mut open: Option<(Vec<String>, String)> = None;
    for line in text.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) if !info.trim().is_empty() => {
                open = Some((info.split_whitespace().map(str::to_string).collect(), String::new()))
            }
            (Some(_), Some(rest)) if rest.trim().is_empty() => blocks.extend(open.take()),
            (Some((_, body)), _) => {
                body.push_str(line);
                body.push('\n');
            }
            _ => {}
        }
    }
    blocks
}

/// An `http` block: "METHOD /path?query", header lines, a blank line, a body; the path
/// under the `na` region, as the simulator sees it.
fn request(block: &str, region: bool) -> Exchange {
    let (head, body) = block.split_once("\n\n").unwrap_or((block, ""));
    let mut lines = head.trim_matches('\n').lines();
    let (method, target) = lines.next().and_then(|l| l.split_once(' ')).expect("a request line");
    let headers = lines
        .filter_map(|h| h.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    sent(method, target.trim(), headers, body.trim(), region)
}

fn sent(method: &str, target: &str, headers: Vec<(String, String)>, body: &str, region: bool) -> Exchange {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    Exchange {
        method: method.into(),
        path: if region { format!("/na{path}") } else { path.to_string() },
        query: url::form_urlencoded::parse(query.as_bytes()).into_owned().collect(),
        headers,
        body: body.as_bytes().to_vec(),
        status: 0,
        answer_headers: Vec::new(),
        answer_body: Vec::new(),
    }
}

fn json_header() -> Vec<(String, String)> {
    vec![("Content-Type".into(), "application/json".into())]
}

#[test]
fn every_example_of_the_annex_follows_amazons_models() {
    let mut checked = 0;
    for (info, text) in annex_blocks() {
        let tag = info.get(1).map_or("", String::as_str);
        let parse =
            || serde_json::from_str::<Value>(&text).unwrap_or_else(|e| panic!("{info:?}: not JSON: {e}"));
        let found = match (info[0].as_str(), tag) {
            ("http", "amazon-request") => check(&request(&text, true), true, false),
            ("http", "lwa-request") => check(&request(&text, false), true, false),
            ("json", "amazon-feed-document") => feed_document_problems(&parse()),
            ("json", "amazon-feed-report") => feed_report_problems(&parse()),
            ("json", "lwa-response") => {
                let mut e = sent("POST", "/auth/o2/token", Vec::new(), "", false);
                (e.status, e.answer_body) = (200, text.clone().into_bytes());
                check(&e, false, true)
            }
            ("json", tag) if tag.starts_with("amazon-response=") => {
                let op = &tag["amazon-response=".len()..];
                let status = info.iter().find_map(|w| w.strip_prefix("status=")).and_then(|s| s.parse().ok());
                response_problems(op, status.expect("a status"), &parse())
            }
            _ => continue,
        };
        assert!(found.is_empty(), "{info:?}:\n{}", found.join("\n"));
        checked += 1;
    }
    // 13 requests, 11 answers, a document, a report, the token request and its answer.
    assert!(checked >= 28, "the annex's examples were not all found ({checked})");
}

const PULL: &str = "/na/orders/2026-01-01/orders";
const PULL_QUERY: &str = "lastUpdatedAfter=2026-11-25T10:15:00Z&marketplaceIds=ATVPDKIKX0DER&fulfilledBy=MERCHANT&maxResultsPerPage=100";
const CONFIRM: &str = "/na/orders/v0/orders/113-4567890-1234567/shipmentConfirmation";

fn confirmation(extra: Value) -> String {
    let mut body = json!({"marketplaceId": "ATVPDKIKX0DER",
        "packageDetail": {"packageReferenceId": "57", "carrierCode": "UPS", "trackingNumber": "1Z999AA10123456784",
                          "shipDate": "2026-11-26T15:04:05.000Z",
                          "orderItems": [{"orderItemId": "12345678901234", "quantity": 2}]}});
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    body.to_string()
}

/// Requests that break the models, each with the reason it must be refused for.
fn wrong_requests() -> Vec<(Exchange, &'static str)> {
    let pull = |query: &str| sent("GET", &format!("{PULL}?{query}"), Vec::new(), "", false);
    let listings = |query: &str| {
        sent("GET", &format!("/eu/listings/2021-08-01/items/A2EXAMPLE12345?{query}"), Vec::new(), "", false)
    };
    vec![
        (listings("includedData=summaries"), "required query parameter marketplaceIds is missing"),
        (pull(&PULL_QUERY.replace("=100", "=101")), "maxResultsPerPage=101"),
        (pull(&PULL_QUERY.replace("=100", "=0")), "maxResultsPerPage=0"),
        (
            pull(&format!("{PULL_QUERY}&createdAfter=2026-11-20T00:00:00Z")),
            "exactly one of createdAfter and lastUpdatedAfter",
        ),
        (pull("marketplaceIds=ATVPDKIKX0DER"), "exactly one of createdAfter and lastUpdatedAfter"),
        (
            pull("createdAfter=2026-11-20T00:00:00Z&lastUpdatedBefore=2026-11-21T00:00:00Z&marketplaceIds=A"),
            "createdAfter excludes lastUpdatedBefore",
        ),
        (pull(&format!("{PULL_QUERY}&sellerOrderId=7")), "query parameter sellerOrderId is not declared"),
        (pull(&format!("{PULL_QUERY}&fulfilledBy=AMAZON")), "sent more than once"),
        (pull(&PULL_QUERY.replace("MERCHANT", "SELLER")), "fulfilledBy=SELLER"),
        (pull(&PULL_QUERY.replace("2026-11-25T10:15:00Z", "2026-11-25")), "not an ISO 8601 date-time"),
        (pull(&format!("{PULL_QUERY}&paginationToken=")), "paginationToken: an empty value"),
        (pull(&format!("{PULL_QUERY}&includedData=BUYER,,RECIPIENT")), "includedData: an empty value"),
        (
            sent(
                "GET",
                "/na/orders/v0/orders?MarketplaceIds=ATVPDKIKX0DER&CreatedAfter=2026-11-25T10:15:00Z",
                vec![],
                "",
                false,
            ),
            "getOrders (ordersV0.json) is deprecated in the model",
        ),
        (
            sent("POST", CONFIRM, json_header(), &confirmation(json!({"notifyBuyer": true})), false),
            "notifyBuyer",
        ),
        (
            sent("POST", CONFIRM, json_header(), &confirmation(json!({"marketplaceId": 7})), false),
            "request body does not fit",
        ),
        (sent("POST", CONFIRM, vec![], &confirmation(json!({})), false), "content type \"\" is not declared"),
        (sent("POST", CONFIRM, json_header(), "", false), "required request body is missing"),
        (
            listings("marketplaceIds=ATVPDKIKX0DER&identifiers=A,B"),
            "identifiers and identifiersType go together",
        ),
        (listings("marketplaceIds=ATVPDKIKX0DER&pageSize=21"), "pageSize=21"),
        (
            listings(&format!(
                "marketplaceIds=ATVPDKIKX0DER&identifiersType=SKU&identifiers={}",
                ["S"; 21].join(",")
            )),
            "identifiers=",
        ),
        (
            sent("GET", "/orders/2026-01-01/orders/113-4567890-1234567", vec![], "", false),
            "without a region segment",
        ),
        (sent("GET", "/na/orders/2026-01-01/refunds", vec![], "", false), "matches no operation"),
        (
            sent("DELETE", "/na/sellers/v1/marketplaceParticipations", vec![], "", false),
            "matches no operation",
        ),
    ]
}

#[test]
fn each_way_of_breaking_a_request_is_refused_with_its_reason() {
    for (exchange, expected) in wrong_requests() {
        let found = check(&exchange, true, false);
        assert!(
            found.iter().any(|f| f.contains(expected)),
            "{}: wanted {expected:?} in {found:#?}",
            exchange.line()
        );
    }
}

#[test]
fn a_confirmation_breaking_what_the_model_says_only_in_prose_is_refused() {
    let package = |detail: Value| {
        let mut body: Value = serde_json::from_str(&confirmation(json!({}))).unwrap();
        body["packageDetail"].as_object_mut().unwrap().extend(detail.as_object().unwrap().clone());
        sent("POST", CONFIRM, json_header(), &body.to_string(), false)
    };
    let named = package(json!({"carrierCode": "Other", "carrierName": "Speedy Freight Ltd"}));
    assert_eq!(check(&named, true, false), Vec::<String>::new());
    let cases = [
        (package(json!({"carrierCode": "Other"})), "carrierName is required when carrierCode is Other"),
        (package(json!({"carrierCode": "Other", "carrierName": " "})), "carrierName is required"),
        (package(json!({"packageReferenceId": "pkg-57"})), "packageReferenceId must be a positive number"),
        (package(json!({"packageReferenceId": "0"})), "packageReferenceId must be a positive number"),
    ];
    for (e, expected) in cases {
        let found = check(&e, true, false);
        assert!(
            found.iter().any(|f| f.contains(expected)),
            "{}: wanted {expected:?} in {found:#?}",
            String::from_utf8_lossy(&e.body)
        );
    }
}

#[test]
fn wrong_answers_documents_and_token_requests_are_refused() {
    let cases = [
        (response_problems("getOrder", 200, &json!({"order": {"orderId": "1"}})), "does not fit its schema"),
        (response_problems("getOrder", 200, &json!({"order": {"orderId": "1", "note": "x"}})), "note"),
        (response_problems("confirmShipment", 204, &json!({"ok": true})), "has a body but declares none"),
        (response_problems("createFeed", 200, &json!({"feedId": "1"})), "status 200 is not declared"),
        (response_problems("getOrders", 200, &json!({})), "no operation getOrders"),
        (
            feed_document_problems(&json!({"header": {"sellerId": "A2EXAMPLE12345", "version": "2.0"},
                "messages": [{"messageId": 1, "sku": "MUG-BLU", "operationType": "PATCH", "productType": "DRINKING_CUP",
                              "patches": [{"op": "remove"}]}]})),
            "feed document: ",
        ),
        (
            feed_document_problems(&json!({"header": {"sellerId": "A", "version": "1.0"}, "messages": []})),
            "feed document: ",
        ),
        (feed_report_problems(&json!({"header": {"sellerId": "A"}, "issues": []})), "processing report: "),
        (lwa_problems(Some("application/json"), "grant_type=refresh_token"), "x-www-form-urlencoded"),
        (
            lwa_problems(
                Some("application/x-www-form-urlencoded"),
                "grant_type=client_credentials&refresh_token=a&client_id=b&client_secret=c",
            ),
            "grant_type must be refresh_token",
        ),
        (
            lwa_problems(
                Some("application/x-www-form-urlencoded"),
                "grant_type=refresh_token&refresh_token=a&client_id=b&client_id=b&client_secret=c",
            ),
            "given twice",
        ),
    ];
    for (found, expected) in cases {
        assert!(found.iter().any(|f| f.contains(expected)), "wanted {expected:?} in {found:#?}");
    }
    let patch = &feed_document_problems(&json!({"header": {"sellerId": "A", "version": "2.0"},
        "messages": [{"messageId": 1, "sku": "S", "operationType": "PATCH", "productType": "T", "patches": [{"op": "remove"}]}]}));
    assert!(patch.iter().any(|p| p.contains("remove") || p.contains("path")), "{patch:#?}");
}

#[test]
fn the_simulators_answers_and_the_token_exchange_are_read_from_recorded_exchanges() {
    let mut fine = sent("POST", CONFIRM, json_header(), &confirmation(json!({})), false);
    fine.status = 204;
    let mut refused = fine.clone();
    (refused.status, refused.answer_body) =
        (400, br#"{"errors": [{"code": "InvalidInput", "message": "no"}]}"#.to_vec());
    refused.answer_headers = json_header();
    let mut wrong_error = refused.clone();
    wrong_error.answer_body = br#"{"error": "InvalidInput"}"#.to_vec();
    let form = "grant_type=refresh_token&refresh_token=Atzr%7Cx&client_id=amzn1.a&client_secret=s";
    let form_header = vec![("Content-Type".to_string(), "application/x-www-form-urlencoded".to_string())];
    let mut token = sent("POST", "/auth/o2/token", form_header, form, false);
    (token.status, token.answer_body) =
        (200, br#"{"access_token": "Atza|x", "token_type": "bearer", "expires_in": 3600}"#.to_vec());
    let mut lwa_refused = token.clone();
    (lwa_refused.status, lwa_refused.answer_body) =
        (400, br#"{"error": "invalid_grant", "error_description": "no"}"#.to_vec());
    let mut lwa_wrong = token.clone();
    lwa_wrong.answer_body =
        br#"{"access_token": "Atza|x", "token_type": "mac", "expires_in": 3600}"#.to_vec();
    let document = json!({"header": {"sellerId": "A2EXAMPLE12345", "version": "2.0"},
        "messages": [{"messageId": 1, "sku": "MUG-BLU", "operationType": "PATCH", "productType": "DRINKING_CUP",
                      "patches": [{"op": "merge", "path": "/attributes/fulfillment_availability",
                                   "value": [{"fulfillment_channel_code": "DEFAULT", "quantity": 17}]}]}]});
    let mut upload = sent("PUT", "/s3/upload/doc-1", json_header(), &document.to_string(), false);
    upload.status = 200;
    let report = json!({"header": {"sellerId": "A2EXAMPLE12345", "version": "2.0", "feedId": "1"}, "issues": [],
        "summary": {"errors": 0, "warnings": 0, "messagesProcessed": 1, "messagesAccepted": 1, "messagesInvalid": 0}});
    let download =
        |answer: &Value| answered(sent("GET", "/s3/document/doc-2", vec![], "", false), 200, Some(answer));
    let (report_download, document_download) = (download(&report), download(&document));
    let mut bad_report = report.clone();
    bad_report["summary"].as_object_mut().map(|s| s.remove("errors"));
    let bad_download = download(&bad_report);
    let mut bad_upload = upload.clone();
    bad_upload.body =
        br#"{"header": {"sellerId": "A2EXAMPLE12345", "version": "2.0"}, "messages": []}"#.to_vec();
    let all_fine = [fine, refused, token, lwa_refused, upload, report_download, document_download];
    assert_eq!(problems(&all_fine), Vec::<String>::new());
    for (e, expected) in [
        (bad_download, "processing report: "),
        (wrong_error, "answer does not fit its schema"),
        (lwa_wrong, "token_type bearer"),
        (bad_upload, "feed document: "),
    ] {
        let found = problems(std::slice::from_ref(&e));
        assert!(
            found.iter().any(|f| f.contains(expected)),
            "{}: wanted {expected:?} in {found:#?}",
            e.line()
        );
    }
}

/// An exchange with its answer (JSON, or none for an empty body).
fn answered(mut e: Exchange, status: u16, answer: Option<&Value>) -> Exchange {
    e.status = status;
    if let Some(answer) = answer {
        e.answer_body = answer.to_string().into_bytes();
        e.answer_headers = json_header();
    }
    e
}

/// Exchanges on which the verdicts are compared: the annex's requests, some with the annex's
/// answers or a wrong one, and every wrong request above that Python can see as wrong (a
/// missing region is the simulator's path, not Amazon's).
fn cross_check_exchanges() -> Vec<Exchange> {
    let blocks = annex_blocks();
    let tagged =
        |tag: &'static str| blocks.iter().filter(move |(info, _)| info.get(1).is_some_and(|t| t == tag));
    let requests: Vec<Exchange> = tagged("amazon-request").map(|(_, text)| request(text, true)).collect();
    let (_, orders) = tagged("amazon-response=searchOrders").next().expect("a searchOrders answer");
    let orders: Value = serde_json::from_str(orders).unwrap();
    let mut broken = orders.clone();
    broken["orders"][0].as_object_mut().map(|o| o.remove("orderId"));
    let mut extra = orders.clone();
    extra["orders"][0]["salesChannel"]["storeName"] = json!("Acme");
    let confirm = requests.iter().find(|e| e.path.ends_with("shipmentConfirmation")).unwrap();
    let create_feed = requests.iter().find(|e| e.path.ends_with("/feeds")).unwrap();
    let mut out = vec![
        answered(requests[0].clone(), 200, Some(&orders)),
        answered(requests[0].clone(), 200, Some(&broken)),
        answered(requests[0].clone(), 200, Some(&extra)),
        answered(confirm.clone(), 204, None),
        answered(confirm.clone(), 400, Some(&json!({"errors": [{"code": "InvalidInput", "message": "no"}]}))),
        answered(confirm.clone(), 400, Some(&json!({"errors": [{"message": "no code"}]}))),
        answered(create_feed.clone(), 202, Some(&json!({"feedId": "50123019999"}))),
        answered(create_feed.clone(), 200, Some(&json!({"feedId": "50123019999"}))),
    ];
    out.extend(requests);
    let regional = |e: &Exchange| ["/na/", "/eu/", "/fe/"].iter().any(|r| e.path.starts_with(r));
    out.extend(wrong_requests().into_iter().map(|(e, _)| e).filter(regional));
    out
}

#[test]
fn the_verdicts_agree_with_amazons_python_validator() {
    let exchanges = cross_check_exchanges();
    let ours: Vec<Vec<String>> = exchanges.iter().map(|e| check(e, true, e.status != 0)).collect();
    assert!(ours.iter().filter(|p| p.is_empty()).count() >= 15, "too few exchanges pass: {ours:#?}");
    assert!(ours.iter().filter(|p| !p.is_empty()).count() >= 20, "too few exchanges fail: {ours:#?}");
    if !crate::simulate::shared_files::python_validator_here() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("exchanges.jsonl");
    std::fs::write(&file, exchanges.iter().map(super::vendor::jsonl).collect::<Vec<_>>().join("\n")).unwrap();
    let output = std::process::Command::new("python3")
        .arg(shared("vendor/amazon/validate_requests.py"))
        .arg("--exchanges")
        .arg(&file)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let theirs: Vec<(bool, &str)> = stdout
        .lines()
        .map(str::trim_start)
        .filter_map(|l| {
            let (verdict, rest) = l.split_once(char::is_whitespace)?;
            rest.trim_start().starts_with("exchange ").then_some((verdict == "ok", l))
        })
        .collect();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(theirs.len(), exchanges.len(), "validate_requests.py said:\n{stdout}\n{stderr}");
    for ((e, ours), (passes, line)) in exchanges.iter().zip(&ours).zip(&theirs) {
        assert_eq!(ours.is_empty(), *passes, "{}:\nours: {ours:#?}\nPython's: {line}", e.line());
    }
}
