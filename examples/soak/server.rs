//! The server process: starting it as the soak needs it, what `/proc` says of it, plain
//! requests for setting up, and the database file after the load.

use super::*;

pub(crate) fn orderbridge(bin: &Path, db: &Path, work: &Path) -> Command {
    let mut cmd = Command::new(bin);
    // Settings from the caller's shell or a Rocket.toml would change what is measured.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("ROCKET_") || key.starts_with("ORDERBRIDGE_") {
            cmd.env_remove(key.as_ref());
        }
    }
    cmd.current_dir(work)
        .env("ORDERBRIDGE_DATABASE", db)
        .env("ORDERBRIDGE_ADMIN_PASSWORD", ADMIN_PASSWORD)
        .env("ORDERBRIDGE_SYNC_MODE", "off")
        .env("ORDERBRIDGE_PING_MODE", "offline")
        .env("ROCKET_ADDRESS", "127.0.0.1")
        .env("ROCKET_LOG_LEVEL", "critical")
        .env("ROCKET_CLI_COLORS", "false");
    cmd
}

/// The soft limit on open files of this process (the server inherits it); `None` if unlimited.
pub(crate) fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// The process's open sockets (its connections and its listener).
pub(crate) fn sockets(pid: u32) -> u64 {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return 0 };
    dir.filter_map(Result::ok)
        .filter(|e| std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:")))
        .count() as u64
}

pub(crate) fn file_mib(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / 1_048_576.0)
}

/// One HTTP/1.1 request on a fresh connection, for setting up: (status, body).
pub(crate) fn http(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Result<(u16, String), String> {
    common::http(port, method, path, headers, body.as_bytes(), Duration::from_secs(30))
}

/// `GET path` as JSON, which must answer 200.
pub(crate) fn get_json(port: u16, auth: &str, path: &str) -> Result<Value, String> {
    let (status, body) = http(port, "GET", path, &[("Authorization", auth)], "")?;
    if status != 200 {
        return Err(format!("GET {path} answered {status}: {body}"));
    }
    serde_json::from_str(&body).map_err(|e| format!("GET {path}: {e}"))
}

/// What the seeded database holds, read over the API before the load.
pub(crate) struct World {
    pub(crate) port: u16,
    pub(crate) auth: String,
    /// Seeded orders have the ids 1..=orders.
    pub(crate) orders: u64,
    /// (store id, its customer id)
    pub(crate) stores: Vec<(i64, i64)>,
    pub(crate) customers: Vec<i64>,
    /// (warehouse id, its customer id)
    pub(crate) warehouses: Vec<(i64, i64)>,
    pub(crate) products: Vec<i64>,
}

impl World {
    pub(crate) fn read(port: u16, auth: String, orders: u64) -> Result<World, String> {
        let pairs = |v: &Value, key: &str| -> Vec<(i64, i64)> {
            v.as_array()
                .map(|a| a.iter().filter_map(|x| Some((x["id"].as_i64()?, x[key].as_i64()?))).collect())
                .unwrap_or_default()
        };
        let ids = |v: &Value| -> Vec<i64> {
            v.as_array().map(|a| a.iter().filter_map(|x| x["id"].as_i64()).collect()).unwrap_or_default()
        };
        let stores = pairs(&get_json(port, &auth, "/stores")?, "customer_id");
        let warehouses = pairs(&get_json(port, &auth, "/warehouses")?, "customer_id");
        let customers = ids(&get_json(port, &auth, "/customers")?);
        let products = ids(&get_json(port, &auth, "/products?page=1&limit=1000")?["products"]);
        let newest = get_json(port, &auth, "/orders?page=1&limit=1&sort=-id")?;
        let newest = newest["orders"][0]["id"].as_i64().unwrap_or(0);
        if newest != orders as i64 {
            return Err(format!("the seeded database's newest order is {newest}, not {orders}"));
        }
        let world = World { port, auth, orders, stores, customers, warehouses, products };
        if world.stores.is_empty() || world.customers.is_empty() || world.products.is_empty() {
            return Err("the seeded database has no stores, customers or products".into());
        }
        if world.stores.iter().any(|&(_, c)| world.warehouse_of(c).is_none()) {
            return Err("a seeded store's customer has no warehouse".into());
        }
        Ok(world)
    }

    pub(crate) fn warehouse_of(&self, customer: i64) -> Option<i64> {
        self.warehouses.iter().find(|&&(_, c)| c == customer).map(|&(w, _)| w)
    }

    pub(crate) fn customer_of_store(&self, store: i64) -> Option<i64> {
        self.stores.iter().find(|&&(s, _)| s == store).map(|&(_, c)| c)
    }
}

// ---------------------------------------------------------------------------------------------
// After the load

/// `PRAGMA integrity_check` and the rows the soak wrote, from the file with the server stopped.
pub(crate) struct FileCheck {
    pub(crate) integrity: Vec<String>,
    pub(crate) secs: f64,
    pub(crate) customers: u64,
    pub(crate) products: u64,
    pub(crate) orders: u64,
    pub(crate) shipments: u64,
}

pub(crate) fn check_file(db: &Path) -> Result<FileCheck, String> {
    let e = |e: rusqlite::Error| format!("{}: {e}", db.display());
    let t = Instant::now();
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(e)?;
    let mut stmt = conn.prepare("PRAGMA integrity_check").map_err(e)?;
    let integrity = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(e)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(e)?;
    let secs = t.elapsed().as_secs_f64();
    let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).map(|n| n as u64).map_err(e);
    Ok(FileCheck {
        integrity,
        secs,
        customers: count("SELECT count(*) FROM customers WHERE company_name LIKE 'Soak %'")?,
        products: count("SELECT count(*) FROM products WHERE sku LIKE 'SOAK-%'")?,
        orders: count("SELECT count(*) FROM orders WHERE external_id LIKE 'SOAK-%'")?,
        shipments: count("SELECT count(*) FROM shipments WHERE tracking_number LIKE 'SOAK-%'")?,
    })
}
