//! The dashboard in a real browser: headless Chromium driven over WebDriver (chromedriver),
//! against the real binary serving `serve --demo`. Login, a filtered order list, a
//! session-mode next page, an order's document, a sync pass started from the page, a
//! shipment the store refused shown with why under its run and beside its state, names
//! where ids stood alone, and a customer user who cannot see another customer's rows.
//!
//! Chromium and chromedriver are Debian's `chromium` and `chromium-driver`; `.ci/run`
//! installs them and runs this test with `--ignored`. A plain `cargo test` shows it as
//! ignored, with its reason, rather than as a pass that checked nothing; run with
//! `--ignored` where they are missing, it fails. With `ORDERBRIDGE_SCREENSHOTS=DIR` it saves
//! a screenshot of each page.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::process::{free_port, start_with};

const PASSWORD: &str = "browser-admin-password";
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A chromedriver process and one browser session; both end when dropped.
struct Browser {
    http: reqwest::Client,
    base: String,
    session: String,
    driver: Child,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Browser {
    async fn start() -> Browser {
        let found =
            |name: &str| Command::new(name).arg("--version").output().is_ok_and(|o| o.status.success());
        assert!(
            found("chromedriver") && (found("chromium") || found("chromium-browser")),
            "the browser test needs chromium and chromedriver (apt-get install chromium chromium-driver; .ci/run does)"
        );
        let port = free_port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let http = orderbridge::platforms::http::client().clone();
        let base = format!("http://127.0.0.1:{port}");
        let mut browser = Browser { http, base, session: String::new(), driver };
        let capabilities = json!({"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"]}}}});
        for _ in 0..100 {
            if let Ok(answer) = browser.call("POST", "/session", &capabilities).await
                && let Some(id) = answer["sessionId"].as_str()
            {
                browser.session = id.to_string();
                return browser;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("chromedriver did not open a session");
    }

    async fn call(&self, method: &str, path: &str, body: &Value) -> Result<Value, String> {
        let url = format!("{}{path}", self.base);
        let request = match method {
            "GET" => self.http.get(url),
            "DELETE" => self.http.delete(url),
            _ => self.http.post(url).header("Content-Type", "application/json").body(body.to_string()),
        };
        let response = request.send().await.map_err(|e| e.to_string())?;
        let text = response.text().await.map_err(|e| e.to_string())?;
        let value: Value = serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?;
        if value["value"]["error"].is_string() {
            return Err(value["value"]["message"].as_str().unwrap_or_default().to_string());
        }
        Ok(value["value"].clone())
    }

    async fn session(&self, method: &str, path: &str, body: Value) -> Value {
        let path = format!("/session/{}{path}", self.session);
        self.call(method, &path, &body).await.unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    async fn go(&self, url: &str) {
        self.session("POST", "/url", json!({"url": url})).await;
    }

    /// Runs a script in the page; its `return` value.
    async fn run(&self, script: &str) -> Value {
        self.session("POST", "/execute/sync", json!({"script": script, "args": []})).await
    }

    /// Waits (bounded) until `condition`, a script expression, is true in the page.
    async fn until(&self, condition: &str, what: &str) {
        for _ in 0..200 {
            if self.run(&format!("return Boolean({condition});")).await == json!(true) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let page = self.run("return document.body.innerText;").await;
        panic!("waited 20 s for {what}; the page says: {page}");
    }

    async fn element(&self, css: &str) -> String {
        let found = self.session("POST", "/element", json!({"using": "css selector", "value": css})).await;
        found[ELEMENT].as_str().unwrap_or_else(|| panic!("no element {css}")).to_string()
    }

    async fn type_into(&self, css: &str, text: &str) {
        let id = self.element(css).await;
        self.session("POST", &format!("/element/{id}/clear"), json!({})).await;
        self.session("POST", &format!("/element/{id}/value"), json!({"text": text})).await;
    }

    async fn click(&self, css: &str) {
        let id = self.element(css).await;
        self.session("POST", &format!("/element/{id}/click"), json!({})).await;
    }

    async fn heading(&self) -> String {
        self.run("return document.querySelector('main h1').textContent;")
            .await
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    async fn screenshot(&self, name: &str) {
        let Some(dir) = std::env::var_os("ORDERBRIDGE_SCREENSHOTS") else { return };
        use base64::Engine;
        let png = self.session("GET", "/screenshot", Value::Null).await;
        let bytes =
            base64::engine::general_purpose::STANDARD.decode(png.as_str().unwrap_or_default()).unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(std::path::Path::new(&dir).join(format!("{name}.png")), bytes).unwrap();
    }

    async fn log_in(&self, user: &str, password: &str) {
        self.until("document.querySelector('#f-username')", "the login form").await;
        self.type_into("#f-username", user).await;
        self.type_into("#f-password", password).await;
        self.click("form.login button[type=submit]").await;
        self.until("document.querySelector('main h1').textContent === 'Overview' && document.querySelector('svg.chart')", "the overview").await;
    }

    async fn close(self) {
        let path = format!("/session/{}", self.session);
        let _ = self.call("DELETE", &path, &Value::Null).await;
    }
}

/// An API answer of the server, as the admin.
fn admin_get(port: u16, token: &str, path: &str) -> Value {
    let (status, _, body) =
        crate::process::http(port, "GET", path, &[("Authorization", &format!("Bearer {token}"))], "")
            .unwrap();
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap()
}

/// A pass of a connection through the API, waited for (bounded); returns the run.
async fn pass(port: u16, token: &str, connection: i64) -> Value {
    let auth = format!("Bearer {token}");
    let (status, _, body) = crate::process::http(
        port,
        "POST",
        &format!("/connections/{connection}/sync"),
        &[("Authorization", &auth), ("Content-Type", "application/json")],
        "{}",
    )
    .unwrap();
    assert_eq!(status, 202, "{body}");
    let run_id = serde_json::from_str::<Value>(&body).unwrap()["run_id"].as_i64().unwrap();
    for _ in 0..300 {
        let run = admin_get(port, token, &format!("/connections/{connection}/sync_runs/{run_id}"));
        if !run["finished_at"].is_null() {
            return run;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("run {run_id} did not finish within 30 s");
}

/// The numbers in the first column of the page's table.
async fn first_column(browser: &Browser) -> Vec<i64> {
    let ids = browser
        .run("return [...document.querySelectorAll('main tbody tr td:first-child')].map(td => td.textContent);")
        .await;
    ids.as_array().unwrap().iter().filter_map(|v| v.as_str()?.parse().ok()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs headless Chromium and chromedriver; .ci/run installs them and runs it with --ignored"]
async fn the_dashboard_works_in_a_real_browser_for_an_admin_and_a_customer_user() {
    let browser = Browser::start().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("dashboard.db");
    let folders = dir.path().join("folders").display().to_string();
    let env = [
        ("ORDERBRIDGE_ADMIN_PASSWORD", PASSWORD),
        ("ORDERBRIDGE_FOLDER_WAREHOUSE_ROOT", folders.as_str()),
        ("ORDERBRIDGE_SYNC_INTERVAL_SECS", "3600"),
        ("ORDERBRIDGE_FILE_SETTLE_SECS", "1"),
    ];
    let (server, _) = {
        let db = db.clone();
        let env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        tokio::task::spawn_blocking(move || {
            let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            start_with(&db, &["serve", "--demo"], &pairs)
        })
        .await
        .unwrap()
    };
    let site = format!("http://127.0.0.1:{}", server.port);

    // Log in as the admin.
    browser.go(&format!("{site}/")).await;
    browser.until("document.querySelector('main h1').textContent === 'Log in'", "the login page").await;
    browser.screenshot("login").await;
    browser.type_into("#f-username", "admin").await;
    browser.type_into("#f-password", "not-the-password").await;
    browser.click("form.login button[type=submit]").await;
    browser.until("document.querySelector('[role=alert]:not([hidden])')", "the refusal").await;
    browser.log_in("admin", PASSWORD).await;
    browser.screenshot("overview").await;

    // A filtered list: shipped orders only, 10 a page.
    browser.go(&format!("{site}/#/orders?state=shipped&limit=10&mode=page")).await;
    browser.until("document.querySelectorAll('main tbody tr').length === 10", "ten shipped orders").await;
    let states = browser
        .run("return [...document.querySelectorAll('main tbody .badge')].map(b => b.textContent);")
        .await;
    assert!(states.as_array().unwrap().iter().all(|s| s == "shipped"), "{states}");
    let pager = browser.run("return document.querySelector('.pager').textContent;").await;
    assert!(pager.as_str().unwrap().contains("Page 1 of"), "{pager}");
    browser.screenshot("orders").await;

    // Session mode: the next page goes on after the first.
    browser.go(&format!("{site}/#/orders?mode=session&limit=10&sort=id")).await;
    browser.until("document.querySelectorAll('main tbody tr').length === 10", "a first session page").await;
    let first = first_column(&browser).await;
    browser.click(".pager a[rel=next]").await;
    browser
        .until("document.querySelector('.pager').textContent.includes('Page 2')", "the second session page")
        .await;
    let second = first_column(&browser).await;
    assert_eq!(second.len(), 10);
    assert!(second[0] > *first.last().unwrap(), "{first:?} then {second:?}");

    // One order's whole document.
    browser.click("main tbody tr td:first-child a").await;
    browser.until("document.querySelector('main h1').textContent.startsWith('Order ')", "an order").await;
    assert_eq!(browser.heading().await, format!("Order {}", second[0]));
    let items = browser.run("return document.querySelectorAll('main table tbody tr').length;").await;
    assert!(items.as_i64().unwrap() >= 1, "the order's items");
    // Its facts, one term each, with the store by name and linked.
    let facts = browser.run("return document.querySelectorAll('main dl.facts > dt').length;").await;
    assert!(facts.as_i64().unwrap() >= 10, "the order's facts as terms: {facts}");
    let store_link = browser
        .run("return document.querySelector('main dl.facts a[href^=\"#/stores/\"]')?.textContent;")
        .await;
    assert!(store_link.as_str().is_some_and(|t| t.ends_with(')')), "the order's store by name: {store_link}");
    browser.screenshot("order").await;

    // A shipment whose tracking number the store refuses (BigCommerce takes 50 characters),
    // put where connection 1's folder warehouse reports shipments.
    let token = crate::process::token(server.port, "admin", PASSWORD);
    let connection = admin_get(server.port, &token, "/connections/1");
    let (store_id, warehouse_id) =
        (connection["store_id"].as_i64().unwrap(), connection["warehouse_id"].as_i64().unwrap());
    let store = admin_get(server.port, &token, &format!("/stores/{store_id}"));
    let warehouse = admin_get(server.port, &token, &format!("/warehouses/{warehouse_id}"));
    let folder =
        warehouse["adapter"]["connection_string"].as_str().unwrap().trim_start_matches("file://").to_string();
    let orders = admin_get(
        server.port,
        &token,
        &format!("/orders?page=1&limit=1&store_id={store_id}&state=pending_shipment"),
    );
    let refused_order = orders["orders"][0]["id"].as_i64().expect("a pending order of the store");
    std::fs::create_dir_all(format!("{folder}/shipments")).unwrap();
    std::fs::write(
        format!("{folder}/shipments/too-long.csv"),
        format!("order_id,tracking_number\n{refused_order},1Z{}\n", "4".repeat(49)),
    )
    .unwrap();

    // A sync pass started from the page, against the demo's simulated store and warehouse.
    browser.go(&format!("{site}/#/connections/1")).await;
    browser
        .until(
            "[...document.querySelectorAll('main button')].some(b => b.textContent === 'Sync now')",
            "the connection",
        )
        .await;
    browser.click("main p button").await;
    browser
        .until("document.getElementById('status').textContent.includes('succeeded')", "the pass to succeed")
        .await;
    browser.until("document.querySelectorAll('main table tbody tr td:first-child').length >= 1 && document.querySelector('main table tbody tr td:first-child').textContent !== 'Nothing to show.'", "the run in the table").await;
    // The store and warehouse by name and platform, linked to their pages.
    let named = browser
        .run("return [...document.querySelectorAll('main p.link-line a')].map(a => [a.getAttribute('href'), a.textContent]);")
        .await;
    assert_eq!(
        named,
        json!([
            [
                format!("#/stores/{store_id}"),
                format!("{} ({})", store["name"].as_str().unwrap(), store["platform"].as_str().unwrap())
            ],
            [
                format!("#/warehouses/{warehouse_id}"),
                format!(
                    "{} ({})",
                    warehouse["name"].as_str().unwrap(),
                    warehouse["platform"].as_str().unwrap()
                )
            ],
        ]),
        "the connection names its store and warehouse"
    );
    // A file is read once two looks `file_settle_secs` (1 s) apart saw it the same: when the
    // pass above came too soon after it was written, the next one reads it.
    let has_problem =
        |runs: &Value| runs.as_array().unwrap().iter().any(|r| r["problems_count"].as_i64() > Some(0));
    if !has_problem(&admin_get(server.port, &token, "/connections/1/sync_runs")) {
        tokio::time::sleep(Duration::from_millis(1200)).await;
        pass(server.port, &token, 1).await;
    }
    assert!(
        has_problem(&admin_get(server.port, &token, "/connections/1/sync_runs")),
        "the refused shipment is a problem"
    );
    browser.go(&format!("{site}/#/connections")).await;
    browser.until("document.querySelector('main h1').textContent === 'Connections'", "the connections").await;
    browser.go(&format!("{site}/#/connections/1")).await;
    browser.until("document.querySelector('main tr.under .problems')", "the run's problems").await;
    let problems = browser.run("return document.querySelector('main tr.under .problems').textContent;").await;
    let problems = problems.as_str().unwrap();
    assert!(problems.contains("51 characters") && problems.contains("(notify)"), "{problems}");
    browser.screenshot("connection").await;
    browser
        .go(&format!(
            "{site}/#/shipments?state=errored_notifying_of_shipment&limit=25&mode=page&sort=-created_at"
        ))
        .await;
    browser.until("document.querySelector('main tbody tr .why')", "why the shipment is errored").await;
    let why = browser.run("return document.querySelector('main tbody tr .why').textContent;").await;
    assert!(why.as_str().unwrap().contains("51 characters"), "{why}");
    let warehouse_cell = browser
        .run("return document.querySelector('main tbody a[href^=\"#/warehouses/\"]').textContent;")
        .await;
    assert!(
        warehouse_cell.as_str().unwrap().ends_with(")"),
        "the warehouse by name and platform: {warehouse_cell}"
    );
    browser.screenshot("shipments-errored").await;
    browser.go(&format!("{site}/#/stores/{store_id}")).await;
    browser.until("document.querySelector('main h1').textContent.endsWith(')')", "the store's page").await;
    browser.screenshot("store").await;
    browser.go(&format!("{site}/#/connections")).await;
    browser.until("document.querySelectorAll('main tbody tr').length >= 2", "the connections").await;
    browser.screenshot("connections").await;
    browser.go(&format!("{site}/#/shipments?limit=25&mode=page")).await;
    browser.until("document.querySelectorAll('main tbody tr').length === 25", "shipments").await;
    browser.screenshot("shipments").await;
    browser.go(&format!("{site}/#/stores")).await;
    // Two stores for each demo company, Acme's Shopify store, the demo's WooCommerce shop, its
    // Amazon seller and its eBay seller.
    browser.until("document.querySelectorAll('main tbody tr').length === 10", "every store").await;
    let masked = browser.run("return document.querySelector('main tbody code').textContent;").await;
    assert!(masked.as_str().unwrap().contains("****"), "adapters are masked: {masked}");
    browser.screenshot("stores").await;
    browser.go(&format!("{site}/#/warehouses")).await;
    browser.until("document.querySelectorAll('main tbody tr').length >= 3", "the warehouses").await;
    browser.screenshot("warehouses").await;

    // On a phone-width screen the overview still reads.
    browser.session("POST", "/window/rect", json!({"width": 390, "height": 844})).await;
    browser.go(&format!("{site}/#/overview")).await;
    browser.until("document.querySelector('svg.chart')", "the overview").await;
    let wide = browser.run("return document.documentElement.scrollWidth <= window.innerWidth + 1;").await;
    assert_eq!(wide, json!(true), "no sideways scrolling of the page at phone width");
    browser.screenshot("overview-phone").await;
    browser.session("POST", "/window/rect", json!({"width": 1280, "height": 900})).await;

    // A customer user sees its own customer's rows only.
    let printed = server.stdout.so_far();
    let (user, password) = printed
        .lines()
        .find_map(|line| {
            let mut words = line.split_whitespace();
            match (words.next(), words.next(), words.next()) {
                (Some(user), Some("password"), Some(password)) => {
                    Some((user.to_string(), password.to_string()))
                }
                _ => None,
            }
        })
        .unwrap_or_else(|| panic!("the demo's customer logins: {printed}"));
    browser.click("#logout").await;
    browser.log_in(&user, &password).await;
    browser.go(&format!("{site}/#/stores")).await;
    browser
        // The first demo login is Acme's: its web store, marketplaces and Shopify store at least.
        .until(
            "[...document.querySelectorAll('main tbody tr td:first-child')].filter(td => /^[0-9]+$/.test(td.textContent)).length >= 3",
            "the customer's stores",
        )
        .await;
    let customers = browser
        .run("return [...document.querySelectorAll('main tbody tr td:nth-child(3)')].map(td => td.textContent);")
        .await;
    let customers = customers.as_array().unwrap();
    assert!(customers.iter().all(|c| c == &customers[0]), "one customer's stores: {customers:?}");
    let own_stores = first_column(&browser).await;
    browser.go(&format!("{site}/#/orders?limit=100&mode=page")).await;
    browser.until("document.querySelectorAll('main tbody tr').length > 0", "the customer's orders").await;
    let stores = browser
        .run("return [...new Set([...document.querySelectorAll('main tbody tr td:nth-child(3) a')].map(a => Number(a.dataset.id)))];")
        .await;
    assert!(
        stores.as_array().unwrap().iter().all(|s| own_stores.contains(&s.as_i64().unwrap())),
        "orders of the customer's stores only: {stores} of {own_stores:?}"
    );
    // An order of another customer's store, as the admin sees it, is not there for this user.
    let admin_orders: Vec<i64> = {
        let token = crate::process::token(server.port, "admin", PASSWORD);
        let other_store = (1..=6).find(|s| !own_stores.contains(s)).unwrap();
        let (_, _, body) = crate::process::http(
            server.port,
            "GET",
            &format!("/orders?page=1&limit=1&store_id={other_store}"),
            &[("Authorization", &format!("Bearer {token}"))],
            "",
        )
        .unwrap();
        let body: Value = serde_json::from_str(&body).unwrap();
        body["orders"].as_array().unwrap().iter().filter_map(|o| o["id"].as_i64()).collect()
    };
    let other = admin_orders.first().expect("an order of another customer");
    browser.go(&format!("{site}/#/orders/{other}")).await;
    browser.until("document.querySelector('main [role=alert]')", "the refusal").await;
    let said = browser.run("return document.querySelector('main [role=alert]').textContent;").await;
    assert!(!said.as_str().unwrap().is_empty());
    browser.close().await;
    server.stop();
}
