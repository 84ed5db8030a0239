//! The demo's eBay seller: one demo customer also sells on eBay. On a database just seeded,
//! the last customer with a `folder` warehouse gets an `ebay` store (the simulated seller's
//! credentials) with a switched-on connection to that warehouse, its stock channel on (a
//! stock file dropped into the warehouse's `inventory/` folder sets the listings); on a
//! later start the simulated seller is opened again. Its Inventory API items are the
//! customer's products (the last one a Seller Hub listing the Inventory API cannot see), it
//! holds a few orders of the last hours and a mix of those a pull leaves alone (unpaid,
//! cancelled, digital, fulfilled by eBay), and it takes a new order now and then. The
//! warehouse's simulated worker ships what arrives, and the shipments go back as fulfillments.

use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::json;

use super::ebay::{self, NewOrder};

/// The demo seller's eBay user name; its credentials follow from it (simulated: they open
/// nothing real).
pub const SELLER: &str = "acme_demo_seller";

/// A second simulated seller with no store, for trying an eBay store by hand with curl
/// (`docs/platforms/ebay.md`): its credentials are [`ebay::Seller::new`]'s of this name, and
/// that page prints them.
pub const TRY_SELLER: &str = "curl_seller";

/// How often the demo seller takes a new order.
const ORDER_EVERY: Duration = Duration::from_secs(40);

/// A new order is paid this long before it is added: a pull reads orders changed up to two
/// minutes before it starts (eBay's clock may be ahead), so the next pass takes it.
const PAID_BEFORE_MS: i64 = 3 * 60 * 1000;

/// What [`attach`] found: no eBay store, or one and the task that adds its orders (none when
/// the customer has no products).
pub type Attached = Option<Option<tokio::task::JoinHandle<()>>>;

/// Opens the demo seller on `sim` and, on a database just `seeded`, adds its store. A task
/// then adds an order every [`ORDER_EVERY`].
pub fn attach(sim: &ebay::Simulator, conn: &Connection, seeded: bool) -> Result<Attached, String> {
    let db = |e: rusqlite::Error| format!("database: {e}");
    let seller = ebay::Seller::new(SELLER);
    if seeded {
        let found: Option<(i64, i64)> = conn
            .query_row(
                "SELECT customer_id, id FROM warehouses WHERE platform = 'folder'
                 ORDER BY customer_id DESC, id LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(db)?;
        let Some((customer, warehouse)) = found else { return Ok(None) };
        let adapter = json!({"client_id": seller.client_id, "client_secret": seller.client_secret,
                             "refresh_token": seller.refresh_token, "environment": "production",
                             "marketplace_id": "EBAY_US"});
        let now = crate::dates::now_ms();
        let tx = conn.unchecked_transaction().map_err(db)?;
        tx.execute(
            "INSERT INTO stores (customer_id, name, description, platform, adapter, created_at, enabled_at)
             VALUES (?1, 'eBay (US)', 'ebay store of the demo', 'ebay', ob_seal(?2), ?3, ?3)",
            params![customer, adapter.to_string(), now],
        )
        .map_err(db)?;
        let store = tx.last_insert_rowid();
        super::demo_rows::connect(&tx, (customer, store, warehouse), "eBay fulfillment", true, now)
            .map_err(db)?;
        tx.commit().map_err(db)?;
    }
    let customer: Option<i64> = conn
        .query_row(
            "SELECT customer_id FROM stores WHERE platform = 'ebay'
               AND json_extract(ob_open(adapter), '$.client_id') = ?1 LIMIT 1",
            [&seller.client_id],
            |r| r.get(0),
        )
        .optional()
        .map_err(db)?;
    let Some(customer) = customer else { return Ok(None) };
    sim.add_seller(&seller);
    // The seller to try by hand: three orders ready to ship and two listed items.
    let trying = ebay::Seller::new(TRY_SELLER);
    sim.add_seller(&trying);
    sim.add_ready_orders(TRY_SELLER, 3);
    sim.add_item(TRY_SELLER, "MUG-BLU", 20);
    sim.add_item(TRY_SELLER, "TEA-GRN", 5);
    let skus = super::demo_rows::customer_skus(conn, customer).map_err(db)?;
    let Some((legacy, listed)) = skus.split_last() else { return Ok(Some(None)) };
    for (n, sku) in listed.iter().enumerate() {
        sim.add_item(SELLER, sku, 10 + (n as i64 * 3) % 40);
    }
    sim.add_seller_hub_listing(SELLER, legacy, 4);
    let now = crate::dates::now_ms();
    for (n, sku) in listed.iter().take(5).enumerate() {
        let mut order = NewOrder::ready(&[(sku, 1 + (n as i64 % 2))]);
        order.created_ms = Some(now - 3_600_000 * (n as i64 + 1));
        if n == 1 {
            order.full_name = "Madonna".into();
        }
        if n == 2 {
            order.ebay_supported = true;
        }
        sim.add_order(SELLER, order);
    }
    let Some(first) = listed.first() else { return Ok(Some(None)) };
    {
        for change in [
            (|o: &mut NewOrder| o.payment_status = "PENDING") as fn(&mut NewOrder),
            |o| o.cancel_state = "CANCELED",
            |o| o.instructions_type = "DIGITAL",
            |o| o.instructions_type = "FULFILLED_BY_EBAY",
        ] {
            let mut order = NewOrder::ready(&[(first, 1)]);
            order.created_ms = Some(now - 7_200_000);
            change(&mut order);
            sim.add_order(SELLER, order);
        }
        let skus: Vec<String> = listed.iter().take(8).cloned().collect();
        let handle = sim.handle();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(ORDER_EVERY);
            tick.tick().await;
            for n in 0usize.. {
                tick.tick().await;
                let sku = &skus[n % skus.len()];
                let mut order = NewOrder::ready(&[(sku, 1 + (n as i64 % 3))]);
                order.created_ms = Some(crate::dates::now_ms() - PAID_BEFORE_MS);
                handle.add_order(SELLER, order);
            }
        });
        Ok(Some(Some(task)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `docs/platforms/ebay.md` prints these: they must open the simulated seller.
    #[test]
    fn the_seller_to_try_by_hand_has_the_documented_credentials() {
        let seller = ebay::Seller::new(TRY_SELLER);
        println!("{seller:?}");
        let doc =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/platforms/ebay.md")).unwrap();
        for credential in [&seller.client_id, &seller.client_secret, &seller.refresh_token] {
            assert!(doc.contains(credential.as_str()), "{credential} is not in docs/platforms/ebay.md");
        }
    }
}
