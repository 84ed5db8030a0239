//! `orderbridge seed --demo`: a realistic, deterministic demo data set — customers with
//! `bigcommerce` and `sellbrite` stores, `sftp` warehouses, enabled connections and channels,
//! products with variants, bundles and variant collections, orders over the last 90 days and
//! shipments in every state. The same `--seed` gives the same data (dates relative to now).
//!
//! Written for speed: it refuses a database that already holds data, drops the secondary
//! indexes of the order tables while it inserts and builds them afterwards, commits every
//! `BATCH` orders, and reuses the import's writers with cached statements.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rusqlite::{Connection, params};

use crate::dates::now_ms;
use crate::http::users::random_token;
use crate::http::users::{self, Role};
use crate::orders::fields::{ITEM_FIELDS, ORDER_FIELDS, Scalar};
use crate::orders::model::{NewItem, NewOrder};
use crate::orders::write::OrderWriter;
use crate::shipments::model::{NewShipment, OrderRef, STATES, ShipmentWriter};

mod orders;

const BATCH: u64 = 20_000;
const DAY_MS: i64 = 86_400_000;

#[derive(Debug, Clone)]
pub struct Options {
    pub orders: u64,
    pub seed: u64,
    /// Items per order; random 1–5 when `None`.
    pub items: Option<u32>,
    /// Where the demo's warehouses keep their files: `folder` warehouses under this
    /// (absolute) folder, which the simulated demo's warehouse worker serves. `None` gives
    /// `sftp` warehouses on an example host, which exist only as data.
    pub warehouse_root: Option<std::path::PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options { orders: 5_000, seed: 1, items: None, warehouse_root: None }
    }
}

/// A customer user the seed created.
#[derive(Debug, Clone)]
pub struct Login {
    pub company: String,
    pub username: String,
    pub password: String,
}

#[derive(Debug, Clone)]
pub struct Summary {
    pub logins: Vec<Login>,
    pub orders: u64,
    pub shipments: u64,
}

/// Whether the database holds no customers, stores or orders yet.
pub fn is_empty(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT NOT EXISTS (SELECT 1 FROM customers) AND NOT EXISTS (SELECT 1 FROM stores)
            AND NOT EXISTS (SELECT 1 FROM orders)",
        [],
        |r| r.get(0),
    )
}

struct Product {
    id: i64,
    sku: String,
    name: String,
    price: i64,
    weight: i64,
    color: Option<&'static str>,
    size: Option<&'static str>,
}

struct Tenant {
    customer_id: i64,
    stores: Vec<(i64, &'static str)>,
    warehouses: Vec<i64>,
    products: Vec<Product>,
}

struct Company {
    name: &'static str,
    username: &'static str,
    city: &'static str,
    state: &'static str,
    zipcode: &'static str,
    catalog: &'static [(&'static str, i64, i64)],
    apparel: &'static str,
}

const COMPANIES: [Company; 3] = [
    Company {
        name: "Acme Outdoor Supply",
        username: "acme",
        city: "Boulder",
        state: "CO",
        zipcode: "80302",
        catalog: &[
            ("Trail Tent 2P", 24_900, 215),
            ("Down Sleeping Bag", 18_950, 120),
            ("Camp Stove", 5_995, 95),
            ("Headlamp 400lm", 3_495, 9),
            ("Water Filter", 4_450, 30),
            ("Trekking Poles", 8_900, 52),
        ],
        apparel: "Merino Base Layer",
    },
    Company {
        name: "Bluebird Home Goods",
        username: "bluebird",
        city: "Portland",
        state: "OR",
        zipcode: "97205",
        catalog: &[
            ("Linen Duvet Cover", 12_900, 160),
            ("Stoneware Mug Set", 4_200, 210),
            ("Cast Iron Skillet", 5_500, 340),
            ("Wool Throw", 9_800, 140),
            ("Beeswax Candle", 2_400, 45),
        ],
        apparel: "Cotton Apron",
    },
    Company {
        name: "Cedar & Pine Apparel",
        username: "cedar",
        city: "Asheville",
        state: "NC",
        zipcode: "28801",
        catalog: &[
            ("Canvas Tote", 3_800, 40),
            ("Leather Belt", 6_500, 35),
            ("Knit Beanie", 2_900, 12),
            ("Rain Shell", 15_900, 48),
        ],
        apparel: "Organic Tee",
    },
];

const FIRST: [&str; 16] = [
    "Ava", "Liam", "Maya", "Noah", "Zoe", "Ethan", "Chloe", "Lucas", "Nora", "Owen", "Ruby", "Eli", "Iris",
    "Jack", "Lena", "Omar",
];
const LAST: [&str; 14] = [
    "Smith", "Garcia", "Chen", "Patel", "Johnson", "Nguyen", "Kim", "Brown", "Lopez", "Martin", "Okafor",
    "Rossi", "Novak", "Walsh",
];
const STREETS: [&str; 10] = [
    "Main St",
    "Oak Ave",
    "Maple Dr",
    "Cedar Ln",
    "Elm St",
    "Pine Rd",
    "Lake Blvd",
    "Hill St",
    "River Rd",
    "Park Ave",
];
/// (city, region, postal code, country)
const PLACES: [(&str, &str, &str, &str); 12] = [
    ("Seattle", "WA", "98101", "US"),
    ("Austin", "TX", "78701", "US"),
    ("Denver", "CO", "80202", "US"),
    ("Chicago", "IL", "60601", "US"),
    ("Brooklyn", "NY", "11201", "US"),
    ("Atlanta", "GA", "30303", "US"),
    ("Phoenix", "AZ", "85004", "US"),
    ("Madison", "WI", "53703", "US"),
    ("Boston", "MA", "02108", "US"),
    ("San Diego", "CA", "92101", "US"),
    ("Toronto", "ON", "M5H 2N2", "CA"),
    ("Vancouver", "BC", "V6B 1A1", "CA"),
];
const CARRIERS: [(&str, [&str; 3]); 4] = [
    ("UPS", ["Ground", "2nd Day Air", "Next Day Air"]),
    ("USPS", ["Ground Advantage", "Priority Mail", "Priority Mail Express"]),
    ("FedEx", ["Home Delivery", "2Day", "Standard Overnight"]),
    ("DHL", ["Express Worldwide", "eCommerce", "Express 12:00"]),
];
const SIZES: [&str; 3] = ["S", "M", "L"];
const COLORS: [&str; 2] = ["Charcoal", "Sand"];

fn pick<'a, T>(rng: &mut StdRng, list: &'a [T]) -> &'a T {
    &list[rng.random_range(0..list.len())]
}

/// Writes the demo data set; `progress` hears the number of orders written so far.
pub fn seed_demo(
    conn: &mut Connection,
    opts: &Options,
    progress: &mut dyn FnMut(u64),
) -> Result<Summary, String> {
    let db = |e: rusqlite::Error| format!("database: {e}");
    if !is_empty(conn).map_err(db)? {
        return Err("the database already holds data; seed a fresh database file".to_string());
    }
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let now = now_ms();
    let (tenants, logins) = seed_tenants(conn, &mut rng, now, opts.warehouse_root.as_deref())?;

    conn.execute_batch("PRAGMA foreign_keys = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -262144;")
        .map_err(db)?;
    // Bulk rows go straight into the file, not through the WAL and a checkpoint (every page
    // written twice). SQLite allows this only to the database's one connection, i.e. the
    // `seed` command; under `serve --demo` it stays in WAL. The file was empty, so an
    // interrupted seed loses nothing but itself: seed a fresh file again.
    let journal: String = conn.query_row("PRAGMA journal_mode = OFF", [], |r| r.get(0)).map_err(db)?;
    let indexes = drop_indexes(conn).map_err(db)?;
    let written = orders::seed_orders(conn, &mut rng, &tenants, opts, now, progress);
    let rebuilt = rebuild_indexes(conn, &indexes);
    if journal == "off" {
        conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(())).map_err(db)?;
    }
    conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; PRAGMA optimize;")
        .map_err(db)?;
    let (orders, shipments) = written.map_err(db)?;
    rebuilt.map_err(db)?;
    Ok(Summary { logins, orders, shipments })
}

fn seed_tenants(
    conn: &mut Connection,
    rng: &mut StdRng,
    now: i64,
    warehouse_root: Option<&std::path::Path>,
) -> Result<(Vec<Tenant>, Vec<Login>), String> {
    let db = |e: rusqlite::Error| format!("database: {e}");
    let tx = conn.transaction().map_err(db)?;
    let mut tenants = Vec::new();
    let mut logins = Vec::new();
    let created = now - 120 * DAY_MS;
    for (n, c) in COMPANIES.iter().enumerate() {
        tx.execute(
            "INSERT INTO customers (company_name, street1, city, state, zipcode, country, provider, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, 'US', 'demo', ?6)",
            params![c.name, format!("{} {}", 100 + n * 17, pick(rng, &STREETS)), c.city, c.state, c.zipcode, created],
        )
        .map_err(db)?;
        let customer_id = tx.last_insert_rowid();
        let slug = c.username;
        let mut stores = Vec::new();
        for platform in ["bigcommerce", "sellbrite"] {
            let (name, adapter) = if platform == "bigcommerce" {
                (
                    format!("{} Web Store", c.name),
                    serde_json::json!({"access_token": random_hex(rng, 31), "store_hash": random_hex(rng, 10),
                                       "client_id": random_hex(rng, 30)}),
                )
            } else {
                (
                    format!("{} Marketplaces", c.name),
                    serde_json::json!({"auth_token": random_hex(rng, 32), "secret_key": random_hex(rng, 32)}),
                )
            };
            tx.execute(
                "INSERT INTO stores (customer_id, name, description, url, platform, adapter, created_at, enabled_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ob_seal(?6), ?7, ?7)",
                params![
                    customer_id,
                    name,
                    format!("{platform} store of {}", c.name),
                    format!("https://{slug}-{platform}.example.com"),
                    platform,
                    adapter.to_string(),
                    created
                ],
            )
            .map_err(db)?;
            let store_id = tx.last_insert_rowid();
            // The history written below counts as pulled: sync reads the store from now on.
            tx.execute(
                "INSERT INTO store_cursors (store_id, cursor) VALUES (?1, ?2)",
                params![store_id, now],
            )
            .map_err(db)?;
            stores.push((store_id, platform));
        }
        let mut warehouses = Vec::new();
        for (w, place) in ["East", "West"].iter().enumerate().take(1 + n % 2) {
            let secret = random_hex(rng, 12);
            let (platform, connection_string) = match warehouse_root {
                Some(root) => (
                    "folder",
                    format!("file://{}", root.join(format!("{slug}-{}", place.to_lowercase())).display()),
                ),
                None => ("sftp", format!("sftp://{slug}:{secret}@sftp.example.com:22/orders/{w}")),
            };
            let adapter = serde_json::json!({ "connection_string": connection_string });
            tx.execute(
                "INSERT INTO warehouses (customer_id, name, description, platform, adapter, created_at, enabled_at)
                 VALUES (?1, ?2, ?3, ?4, ob_seal(?5), ?6, ?6)",
                params![customer_id, format!("{} {place}", c.name), format!("{place} coast 3PL"), platform, adapter.to_string(), created],
            )
            .map_err(db)?;
            warehouses.push(tx.last_insert_rowid());
        }
        for (s, (store_id, _)) in stores.iter().enumerate() {
            let warehouse_id = warehouses[s % warehouses.len()];
            tx.execute(
                "INSERT INTO connections (customer_id, store_id, warehouse_id, name, connection_type, created_at, enabled_at)
                 VALUES (?1, ?2, ?3, ?4, 'fulfillment', ?5, ?5)",
                params![customer_id, store_id, warehouse_id, format!("{} fulfillment {}", c.name, s + 1), created],
            )
            .map_err(db)?;
            let connection_id = tx.last_insert_rowid();
            tx.execute(
                "INSERT INTO channels (connection_id, type, created_at, enabled_at)
                 VALUES (?1, 'sales', ?2, ?2), (?1, 'inventory', ?2, NULL)",
                params![connection_id, created],
            )
            .map_err(db)?;
        }
        let products = seed_products(&tx, rng, customer_id, c, created).map_err(db)?;
        let password = random_token(9);
        users::add(&tx, slug, &password, Role::Customer, Some(customer_id))
            .map_err(|e| format!("adding user {slug}: {e:?}"))?;
        logins.push(Login { company: c.name.to_string(), username: slug.to_string(), password });
        tenants.push(Tenant { customer_id, stores, warehouses, products });
    }
    tx.commit().map_err(db)?;
    Ok((tenants, logins))
}

fn seed_products(
    conn: &Connection,
    rng: &mut StdRng,
    customer_id: i64,
    c: &Company,
    created: i64,
) -> rusqlite::Result<Vec<Product>> {
    let prefix = c.username[..3].to_ascii_uppercase();
    let insert = |sku: &str, variant_of: Option<&str>, master_id: Option<i64>| -> rusqlite::Result<i64> {
        conn.execute(
            "INSERT INTO products (customer_id, sku, variant_of, master_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![customer_id, sku, variant_of, master_id, created],
        )?;
        Ok(conn.last_insert_rowid())
    };
    let mut products = Vec::new();
    for (i, (name, price, weight)) in c.catalog.iter().enumerate() {
        let sku = format!("{prefix}-{:03}", i + 1);
        let id = insert(&sku, None, None)?;
        products.push(Product {
            id,
            sku,
            name: name.to_string(),
            price: *price,
            weight: *weight,
            color: None,
            size: None,
        });
    }
    // An apparel master with size/color variants, gathered in a variant collection.
    let master_sku = format!("{prefix}-APP");
    let master = insert(&master_sku, None, None)?;
    let mut variant_ids = Vec::new();
    for color in COLORS {
        for size in SIZES {
            let sku = format!("{master_sku}-{}-{size}", &color[..3].to_ascii_uppercase());
            let id = insert(&sku, Some(c.apparel), Some(master))?;
            variant_ids.push(id);
            let price = 3_200 + rng.random_range(0..4) * 500;
            products.push(Product {
                id,
                sku,
                name: format!("{} {color} {size}", c.apparel),
                price,
                weight: 18,
                color: Some(color),
                size: Some(size),
            });
        }
    }
    conn.execute(
        "INSERT INTO variant_collections (customer_id, name, created_at) VALUES (?1, ?2, ?3)",
        params![customer_id, c.apparel, created],
    )?;
    let collection = conn.last_insert_rowid();
    for (position, product) in variant_ids.iter().enumerate() {
        conn.execute(
            "INSERT INTO variant_collection_products (collection_id, position, product_id) VALUES (?1, ?2, ?3)",
            params![collection, position as i64, product],
        )?;
    }
    // A bundle of the first three catalog products.
    let bundle_sku = format!("{prefix}-KIT");
    let bundle = insert(&bundle_sku, None, None)?;
    for (position, component) in products.iter().take(3).enumerate() {
        conn.execute(
            "INSERT INTO product_bundle_items (product_id, position, component_id, qty) VALUES (?1, ?2, ?3, 1)",
            params![bundle, position as i64, component.id],
        )?;
    }
    let kit_price = products.iter().take(3).map(|p| p.price).sum::<i64>() * 9 / 10;
    let kit_weight = products.iter().take(3).map(|p| p.weight).sum();
    products.push(Product {
        id: bundle,
        sku: bundle_sku,
        name: format!("{} Starter Kit", c.name),
        price: kit_price,
        weight: kit_weight,
        color: None,
        size: None,
    });
    Ok(products)
}

fn random_hex(rng: &mut StdRng, len: usize) -> String {
    const HEX: &[u8] = b"0123456789abcdef";
    (0..len).map(|_| HEX[rng.random_range(0..16)] as char).collect()
}

fn random_digits(rng: &mut StdRng, len: usize) -> String {
    (0..len).map(|_| char::from(b'0' + rng.random_range(0..10u8))).collect()
}

/// Secondary indexes of the order tables: (name, CREATE statement), dropped for the bulk
/// insert into empty tables and built again afterwards (a sort beats a million inserts).
fn drop_indexes(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL
           AND tbl_name IN ('orders', 'order_items', 'shipments', 'shipment_items')",
    )?;
    let indexes =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<Vec<_>>>()?;
    for (name, _) in &indexes {
        conn.execute_batch(&format!("DROP INDEX \"{name}\""))?;
    }
    Ok(indexes)
}

fn rebuild_indexes(conn: &Connection, indexes: &[(String, String)]) -> rusqlite::Result<()> {
    for (_, sql) in indexes {
        conn.execute_batch(sql)?;
    }
    Ok(())
}
