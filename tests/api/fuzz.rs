//! Route-level fuzzing (issue 12): random bodies (bytes, JSON, urlencoded and multipart forms
//! with bracket names, NDJSON) under every content type at the routes that decode a body,
//! and random query strings at the listings. No answer is a 5xx, and every 4xx is the
//! contract's error envelope (CONTRACT §5).
//!
//! The calls come from proptest strategies drawn by a deterministic generator, so a run
//! repeats exactly; `ORDERBRIDGE_FUZZ_SEED=<number>` draws another set, and a failure names
//! the seed and the call.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use rocket::http::Header;
use serde_json::{Map, Value, json};

use crate::common::*;

/// Calls drawn per run (session follow-ups come on top).
const CALLS: usize = 400;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    Admin,
    Customer,
    Nobody,
}

#[derive(Debug, Clone)]
struct Call {
    method: &'static str,
    path: String,
    content_type: Option<String>,
    who: Who,
    body: Vec<u8>,
}

impl std::fmt::Display for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} as {:?}, Content-Type {:?}, body {:?}",
            self.method,
            self.path,
            self.who,
            self.content_type,
            String::from_utf8_lossy(&self.body)
        )
    }
}

// ---------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------

const BOUNDARY: &str = "FuzzBoundary7MA4YWxk";

fn text() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "[ -~]{0,20}", r#"[\[\]{}",:=&%+\\0-9a-z \-.\r\n]{0,20}"#]
}

#[rustfmt::skip]
const KEYS: &[&str] = &[
    "name", "company_name", "customer_id", "store_id", "warehouse_id", "platform", "adapter", "enabled_at",
    "sku", "master_id", "bundle", "product_id", "qty", "product_ids", "locations", "customer", "store",
    "warehouse", "connection_type", "description", "url", "access_token", "store_hash", "client_id",
    "auth_token", "secret_key", "connection_string", "host_key", "code", "email", "phone", "", "x",
];

#[rustfmt::skip]
const STRINGS: &[&str] = &[
    "bigcommerce", "big_commerce", "sellbrite", "sftp", "ftp", "dropstream", "folder", "other_platform",
    "Big Commerce", "fulfillment", "dropship", "sftp://user:pw@127.0.0.1:9/out", "ftp://u:p@127.0.0.1:9",
    "file:///tmp", "file://warehouses/x", "sftp://", "now", "yesterday", "3 days ago", "today 9 PM",
    "now 0 T", "2024-03-05", "2024-13-45", "2024-03-05T14:07:09.120Z", "1", "0", "-1", "2", "true", "false",
    "12.50", "1e3", "", " ", "token-123456", "abc123",
];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-2i64..5).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f).map(Value::Number)),
        select(STRINGS).prop_map(Value::from),
        text().prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 20, 5, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            vec((select(KEYS), inner), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = Map<String, Value>> {
    vec((prop_oneof![5 => select(KEYS).prop_map(String::from), 1 => text()], json_value()), 0..8)
        .prop_map(|kv| kv.into_iter().collect())
}

#[rustfmt::skip]
const JSON_TOKENS: &[&str] = &[
    "{", "}", "[", "]", ":", ",", " ", "\"name\"", "\"a\"", "\"\\ud800\"", "\"\\x\"", "1", "-0", "1e400",
    "18446744073709551616", "true", "null", "nul", "\u{feff}",
];

fn json_like() -> impl Strategy<Value = String> {
    vec(select(JSON_TOKENS), 0..30).prop_map(|t| t.concat())
}

fn form_name() -> impl Strategy<Value = String> {
    let segment = prop_oneof![
        3 => select(&["[]", "[0]", "[1]", "[qty]", "[product_id]", "[access_token]", "[code]"][..]),
        1 => select(&["[", "]", "[[", "]]", "[a]b", "[]]", "[é]", "%5B0%5D", "."][..]),
    ];
    (prop_oneof![4 => select(KEYS).prop_map(String::from), 1 => text()], vec(segment, 0..4))
        .prop_map(|(base, segments)| base + &segments.concat())
}

fn form_fields() -> impl Strategy<Value = Vec<(String, String)>> {
    let value = prop_oneof![Just(String::new()), select(STRINGS).prop_map(String::from), text()];
    vec((form_name(), value), 0..10)
}

fn urlencoded(fields: &[(String, String)]) -> Vec<u8> {
    use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
    // Names keep their brackets readable, as browsers send them.
    const NAME: &AsciiSet = &NON_ALPHANUMERIC.remove(b'[').remove(b']').remove(b'_');
    fields
        .iter()
        .map(|(n, v)| {
            format!("{}={}", utf8_percent_encode(n, NAME), utf8_percent_encode(v, NON_ALPHANUMERIC))
        })
        .collect::<Vec<_>>()
        .join("&")
        .into_bytes()
}

/// A multipart body of `fields`, some parts as files, cut short at `cut` when given.
fn multipart(fields: &[(String, String)], files: u8, cut: Option<usize>) -> Vec<u8> {
    let mut body = String::new();
    for (i, (name, value)) in fields.iter().enumerate() {
        let file = if files & (1 << (i % 8)) != 0 {
            "; filename=\"part.txt\"\r\nContent-Type: application/octet-stream"
        } else {
            ""
        };
        body.push_str(&format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"{file}\r\n\r\n{value}\r\n"
        ));
    }
    body.push_str(&format!("--{BOUNDARY}--\r\n"));
    let mut bytes = body.into_bytes();
    if let Some(cut) = cut {
        bytes.truncate(cut % (bytes.len() + 1));
    }
    bytes
}

/// A body each create route accepts as it stands, at `POST path` (and `PATCH path/1`).
fn valid_body(path: &str) -> Value {
    match path {
        "/customers" => json!({"company_name": "Acme", "email": "a@example.com"}),
        "/stores" | "/stores/ping" => json!({"customer_id": 1, "name": "S2", "platform": "bigcommerce",
            "adapter": {"access_token": "token-123456", "store_hash": "abc123"}, "enabled_at": "now"}),
        "/warehouses" | "/warehouses/ping" => json!({"customer_id": 1, "name": "W2", "platform": "sftp",
            "adapter": {"connection_string": "sftp://user:pw@127.0.0.1:9/out"}}),
        "/connections" => json!({"name": "C2", "customer": {"company_name": "Nested"},
            "store": {"name": "NS", "platform": "other_platform", "adapter": {"k": "v"}},
            "warehouse": {"platform": "ftp", "adapter": {"connection_string": "ftp://u:p@127.0.0.1:9"}},
            "locations": [{"code": "EAST"}], "connection_type": "dropship"}),
        "/products" => json!({"customer_id": 1, "sku": "SKU-X", "bundle": [{"product_id": 1, "qty": 2}],
            "master_id": 2}),
        "/variant_collections" | "/variant_collection" => json!({"name": "V2", "product_ids": [1, 2]}),
        _ => json!({"enabled_at": "yesterday"}),
    }
}

/// A form's fields for a JSON value, in bracket notation.
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let name = if prefix.is_empty() { k.clone() } else { format!("{prefix}[{k}]") };
                flatten(&name, v, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), v, out);
            }
        }
        Value::Null => out.push((prefix.to_string(), String::new())),
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

/// A valid body with a few changes (a key dropped, a value replaced, a key added), sent as
/// JSON, urlencoded or multipart.
fn near_valid_body(path: &'static str) -> impl Strategy<Value = (Option<String>, Vec<u8>)> {
    let edit = (0u8..3, any::<prop::sample::Index>(), select(KEYS), json_value());
    (vec(edit, 0..3), 0u8..3).prop_map(move |(edits, how)| {
        let mut body = valid_body(path);
        let map = body.as_object_mut().expect("an object");
        for (kind, at, key, value) in edits {
            let keys: Vec<String> = map.keys().cloned().collect();
            let existing = keys.get(at.index(keys.len().max(1))).cloned();
            match (kind, existing) {
                (0, Some(k)) => drop(map.remove(&k)),
                (1, Some(k)) => drop(map.insert(k, value)),
                _ => drop(map.insert(key.to_string(), value)),
            }
        }
        match how {
            0 => (Some("application/json".to_string()), body.to_string().into_bytes()),
            1 => {
                let mut fields = Vec::new();
                flatten("", &body, &mut fields);
                (Some("application/x-www-form-urlencoded".to_string()), urlencoded(&fields))
            }
            _ => {
                let mut fields = Vec::new();
                flatten("", &body, &mut fields);
                (Some(format!("multipart/form-data; boundary={BOUNDARY}")), multipart(&fields, 0, None))
            }
        }
    })
}

const CONTENT_TYPES: &[&str] = &[
    "application/json",
    "application/json; charset=utf-8",
    "APPLICATION/JSON",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=FuzzBoundary7MA4YWxk",
    "multipart/form-data",
    "multipart/form-data; boundary=",
    "text/plain",
    "application/x-ndjson",
    "application/xml",
    "garbage",
    "",
    "*/*",
];

fn any_content_type() -> impl Strategy<Value = Option<String>> {
    prop::option::weighted(0.85, select(CONTENT_TYPES).prop_map(String::from))
}

/// A request body and its content type.
fn body() -> impl Strategy<Value = (Option<String>, Vec<u8>)> {
    let json = || Some("application/json".to_string());
    let form = || Some("application/x-www-form-urlencoded".to_string());
    let multi = || Some(format!("multipart/form-data; boundary={BOUNDARY}"));
    prop_oneof![
        4 => json_object().prop_map(move |m| (json(), Value::Object(m).to_string().into_bytes())),
        1 => json_like().prop_map(move |t| (json(), t.into_bytes())),
        3 => form_fields().prop_map(move |f| (form(), urlencoded(&f))),
        1 => r"[a-z\[\]=&%+0-9]{0,30}".prop_map(move |t| (form(), t.into_bytes())),
        2 => (form_fields(), any::<u8>(), prop::option::weighted(0.2, any::<usize>()))
            .prop_map(move |(f, files, cut)| (multi(), multipart(&f, files, cut))),
        2 => (any_content_type(), vec(any::<u8>(), 0..80)),
        1 => (any_content_type(), json_object().prop_map(|m| Value::Object(m).to_string().into_bytes())),
    ]
}

/// An import body: NDJSON or an array of order-like, shipment-like or odd records.
fn import_body() -> impl Strategy<Value = (Option<String>, Vec<u8>)> {
    let id = || prop_oneof![4 => (1i64..4).prop_map(Value::from), 1 => scalar()];
    let order = (id(), "[A-Z0-9]{1,4}", json_object(), prop::option::of(vec(json_object(), 0..3))).prop_map(
        |(store, external, mut m, items)| {
            m.insert("store_id".into(), store);
            m.insert("external_id".into(), Value::String(external));
            if let Some(items) = items {
                m.insert("order_items".into(), Value::Array(items.into_iter().map(Value::Object).collect()));
            }
            Value::Object(m).to_string()
        },
    );
    let shipment = (id(), id(), "[A-Z0-9]{1,4}", prop::option::of(scalar())).prop_map(|(o, w, t, state)| {
        let mut m = json!({"order_id": o, "warehouse_id": w, "tracking_number": t});
        if let Some(state) = state {
            m["state"] = state;
        }
        m.to_string()
    });
    let line = prop_oneof![
        3 => order,
        3 => shipment,
        1 => json_value().prop_map(|v| v.to_string()),
        1 => json_like(),
        1 => Just(String::new()),
    ];
    let text = prop_oneof![
        4 => vec(line.clone(), 0..5).prop_map(|l| l.join("\n")),
        1 => vec(line, 0..5).prop_map(|l| format!("[{}]", l.join(","))),
        1 => text(),
    ];
    let types = select(
        &[
            "application/x-ndjson",
            "application/json",
            "text/plain",
            "application/jsonl",
            "application/x-www-form-urlencoded",
            "text/csv",
            "",
        ][..],
    );
    prop_oneof![
        6 => (prop::option::weighted(0.9, types.prop_map(String::from)), text.prop_map(String::into_bytes)),
        1 => (any_content_type(), vec(any::<u8>(), 0..80)),
    ]
}

#[rustfmt::skip]
const PARAMS: &[&str] = &[
    "sort", "limit", "page", "session_id", "ordered_at_min", "ordered_at_max", "created_at_min",
    "created_at_max", "shipped_at_min", "shipped_at_max", "store_id", "warehouse_id", "customer_id",
    "external_id", "state", "tracking_number", "sku", "unknown",
];

#[rustfmt::skip]
const PARAM_VALUES: &[&str] = &[
    "id", "-id", "ordered_at", "-created_at", "tracking_number", "-state", "external_id", "nope", "-", "1",
    "0", "-1", "1000", "1001", "99999999999999999999", "2", "new", "archived", "now", "3 days ago",
    "today 9 PM", "now 0 T", "2024-03-05", "2024-03-05T14:07:09Z", "2024-13-45", "Fuzz Co", "S", "",
];

/// A query string: the listings' parameters with likely and unlikely values.
fn query() -> impl Strategy<Value = String> {
    use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
    let value = prop_oneof![4 => select(PARAM_VALUES).prop_map(String::from), 1 => text()];
    let pair = (select(PARAMS), value, 0u8..8).prop_map(|(name, value, how)| match how {
        // Raw now and then: a value that is no valid URI is the server's 400 to give.
        0 => format!("{name}={value}"),
        1 => format!("{name}=%{}", value.len() % 23),
        _ => format!("{name}={}", utf8_percent_encode(&value, NON_ALPHANUMERIC)),
    });
    vec(pair, 0..6).prop_map(|p| p.join("&"))
}

const POST_PATHS: &[&str] = &[
    "/customers",
    "/stores",
    "/warehouses",
    "/connections",
    "/products",
    "/variant_collections",
    "/variant_collection",
    "/stores/ping",
    "/warehouses/ping",
    "/orders/1/retry",
    "/shipments/1/retry",
    "/orders",
];

const PATCH_PATHS: &[&str] = &[
    "/customers/1",
    "/stores/1",
    "/warehouses/1",
    "/connections/1",
    "/connections/1/channels/1",
    "/connections/1/channels/2",
    "/products/1",
    "/products/2",
    "/variant_collections/1",
    "/orders/1",
    "/customers/abc",
    "/customers/-1",
    "/stores/99999999999999999999",
    "/products/0",
];

const LIST_PATHS: &[&str] = &[
    "/orders",
    "/shipments",
    "/orders",
    "/shipments",
    "/products",
    "/customers",
    "/connections/1/sync_runs",
];

fn who() -> impl Strategy<Value = Who> {
    prop_oneof![7 => Just(Who::Admin), 2 => Just(Who::Customer), 1 => Just(Who::Nobody)]
}

fn call() -> impl Strategy<Value = Call> {
    let post = (select(POST_PATHS), who(), body()).prop_map(|(path, who, (content_type, body))| Call {
        method: "POST",
        path: path.to_string(),
        content_type,
        who,
        body,
    });
    let near_valid = (select(POST_PATHS), any::<bool>(), who())
        .prop_flat_map(|(path, patch, who)| (Just(path), Just(patch), Just(who), near_valid_body(path)))
        .prop_map(|(path, patch, who, (content_type, body))| {
            let (method, path) = match (patch, path) {
                (true, "/variant_collection") => ("PATCH", "/variant_collections/1".to_string()),
                (true, "/stores/ping" | "/warehouses/ping") => {
                    ("PATCH", "/connections/1/channels/2".to_string())
                }
                (true, _) => ("PATCH", format!("{path}/1")),
                (false, _) => ("POST", path.to_string()),
            };
            Call { method, path, content_type, who, body }
        });
    let patch = (select(PATCH_PATHS), who(), body()).prop_map(|(path, who, (content_type, body))| Call {
        method: "PATCH",
        path: path.to_string(),
        content_type,
        who,
        body,
    });
    let products_with_body = (who(), body()).prop_map(|(who, (content_type, body))| Call {
        method: "GET",
        path: "/products".to_string(),
        content_type,
        who,
        body,
    });
    let import = (select(&["/import/orders", "/import/shipments"][..]), who(), import_body()).prop_map(
        |(path, who, (content_type, body))| Call {
            method: "POST",
            path: path.to_string(),
            content_type,
            who,
            body,
        },
    );
    let list = (select(LIST_PATHS), who(), query()).prop_map(|(path, who, q)| Call {
        method: "GET",
        path: format!("{path}?{q}"),
        content_type: None,
        who,
        body: Vec::new(),
    });
    prop_oneof![3 => post, 3 => near_valid, 2 => patch, 1 => products_with_body, 3 => import, 4 => list]
}

// ---------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------

struct Tokens {
    admin: String,
    customer: String,
}

async fn send(app: &TestApp, tokens: &Tokens, call: &Call) -> Reply {
    let path = call.path.clone();
    let mut request = match call.method {
        "POST" => app.client.post(path),
        "PATCH" => app.client.patch(path),
        _ => app.client.get(path),
    };
    let token = match call.who {
        Who::Admin => Some(&tokens.admin),
        Who::Customer => Some(&tokens.customer),
        Who::Nobody => None,
    };
    if let Some(token) = token {
        request = request.header(Header::new("Authorization", format!("Bearer {token}")));
    }
    if let Some(ct) = &call.content_type {
        request = request.header(Header::new("Content-Type", ct.clone()));
    }
    reply(request.body(&call.body).dispatch().await).await
}

/// Under 500, and a 4xx in the envelope; a 2xx with a body has JSON.
fn check(seed: &str, n: usize, call: &Call, r: &Reply) {
    let at = || format!("call {n} (seed {seed}): {call}\nanswered {} {}", r.status, r.text);
    assert!(r.status.code < 500, "a 5xx: {}", at());
    if r.status.code >= 400 {
        let error = &r.body["error"];
        assert!(error["code"].as_str().is_some_and(|c| !c.is_empty()), "no error code: {}", at());
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "no error message: {}", at());
        assert!(error.get("details").is_none_or(Value::is_object), "details not an object: {}", at());
        assert_eq!(r.header("Content-Type"), Some("application/json"), "content type: {}", at());
    } else if !r.text.is_empty() {
        assert!(serde_json::from_str::<Value>(&r.text).is_ok(), "a 2xx that is not JSON: {}", at());
    }
}

/// A customer with a store, a warehouse, a connection (channels 1 and 2), two products, a
/// variant collection, orders and a shipment, so ids 1 and 2 name real rows.
async fn world(app: &TestApp) -> Tokens {
    let admin = app.admin.clone();
    let (c, customer) = app.tenant("Fuzz Co").await;
    let store = json!({"customer_id": c, "name": "S", "platform": "bigcommerce",
                       "adapter": {"access_token": "token-123456", "store_hash": "abc123"}});
    let s = app.post_json("/stores", &admin, store).await.id();
    let warehouse = json!({"customer_id": c, "name": "W", "platform": "sftp",
                           "adapter": {"connection_string": "sftp://user:pw@127.0.0.1:9/out"}});
    let w = app.post_json("/warehouses", &admin, warehouse).await.id();
    app.post_json("/connections", &admin, json!({"name": "C", "store_id": s, "warehouse_id": w})).await.id();
    let p1 = app.post_json("/products", &admin, json!({"customer_id": c, "sku": "SKU-1"})).await.id();
    let p2 = app.post_json("/products", &admin, json!({"customer_id": c, "sku": "SKU-2"})).await.id();
    app.post_json("/variant_collections", &admin, json!({"name": "V", "product_ids": [p1, p2]})).await.id();
    let orders = (1..=3)
        .map(|i| {
            json!({"store_id": s, "external_id": format!("E{i}"), "ordered_at": "2 days ago",
                        "order_items": [{"sku": "SKU-1", "unit_price": "10.00", "quantity": 1}]})
            .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n");
    let ndjson = rocket::http::ContentType::new("application", "x-ndjson");
    let r = app.send("POST", "/import/orders", &admin, ndjson.clone(), orders).await;
    assert_eq!(r.body, json!({"created": 3, "updated": 0}), "{r:?}");
    let shipment = json!({"order_id": 1, "warehouse_id": w, "tracking_number": "1Z"}).to_string();
    let r = app.send("POST", "/import/shipments", &admin, ndjson, shipment).await;
    assert_eq!(r.body, json!({"created": 1, "updated": 0}), "{r:?}");
    Tokens { admin, customer }
}

#[rocket::async_test]
async fn random_bodies_and_queries_never_answer_5xx_and_every_4xx_is_the_envelope() {
    // Small limits so some bodies are too large; no sync pass ever runs.
    let app = spawn_app_with(|f| {
        f.merge(("body_limit", 2048))
            .merge(("import_body_limit", 1024))
            .merge(("sync_mode", "off"))
            .merge(("ping_mode", "offline"))
    })
    .await;
    let tokens = world(&app).await;
    let seed = std::env::var("ORDERBRIDGE_FUZZ_SEED").unwrap_or_else(|_| "0".to_string());
    let rng = match seed.parse::<u64>() {
        Ok(0) | Err(_) => TestRng::deterministic_rng(RngAlgorithm::ChaCha),
        Ok(n) => {
            let mut bytes = [0u8; 32];
            bytes[..8].copy_from_slice(&n.to_le_bytes());
            TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
        }
    };
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let strategy = call();
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for n in 0..CALLS {
        let call = strategy.new_tree(&mut runner).expect("a call").current();
        let r = send(&app, &tokens, &call).await;
        check(&seed, n, &call, &r);
        *statuses.entry(r.status.code).or_default() += 1;
        // A session the listing opened: its next page, with other parameters ignored.
        if let Some(id) = r.body["session_id"].as_str() {
            let path = call.path.split('?').next().unwrap_or_default();
            let next = Call { path: format!("{path}?session_id={id}&page=x&sort=nope"), ..call.clone() };
            let r = send(&app, &tokens, &next).await;
            check(&seed, n, &next, &r);
            *statuses.entry(r.status.code).or_default() += 1;
        }
    }
    println!("fuzz: {CALLS} calls (seed {seed}), answers by status: {statuses:?}");
    // The mix reached past the decoders: some calls were accepted, some refused.
    assert!(statuses.range(200..300).next().is_some(), "no call succeeded: {statuses:?}");
    assert!(statuses.range(400..500).count() >= 3, "too few kinds of refusal: {statuses:?}");
}

/// A form name nested past any body's need (here 300,000 brackets in a body under the 1 MiB
/// limit) is a 400, not a recursion that runs the thread out of stack and aborts the server.
/// `POST /auth/token` decodes its body before anyone is authenticated.
#[rocket::async_test]
async fn a_form_name_nested_past_any_need_is_refused() {
    let app = spawn_app().await;
    let tokens = Tokens { admin: app.admin.clone(), customer: app.admin.clone() };
    let name = format!("company_name{}", "[a]".repeat(300_000));
    let form = format!("{name}=x&grant_type=client_credentials").into_bytes();
    let multi = multipart(&[(name.clone(), "x".into())], 0, None);
    for (path, who) in [("/customers", Who::Admin), ("/auth/token", Who::Nobody)] {
        for (content_type, body) in [
            ("application/x-www-form-urlencoded", form.clone()),
            ("multipart/form-data; boundary=FuzzBoundary7MA4YWxk", multi.clone()),
        ] {
            let call = Call {
                method: "POST",
                path: path.into(),
                content_type: Some(content_type.into()),
                who,
                body,
            };
            let mut r = send(&app, &tokens, &call).await;
            if path == "/auth/token" {
                // The token endpoint answers in RFC 6749's shape.
                assert_eq!(
                    (r.status.code, r.body["error"].as_str()),
                    (400, Some("invalid_request")),
                    "{r:?}"
                );
            } else {
                r.text.truncate(300);
                assert_error(&r, 400, "bad_request");
            }
        }
    }
}

/// interim panicked on a word after an hour that is not lower case ("today 9 PM"): the
/// listing answered 500, and so did any body or import field holding such a dateString.
#[rocket::async_test]
async fn a_date_phrase_with_an_upper_case_word_after_the_hour_is_no_5xx() {
    let app = spawn_app().await;
    let r = app.get("/orders?ordered_at_min=today%209%20PM", &app.admin).await;
    assert_eq!(r.status.code, 200, "{r:?}");
    let r = app.get("/shipments?shipped_at_max=now%200%20T&page=1", &app.admin).await;
    assert_error(&r, 400, "bad_request");
    let (c, _) = app.tenant("Dates").await;
    let store = json!({"customer_id": c, "name": "S", "platform": "other_platform", "adapter": {},
                       "enabled_at": "now 0 T"});
    let r = app.post_json("/stores", &app.admin, store).await;
    assert_error(&r, 422, "validation_failed");
}
