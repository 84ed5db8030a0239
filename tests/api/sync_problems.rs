//! Seeing why (issue 29, CONTRACT §11 "Runs"): what a pass could not do for one item is in
//! its run's `problems`, and an order's or shipment's latest error in its `/sync` route.

use serde_json::{Value, json};

use crate::common::assert_error;
use crate::sync_rig::{HASH, Rig, assert_failed};

async fn first_order(rig: &Rig) -> i64 {
    rig.orders().await[0]["id"].as_i64().unwrap()
}

fn is_date(v: &Value) -> bool {
    v.as_str().is_some_and(|s| s.len() == 24 && s.ends_with('Z'))
}

#[rocket::async_test]
async fn a_tracking_number_the_store_refuses_is_a_problem_of_the_run_and_the_shipment_says_why() {
    let rig = Rig::new(1).await;
    rig.sync().await;
    let order = first_order(&rig).await;
    // BigCommerce takes at most 50 characters.
    let tracking = format!("1Z{}", "7".repeat(49));
    assert_eq!(tracking.len(), 51);
    rig.drop_shipments("s.csv", &format!("order_id,tracking_number\n{order},{tracking}\n"));
    let run = rig.sync().await;

    let shipment = &rig.shipments().await[0];
    assert_eq!(shipment["state"], "errored_notifying_of_shipment", "{shipment}");
    let id = shipment["id"].as_i64().unwrap();
    assert_eq!(run["problems_count"], 1, "{run}");
    let problems = run["problems"].as_array().expect("problems");
    assert_eq!(problems.len(), 1, "{run}");
    let (step, kind, reference) = (&problems[0]["step"], &problems[0]["kind"], &problems[0]["ref"]);
    assert_eq!((step, kind, reference), (&json!("notify"), &json!("shipment"), &json!(id.to_string())));
    let message = problems[0]["message"].as_str().unwrap();
    assert!(message.contains("51 characters") && message.contains("at most 50"), "the reason: {message}");

    // The list shows the same problems as the run itself.
    let runs = rig.app.get(&format!("/connections/{}/sync_runs", rig.connection_id), rig.admin()).await;
    assert_eq!(runs.body[0]["id"], run["id"]);
    assert_eq!(runs.body[0]["problems"], run["problems"]);
    assert_eq!(runs.body[1]["problems"], json!([]), "the first pass had none");
    assert_eq!(runs.body[1]["problems_count"], 0);

    let why = rig.app.get(&format!("/shipments/{id}/sync"), rig.admin()).await;
    assert_eq!(why.status.code, 200, "{why:?}");
    assert_eq!(why.body["attempts"], 1, "{why:?}");
    assert_eq!(why.body["last_error"]["step"], "notify");
    assert_eq!(why.body["last_error"]["message"], message);
    assert!(is_date(&why.body["last_error"]["at"]), "{why:?}");
    assert!(why.body["next_attempt_at"].is_null(), "an errored shipment is not tried again by itself");

    // A retry starts over: no tries, no error.
    assert_eq!(rig.retry(&format!("shipments/{id}")).await.status.code, 204);
    let why = rig.app.get(&format!("/shipments/{id}/sync"), rig.admin()).await;
    assert_eq!(why.body, json!({"attempts": 0, "last_error": null, "next_attempt_at": null}));
}

/// A store that fails delays the notification, saying when it is tried next (a delay is no
/// problem yet), then errors it after the last attempt (a problem now); a retry notifies it,
/// and only an errored shipment can be retried.
#[rocket::async_test]
async fn a_shipment_that_used_up_its_tries_is_a_problem_and_a_delayed_one_says_when_it_is_tried_next() {
    let rig = Rig::with(1, |f| f.merge(("sync_max_attempts", 2))).await;
    rig.sync().await;
    let order = first_order(&rig).await;
    rig.drop_shipments("s.csv", &format!("order_id,tracking_number\n{order},1Z-1\n"));
    rig.bc().fail_next(HASH, "/shipments", 500, 100);
    let run = rig.sync().await;
    assert_failed(&run, Some("notify"), "adapter_unreachable", &[]);
    let shipment = &rig.shipments().await[0];
    assert_eq!(shipment["state"], "delayed_notifying_of_shipment");
    let id = shipment["id"].as_i64().unwrap();
    assert_eq!(run["problems_count"], 0, "a delay is not a problem yet: {run}");
    let why = rig.app.get(&format!("/shipments/{id}/sync"), rig.admin()).await;
    assert_eq!(why.body["attempts"], 1, "{why:?}");
    assert_eq!(why.body["last_error"]["step"], "notify");
    assert!(is_date(&why.body["next_attempt_at"]), "{why:?}");

    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let run = rig.sync().await;
    let state = &rig.shipments().await[0]["state"];
    assert_eq!(state, "errored_notifying_of_shipment", "after sync_max_attempts = 2");
    assert_eq!(run["problems_count"], 1, "{run}");
    assert_eq!(run["problems"][0]["ref"], id.to_string());
    assert!(run["problems"][0]["message"].as_str().unwrap().contains("2 tries"), "{run}");
    let why = rig.app.get(&format!("/shipments/{id}/sync"), rig.admin()).await;
    assert_eq!(why.body["attempts"], 2, "{why:?}");
    assert!(why.body["next_attempt_at"].is_null(), "{why:?}");

    rig.bc().fail_next(HASH, "", 500, 0);
    assert_eq!(rig.retry(&format!("shipments/{id}")).await.status.code, 204);
    rig.sync_ok().await;
    assert_eq!(rig.shipments().await[0]["state"], "notified_shipped");
    assert_error(&rig.retry(&format!("shipments/{id}")).await, 409, "conflict");
}

#[rocket::async_test]
async fn the_sync_routes_answer_only_whoever_sees_the_order_or_shipment() {
    let rig = Rig::new(1).await;
    rig.sync().await;
    let order = first_order(&rig).await;
    rig.drop_shipments("s.csv", &format!("order_id,tracking_number\n{order},1Z-SEEN\n"));
    rig.sync().await;
    let shipment = rig.shipments().await[0]["id"].as_i64().unwrap();
    let (other, own) = rig.tokens().await;
    for path in [format!("/orders/{order}/sync"), format!("/shipments/{shipment}/sync")] {
        assert_error(&rig.app.get(&path, &other).await, 404, "not_found");
        let seen = rig.app.get(&path, &own).await;
        assert_eq!(seen.status.code, 200, "{path}: {seen:?}");
        let attempts = if path.starts_with("/orders") { 0 } else { 1 };
        assert_eq!(seen.body["attempts"].as_i64(), Some(attempts), "{path}");
        assert!(seen.body["last_error"].is_null(), "{path}: {seen:?}");
    }
    // Unknown ids answer as the order itself does.
    assert_error(&rig.app.get("/orders/999999/sync", rig.admin()).await, 404, "not_found");
    assert_error(&rig.app.get("/shipments/999999/sync", rig.admin()).await, 404, "not_found");
    let bad_order = rig.app.get("/orders/abc/sync", rig.admin()).await;
    let bad_order_itself = rig.app.get("/orders/abc", rig.admin()).await;
    assert_eq!(bad_order.status.code, bad_order_itself.status.code, "{bad_order:?}");
    assert_eq!(bad_order.code(), bad_order_itself.code());
}
