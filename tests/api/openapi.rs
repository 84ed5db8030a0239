//! `GET /openapi.json` is kept true: every route Rocket mounts is described (method and
//! path), and real answers of every kind (lists, records, created ids, errors, sync runs,
//! import counts) validate against the schema the document gives for their status.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::common::{Reply, spawn_app};
use crate::sync_rig::Rig;

/// The document's schema for `$ref`s.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(path) => {
            let name = path.trim_start_matches("#/components/schemas/");
            let found = &doc["components"]["schemas"][name];
            assert!(!found.is_null(), "the document has no schema {name}");
            resolve(doc, found)
        }
        None => schema,
    }
}

fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The JSON Schema subset the document uses: type (one or a list), properties, required,
/// items, enum, $ref. Problems are collected with the path where they are.
fn validate(doc: &Value, schema: &Value, value: &Value, at: &str, problems: &mut Vec<String>) {
    let schema = resolve(doc, schema);
    if let Some(kinds) = schema.get("type") {
        let allowed: Vec<&str> = match kinds {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let actual = type_of(value);
        let fits = allowed.contains(&actual) || (actual == "integer" && allowed.contains(&"number"));
        if !fits {
            problems.push(format!("{at}: a {actual}, the document says {allowed:?}"));
            return;
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !value.is_null()
        && !options.contains(value)
    {
        problems.push(format!("{at}: {value} is none of {options:?}"));
    }
    if let Value::Object(fields) = value {
        for name in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
            let name = name.as_str().unwrap_or_default();
            if !fields.contains_key(name) {
                problems.push(format!("{at}: has no {name}, which the document requires"));
            }
        }
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, field) in fields {
                if let Some(described) = properties.get(name) {
                    validate(doc, described, field, &format!("{at}.{name}"), problems);
                }
            }
        }
    }
    if let (Value::Array(items), Some(item)) = (value, schema.get("items")) {
        for (i, element) in items.iter().enumerate() {
            validate(doc, item, element, &format!("{at}[{i}]"), problems);
        }
    }
}

/// Checks an answer against the document's response schema for its route and status.
fn check(doc: &Value, method: &str, path: &str, reply: &Reply) {
    let operation = &doc["paths"][path][method];
    assert!(operation.is_object(), "the document has no {method} {path}");
    let status = reply.status.code.to_string();
    let response = &operation["responses"][&status];
    assert!(
        response.is_object(),
        "{method} {path} answered {status}, which the document does not list: {}",
        reply.text
    );
    match response["content"]["application/json"]["schema"].as_object() {
        Some(_) => {
            let mut problems = Vec::new();
            validate(
                doc,
                &response["content"]["application/json"]["schema"],
                &reply.body,
                "$",
                &mut problems,
            );
            assert!(problems.is_empty(), "{method} {path} {status}: {problems:#?}\n{}", reply.text);
        }
        None => assert!(
            reply.text.is_empty(),
            "{method} {path} {status} has a body the document does not describe"
        ),
    }
}

#[rocket::async_test]
async fn every_mounted_route_is_described() {
    let app = spawn_app().await;
    let doc = app.get_anonymous("/openapi.json").await.body;
    assert_eq!(doc["openapi"], "3.1.0");
    let described: BTreeSet<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, ops)| {
            ops.as_object().unwrap().keys().map(move |method| (method.to_uppercase(), normalize(path)))
        })
        .collect();
    let mut missing = Vec::new();
    for route in app.client.rocket().routes() {
        let path = route.uri.path().to_string();
        let key = (route.method.as_str().to_string(), normalize(&path));
        if !described.contains(&key) {
            missing.push(format!("{} {path}", route.method));
        }
    }
    assert!(missing.is_empty(), "mounted but not in /openapi.json: {missing:?}");

    // Forms are described beside JSON; `?bodies=json` keeps JSON only, for generators
    // that cannot take several body types.
    let create = &doc["paths"]["/customers"]["post"]["requestBody"]["content"];
    assert!(
        create["application/x-www-form-urlencoded"].is_object() && create["multipart/form-data"].is_object()
    );
    let only_json = app.get_anonymous("/openapi.json?bodies=json").await.body;
    let create = only_json["paths"]["/customers"]["post"]["requestBody"]["content"].as_object().unwrap();
    assert_eq!(create.keys().collect::<Vec<_>>(), vec!["application/json"]);
    assert_eq!(only_json["paths"].as_object().unwrap().len(), doc["paths"].as_object().unwrap().len());
}

/// `/stores/<id>` and `/stores/{store_id}` are the same route; a trailing `/` is none.
fn normalize(path: &str) -> String {
    let path = path.split('?').next().unwrap_or_default();
    let segments: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| if s.starts_with('<') || s.starts_with('{') { "{}".to_string() } else { s.to_string() })
        .collect();
    format!("/{}", segments.join("/"))
}

#[rocket::async_test]
async fn real_answers_validate_against_the_described_schemas() {
    let rig = Rig::new(3).await;
    let app = &rig.app;
    let admin = rig.admin().to_string();
    let doc = app.get_anonymous("/openapi.json").await.body;

    check(&doc, "get", "/health", &app.get_anonymous("/health").await);
    check(&doc, "get", "/customers", &app.get("/customers", &admin).await);
    check(&doc, "get", "/customers/{id}", &app.get(&format!("/customers/{}", rig.customer_id), &admin).await);
    check(&doc, "get", "/customers/{id}", &app.get("/customers/999999", &admin).await);
    check(&doc, "get", "/customers", &app.get_anonymous("/customers").await);
    check(
        &doc,
        "post",
        "/customers",
        &app.post_json("/customers", &admin, json!({"company_name": "Docs Co"})).await,
    );
    check(&doc, "post", "/customers", &app.post_json("/customers", &admin, json!({})).await);
    check(
        &doc,
        "post",
        "/customers",
        &app.post_form("/customers", &admin, "company_name=Form+Co&city=Lyon").await,
    );
    check(
        &doc,
        "patch",
        "/customers/{id}",
        &app.patch_json(&format!("/customers/{}", rig.customer_id), &admin, json!({"city": "Austin"})).await,
    );
    check(&doc, "get", "/stores", &app.get("/stores", &admin).await);
    check(&doc, "get", "/stores/{id}", &app.get(&format!("/stores/{}", rig.store_id), &admin).await);
    check(&doc, "get", "/warehouses", &app.get("/warehouses", &admin).await);
    check(
        &doc,
        "get",
        "/warehouses/{id}",
        &app.get(&format!("/warehouses/{}", rig.warehouse_id), &admin).await,
    );
    check(&doc, "get", "/connections", &app.get("/connections", &admin).await);
    check(
        &doc,
        "get",
        "/connections/{id}",
        &app.get(&format!("/connections/{}", rig.connection_id), &admin).await,
    );
    let channels = format!("/connections/{}/channels", rig.connection_id);
    check(&doc, "get", "/connections/{id}/channels", &app.get(&channels, &admin).await);

    let product =
        app.post_json("/products", &admin, json!({"customer_id": rig.customer_id, "sku": "DOC-1"})).await;
    check(&doc, "post", "/products", &product);
    check(
        &doc,
        "get",
        "/products",
        &app.get(&format!("/products?customer_id={}", rig.customer_id), &admin).await,
    );
    check(&doc, "get", "/products/{id}", &app.get(&format!("/products/{}", product.id()), &admin).await);
    let collection = app
        .post_json("/variant_collections", &admin, json!({"name": "Docs", "product_ids": [product.id()]}))
        .await;
    check(&doc, "post", "/variant_collections", &collection);
    check(&doc, "get", "/variant_collections", &app.get("/variant_collections", &admin).await);

    // A pass, its run, the orders and shipments it brings, and the listing modes.
    let started = app.post_json(&format!("/connections/{}/sync", rig.connection_id), &admin, json!({})).await;
    check(&doc, "post", "/connections/{id}/sync", &started);
    let run = rig.wait_for(rig.connection_id, started.body["run_id"].as_i64().unwrap()).await;
    let runs = format!("/connections/{}/sync_runs", rig.connection_id);
    check(&doc, "get", "/connections/{id}/sync_runs", &app.get(&runs, &admin).await);
    check(
        &doc,
        "get",
        "/connections/{id}/sync_runs/{run_id}",
        &app.get(&format!("{runs}/{}", run["id"]), &admin).await,
    );
    check(&doc, "get", "/orders", &app.get("/orders?page=1&limit=2", &admin).await);
    check(&doc, "get", "/orders", &app.get("/orders?limit=2", &admin).await);
    check(&doc, "get", "/orders", &app.get("/orders?sort=nonsense", &admin).await);
    let order = rig.orders().await[0]["id"].as_i64().unwrap();
    check(&doc, "get", "/orders/{id}", &app.get(&format!("/orders/{order}"), &admin).await);
    check(
        &doc,
        "post",
        "/orders/{id}/retry",
        &app.post_json(&format!("/orders/{order}/retry"), &admin, json!({})).await,
    );
    rig.drop_shipments("s.csv", &format!("order_id,tracking_number\n{order},DOC-TRK\n"));
    rig.sync().await;
    check(&doc, "get", "/shipments", &app.get("/shipments?page=1", &admin).await);
    check(&doc, "get", "/shipments", &app.get("/shipments?limit=5", &admin).await);
    let shipment = rig.shipments().await[0]["id"].as_i64().unwrap();
    check(
        &doc,
        "post",
        "/shipments/{id}/retry",
        &app.post_json(&format!("/shipments/{shipment}/retry"), &admin, json!({})).await,
    );
    // A shipment the store refuses: a run with a problem, and an item with its latest error.
    let other = rig.orders().await[1]["id"].as_i64().unwrap();
    rig.drop_shipments("t.csv", &format!("order_id,tracking_number\n{other},{}\n", "9".repeat(51)));
    let with_problem = rig.sync().await;
    assert_eq!(with_problem["problems_count"], 1, "{with_problem}");
    check(&doc, "get", "/connections/{id}/sync_runs", &app.get(&runs, &admin).await);
    let refused =
        rig.shipments().await.iter().find(|s| s["order_id"] == other).unwrap()["id"].as_i64().unwrap();
    let why = app.get(&format!("/shipments/{refused}/sync"), &admin).await;
    assert!(why.body["last_error"].is_object(), "{why:?}");
    check(&doc, "get", "/shipments/{id}/sync", &why);
    check(&doc, "get", "/shipments/{id}/sync", &app.get("/shipments/999999/sync", &admin).await);
    check(&doc, "get", "/orders/{id}/sync", &app.get(&format!("/orders/{order}/sync"), &admin).await);
    check(&doc, "get", "/orders/{id}/sync", &app.get("/orders/999999/sync", &admin).await);
    let imported = app
        .send(
            "POST",
            "/import/orders",
            &admin,
            rocket::http::ContentType::new("application", "x-ndjson"),
            format!("{{\"store_id\":{},\"external_id\":\"doc-1\"}}\n", rig.store_id),
        )
        .await;
    check(&doc, "post", "/import/orders", &imported);

    // Switched off, a pass is refused with what is off.
    let off = app
        .patch_json(&format!("/connections/{}", rig.connection_id), &admin, json!({"enabled_at": null}))
        .await;
    check(&doc, "patch", "/connections/{id}", &off);
    let refused = app.post_json(&format!("/connections/{}/sync", rig.connection_id), &admin, json!({})).await;
    check(&doc, "post", "/connections/{id}/sync", &refused);

    // The token endpoint's own error shape.
    let bad_login = app.token_reply("admin", "wrong").await;
    check(&doc, "post", "/auth/token", &bad_login);
    check(&doc, "post", "/auth/token", &app.token_reply("admin", crate::common::ADMIN_PASSWORD).await);
}
