//! Unfinished sends (issue 29, fault 1): a send that failed after its orders were claimed is
//! sent again with only the orders still waiting, so an order the store cancelled meanwhile
//! never reaches the warehouse; and orders held by an unfinished send of a connection that
//! was then switched off go through the connection that now routes the store's orders.

use crate::sync_rig::{HASH, Rig};

/// The warehouse's `orders` folder made unusable: a file stands where it should be.
fn block_orders_folder(rig: &Rig) {
    std::fs::write(rig.dir("orders"), "not a folder").unwrap();
}

fn unblock_orders_folder(rig: &Rig) {
    std::fs::remove_file(rig.dir("orders")).unwrap();
}

#[rocket::async_test]
async fn an_order_cancelled_while_its_send_was_unfinished_is_never_sent() {
    let rig = Rig::new(3).await;
    block_orders_folder(&rig);
    let run = rig.sync().await;
    assert_eq!(
        (run["status"].as_str(), run["error"]["step"].as_str()),
        (Some("failed"), Some("send_orders"))
    );
    let orders = rig.orders().await;
    assert_eq!(orders.len(), 3);
    assert!(orders.iter().all(|o| o["fulfillment_state"] == "new"), "{orders:?}");

    // The store cancels one of them; the next pass reads that, then sends the unfinished file.
    let cancelled = &orders[1];
    rig.bc().cancel_order(HASH, cancelled["external_id"].as_str().unwrap());
    unblock_orders_folder(&rig);
    let run = rig.sync_ok().await;
    assert_eq!(run["orders_sent"], 2, "{run}");
    let sent: Vec<i64> = rig.order_file_rows().into_iter().map(|(_, id, _, _)| id).collect();
    let cancelled_id = cancelled["id"].as_i64().unwrap();
    assert!(!sent.contains(&cancelled_id), "the cancelled order reached the warehouse: {sent:?}");
    let orders = rig.orders().await;
    assert_eq!(orders[1]["fulfillment_state"], "canceled", "{}", orders[1]);
}

#[rocket::async_test]
async fn orders_of_an_unfinished_send_of_a_switched_off_connection_go_through_the_next_one() {
    let rig = Rig::new(2).await;
    block_orders_folder(&rig);
    assert_eq!(rig.sync().await["status"], "failed");
    // The store's orders now go to a second folder warehouse; the first connection is off.
    let (connection, second) = rig.connect_folder("second").await;
    let run = rig.sync_connection_ok(connection).await;
    assert_eq!(run["orders_sent"], 2, "the orders the first connection held went through the second: {run}");
    let orders = rig.orders().await;
    assert!(orders.iter().all(|o| o["fulfillment_state"] == "pending_shipment"), "{orders:?}");
    assert_eq!(crate::sync_rig::files_in(&second.join("orders")).len(), 1);
}
