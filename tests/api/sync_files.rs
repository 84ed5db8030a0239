//! File warehouses as the outside world uses them (CONTRACT §11, "File warehouses"): a
//! warehouse that writes its shipment file slowly in place, over every kind (folder, FTP with
//! and without its listing facts, SFTP), names a writer uses while writing, a spreadsheet's
//! byte order mark, and a server that breaks off while taking the order file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Value, json};

use crate::standins::ftp_files::{self, FtpFiles, Quirks};
use crate::standins::sftp;
use crate::sync_rig::{Rig, assert_failed, files_in, ids as order_ids};

/// Long enough that the writer's pause falls inside it with room to spare on a busy machine:
/// the two-look rule protects a writer that pauses for less than the settle time.
const SETTLE_SECS: u64 = 3;
/// The writer's pause between its first row and the rest: over a second.
const WRITER_PAUSE: Duration = Duration::from_millis(1_200);

/// A warehouse of the rig's customer with its own switched-on connection; its files are in
/// `root`. Returns the connection.
async fn ftp_warehouse(rig: &Rig, port: u16, extra: Value) -> i64 {
    let mut adapter = json!({"connection_string":
        format!("ftp://{}:{}@127.0.0.1:{port}/", ftp_files::USER, ftp_files::PASSWORD)});
    adapter.as_object_mut().unwrap().extend(extra.as_object().cloned().unwrap_or_default());
    rig.connect_warehouse(json!({"platform": "ftp", "adapter": adapter})).await
}

async fn sftp_warehouse(rig: &Rig, server: &crate::standins::StandIn) -> i64 {
    let password = utf8_percent_encode(sftp::PASSWORD, NON_ALPHANUMERIC);
    rig.connect_warehouse(json!({"platform": "sftp", "adapter": {
        "connection_string": format!("sftp://{}:{password}@{}", sftp::USER, server.addr)}}))
        .await
}

/// The orders go out, then the warehouse writes its confirmation of them into `inbox` in
/// place: the header and one row, a pause, then the other rows. A pass during the writing
/// takes nothing; the next takes every row, once.
async fn a_slow_writer_loses_and_doubles_nothing(rig: &Rig, connection: i64, inbox: PathBuf, kind: &str) {
    let run = rig.sync_connection(connection).await;
    assert_eq!((run["status"].as_str(), run["orders_sent"].as_i64()), (Some("succeeded"), Some(2)), "{kind}");
    let ids = order_ids(&rig.orders().await);
    let rows: Vec<String> = ids.iter().map(|id| format!("{id},SLOW-{kind}-{id},UPS\n")).collect();
    let first = format!("order_id,tracking_number,carrier_name\n{}", rows[0]);
    let rest = rows[1..].concat();

    std::fs::create_dir_all(&inbox).unwrap();
    let (started, first_written) = tokio::sync::oneshot::channel();
    let writer = std::thread::spawn({
        let path = inbox.join("slow.csv");
        move || {
            let mut file = std::fs::File::create(path).unwrap();
            file.write_all(first.as_bytes()).unwrap();
            file.flush().unwrap();
            started.send(()).unwrap();
            std::thread::sleep(WRITER_PAUSE);
            file.write_all(rest.as_bytes()).unwrap();
        }
    });
    first_written.await.unwrap();
    let run = rig.sync_connection(connection).await;
    assert_eq!(run["status"], "succeeded", "{kind}: {run}");
    assert_eq!(run["shipments_pulled"], 0, "{kind}: the file changed between the looks: {run}");
    assert_eq!(files_in(&inbox), ["slow.csv"], "{kind}: left where it is");
    tokio::task::spawn_blocking(move || writer.join().unwrap()).await.unwrap();

    let run = rig.sync_connection(connection).await;
    assert_eq!(run["shipments_pulled"].as_i64(), Some(ids.len() as i64), "{kind}: every row: {run}");
    assert_eq!(files_in(&inbox.join("processed")), ["slow.csv"], "{kind}");
    assert!(files_in(&inbox).is_empty(), "{kind}: moved once");
    let run = rig.sync_connection(connection).await;
    assert_eq!(run["shipments_pulled"], 0, "{kind}: {run}");

    let shipments = rig.shipments().await;
    let mut tracking: Vec<&str> = shipments.iter().map(|s| s["tracking_number"].as_str().unwrap()).collect();
    tracking.sort();
    let mut expected: Vec<String> = ids.iter().map(|id| format!("SLOW-{kind}-{id}")).collect();
    expected.sort();
    assert_eq!(tracking, expected, "{kind}: each shipment once");
}

fn settling(f: rocket::figment::Figment) -> rocket::figment::Figment {
    f.merge(("file_settle_secs", SETTLE_SECS))
}

#[rocket::async_test]
async fn a_shipment_file_written_slowly_in_place_is_read_once_complete_on_every_kind_of_warehouse() {
    let folder = async {
        let rig = Rig::with(2, settling).await;
        a_slow_writer_loses_and_doubles_nothing(&rig, rig.connection_id, rig.dir("shipments"), "folder")
            .await;
    };
    let ftp = |kind: &'static str, quirks: Quirks| async move {
        let rig = Rig::with(2, settling).await;
        let drop_box = tempfile::tempdir().unwrap();
        let server = FtpFiles::start_with(drop_box.path(), quirks).await;
        let connection = ftp_warehouse(&rig, server.port, json!({})).await;
        a_slow_writer_loses_and_doubles_nothing(&rig, connection, drop_box.path().join("shipments"), kind)
            .await;
        server.commands()
    };
    // A server from before RFC 3659: no MLSD, SIZE or MDTM, so the bytes are compared.
    let bare = Quirks { no_mlsd: true, no_facts: true, ..Quirks::default() };
    let sftp = async {
        let rig = Rig::with(2, settling).await;
        let drop_box = tempfile::tempdir().unwrap();
        let server = sftp::start_serving(drop_box.path()).await;
        let connection = sftp_warehouse(&rig, &server).await;
        a_slow_writer_loses_and_doubles_nothing(&rig, connection, drop_box.path().join("shipments"), "sftp")
            .await;
    };
    let (_, commands, _, _) =
        tokio::join!(folder, ftp("ftp", Quirks::default()), ftp("bare-ftp", bare), sftp);
    assert!(commands.iter().any(|c| c.starts_with("MLSD")), "the listing's facts were used");
}

/// Files a writer is still busy with, and a spreadsheet's export with its byte order mark,
/// in one inbox: only the finished file is taken.
async fn only_finished_files_are_taken(rig: &Rig, connection: i64, inbox: &Path, kind: &str) {
    let run = rig.sync_connection(connection).await;
    assert_eq!(run["orders_sent"], 2, "{kind}: {run}");
    let ids = order_ids(&rig.orders().await);
    std::fs::create_dir_all(inbox).unwrap();
    let busy = [".x.csv", "x.csv.part", "x.csv.tmp", "x.csv.filepart", "x.csv.partial"];
    for name in busy {
        std::fs::write(inbox.join(name), format!("order_id,tracking_number\n{},BUSY-{name}\n", ids[0]))
            .unwrap();
    }
    let bom =
        format!("\u{feff}order_id,tracking_number\r\n{},BOM-{kind}-1\r\n{},BOM-{kind}-2\r\n", ids[0], ids[1]);
    std::fs::write(inbox.join("export.csv"), bom).unwrap();

    for _ in 0..2 {
        let run = rig.sync_connection(connection).await;
        assert_eq!(run["status"], "succeeded", "{kind}: {run}");
    }
    let shipments = rig.shipments().await;
    let mut tracking: Vec<&str> = shipments.iter().map(|s| s["tracking_number"].as_str().unwrap()).collect();
    tracking.sort();
    assert_eq!(tracking, [format!("BOM-{kind}-1"), format!("BOM-{kind}-2")], "{kind}");
    assert_eq!(files_in(&inbox.join("processed")), ["export.csv"], "{kind}");
    let mut left = busy.to_vec();
    left.sort();
    assert_eq!(files_in(inbox), left, "{kind}: never taken, never moved");
}

#[rocket::async_test]
async fn names_a_writer_uses_are_never_taken_and_a_byte_order_mark_is_ignored() {
    let folder = async {
        let rig = Rig::new(2).await;
        only_finished_files_are_taken(&rig, rig.connection_id, &rig.dir("shipments"), "folder").await;
    };
    // NLST lists every name; SIZE and MDTM then tell the file's state.
    let nlst_ftp = async {
        let rig = Rig::new(2).await;
        let drop_box = tempfile::tempdir().unwrap();
        let server =
            FtpFiles::start_with(drop_box.path(), Quirks { no_mlsd: true, ..Quirks::default() }).await;
        let connection = ftp_warehouse(&rig, server.port, json!({"shipments_dir": "out"})).await;
        only_finished_files_are_taken(&rig, connection, &drop_box.path().join("out"), "nlst-ftp").await;
        let commands = server.commands();
        assert!(commands.iter().any(|c| c.starts_with("MDTM")), "{commands:?}");
        assert!(!commands.iter().any(|c| c.starts_with("RETR") && c.contains("x.csv")), "{commands:?}");
    };
    tokio::join!(folder, nlst_ftp);
}

#[rocket::async_test]
async fn an_ftp_file_that_never_ends_fails_the_pass_bad_data_at_the_file_limit() {
    let rig = Rig::with(0, |f| f.merge(("max_warehouse_file_mib", 1)).merge(("file_settle_secs", 0))).await;
    // With facts, the file is read to be parsed; without them, it is read at the look.
    for quirks in [
        Quirks { endless_retr: true, ..Quirks::default() },
        Quirks { endless_retr: true, no_mlsd: true, no_facts: true, ..Quirks::default() },
    ] {
        let drop_box = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(drop_box.path().join("shipments")).unwrap();
        std::fs::write(drop_box.path().join("shipments/endless.csv"), "order_id\n").unwrap();
        let server = FtpFiles::start_with(drop_box.path(), quirks).await;
        let connection = ftp_warehouse(&rig, server.port, json!({})).await;
        let run = rig.sync_connection(connection).await;
        assert_failed(&run, None, "bad_data", &["endless.csv", "larger than 1 MiB"]);
        assert!(drop_box.path().join("shipments/endless.csv").exists(), "the file is left where it is");
    }
}

#[rocket::async_test]
async fn an_ftp_server_breaking_off_a_large_order_file_is_unreachable_and_the_file_is_sent_again() {
    let rig = Rig::new(1000).await;
    let drop_box = tempfile::tempdir().unwrap();
    let broken =
        FtpFiles::start_with(drop_box.path(), Quirks { breaks_stor: true, ..Quirks::default() }).await;
    let connection = ftp_warehouse(&rig, broken.port, json!({})).await;

    let run = rig.sync_connection(connection).await;
    let says = [format!(".orders-{connection}-1.csv"), "426".into()];
    assert_failed(&run, Some("send_orders"), "adapter_unreachable", &says.each_ref().map(String::as_str));
    assert!(!run.to_string().contains(ftp_files::PASSWORD), "{run}");
    assert!(rig.orders().await.iter().all(|o| o["fulfillment_state"] == "new"), "nothing counts as sent");
    assert!(files_in(&drop_box.path().join("orders")).is_empty(), "nothing came into view");

    // The same warehouse, working again: the same batch arrives whole under its own name.
    drop(broken);
    let fixed = FtpFiles::start(drop_box.path()).await;
    let warehouse_id = rig.warehouse_of(connection).await;
    let adapter = json!({"connection_string":
        format!("ftp://{}:{}@127.0.0.1:{}/", ftp_files::USER, ftp_files::PASSWORD, fixed.port)});
    let path = format!("/warehouses/{warehouse_id}");
    let r = rig.app.patch_json(&path, rig.admin(), json!({"adapter": adapter})).await;
    assert_eq!(r.status.code, 204, "{r:?}");
    assert_eq!(rig.sync_connection_ok(connection).await["orders_sent"], 1000);
    assert_eq!(files_in(&drop_box.path().join("orders")), [format!("orders-{connection}-1.csv")]);
}
