//! The sync benchmark's X12 run (`--platform x12`): a BigCommerce store's orders written to a
//! `folder` warehouse that speaks X12 (files-x12.md) as one 940 interchange of a set per order,
//! then a 945 interchange with a set per order read back, each shipment matched to its order.
//! Reported: CPU per order written as a 940 and per shipment read from a 945 (targets ≤ 0.05 ms
//! each), and the peak RSS (target ≤ 150 MiB).

use orderbridge::config::Config;

use orderbridge::platforms::files::format::Format;

use super::common::{SimulatorChild, cpu_secs, proc_status_kib};
use super::{HASH, TOKEN, fail, order_ids, set_up, timed};

/// The warehouse's X12 settings: orderbridge `ACMEOB`, the 3PL `WHSE3PL`.
fn adapter(root: &std::path::Path) -> serde_json::Value {
    serde_json::json!({"connection_string": format!("file://{}", root.display()), "file_format": "x12",
                       "x12": {"sender_id": "ACMEOB", "receiver_id": "WHSE3PL"}})
}

/// A 945 interchange from the 3PL with one set per order: one package each, every unit shipped.
fn shipments_945(ids: &[i64]) -> String {
    let mut out = String::with_capacity(ids.len() * 120);
    out.push_str("ISA*00*          *00*          *ZZ*WHSE3PL        *ZZ*ACMEOB         *260308*1430*U*00401*000000900*0*P*>~\nGS*SW*WHSE3PL*ACMEOB*20260308*1430*900*X*004010~\n");
    for (n, id) in ids.iter().enumerate() {
        let st = n + 1;
        out.push_str(&format!(
            "ST*945*{st:04}~\nW06*F*{id}*20260308*S{id}~\nG62*11*20260308*8*1430~\nW27*U*UPSN*GROUND~\nLX*1~\nMAN*CP*1Z{id:012}~\nSE*7*{st:04}~\n"
        ));
    }
    out.push_str(&format!("GE*{}*900~\nIEA*1*000000900~\n", ids.len()));
    out
}

pub async fn bench(orders: usize) {
    let mut sim = SimulatorChild::start("--simulator", orders).unwrap_or_else(|e| fail(&e));
    let dir = tempfile::tempdir().unwrap();
    let folders = dir.path().join("folders");
    let root = folders.join("wh");
    std::fs::create_dir_all(&root).unwrap();
    let config = Config {
        database: dir.path().join("sync-bench-x12.db"),
        bigcommerce_api_base: sim.address.clone(),
        folder_warehouse_root: folders.clone(),
        sync_retry_base_secs: 1,
        file_settle_secs: 0,
        ..Config::default()
    };
    let store = serde_json::json!({"access_token": TOKEN, "store_hash": HASH});
    let connection = set_up(&config.database, &root, "big_commerce", &store);
    rusqlite::Connection::open(&config.database)
        .unwrap()
        .execute("UPDATE warehouses SET adapter = ?1 WHERE id = 1", [adapter(&root).to_string()])
        .unwrap();
    let pool = config.open_database(1).unwrap_or_else(|e| fail(&e));
    let engine = orderbridge::sync::Engine::new(pool, orderbridge::sync::Settings::from_config(&config));

    // The pull alone first: no warehouse folder yet, so the send step stops the pass.
    std::fs::remove_dir(&root).unwrap();
    let (_, wall, run) = timed(&engine, connection).await;
    let peak = || proc_status_kib("self", "VmHWM:") as f64 / 1024.0;
    println!(
        "x12: {} orders pulled in {wall:.1} s (peak RSS so far {:.0} MiB)",
        run.counts.orders_pulled,
        peak()
    );

    // 1. Every order written into one 940 interchange.
    std::fs::create_dir_all(&root).unwrap();
    let (cpu, wall, run) = timed(&engine, connection).await;
    let file = std::fs::read_dir(root.join("orders")).unwrap().filter_map(Result::ok).next();
    let size = file.and_then(|f| f.metadata().ok()).map_or(0, |m| m.len());
    println!(
        "  940: {} orders in one interchange of {:.1} MiB in {wall:.1} s, {:.4} ms CPU per order (target <= 0.05; peak RSS so far {:.0} MiB)",
        run.counts.orders_sent,
        size as f64 / 1048576.0,
        cpu * 1000.0 / (run.counts.orders_sent as f64).max(1.0),
        peak()
    );
    if run.counts.orders_sent == 0 {
        fail(&format!("no order was written: {run:?}"));
    }

    // 2. A 945 with a set per order read back, each shipment matched (the store refuses the
    //    first notification, so the pass ends there).
    let ids = order_ids(&config.database);
    std::fs::create_dir_all(root.join("shipments")).unwrap();
    std::fs::write(root.join("shipments/945.edi"), shipments_945(&ids)).unwrap();
    sim.ask("refuse-shipments");
    let (cpu, wall, run) = timed(&engine, connection).await;
    println!(
        "  945: {} shipments read, imported and matched in {wall:.2} s, {:.4} ms CPU per shipment (target <= 0.05)",
        run.counts.shipments_pulled,
        cpu * 1000.0 / (run.counts.shipments_pulled as f64).max(1.0)
    );
    // The format's own part of that step: the same file read into shipment lines (and its 997),
    // with nothing imported.
    let bytes =
        std::fs::read(root.join("shipments/processed/945.edi")).unwrap_or_else(|e| fail(&e.to_string()));
    let format = Format::of(adapter(&root).as_object().unwrap());
    let cpu = cpu_secs("self");
    let read = format.read_shipments("945.edi", &bytes);
    let cpu = cpu_secs("self") - cpu;
    let lines = read.records.map_or(0, |lines| lines.len());
    println!(
        "  945 read alone (no import): {lines} shipment lines and their 997 in {:.4} ms CPU per shipment",
        cpu * 1000.0 / (lines as f64).max(1.0)
    );
    println!(
        "  peak RSS of the orderbridge process: {:.0} MiB (target <= 150)",
        proc_status_kib("self", "VmHWM:") as f64 / 1024.0
    );
}
