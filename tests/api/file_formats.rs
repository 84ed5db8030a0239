//! A file warehouse's formats as a client sets them up (files-csv-layouts.md §1 and §8,
//! files-x12.md §1): layouts and X12 settings round-trip exactly as given and are never
//! masked, every rule answers 422 naming its place, a ping checks them as create does, and a
//! request that gets 422 changes nothing.

use crate::common::*;
use crate::stores::{count, customer};
use rocket::http::Status;
use serde_json::{Value, json};

/// files-csv-layouts.md §10.1 (the demo's Landmark adapter), with a map entry whose words look
/// like secrets.
pub fn landmark_adapter() -> Value {
    let mut adapter = orderbridge::simulate::landmark_adapter("sftp://acme:s3cret@ftp.landmark.example/");
    let ship_method = &mut adapter["orders_layout"]["columns"][10];
    assert_eq!(ship_method["header"], "ShipMethod");
    ship_method["map"]["Donkey Key Rings"] = json!("secret token");
    adapter
}

/// files-x12.md §11's configuration, with every key a client may give.
pub fn x12_adapter() -> Value {
    json!({"connection_string": "sftp://acme:s3cret@edi.example/", "file_format": "x12",
           "x12": {"sender_id": "ACMEOB", "receiver_id": "WHSE3PL", "scac": {"UPS Ground": "UPSN"},
                   "scac_names": {"UPSN": "UPS"}, "time_zone": "America/Chicago", "newline": true,
                   "first_control_number": 7, "depositor_name": "Acme", "depositor_code": "ACME01"}})
}

fn warehouse(customer_id: i64, platform: &str, adapter: Value) -> Value {
    json!({"customer_id": customer_id, "name": "3PL", "platform": platform, "adapter": adapter})
}

#[rocket::async_test]
async fn layouts_and_x12_settings_come_back_exactly_as_given_with_only_the_password_masked() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    for adapter in [landmark_adapter(), x12_adapter()] {
        let created = app.post_json("/warehouses", &app.admin, warehouse(c, "sftp", adapter.clone())).await;
        assert_eq!(created.status, Status::Created, "{created:?}");
        let shown = app.get(&format!("/warehouses/{}", created.id()), &app.admin).await;
        let mut expected = adapter.clone();
        expected["connection_string"] =
            json!(adapter["connection_string"].as_str().unwrap().replace("s3cret", "********"));
        assert_eq!(shown.body["adapter"], expected, "as given, keys and order kept, nothing filled in");
        let listed = app.get("/warehouses", &app.admin).await;
        let row = listed.body.as_array().unwrap().iter().find(|w| w["id"] == created.id()).unwrap().clone();
        assert_eq!(row["adapter"], expected);
    }
}

/// (what, platform, adapter, the place the 422 names)
fn bad_adapters() -> Vec<(&'static str, &'static str, Value, &'static str)> {
    let with = |extra: Value| {
        let mut adapter = json!({"connection_string": "sftp://u:p@h/"});
        adapter.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        adapter
    };
    vec![
        ("unknown format", "sftp", with(json!({"file_format": "xml"})), "adapter[file_format]"),
        (
            "a layout typo",
            "sftp",
            with(json!({"orders_layout": {"delimeter": ";"}})),
            "adapter[orders_layout][delimeter]",
        ),
        (
            "a bad delimiter",
            "sftp",
            with(json!({"orders_layout": {"delimiter": "#"}})),
            "adapter[orders_layout][delimiter]",
        ),
        (
            "max_items without rows: order",
            "sftp",
            with(json!({"orders_layout": {"max_items": 3}})),
            "adapter[orders_layout][max_items]",
        ),
        (
            "an unknown field",
            "sftp",
            with(
                json!({"orders_layout": {"columns": ["sku", "quantity", {"header": "X", "field": "colour"}]}}),
            ),
            "adapter[orders_layout][columns][2][field]",
        ),
        (
            "h is no token",
            "sftp",
            with(json!({"orders_layout": {"date_format": "YYYY-MM-DD hh:mm"}})),
            "adapter[orders_layout][date_format]",
        ),
        (
            "no such zone",
            "sftp",
            with(json!({"shipments_layout": {"time_zone": "Mars/Olympus"}})),
            "adapter[shipments_layout][time_zone]",
        ),
        (
            "max_length in a read layout",
            "sftp",
            with(
                json!({"shipments_layout": {"columns": ["order_id", {"header": "T", "field": "tracking_number", "max_length": 5}]}}),
            ),
            "adapter[shipments_layout][columns][1][max_length]",
        ),
        (
            "no order match field",
            "sftp",
            with(json!({"shipments_layout": {"columns": ["tracking_number"]}})),
            "adapter[shipments_layout][columns]",
        ),
        (
            "the match field is not written",
            "sftp",
            with(json!({"orders_layout": {"columns": ["sku", "quantity", "order_id"]},
                     "shipments_layout": {"columns": ["external_display_id", "tracking_number"]}})),
            "adapter[shipments_layout][columns]",
        ),
        (
            "a file name without {batch}",
            "sftp",
            with(json!({"orders_layout": {"file_name": "orders-{connection_id}.csv"}})),
            "adapter[orders_layout][file_name]",
        ),
        (
            "a layout on an x12 warehouse",
            "sftp",
            with(
                json!({"file_format": "x12", "x12": {"sender_id": "AB", "receiver_id": "CD"}, "inventory_layout": {"header": false}}),
            ),
            "adapter[inventory_layout]",
        ),
        (
            "a layout on ShipBob",
            "shipbob",
            json!({"access_token": "wh-token-abcdefgh1234", "orders_layout": {}}),
            "adapter[orders_layout]",
        ),
        ("x12 without its settings", "sftp", with(json!({"file_format": "x12"})), "adapter[x12]"),
        (
            "x12 settings on a csv warehouse",
            "sftp",
            with(json!({"x12": {"sender_id": "AB", "receiver_id": "CD"}})),
            "adapter[x12]",
        ),
        (
            "a misspelt x12 key",
            "sftp",
            with(
                json!({"file_format": "x12", "x12": {"sender_id": "AB", "receiver_id": "CD", "reciever_qualifier": "01"}}),
            ),
            "adapter[x12][reciever_qualifier]",
        ),
        (
            "a separator twice",
            "sftp",
            with(
                json!({"file_format": "x12", "x12": {"sender_id": "AB", "receiver_id": "CD", "segment_terminator": "*"}}),
            ),
            "adapter[x12][segment_terminator]",
        ),
        (
            "a sender id too long",
            "sftp",
            with(
                json!({"file_format": "x12", "x12": {"sender_id": "ABCDEFGHIJKLMNOP", "receiver_id": "CD"}}),
            ),
            "adapter[x12][sender_id]",
        ),
    ]
}

fn detail_at<'a>(reply: &'a Reply, place: &str) -> Option<&'a Value> {
    reply.body["error"]["details"].get(place)
}

#[rocket::async_test]
async fn every_bad_layout_or_x12_setting_is_422_naming_its_place_at_create_patch_and_ping() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let good = app.post_json("/warehouses", &app.admin, warehouse(c, "sftp", landmark_adapter())).await;
    assert_eq!(good.status, Status::Created, "{good:?}");
    let path = format!("/warehouses/{}", good.id());
    let before = app.get(&path, &app.admin).await.body;
    let counted = count(&app, "warehouses");
    for (what, platform, adapter, place) in bad_adapters() {
        let body = warehouse(c, platform, adapter.clone());
        let create = app.post_json("/warehouses", &app.admin, body.clone()).await;
        assert_error(&create, 422, "validation_failed");
        assert!(detail_at(&create, place).is_some_and(Value::is_string), "{what}: {create:?}");
        let ping = app.post_json("/warehouses/ping", &app.admin, body).await;
        assert_eq!(ping.body, create.body, "{what}: an offline ping answers exactly as create");
        if platform == "sftp" {
            let patch = app.patch_json(&path, &app.admin, json!({"adapter": adapter})).await;
            assert_error(&patch, 422, "validation_failed");
            assert!(detail_at(&patch, place).is_some(), "{what}: {patch:?}");
        }
    }
    assert_eq!(count(&app, "warehouses"), counted, "nothing was created");
    assert_eq!(app.get(&path, &app.admin).await.body, before, "nothing was changed");
    for adapter in [landmark_adapter(), x12_adapter()] {
        let ping = app.post_json("/warehouses/ping", &app.admin, warehouse(c, "sftp", adapter)).await;
        assert_eq!(ping.status, Status::NoContent, "an offline ping is a free layout check: {ping:?}");
    }
}

#[rocket::async_test]
async fn null_layouts_are_absent_and_a_patch_replaces_the_adapter_with_its_layouts() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let adapter = json!({"connection_string": "sftp://u:p@h/", "orders_layout": null, "x12": null});
    let created = app.post_json("/warehouses", &app.admin, warehouse(c, "sftp", adapter)).await;
    assert_eq!(created.status, Status::Created, "{created:?}");
    let path = format!("/warehouses/{}", created.id());
    let patched = app.patch_json(&path, &app.admin, json!({"adapter": x12_adapter()})).await;
    assert_eq!(patched.status, Status::NoContent, "{patched:?}");
    let shown = app.get(&path, &app.admin).await.body;
    assert_eq!(shown["adapter"]["x12"], x12_adapter()["x12"]);
    assert_eq!(shown["adapter"]["connection_string"], "sftp://acme:********@edi.example/");
}
