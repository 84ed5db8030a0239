//! Passes of one connection never overlap across processes (issue 29, fault 2): two
//! `orderbridge sync` processes on one database file, as a CLI sync beside a running server
//! would be. The second finds the first's lease and runs nothing.

use std::time::Duration;

use orderbridge::simulate::big_commerce::Simulator;

use crate::sync_binary::{connection_in, folder_connection_in, run, sync_command};
use crate::sync_rig::{HASH, TOKEN};

/// A store of three orders whose every answer takes 1.5 s (a pass is still under way when
/// another process starts), and a database file `name` holding connection 1 to a folder
/// warehouse under the temporary directory's `folders/wh`.
async fn slow_store_and_connection(name: &str) -> (Simulator, tempfile::TempDir, std::path::PathBuf) {
    let sim = Simulator::start().await;
    sim.add_store(HASH, TOKEN);
    sim.add_orders(HASH, 3, 5);
    sim.set_delay(HASH, Duration::from_millis(1500));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join(name);
    let root = dir.path().join("folders/wh");
    std::fs::create_dir_all(&root).unwrap();
    connection_in(&db, &root, TOKEN);
    (sim, dir, db)
}

/// The leases held in `pool`'s database once one is (waiting for it, bounded).
async fn leases_once_held(pool: &orderbridge::db::Pool) -> i64 {
    let leased = || -> i64 {
        pool.get().unwrap().query_row("SELECT COUNT(*) FROM sync_leases", [], |r| r.get(0)).unwrap()
    };
    for _ in 0..200 {
        if leased() > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    leased()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_process_finds_the_pass_under_way_and_runs_nothing() {
    let (sim, dir, db) = slow_store_and_connection("lease.db").await;
    let folders = dir.path().join("folders");
    let cli = || sync_command(&db, &sim.base_url(), &folders, &["--connection", "1"]);
    let first = tokio::spawn(run(cli()));
    let pool = orderbridge::db::open(&db).unwrap();
    assert_eq!(leases_once_held(&pool).await, 1, "the first process took the lease");
    let (ok, out, err) = run(cli()).await;
    let out = out + &err;
    // Skipped and said so; the pass under way is no failure of this process.
    assert!(ok, "{out}");
    assert!(out.contains("connection 1: skipped: another orderbridge process runs its pass now (run 1)"));
    let (ok, out, err) = first.await.unwrap();
    let out = out + &err;
    assert!(ok, "{out}");
    assert!(out.contains("run 1 succeeded") && out.contains("3 order(s) pulled"), "{out}");
    let conn = pool.get().unwrap();
    let runs: i64 = conn.query_row("SELECT COUNT(*) FROM sync_runs", [], |r| r.get(0)).unwrap();
    let leases: i64 = conn.query_row("SELECT COUNT(*) FROM sync_leases", [], |r| r.get(0)).unwrap();
    assert_eq!((runs, leases), (1, 0), "one pass ran, and its lease was given back");
    let listed = sim.requests().iter().filter(|r| r.contains("v2/orders?")).count();
    assert_eq!(listed, 1, "only one process read the store's orders: {:?}", sim.requests());
}

/// CONTRACT §11: `orderbridge sync` beside another process that runs a connection's pass skips
/// that connection and says so, then syncs the others; a skipped connection alone is no
/// failure (exit 0). It used to stop at the first busy connection with exit 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sync_command_skips_a_connection_another_process_runs_and_syncs_the_rest() {
    let sim = Simulator::start().await;
    sim.add_store(HASH, TOKEN);
    sim.add_orders(HASH, 2, 5);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("busy.db");
    let root = dir.path().join("folders/wh");
    let second_root = dir.path().join("folders/wh2");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&second_root).unwrap();
    connection_in(&db, &root, TOKEN);
    let pool = orderbridge::db::open(&db).unwrap();
    folder_connection_in(&db, 2, &second_root);
    {
        let conn = pool.get().unwrap();
        let now = orderbridge::dates::now_ms();
        // Another live process (this test's) runs connection 1's pass now, as run 41.
        conn.execute(
            "INSERT INTO sync_leases (connection_id, holder, run_id, expires_at) VALUES (1, ?1, 41, ?2)",
            rusqlite::params![format!("pid {} #00000000000000ff", std::process::id()), now + 600_000],
        )
        .unwrap();
    }
    let (ok, out, err) = run(sync_command(&db, &sim.base_url(), &dir.path().join("folders"), &[])).await;
    let out = out + &err;
    assert!(ok, "{out}");
    assert!(out.contains("connection 1: skipped") && out.contains("(run 41)"), "{out}");
    assert!(out.contains("connection 2: run") && out.contains("succeeded"), "{out}");
    let conn = pool.get().unwrap();
    let mut runs = conn.prepare("SELECT connection_id FROM sync_runs").unwrap();
    let runs: Vec<i64> = runs.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    assert_eq!(runs, [2], "connection 2 synced, connection 1 was left to its process");
}

/// Issue 35, fault 4: a process whose lease lapsed (here: stopped with SIGSTOP past the lease's
/// 30 s) finds it taken over when it runs again, and its pass stops; the run the other process
/// closed as interrupted stays closed (it used to be overwritten as `succeeded`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_whose_lease_was_taken_over_stops_its_pass_and_leaves_the_run_closed() {
    let (sim, dir, db) = slow_store_and_connection("lapsed.db").await;
    let folders = dir.path().join("folders");
    let command = |db: &std::path::Path| sync_command(db, &sim.base_url(), &folders, &["--connection", "1"]);
    let mut first =
        command(&db).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    let pool = orderbridge::db::open(&db).unwrap();
    assert_eq!(leases_once_held(&pool).await, 1, "the first process took the lease");
    let signal = |name: &str, pid: u32| {
        let status = std::process::Command::new("kill").args([name, &pid.to_string()]).status().unwrap();
        assert!(status.success(), "kill {name} {pid}");
    };
    // Stopped past its lease: another process finds it lapsed, takes it over and closes run 1.
    signal("-STOP", first.id());
    tokio::time::sleep(Duration::from_secs(31)).await;
    let (ok, out, err) = run(command(&db)).await;
    let said = out + &err;
    assert!(ok && said.contains("run 2 succeeded"), "{said}");
    signal("-CONT", first.id());
    let mut ended = false;
    for _ in 0..300 {
        if first.try_wait().unwrap().is_some() {
            ended = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    if !ended {
        first.kill().ok();
    }
    assert!(ended, "the first process's pass stopped once it found its lease gone");
    let conn = pool.get().unwrap();
    let sql = "SELECT status || ' ' || error_code, error_message FROM sync_runs WHERE id = 1";
    let (state, message): (String, String) = conn.query_row(sql, [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    assert_eq!(state, "failed interrupted", "{message}");
    assert!(message.contains("stopped before it finished"), "as the second process closed it: {message}");
    let orders: i64 = conn.query_row("SELECT COUNT(*) FROM orders", [], |r| r.get(0)).unwrap();
    assert_eq!(orders, 3, "nothing doubled");
}
