//! A slow warehouse holds up nothing else (issue 35, fault 4): while one connection's creates
//! crawl, a pass of another connection is started at once, and the slow pass keeps its lease;
//! when another process takes the lease over and closes the run, the pass stops and the run
//! stays as that process closed it.

use std::time::Duration;

use orderbridge::simulate::shipbob::{self, Operation};
use serde_json::{Value, json};

use crate::sync_suites::warehouses::{PAT, shipbob_rig};

async fn creates_grow(sb: &shipbob::Simulator, more_than: usize) {
    for _ in 0..200 {
        if sb.requests(Operation::CreateOrder) > more_than {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("ShipBob saw no more than {more_than} creates");
}

#[rocket::async_test]
async fn a_slow_warehouse_holds_up_no_other_connection_and_a_lost_lease_stops_its_pass() {
    let t = shipbob_rig(300, |f| f).await;
    let (rig, sb, slow) = (&t.rig, &t.wh, t.connection_id);
    sb.set_rate_limit(PAT, 1_000_000);
    // The orders are pulled first, then the send crawls: each create takes a second.
    let run = rig.sync_connection(slow).await;
    assert_eq!(run["orders_sent"], 300, "{run}");
    rig.bc().add_orders(crate::sync_rig::HASH, 300, 41);
    sb.set_latency(PAT, Duration::from_millis(1000));
    let started = rig.app.post_json(&format!("/connections/{slow}/sync"), rig.admin(), json!({})).await;
    assert_eq!(started.status.code, 202, "{started:?}");
    let run_id = started.body["run_id"].as_i64().unwrap();
    creates_grow(sb, 310).await;

    // Another connection (the folder warehouse, switched on again) gets its pass at once.
    let other = rig.connection_id;
    let on =
        rig.app.patch_json(&format!("/connections/{other}"), rig.admin(), json!({"enabled_at": "now"})).await;
    assert_eq!(on.status.code, 204, "{on:?}");
    let path = format!("/connections/{other}/sync");
    let asked = rig.app.post_json(&path, rig.admin(), json!({}));
    let answered = tokio::time::timeout(Duration::from_secs(10), asked).await;
    let answered =
        answered.expect("POST /connections/{id}/sync answered while another pass waits on ShipBob");
    assert_eq!(answered.status.code, 202, "{answered:?}");

    // Another process takes the slow pass's lease over and closes its run, as one does with the
    // lease of a process it finds dead.
    let taken_over = format!(
        "UPDATE sync_leases SET holder = 'pid 1 #00000000000000ff', expires_at = 9999999999999
           WHERE connection_id = {slow};
         UPDATE sync_runs SET status = 'failed', finished_at = 1, error_code = 'interrupted',
           error_message = 'closed by another process' WHERE id = {run_id};"
    );
    rig.app.pool().get().unwrap().execute_batch(&taken_over).unwrap();
    // Within a renewal (10 s) the pass finds its lease gone and stops sending.
    let mut seen = sb.requests(Operation::CreateOrder);
    let mut stopped = false;
    for _ in 0..15 {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let now = sb.requests(Operation::CreateOrder);
        if now == seen {
            stopped = true;
            break;
        }
        seen = now;
    }
    sb.set_latency(PAT, Duration::ZERO);
    assert!(stopped, "the pass went on creating orders after its lease was taken over");
    assert!(seen < 600, "it stopped before the end: {seen} creates");
    let run: Value = rig.app.get(&format!("/connections/{slow}/sync_runs/{run_id}"), rig.admin()).await.body;
    assert_eq!(run["error"]["code"], "interrupted", "the run stays as the other process closed it: {run}");
    assert_eq!(run["error"]["message"], "closed by another process", "{run}");
}
