//! File warehouses that speak the warehouse's language, end to end over a folder warehouse and
//! a simulated BigCommerce store: a 3PL's own CSV layout (files-csv-layouts.md) and X12 EDI
//! (files-x12.md), written by a real pass and answered by files a warehouse would write.

use serde_json::{Value, json};

use crate::file_formats::landmark_adapter;
use crate::sync_rig::{Rig, files_in, ids};

/// The rig's folder warehouse, its adapter replaced by `adapter` (its connection string kept).
async fn speak(rig: &Rig, mut adapter: Value) {
    let path = format!("/warehouses/{}", rig.warehouse_id);
    adapter["connection_string"] = json!(format!("file://{}", rig.root.display()));
    let r = rig.app.patch_json(&path, rig.admin(), json!({"adapter": adapter})).await;
    assert_eq!(r.status.code, 204, "{r:?}");
}

/// The order's items as (sku, quantity).
fn items(order: &Value) -> Vec<(String, i64)> {
    order["order_items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["sku"].as_str().unwrap_or_default().to_string(), i["quantity"].as_i64().unwrap()))
        .collect()
}

fn landmark_for_folder() -> Value {
    let mut adapter = landmark_adapter();
    adapter.as_object_mut().unwrap().remove("connection_string");
    adapter
}

#[rocket::async_test]
async fn a_landmark_layout_writes_its_template_and_reads_its_confirmations_and_levels() {
    let rig = Rig::new(2).await;
    speak(&rig, landmark_for_folder()).await;
    rig.enable_channel("inventory").await;
    let run = rig.sync_ok().await;
    assert_eq!(run["orders_sent"], 2, "{run}");
    let name = format!("acme-{}-1.csv", rig.connection_id);
    assert_eq!(files_in(&rig.dir("Import")), std::slice::from_ref(&name));
    let file = rig.read(&format!("Import/{name}"));
    let mut lines = file.split('\n');
    assert_eq!(
        lines.next().unwrap(),
        "ShipmentReference,OrderDate,ShipToName,ShipToAddress1,ShipToAddress2,ShipToCity,ShipToState,ShipToPostalCode,ShipToCountryCode,ShipToPhone,ShipMethod,ItemSku,ItemQuantity,ItemUnitPrice,ItemDescription"
    );
    let orders = rig.orders().await;
    let order_ids = ids(&orders);
    for order in &orders {
        let id = order["id"].as_i64().unwrap();
        assert!(file.contains(&format!("\nOB-{id},")), "every order is referenced with its prefix: {file}");
    }
    assert!(file.ends_with('\n') && !file.contains('\r'), "LF after every row: {file:?}");

    // The 3PL confirms both, one row per component, the first with two tracking numbers in
    // a cell; a freight row that is no fulfillment order is filtered out.
    let mut confirmation = String::from(
        "reference,Is Fulfillment Order,TRACKING NUMBER,Carrier,Service Code,Processed Date,Component SKU,Quantity\n",
    );
    for (n, order) in orders.iter().enumerate() {
        let id = order["id"].as_i64().unwrap();
        for (sku, quantity) in items(order) {
            confirmation.push_str(&format!(
                "OB-{id},Yes,\"1ZLM{n}, 1ZLMX{n}\",UPSN,GND,2026-03-08 0{}:30:00,{sku},{quantity}\n",
                1 + 2 * n
            ));
        }
    }
    confirmation.push_str("LTL-77,No,,,,2026-03-08 04:00:00,PALLET,1\n");
    let inbox = rig.dir("Confirmation");
    std::fs::create_dir_all(&inbox).unwrap();
    std::fs::write(inbox.join("Shipping_Confirmation_20260308.csv"), &confirmation).unwrap();
    std::fs::write(inbox.join("returns.csv"), "not a confirmation\n").unwrap();
    let levels = rig.dir("Inventory_Levels");
    std::fs::create_dir_all(&levels).unwrap();
    let skus: Vec<String> = orders.iter().flat_map(items).map(|(sku, _)| sku).collect();
    rig.add_products(&skus[..1]).await;
    std::fs::write(
        levels.join("inventory.csv"),
        format!(
            "SKU,SKU DESCRIPTION,ON HAND,AVAILABLE,RESERVE,FACILITY ID\n{0},x,40,35,5,12\n{0},x,10,8,2,14\n",
            skus[0]
        ),
    )
    .unwrap();

    let run = rig.sync_ok().await;
    assert_eq!(run["shipments_pulled"], 2, "{run}");
    assert_eq!(files_in(&inbox), ["returns.csv"], "a name the pattern does not match is left alone");
    assert_eq!(files_in(&inbox.join("processed")), ["Shipping_Confirmation_20260308.csv"]);
    let shipments = rig.shipments().await;
    let mut read: Vec<(i64, String, String, String, String)> = shipments
        .iter()
        .map(|s| {
            let text = |k: &str| s[k].as_str().unwrap_or_default().to_string();
            (
                s["order_id"].as_i64().unwrap(),
                text("tracking_number"),
                text("carrier_name"),
                text("service_level"),
                text("shipped_at"),
            )
        })
        .collect();
    read.sort();
    assert_eq!(
        read,
        vec![
            (order_ids[0], "1ZLM0".into(), "UPS".into(), "GND".into(), "2026-03-08T07:30:00.000Z".into()),
            (order_ids[1], "1ZLM1".into(), "UPS".into(), "GND".into(), "2026-03-08T08:30:00.000Z".into()),
        ],
        "the first number of the cell; the carrier mapped; Chicago wall time on the day DST starts"
    );
    assert_eq!(rig.stock_sent().get(&skus[0]), Some(&35), "facility 12 only: {:?}", rig.stock_sent());
}

#[rocket::async_test]
async fn an_order_wider_than_max_items_is_errored_by_name_and_goes_once_the_layout_is_widened() {
    let rig = Rig::new(6).await;
    let layout = json!({"orders_layout": {"delimiter": "\t", "header": false, "rows": "order", "max_items": 1,
        "line_ending": "crlf", "file_name": "wfi-{date}-{connection_id}-{batch}.txt", "time_zone": "America/New_York",
        "columns": [{"header": "Name", "field": "ship_name"}, {"header": "SKU {n}", "field": "sku"},
                    {"header": "Qty {n}", "field": "quantity"}, {"header": "Order Number", "field": "order_id"}]}});
    speak(&rig, layout.clone()).await;
    let run = rig.sync().await;
    let orders = rig.orders().await;
    let wide: Vec<&Value> = orders.iter().filter(|o| items(o).len() > 1).collect();
    let narrow = orders.len() - wide.len();
    assert!(!wide.is_empty(), "the simulated store has orders of several items");
    assert_eq!(run["orders_sent"].as_i64(), Some(narrow as i64), "{run}");
    let problems = run["problems"].as_array().unwrap();
    for order in &wide {
        let id = order["id"].as_i64().unwrap();
        assert_eq!(order["fulfillment_state"], "errored", "{order}");
        let message = format!("order has {} items; orders_layout.max_items is 1", items(order).len());
        assert!(
            problems.iter().any(|p| p["ref"] == json!(id.to_string())
                && p["kind"] == "order"
                && p["message"] == json!(message)),
            "{run}"
        );
        let why = rig.app.get(&format!("/orders/{id}/sync"), rig.admin()).await;
        assert_eq!(why.body["last_error"]["message"], json!(message), "{why:?}");
    }
    for name in rig.files("orders") {
        let text = rig.read(&format!("orders/{name}"));
        assert!(
            name.starts_with("wfi-") && name.ends_with(&format!("-{}-1.txt", rig.connection_id)),
            "{name}"
        );
        assert!(text.split_inclusive('\n').all(|line| line.ends_with("\r\n")), "CRLF: {text:?}");
    }

    let mut wider = layout;
    wider["orders_layout"]["max_items"] = json!(5);
    speak(&rig, wider).await;
    for order in &wide {
        let r = rig.retry(&format!("orders/{}", order["id"])).await;
        assert_eq!(r.status.code, 204, "{r:?}");
    }
    let run = rig.sync_ok().await;
    assert_eq!(run["orders_sent"].as_i64(), Some(wide.len() as i64), "{run}");
    let second = rig.files("orders").into_iter().find(|n| n.ends_with("-2.txt")).expect("a second batch");
    let text = rig.read(&format!("orders/{second}"));
    assert_eq!(text.lines().next().unwrap().split('\t').count(), 1 + 2 * 5 + 1, "five item groups: {text:?}");
}

/// An X12 interchange a warehouse writes, `*` `~` separated, from ISA to IEA around `sets`
/// (each set's segments without ST/SE, which are added and counted here).
fn interchange(control: i64, group: &str, sets: &[(&str, Vec<String>)]) -> String {
    let mut out = format!(
        "ISA*00*          *00*          *ZZ*WHSE3PL        *ZZ*ACMEOB         *260308*1430*U*00401*{control:09}*0*P*>~GS*{group}*WHSE3PL*ACMEOB*20260308*1430*{control}*X*004010~"
    );
    for (n, (kind, segments)) in sets.iter().enumerate() {
        out.push_str(&format!("ST*{kind}*{:04}~", n + 1));
        for segment in segments {
            out.push_str(segment);
            out.push('~');
        }
        out.push_str(&format!("SE*{}*{:04}~", segments.len() + 2, n + 1));
    }
    out.push_str(&format!("GE*{}*{control}~IEA*1*{control:09}~", sets.len()));
    out
}

fn x12_for_folder() -> Value {
    json!({"file_format": "x12", "x12": {"sender_id": "ACMEOB", "receiver_id": "WHSE3PL", "first_control_number": 7}})
}

/// The segments of an X12 file, split at `~`.
fn segments(text: &str) -> Vec<String> {
    text.split('~').filter(|s| !s.is_empty()).map(str::to_string).collect()
}

#[rocket::async_test]
async fn orders_go_as_a_940_and_come_back_through_945s_while_a_997_turns_one_back() {
    let rig = Rig::new(2).await;
    speak(&rig, x12_for_folder()).await;
    let run = rig.sync_ok().await;
    assert_eq!(run["orders_sent"], 2, "{run}");
    let name = format!("940-{}-7.edi", rig.connection_id);
    assert_eq!(rig.files("orders"), std::slice::from_ref(&name), "named after its control number");
    let sent = segments(&rig.read(&format!("orders/{name}")));
    assert!(sent[0].starts_with("ISA*00*") && sent[0].len() == 105, "{:?}", sent[0]);
    assert!(sent[1].starts_with("GS*OW*ACMEOB*WHSE3PL*"), "{:?}", sent[1]);
    let orders = rig.orders().await;
    let order_ids = ids(&orders);
    let references: Vec<&String> = sent.iter().filter(|s| s.starts_with("W05*")).collect();
    assert_eq!(references, [&format!("W05*N*{}", order_ids[0]), &format!("W05*N*{}", order_ids[1])]);

    // The warehouse acknowledges the group, rejecting the second set, and ships the first order.
    let ack = interchange(
        600,
        "FA",
        &[(
            "997",
            vec![
                "AK1*OW*7".into(),
                "AK2*940*0001".into(),
                "AK5*A".into(),
                "AK2*940*0002".into(),
                "AK3*N4*6**8".into(),
                "AK4*2**7*XX".into(),
                "AK5*R*5".into(),
                "AK9*P*2*2*1".into(),
            ],
        )],
    );
    let (first, second) = (&orders[0], &orders[1]);
    let mut shipped = vec![
        "W06*F*".to_string() + &order_ids[0].to_string() + "*20260308*SHIP1",
        "G62*11*20260308*8*1430".into(),
        "W27*U*UPSN*GROUND".into(),
        "LX*1".into(),
        "MAN*CP*1ZX12A".into(),
    ];
    for (sku, quantity) in items(first) {
        shipped.push(format!("W12*CC*{quantity}*{quantity}**EA**SK*{sku}"));
    }
    let shipment = interchange(601, "SW", &[("945", shipped)]);
    rig.drop_shipments("ack.edi", &ack);
    rig.drop_shipments("ship.edi", &shipment);
    let run = rig.sync_ok().await;
    assert_eq!(run["shipments_pulled"], 1, "{run}");
    let shipments = rig.shipments().await;
    assert_eq!(shipments.len(), 1);
    assert_eq!(
        (
            &shipments[0]["tracking_number"],
            &shipments[0]["carrier_name"],
            &shipments[0]["service_level"],
            &shipments[0]["shipped_at"]
        ),
        (&json!("1ZX12A"), &json!("UPS"), &json!("GROUND"), &json!("2026-03-08T14:30:00.000Z"))
    );
    let turned_back = rig.app.get(&format!("/orders/{}", second["id"]), rig.admin()).await;
    assert_eq!(turned_back.body["order"]["fulfillment_state"], "errored", "{turned_back:?}");
    let why = rig.app.get(&format!("/orders/{}/sync", second["id"]), rig.admin()).await;
    assert!(why.body["last_error"]["message"].as_str().unwrap().contains("AK5 R 5"), "{why:?}");
    assert_eq!(files_in(&rig.dir("shipments").join("processed")), ["ack.edi", "ship.edi"]);
    // Our 997 for the 945 (none for the 997): the counter's next numbers, in the orders folder.
    let ours: Vec<String> = rig.files("orders").into_iter().filter(|n| n.starts_with("997-")).collect();
    assert_eq!(ours, [format!("997-{}-8.edi", rig.connection_id)], "{:?}", rig.files("orders"));
    let answer = segments(&rig.read(&format!("orders/{}", ours[0])));
    assert!(
        answer.contains(&"AK1*SW*601".to_string()) && answer.contains(&"AK9*A*1*1*1".to_string()),
        "{answer:?}"
    );

    // Retried, the order goes again under the same reference in a new interchange.
    let r = rig.retry(&format!("orders/{}", second["id"])).await;
    assert_eq!(r.status.code, 204, "{r:?}");
    let run = rig.sync_ok().await;
    assert_eq!(run["orders_sent"], 1, "{run}");
    let again = format!("940-{}-9.edi", rig.connection_id);
    let resent = segments(&rig.read(&format!("orders/{again}")));
    assert!(resent.contains(&format!("W05*N*{}", order_ids[1])), "{resent:?}");
}

#[rocket::async_test]
async fn a_hostile_interchange_is_failed_whole_named_in_the_run_and_the_pass_goes_on() {
    let rig = Rig::new(1).await;
    speak(&rig, x12_for_folder()).await;
    rig.sync_ok().await;
    let order = rig.orders().await.remove(0);
    let id = order["id"].as_i64().unwrap();
    let mut good = vec![format!("W06*F*{id}*20260308*S"), "LX*1".into(), "MAN*CP*1ZGOOD".into()];
    good.push("W12*CC*1*1**EA**SK*NOPE".into());
    let mut wrong_count = interchange(700, "SW", &[("945", good)]);
    wrong_count = wrong_count.replace("SE*6*0001", "SE*9*0001");
    rig.drop_shipments("a-truncated.edi", "ISA*00*  ");
    rig.drop_shipments("b-count.edi", &wrong_count);
    rig.drop_shipments("c-endless.edi", &"W12*CC*1".repeat(1 << 20));
    let run = rig.sync().await;
    assert_eq!(run["status"], "succeeded", "a failed X12 file does not fail the pass: {run}");
    assert_eq!(run["shipments_pulled"], 0, "{run}");
    let failed = files_in(&rig.dir("shipments").join("failed"));
    assert_eq!(
        failed,
        [
            "a-truncated.edi",
            "a-truncated.edi.errors.txt",
            "b-count.edi",
            "b-count.edi.errors.txt",
            "c-endless.edi",
            "c-endless.edi.errors.txt"
        ]
    );
    let report = std::fs::read_to_string(rig.dir("shipments").join("failed/b-count.edi.errors.txt")).unwrap();
    assert!(report.contains("(SE), set 0001: SE01 is 9"), "{report}");
    let problems = run["problems"].as_array().unwrap();
    for name in ["a-truncated.edi", "b-count.edi", "c-endless.edi"] {
        assert!(
            problems.iter().any(|p| p["kind"] == "file" && p["ref"] == name && p["step"] == "pull_shipments"),
            "{name}: {run}"
        );
    }
    // The count error is a syntax error: its 997 rejects; the unreadable files get none.
    let ours: Vec<String> = rig.files("orders").into_iter().filter(|n| n.starts_with("997-")).collect();
    assert_eq!(ours.len(), 1, "{ours:?}");
    let answer = rig.read(&format!("orders/{}", ours[0]));
    assert!(answer.contains("AK5*R*4") && answer.contains("AK9*R*1*1*0"), "{answer}");
}

#[rocket::async_test]
async fn an_846_sums_each_sku_over_its_locations() {
    let rig = Rig::new(1).await;
    speak(&rig, x12_for_folder()).await;
    rig.enable_channel("inventory").await;
    rig.add_products(&["MUG-CREME", "TWL-BGE"]).await;
    let stock = interchange(
        800,
        "IB",
        &[(
            "846",
            vec![
                "BIA*00*MM*INV1*20260308".into(),
                "LIN*1*SK*MUG-CREME".into(),
                "QTY*33*40*EA".into(),
                "QTY*17*45*EA".into(),
                "LIN*2*SK*MUG-CREME".into(),
                "QTY*33*8*EA".into(),
                "LIN*3*VN*TWL-BGE".into(),
                "QTY*33*0*EA".into(),
                "LIN*4*SK*NO-QTY".into(),
            ],
        )],
    );
    rig.drop_stock("levels.edi", &stock);
    let run = rig.sync_ok().await;
    let sent = rig.stock_sent();
    assert_eq!((sent.get("MUG-CREME"), sent.get("TWL-BGE")), (Some(&48), Some(&0)), "{sent:?}");
    let problems = run["problems"].as_array().unwrap();
    assert!(problems.iter().any(|p| p["step"] == "stock" && p["ref"] == "NO-QTY"), "{run}");
    assert_eq!(files_in(&rig.dir("inventory").join("processed")), ["levels.edi"]);
}

/// files-x12.md §3: one counter per warehouse for every interchange written to it, all its
/// connections together; a number is never used for two documents.
#[rocket::async_test]
async fn control_numbers_count_per_warehouse_across_its_connections() {
    let rig = Rig::new(1).await;
    speak(&rig, x12_for_folder()).await;
    rig.sync_ok().await;
    let first = format!("940-{}-7.edi", rig.connection_id);
    assert_eq!(rig.files("orders"), std::slice::from_ref(&first));
    // A second store of the customer with its own connection to the same warehouse: it reads
    // the warehouse's files too and answers them.
    rig.bc().add_store("second-store", "second-token-0123456789");
    let store = json!({"customer_id": rig.customer_id, "name": "Second", "platform": "big_commerce",
                       "adapter": {"access_token": "second-token-0123456789", "store_hash": "second-store"},
                       "enabled_at": "now"});
    let store_id = rig.app.post_json("/stores", rig.admin(), store).await.id();
    let body = json!({"name": "second", "customer_id": rig.customer_id, "store_id": store_id,
                      "warehouse_id": rig.warehouse_id, "enabled_at": "now"});
    let second = rig.app.post_json("/connections", rig.admin(), body).await.id();
    crate::sync_rig::enable_channel(&rig.app, second, "sales").await;
    let order = rig.orders().await.remove(0);
    let id = order["id"].as_i64().unwrap();
    let shipped = vec![format!("W06*F*{id}*20260308*S"), "LX*1".into(), "MAN*CP*1ZTWO".into()];
    rig.drop_shipments("ship.edi", &interchange(42, "SW", &[("945", shipped)]));
    let run = rig.sync_connection_ok(second).await;
    assert_eq!(run["shipments_pulled"], 1, "{run}");
    let answer = format!("997-{second}-8.edi");
    assert!(rig.files("orders").contains(&answer), "the warehouse's next number: {:?}", rig.files("orders"));
    // Raising first_control_number moves the counter on; lowering it never goes back.
    let mut raised = x12_for_folder();
    raised["x12"]["first_control_number"] = json!(50);
    speak(&rig, raised).await;
    rig.drop_shipments(
        "again.edi",
        &interchange(
            43,
            "SW",
            &[("945", vec![format!("W06*F*{id}*20260308*S"), "LX*1".into(), "MAN*CP*1ZTWO".into()])],
        ),
    );
    rig.sync_connection_ok(rig.connection_id).await;
    assert!(
        rig.files("orders").contains(&format!("997-{}-50.edi", rig.connection_id)),
        "{:?}",
        rig.files("orders")
    );
    let mut lowered = x12_for_folder();
    lowered["x12"]["first_control_number"] = json!(3);
    speak(&rig, lowered).await;
    rig.drop_shipments(
        "third.edi",
        &interchange(
            44,
            "SW",
            &[("945", vec![format!("W06*F*{id}*20260308*S"), "LX*1".into(), "MAN*CP*1ZTWO".into()])],
        ),
    );
    rig.sync_connection_ok(rig.connection_id).await;
    assert!(
        rig.files("orders").contains(&format!("997-{}-51.edi", rig.connection_id)),
        "{:?}",
        rig.files("orders")
    );
}

/// files-csv-layouts.md §1: a send written again after it failed keeps the file name recorded
/// with it, whatever the layout's template says by then, and is written in the layout in force.
#[rocket::async_test]
async fn a_send_written_again_keeps_its_first_name() {
    let rig = Rig::new(1).await;
    let layout = |name: &str, delimiter: &str| json!({"orders_layout": {"file_name": name, "delimiter": delimiter, "columns": ["order_id", "sku", "quantity"]}});
    speak(&rig, layout("first-{connection_id}-{batch}.csv", ",")).await;
    // The orders folder cannot be made: the send fails after it was named.
    std::fs::write(rig.dir("orders"), "in the way").unwrap();
    let run = rig.sync().await;
    assert_eq!(run["status"], "failed", "{run}");
    std::fs::remove_file(rig.dir("orders")).unwrap();
    speak(&rig, layout("second-{connection_id}-{batch}.csv", ";")).await;
    let run = rig.sync_ok().await;
    assert_eq!(run["orders_sent"], 1, "{run}");
    let name = format!("first-{}-1.csv", rig.connection_id);
    assert_eq!(rig.files("orders"), std::slice::from_ref(&name));
    let text = rig.read(&format!("orders/{name}"));
    assert!(text.starts_with("order_id;sku;quantity\n"), "the layout in force: {text}");
}
