//! The demo's Amazon seller: one demo customer also sells on Amazon. On a database just
//! seeded, the first customer with a `folder` warehouse gets an `amazon` store (the simulated
//! seller's credentials) with a switched-on connection to that warehouse; on a later start the
//! simulated seller is opened again. Its listings are the customer's products (every fifth
//! fulfilled by Amazon), it holds a few orders of the last days, and it takes a new order now
//! and then (one in four fulfilled by Amazon, which never reaches the warehouse). The
//! warehouse's simulated worker ships what arrives, and the shipments are confirmed back.

use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::json;

use super::amazon::{self, Listing, NewOrder};

/// The demo seller's merchant token; its credentials follow from it (simulated: they open
/// nothing real).
pub const SELLER_ID: &str = "A2DEMOSELLER01";
const MARKETPLACE: &str = "ATVPDKIKX0DER";

/// How often the demo seller takes a new order.
const ORDER_EVERY: Duration = Duration::from_secs(45);

/// Opens the demo seller on `sim` and, on a database just `seeded`, adds its store; whether
/// the demo has an Amazon store.
pub fn attach(sim: &amazon::Simulator, conn: &Connection, seeded: bool) -> Result<bool, String> {
    let db = |e: rusqlite::Error| format!("database: {e}");
    let seller = amazon::Seller::new(SELLER_ID, "na", &[MARKETPLACE]);
    if seeded {
        let found: Option<(i64, i64)> = conn
            .query_row(
                "SELECT customer_id, id FROM warehouses WHERE platform = 'folder' ORDER BY customer_id, id LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(db)?;
        let Some((customer, warehouse)) = found else { return Ok(false) };
        let adapter = json!({"region": "na", "marketplace_ids": [MARKETPLACE], "seller_id": seller.seller_id,
                             "client_id": seller.client_id, "client_secret": seller.client_secret,
                             "refresh_token": seller.refresh_token});
        let now = crate::dates::now_ms();
        let tx = conn.unchecked_transaction().map_err(db)?;
        tx.execute(
            "INSERT INTO stores (customer_id, name, description, platform, adapter, created_at, enabled_at)
             VALUES (?1, 'Amazon.com (FBM)', 'amazon store of the demo', 'amazon', ob_seal(?2), ?3, ?3)",
            params![customer, adapter.to_string(), now],
        )
        .map_err(db)?;
        let store = tx.last_insert_rowid();
        super::demo_rows::connect(&tx, (customer, store, warehouse), "Amazon fulfillment", false, now)
            .map_err(db)?;
        tx.commit().map_err(db)?;
    }
    let customer: Option<i64> = conn
        .query_row(
            "SELECT customer_id FROM stores WHERE platform = 'amazon'
               AND json_extract(ob_open(adapter), '$.seller_id') = ?1 LIMIT 1",
            [SELLER_ID],
            |r| r.get(0),
        )
        .optional()
        .map_err(db)?;
    let Some(customer) = customer else { return Ok(false) };
    sim.add_seller(seller);
    let skus = super::demo_rows::customer_skus(conn, customer).map_err(db)?;
    for (n, sku) in skus.iter().enumerate() {
        let listing = if n % 5 == 4 {
            Listing::fba(sku, "HOME", 10 + (n as i64 * 3) % 40)
        } else {
            Listing::mfn(sku, "HOME", 10 + (n as i64 * 3) % 40)
        };
        sim.add_listing(SELLER_ID, listing);
    }
    // A few orders of the last hours waiting to ship (and one Amazon fulfils), then more.
    let own: Vec<&str> =
        skus.iter().enumerate().filter(|(n, _)| n % 5 != 4).map(|(_, s)| s.as_str()).collect();
    if let Some(first) = own.first() {
        for (n, sku) in own.iter().take(5).enumerate() {
            let mut order = NewOrder::mfn(&[(sku, 1 + (n as u32 % 2))]);
            order.created_secs_ago = 3_600 * (n as i64 + 1);
            if n == 1 {
                order = order.program("PRIME").gift("Happy birthday!");
            }
            if n == 2 && own.len() > 2 {
                order.lines.push((own[own.len() - 1].to_string(), 1));
            }
            sim.add_order(SELLER_ID, order);
        }
        sim.add_order(SELLER_ID, NewOrder::mfn(&[(first, 1)]).fba());
        sim.set_demo(Some(ORDER_EVERY));
    }
    Ok(true)
}
