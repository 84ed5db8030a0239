//! The warehouse conformance suite (CONTRACT §11): a BigCommerce store's orders go to each
//! warehouse platform through its simulator's [`WarehouseSim`] adapter, and every platform runs
//! every scenario that fits it: file warehouses (folder, SFTP, FTP) have no answers to lose and
//! no rate limits, and a folder no credentials.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use orderbridge::simulate::shipbob::{self, Parcel};
use orderbridge::simulate::shipstation;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use rocket::figment::Figment;
use serde_json::{Value, json};

use crate::standins::ftp_files::{self, FtpFiles};
use crate::standins::{StandIn, sftp};
use crate::sync_rig::{HASH, Rig, assert_failed, assert_hidden, files_in};

pub const PAT: &str = "pat-shipbob-rig-0123456789";
pub const KEY: &str = "ss-key-rig-0123456789";

/// What the suite asks of a warehouse simulator, in the platform's own terms.
pub trait WarehouseSim {
    /// The warehouse's create body (platform and adapter).
    fn body(&self) -> Value;
    /// The configuration that points orderbridge at it.
    fn config(&self) -> Vec<(&'static str, String)> {
        vec![]
    }
    /// How many times orderbridge's order `id` is at the warehouse.
    fn held(&self, id: i64) -> usize;
    /// The warehouse ships these orders whole; their tracking numbers.
    fn ship(&self, ids: &[i64]) -> Vec<String>;
    /// The warehouse counts these levels.
    fn count_stock(&self, levels: &[(&str, i64)]);
    /// The next create is applied and its answer lost; false when there is no answer to lose.
    fn lose_next_create_answer(&self) -> bool {
        false
    }
    /// An adapter the warehouse refuses, what its refusal says, and every credential never
    /// to be shown.
    fn wrong_credentials(&self) -> Option<(Value, &'static str, Vec<String>)>;
    /// Whether order `id` is cancelled at the warehouse; None where orders are not cancelled.
    fn cancelled(&self, _id: i64) -> Option<bool> {
        None
    }
    fn cancel_requests(&self) -> usize {
        0
    }
    /// From now on the warehouse ships each order as soon as it has it; false if it cannot.
    fn ship_at_once(&self) -> bool {
        false
    }
    /// The next request is answered 429 naming a wait of `secs`; false without rate limits.
    fn ask_to_wait(&self, _secs: u64) -> bool {
        false
    }
    fn request_count(&self) -> usize {
        0
    }
    /// Orders at the warehouse, all told.
    fn orders_held(&self) -> usize;
    /// Every answer slow enough (or not) that a pass is under way when a kill comes.
    fn slow_down(&self, _slow: bool) {}
    /// A file warehouse holds an order file of this name already (a crash after an earlier
    /// write); others hold no files.
    fn leave_stale(&self, _name: &str) {}
    /// A file warehouse's shipment files were each taken once: moved to `processed`.
    fn shipment_files_taken(&self) {}
}

/// A rig whose store's orders go to the warehouse `wh` through their own connection.
pub struct WarehouseRig<W: ?Sized> {
    pub rig: Rig,
    pub wh: Box<W>,
    pub connection_id: i64,
    pub warehouse_id: i64,
}

impl<W: WarehouseSim + ?Sized> WarehouseRig<W> {
    /// `orders` orders at the store; the rig's folder connection switched off.
    pub async fn new(wh: Box<W>, orders: usize, adjust: impl FnOnce(Figment) -> Figment) -> WarehouseRig<W> {
        let config = wh.config();
        let rig = Rig::with(orders, move |f| adjust(config.into_iter().fold(f, |f, kv| f.merge(kv)))).await;
        let connection_id = rig.connect_warehouse(wh.body()).await;
        let warehouse_id = rig.warehouse_of(connection_id).await;
        WarehouseRig { rig, wh, connection_id, warehouse_id }
    }

    pub async fn sync(&self) -> Value {
        self.rig.sync_connection(self.connection_id).await
    }

    /// A pass that must succeed; the run.
    pub async fn sync_ok(&self) -> Value {
        self.rig.sync_connection_ok(self.connection_id).await
    }
}

pub fn id(order: &Value) -> i64 {
    order["id"].as_i64().unwrap()
}

/// A ShipBob simulator with the account of [`PAT`].
pub async fn shipbob_sim() -> Box<shipbob::Simulator> {
    let sb = shipbob::Simulator::start().await;
    sb.add_account(PAT);
    Box::new(sb)
}

/// A ShipStation simulator with the account of [`KEY`].
async fn shipstation_sim() -> Box<shipstation::Simulator> {
    let ss = shipstation::Simulator::start().await;
    ss.add_account(KEY);
    Box::new(ss)
}

pub async fn shipbob_rig(
    orders: usize,
    adjust: impl FnOnce(Figment) -> Figment,
) -> WarehouseRig<shipbob::Simulator> {
    WarehouseRig::new(shipbob_sim().await, orders, adjust).await
}

pub async fn shipstation_rig(
    orders: usize,
    adjust: impl FnOnce(Figment) -> Figment,
) -> WarehouseRig<shipstation::Simulator> {
    WarehouseRig::new(shipstation_sim().await, orders, adjust).await
}

impl WarehouseSim for shipbob::Simulator {
    fn body(&self) -> Value {
        json!({"name": "ShipBob", "platform": "shipbob", "adapter": {"access_token": PAT}})
    }
    fn config(&self) -> Vec<(&'static str, String)> {
        vec![("shipbob_api_base", self.base_url())]
    }
    fn held(&self, id: i64) -> usize {
        // The simulator keeps one order a reference; every order is created under its own.
        usize::from(self.order_by_reference(PAT, &format!("ob-{id}")).is_some())
    }
    fn ship(&self, ids: &[i64]) -> Vec<String> {
        let at = |id: i64| self.order_by_reference(PAT, &format!("ob-{id}")).expect("at ShipBob");
        ids.iter()
            .map(|id| self.ship_order(PAT, at(*id), Parcel::default()).unwrap().tracking_number)
            .collect()
    }
    fn count_stock(&self, levels: &[(&str, i64)]) {
        for (sku, units) in levels {
            self.add_inventory(PAT, sku, sku, *units);
        }
    }
    fn lose_next_create_answer(&self) -> bool {
        self.lose_answers(PAT, shipbob::Operation::CreateOrder, 1);
        true
    }
    fn wrong_credentials(&self) -> Option<(Value, &'static str, Vec<String>)> {
        let secrets = vec![PAT.into(), "pat-WRONG-000000".into()];
        Some((json!({"access_token": "pat-WRONG-000000"}), "ShipBob refused the token (HTTP 401)", secrets))
    }
    fn cancelled(&self, id: i64) -> Option<bool> {
        let at = self.order_by_reference(PAT, &format!("ob-{id}"))?;
        Some(self.order_status(PAT, at) == Some("Cancelled"))
    }
    fn cancel_requests(&self) -> usize {
        self.requests(shipbob::Operation::CancelOrder)
    }
    fn ship_at_once(&self) -> bool {
        self.set_auto_ship(Some(shipbob::AutoShip::immediately()));
        true
    }
    fn ask_to_wait(&self, secs: u64) -> bool {
        self.rate_limit_next(PAT, 1, secs);
        true
    }
    fn request_count(&self) -> usize {
        self.total_requests()
    }
    fn orders_held(&self) -> usize {
        self.order_count(PAT)
    }
    fn slow_down(&self, slow: bool) {
        // ShipBob's 150 requests a minute are not what a crash is about.
        self.set_rate_limit(PAT, usize::MAX);
        self.set_latency(PAT, Duration::from_millis(if slow { 3 } else { 0 }));
    }
}

impl WarehouseSim for shipstation::Simulator {
    fn body(&self) -> Value {
        json!({"name": "ShipStation", "platform": "shipstation", "adapter": {"access_token": KEY}})
    }
    fn config(&self) -> Vec<(&'static str, String)> {
        vec![("shipstation_api_base", self.base_url())]
    }
    fn held(&self, id: i64) -> usize {
        self.shipments_under(KEY, &format!("ob-{id}"))
    }
    fn ship(&self, ids: &[i64]) -> Vec<String> {
        let label = |id: i64| self.buy_label(KEY, &format!("ob-{id}"), None).unwrap().tracking_number;
        ids.iter().map(|id| label(*id)).collect()
    }
    fn count_stock(&self, levels: &[(&str, i64)]) {
        for (sku, units) in levels {
            // Available is on hand less allocated, never below 0.
            let (on_hand, allocated) = if *units == 0 { (1, 3) } else { (units + 2, 2) };
            self.add_inventory(KEY, sku, "iw-1", on_hand, allocated);
        }
    }
    fn lose_next_create_answer(&self) -> bool {
        self.lose_creates(KEY, 1);
        true
    }
    fn wrong_credentials(&self) -> Option<(Value, &'static str, Vec<String>)> {
        let secrets = vec![KEY.into(), "ss-WRONG-000000".into()];
        Some((json!({"access_token": "ss-WRONG-000000"}), "The API key is invalid.", secrets))
    }
    fn cancelled(&self, id: i64) -> Option<bool> {
        Some(self.shipment(KEY, &format!("ob-{id}"))?.1 == "cancelled")
    }
    fn cancel_requests(&self) -> usize {
        self.requests(shipstation::Operation::CancelShipment)
    }
    fn ship_at_once(&self) -> bool {
        self.set_label_after(Some(Duration::ZERO));
        true
    }
    fn ask_to_wait(&self, secs: u64) -> bool {
        self.rate_limit_next(KEY, None, 1, secs);
        true
    }
    fn request_count(&self) -> usize {
        self.total_requests()
    }
    fn orders_held(&self) -> usize {
        self.shipment_count(KEY)
    }
}

enum FileServer {
    Folder,
    Sftp(StandIn),
    Ftp(FtpFiles),
}

/// A file warehouse: its files are under `root` on this machine, whatever way it is reached
/// (FTP's in folders of its adapter's naming: `in` and `out`).
pub struct Files {
    pub root: PathBuf,
    platform: &'static str,
    server: FileServer,
    dirs: (&'static str, &'static str),
    _drop_box: Option<tempfile::TempDir>,
}

impl Files {
    pub fn folder(root: &Path) -> Files {
        Files {
            root: root.to_path_buf(),
            platform: "folder",
            server: FileServer::Folder,
            dirs: ("orders", "shipments"),
            _drop_box: None,
        }
    }

    /// A drop box served over `platform` (`ftp`, `sftp` or `dropstream`, the hosted service's
    /// own SFTP drop).
    async fn served(platform: &'static str) -> Files {
        let ftp = platform == "ftp";
        let drop_box = tempfile::tempdir().unwrap();
        let root = drop_box.path().to_path_buf();
        let (server, dirs) = if ftp {
            (FileServer::Ftp(FtpFiles::start(&root).await), ("in", "out"))
        } else {
            (FileServer::Sftp(sftp::start_serving(&root).await), ("orders", "shipments"))
        };
        Files { root, platform, server, dirs, _drop_box: Some(drop_box) }
    }

    fn with_password(&self, password: &str) -> Value {
        let secret = utf8_percent_encode(password, NON_ALPHANUMERIC);
        match &self.server {
            FileServer::Folder => json!({"connection_string": format!("file://{}", self.root.display())}),
            FileServer::Sftp(s) => {
                json!({"connection_string": format!("sftp://{}:{secret}@{}", sftp::USER, s.addr)})
            }
            FileServer::Ftp(f) => json!({"orders_dir": "in", "shipments_dir": "out", "connection_string":
                format!("ftp://{}:{secret}@127.0.0.1:{}/", ftp_files::USER, f.port)}),
        }
    }

    fn password(&self) -> &'static str {
        match self.server {
            FileServer::Folder => "",
            FileServer::Sftp(_) => sftp::PASSWORD,
            FileServer::Ftp(_) => ftp_files::PASSWORD,
        }
    }

    /// The orders of an order file, each once.
    fn ids_in(&self, name: &str) -> std::collections::BTreeSet<i64> {
        let path = self.root.join(self.dirs.0).join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("order_id,external_id,"), "{text}");
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        reader.records().map(|r| r.unwrap()[0].parse().unwrap()).collect()
    }

    fn write(&self, dir: &str, name: &str, text: &str) {
        std::fs::create_dir_all(self.root.join(dir)).unwrap();
        std::fs::write(self.root.join(dir).join(name), text).unwrap();
    }
}

impl WarehouseSim for Files {
    fn body(&self) -> Value {
        json!({"name": self.platform, "platform": self.platform, "adapter": self.with_password(self.password())})
    }
    fn held(&self, id: i64) -> usize {
        let files = files_in(&self.root.join(self.dirs.0));
        assert!(
            files.iter().all(|n| n.starts_with("orders-") && n.ends_with(".csv")),
            "in view whole: {files:?}"
        );
        if let FileServer::Ftp(ftp) = &self.server {
            assert!(ftp.commands().iter().any(|c| c.starts_with("RNTO")), "written under a temporary name");
        }
        files.iter().filter(|name| self.ids_in(name).contains(&id)).count()
    }
    fn ship(&self, ids: &[i64]) -> Vec<String> {
        let tracking: Vec<String> = ids.iter().map(|id| format!("FILE-{id}")).collect();
        let rows: String = ids.iter().zip(&tracking).map(|(id, t)| format!("{id},{t},UPS\n")).collect();
        self.write(
            self.dirs.1,
            &format!("confirm-{}.csv", ids[0]),
            &format!("order_id,tracking_number,carrier_name\n{rows}"),
        );
        tracking
    }
    fn count_stock(&self, levels: &[(&str, i64)]) {
        let rows: String = levels.iter().map(|(sku, units)| format!("{sku},{units}\n")).collect();
        self.write("inventory", "stock.csv", &format!("sku,quantity\n{rows}"));
    }
    fn wrong_credentials(&self) -> Option<(Value, &'static str, Vec<String>)> {
        let wrong = "WRONG-password-77";
        let secrets = vec![self.password().to_string(), wrong.to_string()];
        (!matches!(self.server, FileServer::Folder)).then(|| (self.with_password(wrong), "", secrets))
    }
    fn orders_held(&self) -> usize {
        files_in(&self.root.join(self.dirs.0)).iter().map(|name| self.ids_in(name).len()).sum()
    }
    fn leave_stale(&self, name: &str) {
        self.write(self.dirs.0, name, "stale");
    }
    fn shipment_files_taken(&self) {
        let inbox = self.root.join(self.dirs.1);
        assert!(files_in(&inbox).is_empty(), "{:?}", files_in(&inbox));
        assert_eq!(files_in(&inbox.join("processed")).len(), 1, "the confirmation, moved once");
    }
}

/// A file warehouse speaking X12 (files-x12.md) over any transport, and the 3PL behind it: it
/// reads our 940s by the separators their ISA declares and answers with 945s and 846s.
pub struct X12Files {
    pub files: Files,
}

impl X12Files {
    pub fn folder(root: &Path) -> X12Files {
        X12Files { files: Files::folder(root) }
    }

    /// The 940 sets of every interchange in the orders folder, as the order each names.
    fn sets(&self) -> Vec<i64> {
        let mut ids = Vec::new();
        let orders = self.files.root.join(self.files.dirs.0);
        for name in files_in(&orders) {
            let text = std::fs::read_to_string(orders.join(&name)).unwrap();
            assert!(text.starts_with("ISA*") && text.trim_end().ends_with('~'), "{name}: whole: {text}");
            let control = name.trim_end_matches(".edi").rsplit('-').next().unwrap().to_string();
            assert!(text.contains(&format!("*{control:0>9}*0*P*>~")), "{name}: named after its ISA13");
            if name.starts_with("940-") {
                ids.extend(
                    text.split('~')
                        .filter_map(|s| s.strip_prefix("W05*N*"))
                        .map(|id| id.parse::<i64>().unwrap()),
                );
            } else {
                assert!(name.starts_with("997-"), "only 940s and 997s are written: {name}");
            }
        }
        ids
    }

    /// The 3PL's interchange of `kind` sets around each set's segments.
    fn interchange(control: i64, group: &str, kind: &str, sets: &[Vec<String>]) -> String {
        let mut out = format!(
            "ISA*00*          *00*          *ZZ*WHSE3PL        *ZZ*ACMEOB         *260308*1430*U*00401*{control:09}*0*P*>~GS*{group}*WHSE3PL*ACMEOB*20260308*1430*{control}*X*004010~"
        );
        for (n, segments) in sets.iter().enumerate() {
            out.push_str(&format!(
                "ST*{kind}*{:04}~{}~SE*{}*{:04}~",
                n + 1,
                segments.join("~"),
                segments.len() + 2,
                n + 1
            ));
        }
        out + &format!("GE*{}*{control}~IEA*1*{control:09}~", sets.len())
    }
}

impl WarehouseSim for X12Files {
    fn body(&self) -> Value {
        let mut body = self.files.body();
        body["adapter"]["file_format"] = json!("x12");
        body["adapter"]["x12"] =
            json!({"sender_id": "ACMEOB", "receiver_id": "WHSE3PL", "scac_names": {"UPSN": "UPS"}});
        body
    }
    fn held(&self, id: i64) -> usize {
        self.sets().into_iter().filter(|held| *held == id).count()
    }
    /// A 945 per order, one package of every unit left, shipped by UPS.
    fn ship(&self, ids: &[i64]) -> Vec<String> {
        let tracking: Vec<String> = ids.iter().map(|id| format!("X12-{id}")).collect();
        let sets: Vec<Vec<String>> = ids
            .iter()
            .zip(&tracking)
            .map(|(id, t)| {
                vec![
                    format!("W06*F*{id}*20260308*S{id}"),
                    "W27*U*UPSN*GROUND".into(),
                    "LX*1".into(),
                    format!("MAN*CP*{t}"),
                ]
            })
            .collect();
        let control = 500_000 + ids[0];
        let interchange = Self::interchange(control, "SW", "945", &sets);
        self.files.write(self.files.dirs.1, &format!("945-{}.edi", ids[0]), &interchange);
        tracking
    }
    fn count_stock(&self, levels: &[(&str, i64)]) {
        let mut segments = vec!["BIA*00*MM*INV1*20260308".to_string()];
        for (n, (sku, units)) in levels.iter().enumerate() {
            segments.push(format!("LIN*{}*SK*{sku}", n + 1));
            segments.push(format!("QTY*33*{units}*EA"));
        }
        self.files.write("inventory", "stock.edi", &Self::interchange(900, "IB", "846", &[segments]));
    }
    fn wrong_credentials(&self) -> Option<(Value, &'static str, Vec<String>)> {
        None
    }
    fn orders_held(&self) -> usize {
        self.sets().len()
    }
    fn shipment_files_taken(&self) {
        let inbox = self.files.root.join(self.files.dirs.1);
        assert!(files_in(&inbox).is_empty(), "{:?}", files_in(&inbox));
        assert_eq!(files_in(&inbox.join("processed")).len(), 1, "the 945, moved once");
        let orders = self.files.root.join(self.files.dirs.0);
        let acks = files_in(&orders).into_iter().filter(|n| n.starts_with("997-")).count();
        assert_eq!(acks, 1, "the 945 answered with one 997");
    }
}

/// A rig over the warehouse platform `platform`, passes 10 s apart (a wait up to that is
/// taken inside a pass).
pub async fn rig_for(platform: &'static str, orders: usize) -> WarehouseRig<dyn WarehouseSim> {
    let waits = |f: Figment| f.merge(("sync_interval_secs", 10)).merge(("ping_mode", "live"));
    let wh: Box<dyn WarehouseSim> = match platform {
        "sftp" | "ftp" | "dropstream" => Box::new(Files::served(platform).await),
        "x12-sftp" => Box::new(X12Files { files: Files::served("sftp").await }),
        "x12-ftp" => Box::new(X12Files { files: Files::served("ftp").await }),
        "shipbob" => shipbob_sim().await,
        "shipstation" => shipstation_sim().await,
        _ => {
            let rig = Rig::with(orders, waits).await;
            let (connection_id, warehouse_id) = (rig.connection_id, rig.warehouse_id);
            let wh: Box<dyn WarehouseSim> = if platform == "x12" {
                let wh = X12Files::folder(&rig.root);
                let path = format!("/warehouses/{warehouse_id}");
                let r =
                    rig.app.patch_json(&path, rig.admin(), json!({"adapter": wh.body()["adapter"]})).await;
                assert_eq!(r.status.code, 204, "{r:?}");
                Box::new(wh)
            } else {
                Box::new(Files::folder(&rig.root))
            };
            return WarehouseRig { rig, wh, connection_id, warehouse_id };
        }
    };
    WarehouseRig::new(wh, orders, waits).await
}

/// Passes (bounded, a second apart: a file settles over two looks) until `done` says so.
async fn until<W: WarehouseSim + ?Sized>(
    t: &WarehouseRig<W>,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    for _ in 0..6 {
        let run = t.sync().await;
        if done(&run) {
            return run;
        }
        tokio::time::sleep(Duration::from_millis(1100)).await;
    }
    panic!("{what}: {}", t.sync().await);
}

pub async fn orders_go_once_and_shipments_come_back(platform: &'static str) {
    let t = rig_for(platform, 3).await;
    t.wh.leave_stale(&format!("orders-{}-1.csv", t.connection_id));
    let run = t.sync().await;
    assert_eq!((run["orders_pulled"].as_i64(), run["orders_sent"].as_i64()), (Some(3), Some(3)), "{run}");
    let ids: Vec<i64> = t.rig.orders().await.iter().map(id).collect();
    assert!(ids.iter().all(|id| t.wh.held(*id) == 1), "each order once at the warehouse");
    for order in t.rig.orders().await {
        assert_eq!(order["fulfillment_state"], "pending_shipment", "{order}");
    }
    let mut tracking = t.wh.ship(&ids);
    let notified = |run: &Value| run["shipments_notified"].as_i64() == Some(3);
    let run = until(&t, "the shipments come back", notified).await;
    assert_eq!(run["shipments_pulled"], 3, "{run}");
    let mut told: Vec<String> = t.rig.bc().shipments(HASH).into_iter().map(|s| s.tracking_number).collect();
    told.sort();
    tracking.sort();
    assert_eq!(told, tracking, "the store heard of each parcel once");
    assert!(t.rig.orders().await.iter().all(|o| o["fulfillment_state"] == "shipped"));
    let shipments = t.rig.shipments().await;
    assert!(shipments.iter().all(|s| s["state"] == "notified_shipped" && s["carrier_name"].is_string()));
    t.wh.shipment_files_taken();
    // Read again (the overlap): nothing written, created or told twice.
    let run = t.sync().await;
    let again =
        (run["orders_sent"].as_i64(), run["shipments_pulled"].as_i64(), run["shipments_notified"].as_i64());
    assert_eq!(again, (Some(0), Some(0), Some(0)), "{run}");
    assert_eq!(t.rig.bc().shipments(HASH).len(), 3);
    assert!(ids.iter().all(|id| t.wh.held(*id) == 1), "nothing created again");
    assert_eq!(t.wh.orders_held(), 3, "no order at the warehouse twice");
}

pub async fn a_lost_create_answer_never_creates_twice(platform: &'static str) {
    let t = rig_for(platform, 2).await;
    assert!(t.wh.lose_next_create_answer());
    until(&t, "the orders reach the warehouse", |r| r["status"] == "succeeded" && r["orders_sent"] == 0)
        .await;
    for order in t.rig.orders().await {
        assert_eq!(order["fulfillment_state"], "pending_shipment", "{order}");
        assert_eq!(t.wh.held(id(&order)), 1, "created once whatever answer was lost: {order}");
    }
    assert_eq!(t.wh.orders_held(), 2, "no order created twice");
}

pub async fn refused_credentials_are_never_shown(platform: &'static str) {
    let t = rig_for(platform, 1).await;
    let (wrong, says, secrets) = t.wh.wrong_credentials().expect("credentials to refuse");
    // The ping of the right credentials passes, of the wrong ones names the refusal.
    let mut body = t.wh.body();
    body["customer_id"] = json!(t.rig.customer_id);
    let ping = t.rig.app.post_json("/warehouses/ping", t.rig.admin(), body.clone()).await;
    assert_eq!(ping.status.code, 204, "{ping:?}");
    body["adapter"] = wrong.clone();
    let ping = t.rig.app.post_json("/warehouses/ping", t.rig.admin(), body).await;
    assert_eq!((ping.status.code, ping.code()), (422, "adapter_authentication_failed"), "{ping:?}");
    assert!(ping.text.contains(says), "{ping:?}");
    let path = format!("/warehouses/{}", t.warehouse_id);
    let r = t.rig.app.patch_json(&path, t.rig.admin(), json!({"adapter": wrong})).await;
    assert_eq!(r.status.code, 204, "{r:?}");
    let run = t.sync().await;
    assert_failed(&run, Some("send_orders"), "adapter_authentication_failed", &[says]);
    assert!(t.rig.orders().await.iter().all(|o| o["fulfillment_state"] == "new"));
    let runs = t.rig.app.get(&format!("/connections/{}/sync_runs", t.connection_id), t.rig.admin()).await;
    let warehouse = t.rig.app.get(&path, t.rig.admin()).await;
    assert_hidden(&[run.to_string(), runs.text, warehouse.text, ping.text], &secrets);
}

pub async fn a_store_cancellation_is_carried_until_the_warehouse_shipped(platform: &'static str) {
    let t = rig_for(platform, 2).await;
    assert_eq!(t.sync().await["orders_sent"], 2);
    let ids: Vec<i64> = t.rig.orders().await.iter().map(id).collect();
    t.wh.ship(&ids[1..]);
    until(&t, "the shipment comes back", |r| r["shipments_pulled"] == 1).await;
    for order in t.rig.orders().await {
        t.rig.bc().cancel_order(HASH, order["external_id"].as_str().unwrap());
    }
    t.sync_ok().await;
    assert_eq!(t.wh.cancelled(ids[0]), Some(true), "the open order is cancelled at the warehouse");
    let orders = t.rig.orders().await;
    assert_eq!(orders[0]["fulfillment_state"], "canceled", "{}", orders[0]);
    assert_eq!(
        orders[1]["fulfillment_state"], "shipped",
        "the warehouse had shipped it: the conflict is reported"
    );
    // The conflict is settled once: no cancel is tried again.
    let cancels = t.wh.cancel_requests();
    t.sync().await;
    assert_eq!(t.wh.cancel_requests(), cancels, "each order cancelled at most once");
}

pub async fn an_order_shipped_at_once_comes_back_in_the_pass_that_sent_it(platform: &'static str) {
    // The other scenarios ship on request; the demo and the benchmark let the warehouse ship.
    let t = rig_for(platform, 1).await;
    assert!(t.wh.ship_at_once());
    let run = t.sync().await;
    assert_eq!((run["orders_sent"].as_i64(), run["shipments_pulled"].as_i64()), (Some(1), Some(1)), "{run}");
    assert_eq!(t.rig.orders().await[0]["fulfillment_state"], "shipped");
}

pub async fn a_429_is_waited_out_and_a_long_wait_carries_over(platform: &'static str) {
    let t = rig_for(platform, 2).await;
    assert!(t.wh.ask_to_wait(1));
    let started = Instant::now();
    let run = t.sync().await;
    assert_eq!((run["status"].as_str(), run["orders_sent"].as_i64()), (Some("succeeded"), Some(2)), "{run}");
    assert!(started.elapsed() >= Duration::from_secs(1), "never asked again before the time");
    // 30 s is longer than the pass may wait (sync_interval_secs, 10 here).
    assert!(t.wh.ask_to_wait(30));
    assert_failed(&t.sync().await, None, "adapter_unreachable", &["not to call again before"]);
    let asked = t.wh.request_count();
    let later = t.sync().await;
    assert_eq!(later["error"]["code"], "adapter_unreachable", "the wait carries over: {later}");
    assert_eq!(t.wh.request_count(), asked, "no request before the warehouse's wait ends");
}

pub async fn stock_is_read_and_sent_once(platform: &'static str) {
    let t = rig_for(platform, 0).await;
    t.rig.add_products(&["MUG", "TEA"]).await;
    t.wh.count_stock(&[("MUG", 7), ("TEA", 0), ("GHOST", 3)]);
    crate::sync_rig::enable_channel(&t.rig.app, t.connection_id, "inventory").await;
    let run = until(&t, "the levels are read", |r| r["stock_levels_sent"] == 2).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    let stock = t.rig.bc().stock(HASH);
    assert_eq!((stock.get("MUG"), stock.get("TEA"), stock.get("GHOST")), (Some(&7), Some(&0), None));
    let puts = || t.rig.bc().requests().iter().filter(|r| r.starts_with("PUT ")).count();
    let sent = puts();
    let run = t.sync().await;
    assert_eq!(run["stock_levels_sent"], 0, "{run}");
    assert_eq!(puts(), sent, "sent once");
}

macro_rules! warehouse_suite {
    ($($platform:ident: $name:literal => [$($scenario:ident),*];)*) => {$(
        mod $platform {
            $(
                #[rocket::async_test]
                async fn $scenario() {
                    super::$scenario($name).await;
                }
            )*
        }
    )*};
}

warehouse_suite! {
    on_folder: "folder" => [orders_go_once_and_shipments_come_back, stock_is_read_and_sent_once];
    on_x12_folder: "x12" => [orders_go_once_and_shipments_come_back, stock_is_read_and_sent_once];
    on_x12_sftp: "x12-sftp" => [orders_go_once_and_shipments_come_back, stock_is_read_and_sent_once];
    on_x12_ftp: "x12-ftp" => [orders_go_once_and_shipments_come_back, stock_is_read_and_sent_once];
    on_sftp: "sftp" => [orders_go_once_and_shipments_come_back, refused_credentials_are_never_shown,
                        stock_is_read_and_sent_once];
    on_dropstream: "dropstream" => [orders_go_once_and_shipments_come_back, refused_credentials_are_never_shown];
    on_ftp: "ftp" => [orders_go_once_and_shipments_come_back, refused_credentials_are_never_shown,
                      stock_is_read_and_sent_once];
    on_shipbob: "shipbob" => [orders_go_once_and_shipments_come_back, a_lost_create_answer_never_creates_twice,
                              refused_credentials_are_never_shown, a_429_is_waited_out_and_a_long_wait_carries_over,
                              stock_is_read_and_sent_once, a_store_cancellation_is_carried_until_the_warehouse_shipped,
                              an_order_shipped_at_once_comes_back_in_the_pass_that_sent_it];
    on_shipstation: "shipstation" => [orders_go_once_and_shipments_come_back, a_lost_create_answer_never_creates_twice,
                                      refused_credentials_are_never_shown,
                                      a_429_is_waited_out_and_a_long_wait_carries_over, stock_is_read_and_sent_once,
                                      a_store_cancellation_is_carried_until_the_warehouse_shipped,
                                      an_order_shipped_at_once_comes_back_in_the_pass_that_sent_it];
}
