//! Shipments: the document, every filter, sorting, tenancy.

use crate::common::*;
use crate::fixtures::*;
use rocket::http::Status;
use serde_json::{Value, json};

struct Shipped {
    a: World,
    b: World,
    /// Shipment ids in import order.
    s: Vec<i64>,
    orders: Vec<i64>,
}

async fn shipped(app: &TestApp) -> Shipped {
    let a = world(app, "Acme").await;
    let b = world(app, "Bluebird").await;
    let west = warehouse(app, a.customer, "Acme West");
    import_orders(app, vec![order(a.store, "A1"), order(a.store, "A2"), order(b.store, "B1")]);
    let orders = ids(&app.get("/orders?page=1", &app.admin).await.body, "orders");
    let items_a1 = order_item_ids(app, orders[0]);
    let records = vec![
        json!({"order_id": orders[0], "warehouse_id": a.warehouse, "tracking_number": "1Z999", "state": "notified_shipped",
               "shipped_at": at(-3 * DAY), "weight": "1.25", "carrier_name": "UPS", "service_level": "Ground",
               "external_shipping_description": "UPS Ground", "order_items": [{"id": items_a1[0]}]}),
        json!({"order_id": orders[1], "warehouse_id": west, "tracking_number": "9400111", "state": "new",
               "shipped_at": at(-HOUR)}),
        json!({"order_id": orders[2], "warehouse_id": b.warehouse, "tracking_number": "7777", "state": "archived",
               "shipped_at": at(-10 * DAY), "weight": 2}),
        json!({"order_id": orders[0], "warehouse_id": west, "tracking_number": "1Z000", "state": "errored_processing"}),
    ];
    let counts = import_shipments(app, records);
    assert_eq!(counts.created, 4);
    let s = ids(&app.get("/shipments?page=1", &app.admin).await.body, "shipments");
    Shipped { a, b, s, orders }
}

pub fn order_item_ids(app: &TestApp, order: i64) -> Vec<i64> {
    let conn = app.pool().get().unwrap();
    let mut stmt = conn.prepare("SELECT id FROM order_items WHERE order_id = ?1 ORDER BY position").unwrap();
    stmt.query_map([order], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

#[rocket::async_test]
async fn shipments_carry_every_field_with_weight_as_text_or_left_out() {
    let app = spawn_app().await;
    let w = shipped(&app).await;
    let r = app.get("/shipments?page=1", &app.admin).await;
    assert_eq!(r.status, Status::Ok);
    let first = &r.body["shipments"][0];
    assert_eq!(first["tracking_number"], "1Z999");
    assert_eq!(first["weight"], "1.25");
    assert_eq!(first["order_id"], w.orders[0]);
    assert_eq!(first["warehouse_id"], w.a.warehouse);
    assert_eq!(first["state"], "notified_shipped");
    assert_eq!(first["carrier_name"], "UPS");
    assert_eq!(first["order_items"], json!([{"id": order_item_ids(&app, w.orders[0])[0]}]));
    assert_eq!(first.as_object().unwrap().len(), 12, "{first}");
    let second = &r.body["shipments"][1];
    assert!(second.get("weight").is_none(), "unknown weight is left out: {second}");
    assert_eq!(second["order_items"], json!([]));
    assert_eq!(second["carrier_name"], Value::Null);
    assert_eq!(r.body["shipments"][2]["weight"], "2.00");
    assert_eq!(r.body["shipments"][3]["shipped_at"], Value::Null);
}

#[rocket::async_test]
async fn every_shipment_filter_selects_what_it_names() {
    let app = spawn_app().await;
    let w = shipped(&app).await;
    let s = &w.s;
    let cases: Vec<(String, Vec<i64>)> = vec![
        ("shipped_at_min=2 days ago".into(), vec![s[1]]),
        ("shipped_at_max=now".into(), vec![s[0], s[1], s[2]]),
        (format!("shipped_at_min={}", &at(-4 * DAY)[..10]), vec![s[0], s[1]]),
        ("created_at_min=1 hour ago".into(), s.clone()),
        ("created_at_max=2020-01-01T00:00:00Z".into(), vec![]),
        ("tracking_number=7777".into(), vec![s[2]]),
        (format!("store_id={}", w.a.store), vec![s[0], s[1], s[3]]),
        ("store_id=Bluebird Store".into(), vec![s[2]]),
        (format!("warehouse_id={}", w.a.warehouse), vec![s[0]]),
        ("warehouse_id=Acme West".into(), vec![s[1], s[3]]),
        (format!("customer_id={}", w.b.customer), vec![s[2]]),
        ("customer_id=Acme".into(), vec![s[0], s[1], s[3]]),
        ("customer_id=Nobody".into(), vec![]),
        ("state=archived".into(), vec![s[2]]),
        ("state=new&warehouse_id=Acme West".into(), vec![s[1]]),
    ];
    for (query, want) in cases {
        for mode in ["&page=1", ""] {
            let r = app.get(&format!("/shipments?{}{mode}", query.replace(' ', "+")), &app.admin).await;
            assert_eq!(r.status, Status::Ok, "{query}: {r:?}");
            assert_eq!(ids(&r.body, "shipments"), want, "{query}{mode}");
            assert_eq!(r.body["total_count"], want.len(), "{query}{mode}");
        }
    }
    for (query, parameter) in
        [("state=shipped", "state"), ("shipped_at_min=garbage", "shipped_at_min"), ("sort=weight", "sort")]
    {
        let r = app.get(&format!("/shipments?{query}"), &app.admin).await;
        assert_error(&r, 400, "bad_request");
        assert!(r.body["error"]["details"][parameter].is_string(), "{query}: {r:?}");
    }
}

#[rocket::async_test]
async fn shipments_sort_by_each_sortable_property() {
    let app = spawn_app().await;
    let w = shipped(&app).await;
    let s = &w.s;
    let cases = [
        ("sort=tracking_number", vec![s[3], s[0], s[2], s[1]]),
        ("sort=-tracking_number", vec![s[1], s[2], s[0], s[3]]),
        ("sort=shipped_at", vec![s[3], s[2], s[0], s[1]]),
        ("sort=-shipped_at", vec![s[1], s[0], s[2], s[3]]),
        ("sort=created_at", s.clone()),
        ("sort=warehouse_id", vec![s[0], s[2], s[1], s[3]]),
        ("sort=state", vec![s[2], s[3], s[1], s[0]]),
        ("sort=state&sort=id", s.clone()),
        ("sort=-id", vec![s[3], s[2], s[1], s[0]]),
    ];
    for (query, want) in cases {
        assert_eq!(
            ids(&app.get(&format!("/shipments?{query}&page=1"), &app.admin).await.body, "shipments"),
            want,
            "{query}"
        );
        let first = app.get(&format!("/shipments?{query}&limit=3"), &app.admin).await;
        let mut walked = ids(&first.body, "shipments");
        let session = first.body["session_id"].as_str().unwrap();
        walked.extend(ids(
            &app.get(&format!("/shipments?session_id={session}"), &app.admin).await.body,
            "shipments",
        ));
        assert_eq!(walked, want, "session walk of {query}");
    }
}

#[rocket::async_test]
async fn a_customer_user_sees_only_shipments_of_its_orders() {
    let app = spawn_app().await;
    let w = shipped(&app).await;
    let s = &w.s;
    assert_eq!(
        ids(&app.get("/shipments?page=1", &w.a.token).await.body, "shipments"),
        vec![s[0], s[1], s[3]]
    );
    assert_eq!(ids(&app.get("/shipments", &w.b.token).await.body, "shipments"), vec![s[2]]);
    let r = app.get(&format!("/shipments?page=1&customer_id={}", w.b.customer), &w.a.token).await;
    assert_eq!(r.body["shipments"], json!([]));
}
