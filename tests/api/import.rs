//! Imports: validation by line with nothing written, idempotency, formats, access, limits.

use crate::common::*;
use crate::fixtures::*;
use crate::shipments::order_item_ids;
use rocket::http::ContentType;
use serde_json::{Value, json};

fn ndjson(records: &[Value]) -> String {
    records.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")
}

async fn post(app: &TestApp, path: &str, body: String) -> Reply {
    app.send("POST", path, &app.admin, ContentType::new("application", "x-ndjson"), body).await
}

fn count(app: &TestApp, table: &str) -> i64 {
    app.pool().get().unwrap().query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0)).unwrap()
}

#[rocket::async_test]
async fn a_bad_order_record_is_reported_by_line_and_nothing_is_written() {
    let app = spawn_app().await;
    let w = world(&app, "Acme").await;
    let other = world(&app, "Other").await;
    let good = order(w.store, "OK");
    let cases: Vec<(&str, Value, &str)> = vec![
        ("missing store_id", json!({"external_id": "x"}), "store_id: is required"),
        ("unknown store", json!({"store_id": 999, "external_id": "x"}), "store_id: unknown store 999"),
        ("missing external_id", json!({"store_id": w.store}), "external_id: is required"),
        (
            "blank external_id",
            json!({"store_id": w.store, "external_id": " "}),
            "external_id: must not be empty",
        ),
        (
            "three decimals",
            json!({"store_id": w.store, "external_id": "x", "tax_amount": 1.234}),
            "tax_amount: must have at most 2 decimal places",
        ),
        (
            "too large",
            json!({"store_id": w.store, "external_id": "x", "shipping_amount": "1000000"}),
            "shipping_amount: must be a decimal",
        ),
        (
            "not a decimal",
            json!({"store_id": w.store, "external_id": "x", "declared_value": "ten"}),
            "declared_value: must be a decimal",
        ),
        (
            "item weight too large",
            json!({"store_id": w.store, "external_id": "x", "order_items": [{"weight": "100000000"}]}),
            "order_items[0][weight]: must be a decimal",
        ),
        (
            "country of three letters",
            json!({"store_id": w.store, "external_id": "x", "country_of_origin": "USA"}),
            "country_of_origin: must be a 2-letter country code",
        ),
        (
            "address country",
            json!({"store_id": w.store, "external_id": "x", "billing_address": {"country": "1"}}),
            "billing_address[country]: must be a 2-letter",
        ),
        (
            "bad date",
            json!({"store_id": w.store, "external_id": "x", "ordered_at": "someday"}),
            "ordered_at: ",
        ),
        (
            "bad boolean",
            json!({"store_id": w.store, "external_id": "x", "gift_wrap": 1, "signature_required": "maybe"}),
            "signature_required: must be true or false",
        ),
        (
            "custom not strings",
            json!({"store_id": w.store, "external_id": "x", "custom": {"n": 5}}),
            "custom[n]: must be a string",
        ),
        (
            "items not an array",
            json!({"store_id": w.store, "external_id": "x", "order_items": "many"}),
            "order_items: must be an array",
        ),
        (
            "item not an object",
            json!({"store_id": w.store, "external_id": "x", "order_items": [3]}),
            "order_items[0]: must be an object",
        ),
        (
            "negative quantity",
            json!({"store_id": w.store, "external_id": "x", "order_items": [{"quantity": -1}]}),
            "order_items[0][quantity]: must be an integer",
        ),
        (
            "warehouse of another customer",
            json!({"store_id": w.store, "external_id": "x", "fulfillment_warehouse_id": other.warehouse}),
            "fulfillment_warehouse_id: unknown warehouse",
        ),
        (
            "external_id a number",
            json!({"store_id": w.store, "external_id": 5}),
            "external_id: must be a string",
        ),
        ("not an object", json!([1]), "record: must be a JSON object"),
    ];
    for (what, bad, problem) in cases {
        let body = ndjson(&[good.clone(), bad]);
        let r = post(&app, "/import/orders", body).await;
        assert_error(&r, 422, "validation_failed");
        let details = r.body["error"]["details"].as_object().unwrap();
        assert_eq!(details.keys().collect::<Vec<_>>(), vec!["2"], "{what}: {r:?}");
        let text = details["2"].as_str().unwrap();
        assert!(text.contains(problem), "{what}: '{text}' should contain '{problem}'");
    }
    let r = post(&app, "/import/orders", format!("{}\n\n{{not json\n{}", good, json!({"store_id": w.store})))
        .await;
    let details = &r.body["error"]["details"];
    assert!(details["3"].as_str().unwrap().contains("is not valid JSON"), "{r:?}");
    assert!(details["4"].as_str().unwrap().contains("external_id: is required"), "blank lines count: {r:?}");
    assert_eq!(count(&app, "orders"), 0, "nothing was written");
    assert_eq!(count(&app, "order_items"), 0);
}

#[rocket::async_test]
async fn importing_twice_updates_in_place_and_keeps_item_ids() {
    let app = spawn_app().await;
    let w = world(&app, "Acme").await;
    let record = |price: &str, notes: &str| {
        json!({"store_id": w.store, "external_id": "X1", "notes": notes, "order_items": [
            {"external_order_item_id": "L1", "sku": "A", "unit_price": price},
            {"sku": "B"},
            {"external_order_item_id": "L3", "sku": "C"}]})
    };
    let first = post(&app, "/import/orders", ndjson(&[record("1.00", "first"), order(w.store, "X2")])).await;
    assert_eq!(first.body, json!({"created": 2, "updated": 0}), "{first:?}");
    let listed = app.get("/orders?page=1", &app.admin).await;
    let id = listed.body["orders"][0]["id"].as_i64().unwrap();
    let created_at = listed.body["orders"][0]["created_at"].clone();
    let items = order_item_ids(&app, id);
    // Ship the first and last items, then re-import with L3 gone.
    import_shipments(
        &app,
        vec![json!({"order_id": id, "warehouse_id": w.warehouse, "tracking_number": "T1",
        "order_items": [{"id": items[0]}, {"id": items[2]}]})],
    );
    let changed = json!({"store_id": w.store, "external_id": "X1", "notes": "second", "order_items": [
        {"external_order_item_id": "L1", "sku": "A", "unit_price": "2.50"}, {"sku": "B2"}]});
    let second =
        app.send("POST", "/import/orders", &app.admin, ContentType::JSON, json!([changed]).to_string()).await;
    assert_eq!(second.body, json!({"created": 0, "updated": 1}), "{second:?}");
    assert_eq!(count(&app, "orders"), 2, "no duplicates");
    let o = app.get(&format!("/orders/{id}"), &app.admin).await.body["order"].clone();
    assert_eq!(o["notes"], "second");
    assert_eq!(o["created_at"], created_at, "created_at is kept");
    let got: Vec<i64> =
        o["order_items"].as_array().unwrap().iter().map(|i| i["id"].as_i64().unwrap()).collect();
    assert_eq!(got, vec![items[0], items[1]], "L1 keeps its id by external id, B2 the id at its position");
    assert!(app.get(&format!("/orders/{id}"), &app.admin).await.text.contains(r#""unit_price":2.50"#));
    assert_eq!(count(&app, "order_items"), 3, "the dropped item is gone");
    let shipment = &app.get("/shipments?page=1", &app.admin).await.body["shipments"][0];
    assert_eq!(shipment["order_items"], json!([{"id": items[0]}]), "the dropped item's link is gone");
    // Shipments re-import by (order_id, tracking_number).
    let again = import_shipments(
        &app,
        vec![
            json!({"order_id": id, "warehouse_id": w.warehouse, "tracking_number": "T1", "state": "archived"}),
        ],
    );
    assert_eq!((again.created, again.updated), (0, 1));
    assert_eq!(count(&app, "shipments"), 1);
    assert_eq!(app.get("/shipments?page=1", &app.admin).await.body["shipments"][0]["state"], "archived");
}

#[rocket::async_test]
async fn a_bad_shipment_record_is_reported_by_line_and_nothing_is_written() {
    let app = spawn_app().await;
    let w = world(&app, "Acme").await;
    let other = world(&app, "Other").await;
    import_orders(&app, vec![order(w.store, "A"), order(w.store, "B")]);
    let orders = ids(&app.get("/orders?page=1", &app.admin).await.body, "orders");
    let item_of_b = order_item_ids(&app, orders[1])[0];
    let good = json!({"order_id": orders[0], "warehouse_id": w.warehouse, "tracking_number": "T"});
    let base = |extra: Value| {
        let mut v = good.clone();
        for (k, val) in extra.as_object().unwrap() {
            v[k] = val.clone();
        }
        v
    };
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "missing order",
            json!({"warehouse_id": w.warehouse, "tracking_number": "T"}),
            "order_id: is required",
        ),
        ("unknown order", base(json!({"order_id": 999})), "order_id: unknown order 999"),
        (
            "missing tracking",
            json!({"order_id": orders[0], "warehouse_id": w.warehouse}),
            "tracking_number: is required",
        ),
        (
            "missing warehouse",
            json!({"order_id": orders[0], "tracking_number": "T"}),
            "warehouse_id: is required",
        ),
        ("unknown warehouse", base(json!({"warehouse_id": 999})), "warehouse_id: unknown warehouse 999"),
        (
            "warehouse of another customer",
            base(json!({"warehouse_id": other.warehouse})),
            "belongs to another customer",
        ),
        ("unknown state", base(json!({"state": "shipped"})), "state: must be one of new, "),
        ("bad weight", base(json!({"weight": "1.255"})), "weight: must have at most 2 decimal places"),
        ("bad shipped_at", base(json!({"shipped_at": "whenever"})), "shipped_at: "),
        (
            "item of another order",
            base(json!({"order_items": [{"id": item_of_b}]})),
            "is not an item of order",
        ),
        (
            "item without id",
            base(json!({"order_items": [{"sku": "x"}]})),
            "order_items[0]: must be an object with an integer id",
        ),
    ];
    for (what, bad, problem) in cases {
        let r = post(&app, "/import/shipments", ndjson(&[good.clone(), bad])).await;
        assert_error(&r, 422, "validation_failed");
        let text = r.body["error"]["details"]["2"].as_str().unwrap_or_else(|| panic!("{what}: {r:?}"));
        assert!(text.contains(problem), "{what}: '{text}' should contain '{problem}'");
        assert!(r.body["error"]["details"].get("1").is_none(), "{what}");
    }
    assert_eq!(count(&app, "shipments"), 0, "nothing was written");
    let r = post(&app, "/import/shipments", ndjson(&[good])).await;
    assert_eq!(r.body, json!({"created": 1, "updated": 0}));
}

#[rocket::async_test]
async fn arrays_are_numbered_by_position_and_imports_stamp_their_sources() {
    let app = spawn_app().await;
    let w = world(&app, "Acme").await;
    let body = format!("[\n{},\n{}\n]", order(w.store, "A"), json!({"store_id": w.store}));
    let r = app.send("POST", "/import/orders", &app.admin, ContentType::JSON, body).await;
    assert_eq!(r.body["error"]["details"].as_object().unwrap().keys().collect::<Vec<_>>(), vec!["2"]);
    let r = app.send("POST", "/import/orders", &app.admin, ContentType::JSON, "[1,".to_string()).await;
    assert_error(&r, 400, "bad_request");
    let r = app.send("POST", "/import/orders", &app.admin, ContentType::JSON, "[]".to_string()).await;
    assert_eq!(r.body, json!({"created": 0, "updated": 0}));
    let conn = app.pool().get().unwrap();
    let stamp = |sql: &str| -> Option<i64> { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(stamp("SELECT order_imported_at FROM stores"), None);
    import_orders(&app, vec![order(w.store, "A")]);
    assert!(stamp("SELECT order_imported_at FROM stores").is_some());
    let id = ids(&app.get("/orders?page=1", &app.admin).await.body, "orders")[0];
    import_shipments(
        &app,
        vec![json!({"order_id": id, "warehouse_id": w.warehouse, "tracking_number": "T"})],
    );
    assert!(stamp("SELECT order_status_imported_at FROM warehouses").is_some());
}

#[rocket::async_test]
async fn only_admins_import_and_bodies_have_their_own_limit() {
    let app = spawn_app_with(|f| f.merge(("import_body_limit", 200))).await;
    let w = world(&app, "Acme").await;
    let r = app.send("POST", "/import/orders", &w.token, ContentType::JSON, "[]".to_string()).await;
    assert_error(&r, 403, "forbidden");
    let big = format!("[{}]", vec![order(w.store, "A").to_string(); 5].join(","));
    assert_error(&post(&app, "/import/orders", big).await, 413, "payload_too_large");
    let r = app.send("POST", "/import/orders", &app.admin, ContentType::Form, "a=b".to_string()).await;
    assert_error(&r, 415, "unsupported_media_type");
}

#[rocket::async_test]
async fn the_cli_import_reads_ndjson_files() {
    let app = spawn_app().await;
    let w = world(&app, "Acme").await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("orders.ndjson");
    std::fs::write(&path, ndjson(&[order(w.store, "A"), order(w.store, "B")])).unwrap();
    let counts = orderbridge::resources::import::import_file(
        &app.pool(),
        orderbridge::resources::import::What::Orders,
        path.to_str().unwrap(),
    )
    .unwrap();
    assert_eq!((counts.created, counts.updated), (2, 0));
    std::fs::write(&path, format!("  [{}, {{}}]", order(w.store, "A"))).unwrap();
    let err = orderbridge::resources::import::import_file(
        &app.pool(),
        orderbridge::resources::import::What::Orders,
        path.to_str().unwrap(),
    )
    .unwrap_err();
    assert!(err.contains("line 2: ") && err.contains("store_id: is required"), "{err}");
}
