//! Nothing secret leaks. The real binary, logging at debug level, is given every kind of
//! secret it keeps (passwords, a configured token signing secret, BigCommerce, Sellbrite and
//! Shopify, WooCommerce and eBay credentials, the tokens it fetches for a Shopify app and an
//! eBay seller, an SFTP password) and made to use and refuse them: logins right and wrong,
//! pings the platforms refuse, bodies that fail validation, sync passes that succeed and
//! fail, a backup. Then every answer it gave (headers and bodies), every line it and its
//! commands printed, and every file it wrote (the database, its log, the backup, the order
//! files, the warehouses' error reports) is searched for each secret.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use orderbridge::simulate::{big_commerce, ebay, sellbrite, shopify, woocommerce};
use serde_json::{Value, json};

use crate::process::{http, run_cli, start};

const ADMIN_PASSWORD: &str = "leak-admin-PW-1a";
const USER_PASSWORD: &str = "leak-user-PW-2b";
const WRONG_PASSWORD: &str = "leak-wrong-PW-3c";
const JWT_SECRET: &str = "leak-jwt-SECRET-4d-that-signs-every-token";
const BC_TOKEN: &str = "leak-bc-TOKEN-5e";
const BC_WRONG: &str = "leak-bc-WRONG-6f";
const BC_HASH: &str = "leakhash";
const SB_TOKEN: &str = "leak-sb-TOKEN-7g";
const SB_SECRET: &str = "leak-sb-SECRET-8h";
const SB_WRONG: &str = "leak-sb-WRONG-9i";
const SFTP_PASSWORD: &str = "leak-sftp-PW-10j";
const WOO_KEY: &str = "ck_leak-woo-KEY-11k";
const WOO_SECRET: &str = "cs_leak-woo-SECRET-12l";
const WOO_WRONG: &str = "cs_leak-woo-WRONG-13m";
const SHOP: &str = "leaky.myshopify.com";
const SHOP_TOKEN: &str = "shpat_leak_TOKEN_11k";
const SHOP_WRONG: &str = "shpat_leak_WRONG_12l";
const APP_ID: &str = "leak-app";
const APP_SECRET: &str = "leak-app-SECRET-13m";
const APP_WRONG: &str = "leak-app-WRONG-14n";
const EBAY_SECRET: &str = "PRD-leak-ebay-SECRET-15o";
const EBAY_REFRESH: &str = "v^1.1#i^1#r^1#I^3#p^3#f^0#t^leak-ebay-REFRESH-16p";
const EBAY_WRONG: &str = "v^1.1#i^1#r^1#I^3#p^3#f^0#t^leak-ebay-WRONG-17q";
/// What every access token the eBay simulator issues holds (`t^H4sI…`).
const EBAY_ISSUED: &str = "#t^H4sI";

const SECRETS: [&str; 22] = [
    ADMIN_PASSWORD,
    USER_PASSWORD,
    WRONG_PASSWORD,
    JWT_SECRET,
    BC_TOKEN,
    BC_WRONG,
    SB_TOKEN,
    SB_SECRET,
    SB_WRONG,
    SFTP_PASSWORD,
    WOO_KEY,
    WOO_SECRET,
    WOO_WRONG,
    SHOP_TOKEN,
    SHOP_WRONG,
    APP_SECRET,
    APP_WRONG,
    "shpat_sim_",
    EBAY_SECRET,
    EBAY_REFRESH,
    EBAY_WRONG,
    EBAY_ISSUED,
];

/// Everything the server said, to search at the end.
#[derive(Default)]
struct Said(Vec<String>);

struct Client {
    port: u16,
    bearer: String,
}

impl Said {
    fn call(&mut self, client: &Client, method: &str, path: &str, body: &Value) -> (u16, Value) {
        let headers = [("Authorization", client.bearer.as_str()), ("Content-Type", "application/json")];
        let text = if body.is_null() { String::new() } else { body.to_string() };
        let (status, head, reply) = http(client.port, method, path, &headers, &text)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        self.0.push(format!("{method} {path}\n{head}\n{reply}"));
        (status, serde_json::from_str(&reply).unwrap_or(Value::Null))
    }

    fn token(&mut self, port: u16, user: &str, password: &str) -> (u16, Value) {
        use base64::Engine;
        let basic = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        let (status, head, reply) = http(
            port,
            "POST",
            "/auth/token",
            &[("Authorization", &format!("Basic {basic}")), ("Content-Type", "application/json")],
            r#"{"grant_type":"client_credentials"}"#,
        )
        .unwrap();
        // The answer carries the access token, which is the caller's to see; it is searched
        // for in the logs and files below, not here.
        self.0.push(format!("POST /auth/token\n{head}"));
        (status, serde_json::from_str(&reply).unwrap_or(Value::Null))
    }

    fn created(&mut self, client: &Client, path: &str, body: Value) -> i64 {
        let (status, reply) = self.call(client, "POST", path, &body);
        assert_eq!(status, 201, "{path}: {reply}");
        reply["id"].as_i64().unwrap()
    }
}

fn enable_sales(said: &mut Said, client: &Client, connection: i64) {
    let (_, channels) =
        said.call(client, "GET", &format!("/connections/{connection}/channels"), &Value::Null);
    let sales =
        channels.as_array().unwrap().iter().find(|c| c["type"] == "sales").unwrap()["id"].as_i64().unwrap();
    let path = format!("/connections/{connection}/channels/{sales}");
    assert_eq!(said.call(client, "PATCH", &path, &json!({"enabled_at": "now"})).0, 204);
}

/// Runs a pass of the connection and waits (bounded) for its end; the run.
async fn sync(said: &mut Said, client: &Client, connection: i64) -> Value {
    let (status, started) = said.call(client, "POST", &format!("/connections/{connection}/sync"), &json!({}));
    assert_eq!(status, 202, "{started}");
    let run_id = started["run_id"].as_i64().unwrap();
    for _ in 0..400 {
        let path = format!("/connections/{connection}/sync_runs/{run_id}");
        let (_, run) = said.call(client, "GET", &path, &Value::Null);
        if !run["finished_at"].is_null() {
            return run;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("run {run_id} of connection {connection} did not finish in 20 s");
}

/// Every file under `dir` but the key file, with its bytes.
fn files_under(dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else if path.extension().is_none_or(|e| e != "key") {
            out.insert(path.display().to_string(), std::fs::read(&path).unwrap());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_appears_in_answers_logs_runs_or_files() {
    let bc = big_commerce::Simulator::start().await;
    bc.add_store(BC_HASH, BC_TOKEN);
    bc.add_orders(BC_HASH, 5, 3);
    let sb = sellbrite::Simulator::start().await;
    sb.add_account(SB_TOKEN, SB_SECRET);
    sb.add_orders(SB_TOKEN, 4, 5);
    let woo = woocommerce::Simulator::start(WOO_KEY, WOO_SECRET).await;
    woo.add_orders(3, 9);
    let shop = shopify::Simulator::start().await;
    shop.add_shop(SHOP, SHOP_TOKEN, &shopify::ALL_SCOPES);
    shop.add_app(SHOP, APP_ID, APP_SECRET, &shopify::ALL_SCOPES, 3600);
    shop.add_orders(SHOP, 3, 8);
    let bay = ebay::Simulator::start().await;
    let seller = ebay::Seller {
        client_secret: EBAY_SECRET.into(),
        refresh_token: EBAY_REFRESH.into(),
        ..ebay::Seller::new("leaky_seller")
    };
    bay.add_seller(&seller);
    bay.add_ready_orders(&seller.username, 2);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    drop(closed);

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leaks.db");
    let folders = dir.path().join("folders");
    std::fs::create_dir_all(folders.join("good")).unwrap();
    std::fs::create_dir_all(folders.join("sellbrite")).unwrap();
    std::fs::create_dir_all(folders.join("woo")).unwrap();
    std::fs::create_dir_all(folders.join("shopify")).unwrap();
    std::fs::create_dir_all(folders.join("shopify-app")).unwrap();
    std::fs::create_dir_all(folders.join("ebay")).unwrap();
    let bay_base = bay.api_base();
    let (bc_base, sb_base, folders_text) = (bc.base_url(), sb.base_url(), folders.display().to_string());
    let shop_base = shop.base_url();
    let env = [
        ("ORDERBRIDGE_ADMIN_PASSWORD", ADMIN_PASSWORD),
        ("ORDERBRIDGE_JWT_SECRET", JWT_SECRET),
        ("ORDERBRIDGE_BIGCOMMERCE_API_BASE", bc_base.as_str()),
        ("ORDERBRIDGE_SELLBRITE_API_BASE", sb_base.as_str()),
        ("ORDERBRIDGE_SHOPIFY_API_BASE", shop_base.as_str()),
        ("ORDERBRIDGE_EBAY_API_BASE", bay_base.as_str()),
        ("ORDERBRIDGE_FOLDER_WAREHOUSE_ROOT", folders_text.as_str()),
        ("ORDERBRIDGE_SYNC_INTERVAL_SECS", "86400"),
        ("ORDERBRIDGE_SYNC_RETRY_BASE_SECS", "1"),
        ("ORDERBRIDGE_SYNC_MAX_ATTEMPTS", "1"),
        ("ORDERBRIDGE_FILE_SETTLE_SECS", "1"),
        ("ORDERBRIDGE_PING_TIMEOUT_SECS", "3"),
        ("ROCKET_LOG_LEVEL", "debug"),
    ];
    let env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let (server, _) = tokio::task::spawn_blocking({
        let db = db.clone();
        move || {
            let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            start(&db, &pairs)
        }
    })
    .await
    .unwrap();
    let port = server.port;
    let mut said = Said::default();
    let mut printed = Vec::new();

    // Logins, right and wrong.
    for _ in 0..3 {
        assert_eq!(said.token(port, "admin", WRONG_PASSWORD).0, 401);
    }
    let (status, issued) = said.token(port, "admin", ADMIN_PASSWORD);
    assert_eq!(status, 200, "{issued}");
    let admin = Client { port, bearer: format!("Bearer {}", issued["access_token"].as_str().unwrap()) };
    let customer = said.created(&admin, "/customers", json!({"company_name": "Leaky Co"}));
    let (ok, out, err) =
        run_cli(&db, &["user", "add", "leaky", "--customer-id", &customer.to_string()], USER_PASSWORD);
    assert!(ok, "{out}{err}");
    printed.push(out + &err);
    let (status, issued) = said.token(port, "leaky", USER_PASSWORD);
    assert_eq!(status, 200, "{issued}");
    let user = Client { port, bearer: format!("Bearer {}", issued["access_token"].as_str().unwrap()) };
    assert_eq!(said.token(port, "leaky", WRONG_PASSWORD).0, 401);

    // Pings the platforms refuse or cannot answer, and bodies that fail validation.
    let bc_store = |token: &str| {
        json!({"customer_id": customer, "name": "BC", "platform": "big_commerce", "enabled_at": "now",
               "adapter": {"access_token": token, "store_hash": BC_HASH}})
    };
    let sb_store = |secret: &str| {
        json!({"customer_id": customer, "name": "SB", "platform": "sellbrite", "enabled_at": "now",
               "adapter": {"auth_token": SB_TOKEN, "secret_key": secret}})
    };
    let woo_store = |secret: &str| {
        json!({"customer_id": customer, "name": "Woo", "platform": "woocommerce", "enabled_at": "now",
               "adapter": {"url": woo.url(), "consumer_key": WOO_KEY, "consumer_secret": secret}})
    };
    let shop_store = |adapter: Value| json!({"customer_id": customer, "name": "Shop", "platform": "shopify", "enabled_at": "now", "adapter": adapter});
    let bay_store = |refresh: &str| {
        json!({"customer_id": customer, "name": "eBay", "platform": "ebay", "enabled_at": "now",
               "adapter": {"client_id": seller.client_id, "client_secret": EBAY_SECRET, "refresh_token": refresh}})
    };
    let token_adapter = |token: &str| json!({"shop": SHOP, "access_token": token});
    let app_adapter = |secret: &str| json!({"shop": SHOP, "client_id": APP_ID, "client_secret": secret});
    let sftp_url = format!("sftp://wh:{SFTP_PASSWORD}@127.0.0.1:{closed_port}/in");
    let sftp = json!({"customer_id": customer, "platform": "sftp", "enabled_at": "now",
                      "adapter": {"connection_string": sftp_url}});
    assert_eq!(said.call(&admin, "POST", "/stores/ping", &bc_store(BC_TOKEN)).0, 204);
    assert_eq!(said.call(&admin, "POST", "/stores/ping", &bc_store(BC_WRONG)).0, 422);
    assert_eq!(said.call(&user, "POST", "/stores/ping", &sb_store(SB_WRONG)).0, 422);
    assert_eq!(said.call(&admin, "POST", "/stores/ping", &woo_store(WOO_SECRET)).0, 204);
    assert_eq!(said.call(&admin, "POST", "/stores/ping", &woo_store(WOO_WRONG)).0, 422);
    assert_eq!(said.call(&user, "POST", "/stores/ping", &woo_store(WOO_WRONG)).0, 422, "loopback");
    let woo_http = json!({"customer_id": customer, "name": "W", "platform": "woocommerce",
                          "adapter": {"url": "http://shop.example.com", "consumer_key": WOO_KEY, "consumer_secret": WOO_WRONG}});
    assert_eq!(said.call(&admin, "POST", "/stores", &woo_http).0, 422);
    assert_eq!(said.call(&admin, "POST", "/warehouses/ping", &sftp).0, 502);
    assert_eq!(said.call(&admin, "POST", "/stores/ping", &shop_store(token_adapter(SHOP_TOKEN))).0, 204);
    assert_eq!(said.call(&admin, "POST", "/stores/ping", &shop_store(token_adapter(SHOP_WRONG))).0, 422);
    assert_eq!(said.call(&user, "POST", "/stores/ping", &shop_store(app_adapter(APP_WRONG))).0, 422);
    assert_eq!(said.call(&admin, "POST", "/stores/ping", &bay_store(EBAY_REFRESH)).0, 204);
    assert_eq!(said.call(&user, "POST", "/stores/ping", &bay_store(EBAY_WRONG)).0, 422);
    let both =
        json!({"shop": SHOP, "access_token": SHOP_WRONG, "client_id": APP_ID, "client_secret": APP_WRONG});
    assert_eq!(said.call(&admin, "POST", "/stores", &shop_store(both)).0, 422);
    let bad_hash = json!({"customer_id": customer, "name": "X", "platform": "big_commerce",
                          "adapter": {"access_token": BC_WRONG, "client_id": 5}});
    assert_eq!(said.call(&admin, "POST", "/stores", &bad_hash).0, 422);
    let bad_url = json!({"customer_id": customer, "platform": "sftp",
                         "adapter": {"connection_string": format!("sftp://wh:{SFTP_PASSWORD}@bad host!/x")}});
    assert_eq!(said.call(&user, "POST", "/warehouses", &bad_url).0, 422);
    let not_json = said.call(&admin, "POST", "/stores", &Value::String(format!("{{\"x\": \"{BC_WRONG}")));
    assert!(not_json.0 >= 400 && not_json.0 < 500);

    // Stores, warehouses and connections that sync: two that work, two that are refused.
    let good = said.created(&admin, "/stores", bc_store(BC_TOKEN));
    let wrong = said.created(&admin, "/stores", bc_store(BC_WRONG));
    let sellbrite = said.created(&user, "/stores", sb_store(SB_SECRET));
    let woo_good = said.created(&admin, "/stores", woo_store(WOO_SECRET));
    let woo_wrong = said.created(&admin, "/stores", woo_store(WOO_WRONG));
    let shopify_token = said.created(&admin, "/stores", shop_store(token_adapter(SHOP_TOKEN)));
    let shopify_app = said.created(&user, "/stores", shop_store(app_adapter(APP_SECRET)));
    let bay_good = said.created(&admin, "/stores", bay_store(EBAY_REFRESH));
    let bay_wrong = said.created(&user, "/stores", bay_store(EBAY_WRONG));
    let folder = |name: &str| {
        json!({"customer_id": customer, "name": name, "platform": "folder", "enabled_at": "now",
               "adapter": {"connection_string": format!("file://{}", folders.join(name).display())}})
    };
    let good_wh = said.created(&admin, "/warehouses", folder("good"));
    let sb_wh = said.created(&admin, "/warehouses", folder("sellbrite"));
    let woo_wh = said.created(&admin, "/warehouses", folder("woo"));
    let sftp_wh = said.created(&admin, "/warehouses", sftp.clone());
    let shop_wh = said.created(&admin, "/warehouses", folder("shopify"));
    let app_wh = said.created(&admin, "/warehouses", folder("shopify-app"));
    let bay_wh = said.created(&admin, "/warehouses", folder("ebay"));
    let mut connections = Vec::new();
    for (name, store, warehouse) in [
        ("good", good, good_wh),
        ("wrong", wrong, sftp_wh),
        ("sb", sellbrite, sb_wh),
        ("sftp", good, sftp_wh),
        ("woo", woo_good, woo_wh),
        ("woo-wrong", woo_wrong, woo_wh),
        ("shopify", shopify_token, shop_wh),
        ("shopify app", shopify_app, app_wh),
        ("ebay", bay_good, bay_wh),
        ("ebay-wrong", bay_wrong, bay_wh),
    ] {
        let body = json!({"name": name, "customer_id": customer, "store_id": store, "warehouse_id": warehouse,
                          "enabled_at": "now"});
        let connection = said.created(&admin, "/connections", body);
        enable_sales(&mut said, &admin, connection);
        connections.push(connection);
    }
    let mut statuses = Vec::new();
    for connection in &connections {
        let run = sync(&mut said, &admin, *connection).await;
        statuses.push(run["status"].as_str().unwrap_or_default().to_string());
    }
    assert_eq!(
        statuses,
        [
            "succeeded",
            "failed",
            "succeeded",
            "failed",
            "succeeded",
            "failed",
            "succeeded",
            "succeeded",
            "succeeded",
            "failed"
        ],
        "the passes ran as planned"
    );
    let fetched = shop.fetched_tokens(SHOP);
    assert_eq!(fetched.len(), 1, "the app's pass fetched a token");
    // Shipments come back for the good connection; a store that then refuses them fails.
    let (_, orders) = said.call(&admin, "GET", "/orders?store_id=1&limit=100", &Value::Null);
    let ids: Vec<i64> = orders["orders"]
        .as_array()
        .map_or_else(Vec::new, |o| o.iter().filter_map(|o| o["id"].as_i64()).collect());
    assert!(!ids.is_empty(), "{orders}");
    let mut confirm = String::from("order_id,tracking_number,carrier_name\n");
    for id in &ids {
        confirm.push_str(&format!("{id},TRACK-{id},UPS\n"));
    }
    confirm.push_str("not a number,,\n");
    std::fs::create_dir_all(folders.join("good/shipments")).unwrap();
    std::fs::write(folders.join("good/shipments/confirm.csv"), confirm).unwrap();
    sync(&mut said, &admin, connections[0]).await;
    // And a WooCommerce store hears of its shipments (signed requests, notes or tracking).
    let (_, woo_orders) =
        said.call(&admin, "GET", &format!("/orders?store_id={woo_good}&limit=100"), &Value::Null);
    let mut shipped = String::from("order_id,tracking_number,carrier_name\n");
    for order in woo_orders["orders"].as_array().unwrap() {
        shipped.push_str(&format!("{},WOO-{},UPS\n", order["id"], order["id"]));
    }
    std::fs::create_dir_all(folders.join("woo/shipments")).unwrap();
    std::fs::write(folders.join("woo/shipments/confirm.csv"), shipped).unwrap();
    let run = sync(&mut said, &admin, connections[4]).await;
    assert_eq!(run["shipments_notified"], 3, "{run}");
    assert_eq!(woo.trackings().len(), 3);
    // And the eBay seller hears of its shipments as fulfillments.
    let (_, bay_orders) =
        said.call(&admin, "GET", &format!("/orders?store_id={bay_good}&limit=100"), &Value::Null);
    let mut shipped = String::from("order_id,tracking_number,carrier_name\n");
    for order in bay_orders["orders"].as_array().unwrap() {
        shipped.push_str(&format!("{},BAY{},UPS\n", order["id"], order["id"]));
    }
    std::fs::create_dir_all(folders.join("ebay/shipments")).unwrap();
    std::fs::write(folders.join("ebay/shipments/confirm.csv"), shipped).unwrap();
    let run = sync(&mut said, &admin, connections[8]).await;
    assert_eq!(run["shipments_notified"], 2, "{run}");
    assert_eq!(bay.tracking_numbers(&seller.username).len(), 2);
    for path in ["/stores", "/warehouses", "/connections", "/shipments", "/customers"] {
        said.call(&admin, "GET", path, &Value::Null);
        said.call(&user, "GET", path, &Value::Null);
    }
    for connection in &connections {
        said.call(&admin, "GET", &format!("/connections/{connection}/sync_runs"), &Value::Null);
    }

    let (ok, out, err) = run_cli(&db, &["backup", &dir.path().join("backup.db").display().to_string()], "");
    assert!(ok, "{out}{err}");
    printed.push(out + &err);
    let (ok, out, err) = run_cli(&db, &["user", "list"], "");
    assert!(ok, "{out}{err}");
    printed.push(out + &err);
    let (out, err) = server.stop();
    assert!(out.len() + err.len() > 2_000, "the server logged at debug level");
    printed.push(out);
    printed.push(err);

    let mut files = BTreeMap::new();
    files_under(dir.path(), &mut files);
    assert!(files.keys().any(|f| f.ends_with(".csv")), "order files were written: {:?}", files.keys());
    assert!(files.keys().any(|f| f.ends_with("errors.txt")), "an error report was written");
    assert!(files.keys().any(|f| f.ends_with("backup.db")));
    let answers = said.0.join("\n");
    for secret in SECRETS.iter().copied().chain(fetched.iter().map(String::as_str)) {
        assert!(!answers.contains(secret), "{secret} in an answer");
        for text in &printed {
            assert!(!text.contains(secret), "{secret} printed: {text}");
        }
        for (name, bytes) in &files {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{secret} in the file {name}"
            );
        }
    }
    // The access tokens themselves never reach a log line.
    for text in &printed {
        for client in [&admin, &user] {
            let token = client.bearer.trim_start_matches("Bearer ");
            assert!(!text.contains(token), "an access token was printed");
        }
    }
}
