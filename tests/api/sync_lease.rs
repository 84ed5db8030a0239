//! Passes of one connection never overlap across processes (issue 29, fault 2): two
//! `orderbridge sync` processes on one database file, as a CLI sync beside a running server
//! would be. The second finds the first's lease and runs nothing.

use std::time::Duration;

use orderbridge::simulate::big_commerce::Simulator;

use crate::sync_binary::connection_in;
use crate::sync_rig::{HASH, TOKEN};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_process_finds_the_pass_under_way_and_runs_nothing() {
    let sim = Simulator::start().await;
    sim.add_store(HASH, TOKEN);
    sim.add_orders(HASH, 3, 5);
    // Every answer takes a while, so the first pass is still under way when the second starts.
    sim.set_delay(HASH, Duration::from_millis(1500));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lease.db");
    let root = dir.path().join("folders/wh");
    std::fs::create_dir_all(&root).unwrap();
    connection_in(&db, &root, TOKEN);
    let sync = |db: std::path::PathBuf, base: String, folders: String| {
        tokio::task::spawn_blocking(move || {
            let out = crate::process::command(&db)
                .args(["sync", "--connection", "1"])
                .env("ORDERBRIDGE_BIGCOMMERCE_API_BASE", base)
                .env("ORDERBRIDGE_FOLDER_WAREHOUSE_ROOT", folders)
                .env("ORDERBRIDGE_FILE_SETTLE_SECS", "1")
                .env("ORDERBRIDGE_SYNC_MODE", "off")
                .output()
                .unwrap();
            (
                out.status.success(),
                String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
            )
        })
    };
    let folders = dir.path().join("folders").display().to_string();
    let first = sync(db.clone(), sim.base_url(), folders.clone());
    // Wait (bounded) until the first process holds the connection's lease.
    let pool = orderbridge::db::open(&db).unwrap();
    let mut held = false;
    for _ in 0..200 {
        let count: i64 =
            pool.get().unwrap().query_row("SELECT COUNT(*) FROM sync_leases", [], |r| r.get(0)).unwrap();
        if count > 0 {
            held = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(held, "the first process took the lease");
    let (ok, out) = sync(db.clone(), sim.base_url(), folders).await.unwrap();
    assert!(!ok, "{out}");
    assert!(out.contains("another orderbridge process runs its pass now (run 1)"), "{out}");
    let (ok, out) = first.await.unwrap();
    assert!(ok, "{out}");
    assert!(out.contains("run 1 succeeded") && out.contains("3 order(s) pulled"), "{out}");
    let conn = pool.get().unwrap();
    let runs: i64 = conn.query_row("SELECT COUNT(*) FROM sync_runs", [], |r| r.get(0)).unwrap();
    let leases: i64 = conn.query_row("SELECT COUNT(*) FROM sync_leases", [], |r| r.get(0)).unwrap();
    assert_eq!((runs, leases), (1, 0), "one pass ran, and its lease was given back");
    let listed = sim.requests().iter().filter(|r| r.contains("v2/orders?")).count();
    assert_eq!(listed, 1, "only one process read the store's orders: {:?}", sim.requests());
}
