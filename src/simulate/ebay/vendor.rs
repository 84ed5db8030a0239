//! eBay's two OpenAPI files (`shared/vendor/ebay/`), loaded once and patched where they
//! describe less than eBay answers, for the tests that hold the simulator's exchanges (and
//! the client's requests) to them; and eBay's own checker (`validate_requests.py`) run on the
//! same exchanges when python3 with jsonschema is here.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::simulate::openapi_check::{Description, Exchange, Patch, Readings};

/// The folder of the files and the checker.
pub(super) fn folder() -> PathBuf {
    crate::simulate::shared_files::shared("vendor/ebay")
}

/// Each used operation: (file, path template as a JSON Pointer segment, method, statuses the
/// file declares without a body, whether it answers 207).
const OPERATIONS: [(&str, &str, &str, &[&str], bool); 7] = [
    ("fulfillment", "~1order", "get", &["400", "500"], false),
    ("fulfillment", "~1order~1{orderId}~1shipping_fulfillment", "get", &["400", "500"], false),
    ("fulfillment", "~1order~1{orderId}~1shipping_fulfillment", "post", &["400", "409", "500"], false),
    ("inventory", "~1inventory_item", "get", &["400", "404", "500"], false),
    ("inventory", "~1bulk_get_inventory_item", "post", &["207", "400", "500"], true),
    ("inventory", "~1offer", "get", &["400", "404", "500"], false),
    ("inventory", "~1bulk_update_price_quantity", "post", &["207", "400", "500"], true),
];

fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// eBay's error body, `{"errors": [Error]}` (annex §5, *Transport*).
fn error_content() -> Value {
    json!({"application/json": {"schema": {"type": "object", "required": ["errors"], "additionalProperties": false,
        "properties": {"errors": {"type": "array", "items": {"$ref": "#/components/schemas/Error"}}}}}})
}

/// The patches of one file (`fulfillment` or `inventory`), each saying why.
pub(super) fn patches(file: &str, doc: &Value) -> Vec<Patch> {
    let base = if file == "fulfillment" { "/sell/fulfillment/v1" } else { "/sell/inventory/v1" };
    let mut patches = vec![Patch {
        pointer: "/servers/0/url",
        was: Some(json!("https://api.ebay.com{basePath}")),
        now: Some(json!(format!("https://api.ebay.com{base}"))),
        why: "the server URL is templated with a variable `basePath` whose default is the API's base path; \
              the checker reads no server variables, so the default is written in",
    }];
    for (of, path, method, bodiless, multi) in OPERATIONS {
        if of != file {
            continue;
        }
        let responses = format!("/paths/{path}/{method}/responses");
        for status in bodiless {
            let content = if *status == "207" && multi {
                doc.pointer(&format!("{responses}/200/content")).cloned()
            } else {
                Some(error_content())
            };
            patches.push(Patch {
                pointer: leak(format!("{responses}/{status}/content")),
                was: None,
                now: content,
                why: "the file declares this status (for errors, with eBay's errorIds in x-response-codes) but no \
                      body; eBay answers errors as {\"errors\": [Error]}, and a 207 with the 200's body",
            });
        }
        for status in ["401", "403"] {
            patches.push(Patch {
                pointer: leak(format!("{responses}/{status}")),
                was: None,
                now: Some(json!({"description": "eBay's platform layer: 1001 invalid access token, 1100 access denied",
                                 "content": error_content()})),
                why: "eBay's OAuth layer answers 401 (errorId 1001) and 403 (errorId 1100) to every operation; \
                      the file declares neither (annex §9, third-party reports)",
            });
        }
    }
    if file == "fulfillment" {
        patches.push(Patch {
            pointer: "/paths/~1order~1{orderId}~1shipping_fulfillment/post/responses/201/content",
            was: Some(json!({"application/json": {"schema": {"type": "object"}}})),
            now: None,
            why: "createShippingFulfillment answers 201 with a Location header and an empty body, as its \
                  operation text says; the file still names a JSON object",
        });
    }
    patches
}

/// One of the two files (`fulfillment` or `inventory`), loaded once and patched.
pub(super) fn description(file: &'static str) -> &'static Description {
    static FULFILLMENT: OnceLock<Description> = OnceLock::new();
    static INVENTORY: OnceLock<Description> = OnceLock::new();
    let cell = if file == "fulfillment" { &FULFILLMENT } else { &INVENTORY };
    cell.get_or_init(|| {
        let path = folder().join(format!("sell_{file}_v1_oas3.json"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let readings = Readings { undeclared_429_and_5xx: true, ..Readings::default() };
        Description::parse_read(&format!("sell_{file}_v1_oas3.json"), &text, &patches(file, &doc), readings)
            .unwrap_or_else(|e| panic!("eBay's {file} file: {e}"))
    })
}

/// The exchange as production would have had it (the sandbox prefix dropped).
pub(super) fn at_root(exchange: &Exchange) -> Exchange {
    let mut exchange = exchange.clone();
    if let Some(rest) = exchange.path.strip_prefix("/sandbox") {
        exchange.path = rest.to_string();
    }
    exchange
}

/// Which file describes an exchange (`None`: the token endpoint or no API path).
pub(super) fn file_of(exchange: &Exchange) -> Option<&'static str> {
    let path = at_root(exchange).path;
    if path.starts_with("/sell/fulfillment/v1/") || path == "/sell/fulfillment/v1" {
        Some("fulfillment")
    } else if path.starts_with("/sell/inventory/v1/") {
        Some("inventory")
    } else {
        None
    }
}

/// Everything the files do not allow in `exchanges` (request side too when `request`).
pub(crate) fn problems(exchanges: &[Exchange], request: bool) -> Vec<String> {
    exchanges
        .iter()
        .filter_map(|e| file_of(e).map(|file| (file, at_root(e))))
        .flat_map(|(file, e)| description(file).check_parts(&e, request, true))
        .collect()
}

/// The script that feeds exchanges (JSON lines on stdin) to `validate_requests`' functions.
const CHECKER: &str = r##"
import json, sys
sys.path.insert(0, sys.argv[1])
import validate_requests as v
found = []
for n, line in enumerate(sys.stdin):
    e = json.loads(line)
    op, _ = v.find_op(e["method"], e["path"])
    where = f'{e["method"]} {e["path"]} -> {e["status"]}'
    if op is None:
        found.append(f"{where}: no operation"); continue
    body = json.loads(e["body"]) if e["body"] else None
    if e["request"]:
        for k in e["query"]:
            if ("query", k) not in op.params:
                found.append(f"{where}: query parameter {k} not declared")
        schema = op.body_schema()
        if body is not None and schema is not None:
            val, root = v.validator(op.spec, schema)
            found += [f"{where}: request {x.message}" for x in val.iter_errors(body)]
            found += [f"{where}: request undeclared {x}" for x in v.undeclared(root, schema, body)]
        found += [f"{where}: {p}" for p in v.prose_rules(op, e["query"], body)]
    answer, status = e["answer"], e["status"]
    if status < 300 and answer is not None:
        schema = op.response_schema(200 if status == 207 else status)
        if schema is None:
            found.append(f"{where}: no schema for the answer"); continue
        val, root = v.validator(op.spec, schema)
        found += [f"{where}: answer {x.message}" for x in val.iter_errors(answer)]
        found += [f"{where}: answer undeclared {x}" for x in v.undeclared(root, schema, answer)]
    elif status >= 400 and answer is not None:
        if set(answer) != {"errors"}:
            found.append(f"{where}: error body is not {{errors}}")
        known = op.error_ids(status) | v.PLATFORM_ERRORS.get(status, set())
        val, root = v.validator(op.spec, {"$ref": "#/components/schemas/Error"})
        for err in answer.get("errors", []):
            found += [f"{where}: error {x.message}" for x in val.iter_errors(err)]
            found += [f"{where}: error undeclared {x}" for x in v.undeclared(root, {"$ref": "#/components/schemas/Error"}, err)]
            if status < 429 and known and err.get("errorId") not in known:
                found.append(f"{where}: errorId {err.get('errorId')} is not listed for {status}")
print("\n".join(found))
sys.exit(1 if found else 0)
"##;

/// One exchange as the checker reads it: the query's values decoded but `filter`'s
/// brackets percent-encoded again, as the checker's `prose_rules` expects them.
fn line(e: &Exchange, request: bool) -> String {
    let query: serde_json::Map<String, Value> = e
        .query
        .iter()
        .map(|(k, v)| {
            let v = if k == "filter" {
                v.replace('[', "%5B")
                    .replace(']', "%5D")
                    .replace('{', "%7B")
                    .replace('}', "%7D")
                    .replace('|', "%7C")
            } else {
                v.clone()
            };
            (k.clone(), json!(v))
        })
        .collect();
    let answer: Option<Value> = serde_json::from_slice(&e.answer_body).ok();
    json!({"method": e.method, "path": e.path, "query": query, "body": String::from_utf8_lossy(&e.body),
           "status": e.status, "answer": answer, "request": request})
    .to_string()
}

/// eBay's checker on the API exchanges: `None` when it cannot run here, else what it found.
pub(crate) fn python_problems(exchanges: &[Exchange], request: bool) -> Option<Result<(), String>> {
    use std::io::Write;
    if !crate::simulate::shared_files::python_validator_here() {
        return None;
    }
    let lines: Vec<String> =
        exchanges.iter().filter(|e| file_of(e).is_some()).map(|e| line(&at_root(e), request)).collect();
    let mut child = std::process::Command::new("python3")
        .args(["-c", CHECKER])
        .arg(folder())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(lines.join("\n").as_bytes()).ok()?;
    let output = child.wait_with_output().ok()?;
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
