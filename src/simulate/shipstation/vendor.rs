//! ShipStation's OpenAPI file (`../shared/vendor/shipstation/shipstation-v2-openapi.yaml`),
//! loaded once and read as its README says, for any test in the crate that holds requests (the
//! client's) or answers (this simulator's) to it: `vendor::problems(&sim.exchanges())` is
//! empty when every exchange follows the file.
//!
//! The file is OpenAPI 3.1 converted from 3.0, and keeps 3.0 habits that mean something else
//! in 3.1. The checker speaks OpenAPI 3.0 (JSON Schema draft 4 plus `nullable`); once the
//! README's five readings are applied below, the file uses nothing of 3.1 that draft 4 does
//! not say the same way, and it is checked as 3.0. Each reading refuses to load when the file
//! no longer calls for it.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use crate::simulate::openapi_check::{Description, Exchange, Patch, Readings};
use crate::simulate::openapi_readings::json_of;

/// The seven operations orderbridge uses (annex §1), by path and method.
const USED: [(&str, &str); 7] = [
    ("/v2/warehouses", "get"),
    ("/v2/warehouses/{warehouse_id}", "get"),
    ("/v2/shipments", "post"),
    ("/v2/shipments/external_shipment_id/{external_shipment_id}", "get"),
    ("/v2/shipments/{shipment_id}/cancel", "put"),
    ("/v2/labels", "get"),
    ("/v2/inventory", "get"),
];

fn file() -> PathBuf {
    crate::simulate::shared_files::shared("vendor/shipstation/shipstation-v2-openapi.yaml")
}

/// README reading 1: `x-nullable: true` admits `null` beside the declared type (as 3.0's
/// `nullable`, which the checker translates).
fn x_nullable(value: &mut Value, count: &mut usize) {
    match value {
        Value::Object(map) => {
            if map.remove("x-nullable") == Some(Value::Bool(true)) {
                map.insert("nullable".into(), Value::Bool(true));
                *count += 1;
            }
            map.values_mut().for_each(|v| x_nullable(v, count));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| x_nullable(v, count)),
        _ => {}
    }
}

/// README reading 3: a number in `exclusiveMinimum` (`weight.value`, `weigth.value`) is 3.0's
/// boolean written as a number: greater than `minimum` (0 where none is given).
fn exclusive_minimum(doc: &mut Value) -> Result<(), String> {
    for pointer in
        ["/components/schemas/weight/properties/value", "/components/schemas/weigth/properties/value"]
    {
        let node =
            doc.pointer_mut(pointer).and_then(Value::as_object_mut).ok_or(format!("{pointer} is gone"))?;
        if !node.get("exclusiveMinimum").is_some_and(Value::is_number) {
            return Err(format!("{pointer}: exclusiveMinimum is no longer a number; reading 3 is stale"));
        }
        node.insert("exclusiveMinimum".into(), Value::Bool(true));
        node.entry("minimum").or_insert(json!(0));
    }
    Ok(())
}

fn resolve<'a>(doc: &'a Value, node: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) {
        Some(pointer) => doc.pointer(pointer).map_or(node, |target| resolve(doc, target)),
        None => node,
    }
}

/// Whether a schema is closed, itself or through an `allOf` member.
fn closed(doc: &Value, node: &Value, depth: usize) -> bool {
    let node = resolve(doc, node);
    node.get("additionalProperties") == Some(&Value::Bool(false))
        || (depth < 16
            && node
                .get("allOf")
                .and_then(Value::as_array)
                .is_some_and(|m| m.iter().any(|m| closed(doc, m, depth + 1))))
}

/// The properties and required names of a schema and of its `allOf` members, merged.
fn merged(
    doc: &Value,
    node: &Value,
    properties: &mut Map<String, Value>,
    required: &mut Vec<Value>,
    depth: usize,
) {
    let node = resolve(doc, node);
    if let Some(own) = node.get("properties").and_then(Value::as_object) {
        for (name, schema) in own {
            properties.entry(name.clone()).or_insert_with(|| schema.clone());
        }
    }
    for name in node.get("required").and_then(Value::as_array).into_iter().flatten() {
        if !required.contains(name) {
            required.push(name.clone());
        }
    }
    if depth < 16 {
        for member in node.get("allOf").and_then(Value::as_array).into_iter().flatten() {
            merged(doc, member, properties, required, depth + 1);
        }
    }
}

/// README reading 2: a schema closed itself or through an `allOf` member is closed once, over
/// the properties of all its members (2020-12's `unevaluatedProperties: false`). In draft 4
/// terms: the members are merged into one closed object, so no member closes alone.
fn close_once(doc: &Value, value: &mut Value, count: &mut usize) {
    match value {
        Value::Object(map) => {
            let composite = map.get("allOf").and_then(Value::as_array).is_some_and(|m| !m.is_empty());
            if composite && closed(doc, &Value::Object(map.clone()), 0) {
                let (mut properties, mut required) = (Map::new(), Vec::new());
                merged(doc, &Value::Object(map.clone()), &mut properties, &mut required, 0);
                if !properties.is_empty() {
                    map.remove("allOf");
                    map.insert("type".into(), json!("object"));
                    map.insert("properties".into(), Value::Object(properties));
                    if !required.is_empty() {
                        map.insert("required".into(), Value::Array(required));
                    }
                    map.insert("additionalProperties".into(), Value::Bool(false));
                    *count += 1;
                }
            }
            map.values_mut().for_each(|v| close_once(doc, v, count));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| close_once(doc, v, count)),
        _ => {}
    }
}

/// README reading 4: no operation declares 401 or 403; such an answer carries
/// `error_response_body` (429 and 5xx by the checker's own reading).
fn undeclared_statuses(doc: &mut Value) -> Result<(), String> {
    for (path, method) in USED {
        let pointer = format!("/paths/{}/{method}/responses", path.replace('/', "~1"));
        let responses =
            doc.pointer_mut(&pointer).and_then(Value::as_object_mut).ok_or(format!("{pointer} is gone"))?;
        for status in ["401", "403"] {
            if responses.contains_key(status) {
                return Err(format!("{pointer} now declares {status}; reading 4 is stale there"));
            }
            responses.insert(
                status.into(),
                json!({"description": "README reading 4", "content": {"application/json":
                    {"schema": {"$ref": "#/components/schemas/error_response_body"}}}}),
            );
        }
    }
    Ok(())
}

fn readings() -> Readings {
    Readings { undeclared_429_and_5xx: true, ..Readings::default() }
}

/// README reading 5: further inventory pages are the server's `links.next.href`, which
/// carries a `page` the file does not declare.
fn patches() -> Vec<Patch> {
    vec![Patch {
        pointer: "/paths/~1v2~1inventory/get/parameters/5",
        was: None,
        now: Some(json!({"name": "page", "in": "query", "schema": {"type": "integer", "minimum": 1}})),
        why: "getInventoryLevels declares no page parameter, but its answers' links.next.href (README reading 5) \
              carry the page the server wrote",
    }]
}

/// The file, loaded once and read as the README says.
pub fn description() -> &'static Description {
    static LOADED: OnceLock<Description> = OnceLock::new();
    LOADED.get_or_init(|| {
        let path = file();
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let docs = yaml_rust2::YamlLoader::load_from_str(&text)
            .unwrap_or_else(|e| panic!("ShipStation's file: {e}"));
        let mut doc =
            json_of(docs.into_iter().next().expect("a document")).expect("ShipStation's file as JSON");
        assert_eq!(
            doc["openapi"], "3.1.0",
            "ShipStation's file changed its OpenAPI version; see the readings"
        );
        let mut nullable = 0;
        x_nullable(&mut doc, &mut nullable);
        assert!(nullable > 0, "no x-nullable is left: reading 1 is stale");
        exclusive_minimum(&mut doc).unwrap_or_else(|e| panic!("{e}"));
        let mut closed = 0;
        let frozen = doc.clone();
        close_once(&frozen, &mut doc, &mut closed);
        assert!(closed > 0, "no closed allOf is left: reading 2 is stale");
        undeclared_statuses(&mut doc).unwrap_or_else(|e| panic!("{e}"));
        doc["openapi"] = json!("3.0.3");
        Description::parse_read("shipstation-v2-openapi.yaml", &doc.to_string(), &patches(), readings())
            .unwrap_or_else(|e| panic!("ShipStation's file: {e}"))
    })
}

/// Everything in `exchanges` that the file does not allow, one line each; empty when all hold.
/// An exchange that reaches an operation orderbridge does not use is a problem too.
pub fn problems(exchanges: &[Exchange]) -> Vec<String> {
    let used: Vec<&str> = [
        "list_warehouses",
        "get_warehouse_by_id",
        "create_shipments",
        "get_shipment_by_external_id",
        "cancel_shipments",
        "list_labels",
        "getInventoryLevels",
    ]
    .to_vec();
    exchanges
        .iter()
        .flat_map(|e| {
            let mut found = description().check(e);
            if description().operation_id(e).is_some_and(|id| !used.contains(&id.as_str())) {
                found.push(format!("{}: not an operation orderbridge uses", e.line()));
            }
            found
        })
        .collect()
}
