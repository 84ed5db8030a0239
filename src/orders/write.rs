//! Writing orders: insert or update by (`store_id`, `external_id`), keep item ids stable
//! across re-imports, and store the rendered document beside the columns.
//!
//! Item ids on re-import: an incoming item takes the id of the existing item with the same
//! `external_order_item_id`; otherwise the id of the unclaimed existing item at the same
//! position; otherwise a new id. Existing items left unclaimed are deleted, and shipments
//! that linked them drop the link (their documents are rendered again).

use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

use rusqlite::types::ToSql;
use rusqlite::{CachedStatement, Connection, OptionalExtension, params, params_from_iter};

use super::fields::{FULFILLMENT_WAREHOUSE_ID, ITEM_FIELDS, ORDER_FIELDS};
use super::model::{NewItem, NewOrder, Template};
use crate::fields::Details;
use crate::shipments;

pub use crate::db::Written;

fn columns(fields: &[(&'static str, super::fields::Kind)]) -> Vec<&'static str> {
    fields.iter().map(|(k, _)| *k).collect()
}

fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}

static INSERT_ORDER: LazyLock<String> = LazyLock::new(|| {
    let cols = columns(&ORDER_FIELDS);
    format!(
        "INSERT INTO orders (customer_id, store_id, {}, created_at, shipping_address, billing_address, custom)
         VALUES ({})",
        cols.join(", "),
        placeholders(cols.len() + 6)
    )
});

static UPDATE_ORDER: LazyLock<String> = LazyLock::new(|| {
    let sets: Vec<String> = columns(&ORDER_FIELDS).iter().map(|c| format!("{c} = ?")).collect();
    format!(
        "UPDATE orders SET {}, shipping_address = ?, billing_address = ?, custom = ? WHERE id = ?",
        sets.join(", ")
    )
});

static INSERT_ITEM: LazyLock<String> = LazyLock::new(|| {
    let cols = columns(&ITEM_FIELDS);
    format!(
        "INSERT INTO order_items (order_id, position, {}, created_at, options, custom) VALUES ({})",
        cols.join(", "),
        placeholders(cols.len() + 5)
    )
});

static UPDATE_ITEM: LazyLock<String> = LazyLock::new(|| {
    let sets: Vec<String> = columns(&ITEM_FIELDS).iter().map(|c| format!("{c} = ?")).collect();
    format!("UPDATE order_items SET position = ?, {}, options = ?, custom = ? WHERE id = ?", sets.join(", "))
});

const UPSERT_DOC: &str =
    "INSERT INTO order_docs (id, doc) VALUES (?1, ?2) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc";

/// What writing an order did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenOrder {
    pub id: i64,
    pub written: Written,
    /// The ids of its items, in order.
    pub item_ids: Vec<i64>,
}

/// Writes validated orders inside the caller's transaction.
pub struct OrderWriter<'c> {
    conn: &'c Connection,
    now: i64,
    /// store id -> its customer, `None` when the store does not exist.
    stores: HashMap<i64, Option<i64>>,
    warehouses: HashMap<i64, Option<i64>>,
    touched_stores: BTreeSet<i64>,
    /// Seeding into empty tables: skip looking for existing rows.
    pub assume_new: bool,
    hot: Hot<'c>,
}

/// The statements every order runs, each taken from the connection's cache once per writer:
/// a lookup there hashes the statement's text each time, ~1 KiB for `INSERT_ORDER`.
#[derive(Default)]
struct Hot<'c> {
    existing: Option<CachedStatement<'c>>,
    insert_order: Option<CachedStatement<'c>>,
    insert_item: Option<CachedStatement<'c>>,
    upsert_doc: Option<CachedStatement<'c>>,
}

/// The statement kept in `slot`, prepared on first use.
fn hot<'s, 'c>(
    slot: &'s mut Option<CachedStatement<'c>>,
    conn: &'c Connection,
    sql: &str,
) -> rusqlite::Result<&'s mut CachedStatement<'c>> {
    if slot.is_none() {
        *slot = Some(conn.prepare_cached(sql)?);
    }
    slot.as_mut().ok_or(rusqlite::Error::InvalidQuery)
}

impl<'c> OrderWriter<'c> {
    pub fn new(conn: &'c Connection, now: i64) -> Self {
        OrderWriter {
            conn,
            now,
            stores: HashMap::new(),
            warehouses: HashMap::new(),
            touched_stores: BTreeSet::new(),
            assume_new: false,
            hot: Hot::default(),
        }
    }

    /// Checks what the record refers to and returns the order's customer: the store must
    /// exist, and a `fulfillment_warehouse_id` must be a warehouse of the same customer.
    pub fn check(&mut self, order: &NewOrder) -> rusqlite::Result<Result<i64, Details>> {
        let conn = self.conn;
        let customer = *match self.stores.entry(order.store_id) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(
                conn.prepare_cached("SELECT customer_id FROM stores WHERE id = ?1")?
                    .query_row([order.store_id], |r| r.get(0))
                    .optional()?,
            ),
        };
        let Some(customer_id) = customer else {
            return Ok(Err(Details::from([(
                "store_id".to_string(),
                format!("unknown store {}", order.store_id),
            )])));
        };
        if let Some(warehouse_id) = order.values[FULFILLMENT_WAREHOUSE_ID].as_int() {
            let owner = match self.warehouses.get(&warehouse_id) {
                Some(owner) => *owner,
                None => {
                    let owner = conn
                        .prepare_cached("SELECT customer_id FROM warehouses WHERE id = ?1")?
                        .query_row([warehouse_id], |r| r.get(0))
                        .optional()?;
                    self.warehouses.insert(warehouse_id, owner);
                    owner
                }
            };
            if owner != Some(customer_id) {
                return Ok(Err(Details::from([(
                    "fulfillment_warehouse_id".to_string(),
                    format!("unknown warehouse {warehouse_id} of the store's customer"),
                )])));
            }
        }
        Ok(Ok(customer_id))
    }

    /// Inserts or updates one checked order.
    pub fn write(&mut self, order: &NewOrder, customer_id: i64) -> rusqlite::Result<WrittenOrder> {
        self.write_with(order, None, customer_id)
    }

    /// `write`, with the order's document already rendered but for what writing decides
    /// (the import renders it on its parsing thread).
    pub fn write_with(
        &mut self,
        order: &NewOrder,
        template: Option<&Template>,
        customer_id: i64,
    ) -> rusqlite::Result<WrittenOrder> {
        self.touched_stores.insert(order.store_id);
        let existing: Option<(i64, i64)> = if self.assume_new {
            None
        } else {
            const EXISTING: &str =
                "SELECT id, created_at FROM orders WHERE store_id = ?1 AND external_id = ?2";
            hot(&mut self.hot.existing, self.conn, EXISTING)?
                .query_row(params![order.store_id, order.external_id()], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?
        };
        let (id, created_at, written) = match existing {
            None => {
                let mut args: Vec<&dyn ToSql> = Vec::with_capacity(ORDER_FIELDS.len() + 6);
                args.push(&customer_id);
                args.push(&order.store_id);
                args.extend(order.values.iter().map(|v| v as &dyn ToSql));
                args.push(&self.now);
                args.push(&order.shipping_address);
                args.push(&order.billing_address);
                args.push(&order.custom);
                hot(&mut self.hot.insert_order, self.conn, &INSERT_ORDER)?.execute(params_from_iter(args))?;
                (self.conn.last_insert_rowid(), self.now, Written::Created)
            }
            Some((id, created_at)) => {
                let mut args: Vec<&dyn ToSql> = order.values.iter().map(|v| v as &dyn ToSql).collect();
                args.push(&order.shipping_address);
                args.push(&order.billing_address);
                args.push(&order.custom);
                args.push(&id);
                self.conn.prepare_cached(&UPDATE_ORDER)?.execute(params_from_iter(args))?;
                (id, created_at, Written::Updated)
            }
        };
        let item_keys = self.write_items(id, order, written == Written::Updated)?;
        let doc = match template {
            Some(template) => template.fill(id, created_at, &item_keys),
            None => order.render(id, created_at, &item_keys),
        };
        hot(&mut self.hot.upsert_doc, self.conn, UPSERT_DOC)?.execute(params![id, doc])?;
        Ok(WrittenOrder { id, written, item_ids: item_keys.into_iter().map(|(id, _)| id).collect() })
    }

    /// Writes the items; returns (id, created_at) of each, in order.
    fn write_items(
        &mut self,
        order_id: i64,
        order: &NewOrder,
        existed: bool,
    ) -> rusqlite::Result<Vec<(i64, i64)>> {
        // (id, external id, created_at, claimed)
        let mut old: Vec<(i64, Option<String>, i64, bool)> = Vec::new();
        if existed {
            let mut stmt = self.conn.prepare_cached(
                "SELECT id, external_order_item_id, created_at FROM order_items WHERE order_id = ?1 ORDER BY position",
            )?;
            let rows = stmt.query_map([order_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, false)))?;
            old = rows.collect::<rusqlite::Result<_>>()?;
        }
        let mut keys: Vec<Option<(i64, i64)>> = vec![None; order.items.len()];
        for (slot, item) in keys.iter_mut().zip(&order.items) {
            let Some(ext) = item.external_id() else { continue };
            if let Some(o) = old.iter_mut().find(|o| !o.3 && o.1.as_deref() == Some(ext)) {
                o.3 = true;
                *slot = Some((o.0, o.2));
            }
        }
        for (position, slot) in keys.iter_mut().enumerate() {
            if slot.is_none()
                && let Some(o) = old.get_mut(position).filter(|o| !o.3)
            {
                o.3 = true;
                *slot = Some((o.0, o.2));
            }
        }
        let unclaimed: Vec<i64> = old.iter().filter(|o| !o.3).map(|o| o.0).collect();
        if !unclaimed.is_empty() {
            self.delete_items(&unclaimed)?;
        }
        let mut out = Vec::with_capacity(order.items.len());
        for (position, (item, slot)) in order.items.iter().zip(keys).enumerate() {
            let position = position as i64;
            let mut args: Vec<&dyn ToSql> = Vec::with_capacity(ITEM_FIELDS.len() + 5);
            match slot {
                Some((id, created_at)) => {
                    args.push(&position);
                    args.extend(item.values.iter().map(|v| v as &dyn ToSql));
                    args.push(&item.options);
                    args.push(&item.custom);
                    args.push(&id);
                    self.conn.prepare_cached(&UPDATE_ITEM)?.execute(params_from_iter(args))?;
                    out.push((id, created_at));
                }
                None => {
                    args.push(&order_id);
                    args.push(&position);
                    args.extend(item.values.iter().map(|v| v as &dyn ToSql));
                    args.push(&self.now);
                    args.push(&item.options);
                    args.push(&item.custom);
                    hot(&mut self.hot.insert_item, self.conn, &INSERT_ITEM)?
                        .execute(params_from_iter(args))?;
                    out.push((self.conn.last_insert_rowid(), self.now));
                }
            }
        }
        Ok(out)
    }

    fn delete_items(&self, ids: &[i64]) -> rusqlite::Result<()> {
        let mut affected = BTreeSet::new();
        for id in ids {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT DISTINCT shipment_id FROM shipment_items WHERE order_item_id = ?1")?;
            for shipment in stmt.query_map([id], |r| r.get::<_, i64>(0))? {
                affected.insert(shipment?);
            }
            self.conn.prepare_cached("DELETE FROM shipment_items WHERE order_item_id = ?1")?.execute([id])?;
            self.conn.prepare_cached("DELETE FROM order_items WHERE id = ?1")?.execute([id])?;
        }
        for shipment in affected {
            shipments::rerender(self.conn, shipment)?;
        }
        Ok(())
    }

    /// Records the import time on every store that received orders.
    pub fn finish(self) -> rusqlite::Result<()> {
        let mut stmt = self.conn.prepare_cached("UPDATE stores SET order_imported_at = ?1 WHERE id = ?2")?;
        for store in &self.touched_stores {
            stmt.execute(params![self.now, store])?;
        }
        Ok(())
    }
}

static SELECT_ORDER: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT store_id, created_at, shipping_address, billing_address, custom, {} FROM orders WHERE id = ?1",
        columns(&ORDER_FIELDS).join(", ")
    )
});

static SELECT_ITEMS: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT id, created_at, options, custom, {} FROM order_items WHERE order_id = ?1 ORDER BY position",
        columns(&ITEM_FIELDS).join(", ")
    )
});

/// Renders a stored order's document again from its columns and items, exactly as writing
/// it did: after sync moves its fulfillment fields, or when a migration changes the shape.
pub fn rerender(conn: &Connection, id: i64) -> rusqlite::Result<()> {
    let (order, created_at) = conn.prepare_cached(&SELECT_ORDER)?.query_row([id], |r| {
        let values = (0..ORDER_FIELDS.len()).map(|i| r.get(5 + i)).collect::<rusqlite::Result<Vec<_>>>()?;
        let order = NewOrder {
            store_id: r.get(0)?,
            values,
            shipping_address: r.get(2)?,
            billing_address: r.get(3)?,
            custom: r.get(4)?,
            items: Vec::new(),
        };
        Ok((order, r.get::<_, i64>(1)?))
    })?;
    let mut stmt = conn.prepare_cached(&SELECT_ITEMS)?;
    let mut keys = Vec::new();
    let mut items = Vec::new();
    let rows = stmt.query_map([id], |r| {
        let values = (0..ITEM_FIELDS.len()).map(|i| r.get(4 + i)).collect::<rusqlite::Result<Vec<_>>>()?;
        Ok((
            (r.get::<_, i64>(0)?, r.get::<_, i64>(1)?),
            NewItem { values, options: r.get(2)?, custom: r.get(3)? },
        ))
    })?;
    for row in rows {
        let (key, item) = row?;
        keys.push(key);
        items.push(item);
    }
    let order = NewOrder { items, ..order };
    conn.prepare_cached(UPSERT_DOC)?.execute(params![id, order.render(id, created_at, &keys)])?;
    Ok(())
}
