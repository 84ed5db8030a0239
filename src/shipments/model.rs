//! A shipment as an import record carries it, its validation and references, writing by
//! (`order_id`, `tracking_number`), and its stored document.

use std::collections::{BTreeSet, HashMap};

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Map, Value};

use crate::db::Written;
use crate::fields::Details;
use crate::fields::{Fields, Patch, finish};
use crate::jsondoc::Obj;
use crate::money;

/// Every shipment `state` (service-api.md, "Shipment state values").
pub const STATES: [&str; 9] = [
    "new",
    "ready_for_shipment_notification",
    "scheduled_notify_of_shipment",
    "scheduled_processing_shipment",
    "errored_processing",
    "delayed_notifying_of_shipment",
    "errored_notifying_of_shipment",
    "notified_shipped",
    "archived",
];

pub fn states_list() -> String {
    STATES.join(", ")
}

/// A validated shipment, ready to write.
#[derive(Debug, Clone, PartialEq)]
pub struct NewShipment {
    pub order_id: i64,
    pub warehouse_id: i64,
    pub tracking_number: String,
    pub state: String,
    pub shipped_at: Option<i64>,
    /// Hundredths; `None` leaves `weight` out of the document.
    pub weight: Option<i64>,
    pub external_shipping_description: Option<String>,
    pub carrier_name: Option<String>,
    pub service_level: Option<String>,
    pub item_ids: Vec<i64>,
    /// The units of each item linked, by position, where a warehouse said how many (a sync
    /// import); empty: none said.
    pub item_units: Vec<i64>,
}

impl NewShipment {
    pub fn from_record(record: Map<String, Value>) -> Result<NewShipment, Details> {
        let mut f = Fields::new(record);
        let order_id = f.required("order_id", Fields::id);
        let warehouse_id = f.required("warehouse_id", Fields::id);
        let tracking_number = f.required("tracking_number", Fields::text);
        let state = match f.text("state") {
            Patch::Value(s) if STATES.contains(&s.as_str()) => Some(s),
            Patch::Value(_) | Patch::Null => {
                f.error("state", format!("must be one of {}", states_list()));
                None
            }
            Patch::Absent => Some("new".to_string()),
        };
        let shipped_at = f.date("shipped_at").value();
        let weight = f.read("weight", |v| money::parse(&v, 8)).value();
        let external_shipping_description = f.text("external_shipping_description").value();
        let carrier_name = f.text("carrier_name").value();
        let service_level = f.text("service_level").value();
        let mut item_ids = Vec::new();
        if let Patch::Value(list) = f.array("order_items") {
            for (i, element) in list.into_iter().enumerate() {
                let id = match element {
                    Value::Object(mut m) => m.remove("id").and_then(|v| match v {
                        Value::Number(n) => n.as_i64().filter(|n| *n >= 1),
                        Value::String(s) => s.parse().ok().filter(|n| *n >= 1),
                        _ => None,
                    }),
                    _ => None,
                };
                match id {
                    Some(id) if item_ids.contains(&id) => {
                        f.error(&format!("order_items[{i}]"), "repeats an item")
                    }
                    Some(id) => item_ids.push(id),
                    None => f.error(&format!("order_items[{i}]"), "must be an object with an integer id"),
                }
            }
        }
        finish(f)?;
        Ok(NewShipment {
            order_id: order_id.unwrap_or_default(),
            warehouse_id: warehouse_id.unwrap_or_default(),
            tracking_number: tracking_number.unwrap_or_default(),
            state: state.unwrap_or_default(),
            shipped_at,
            weight,
            external_shipping_description,
            carrier_name,
            service_level,
            item_ids,
            item_units: Vec::new(),
        })
    }

    /// The stored document: the Shipment object as the API returns it.
    pub fn render(&self, id: i64, created_at: i64) -> String {
        let mut out = String::with_capacity(512);
        let mut o = Obj::new(&mut out);
        o.int("id", Some(id));
        o.str("tracking_number", Some(&self.tracking_number));
        o.timestamp("created_at", Some(created_at));
        o.int("order_id", Some(self.order_id));
        o.timestamp("shipped_at", self.shipped_at);
        if let Some(weight) = self.weight {
            o.money_text("weight", weight);
        }
        o.str("external_shipping_description", self.external_shipping_description.as_deref());
        o.str("carrier_name", self.carrier_name.as_deref());
        o.str("service_level", self.service_level.as_deref());
        o.int("warehouse_id", Some(self.warehouse_id));
        o.str("state", Some(&self.state));
        let items = o.value("order_items");
        items.push('[');
        for (i, id) in self.item_ids.iter().enumerate() {
            if i > 0 {
                items.push(',');
            }
            items.push_str("{\"id\":");
            items.push_str(&id.to_string());
            items.push('}');
        }
        items.push(']');
        o.end();
        out
    }
}

const UPSERT_DOC: &str =
    "INSERT INTO shipment_docs (id, doc) VALUES (?1, ?2) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc";

/// Renders a stored shipment's document again (after its item links changed).
pub fn rerender(conn: &Connection, id: i64) -> rusqlite::Result<()> {
    let (shipment, created_at) = conn.query_row(
        "SELECT order_id, warehouse_id, tracking_number, state, shipped_at, weight,
                external_shipping_description, carrier_name, service_level, created_at
         FROM shipments WHERE id = ?1",
        [id],
        |r| {
            Ok((
                NewShipment {
                    order_id: r.get(0)?,
                    warehouse_id: r.get(1)?,
                    tracking_number: r.get(2)?,
                    state: r.get(3)?,
                    shipped_at: r.get(4)?,
                    weight: r.get(5)?,
                    external_shipping_description: r.get(6)?,
                    carrier_name: r.get(7)?,
                    service_level: r.get(8)?,
                    item_ids: Vec::new(),
                    item_units: Vec::new(),
                },
                r.get::<_, i64>(9)?,
            ))
        },
    )?;
    let mut stmt = conn.prepare_cached(
        "SELECT order_item_id FROM shipment_items WHERE shipment_id = ?1 ORDER BY position",
    )?;
    let item_ids = stmt.query_map([id], |r| r.get(0))?.collect::<rusqlite::Result<Vec<i64>>>()?;
    let shipment = NewShipment { item_ids, ..shipment };
    conn.prepare_cached(UPSERT_DOC)?.execute(params![id, shipment.render(id, created_at)])?;
    Ok(())
}

/// What a shipment's order contributes: its customer and store.
#[derive(Debug, Clone, Copy)]
pub struct OrderRef {
    pub customer_id: i64,
    pub store_id: i64,
}

/// Writes validated shipments inside the caller's transaction.
pub struct ShipmentWriter<'c> {
    conn: &'c Connection,
    now: i64,
    orders: HashMap<i64, Option<OrderRef>>,
    warehouses: HashMap<i64, Option<i64>>,
    touched_warehouses: BTreeSet<i64>,
    /// Seeding into empty tables: skip looking for existing rows.
    pub assume_new: bool,
}

impl<'c> ShipmentWriter<'c> {
    pub fn new(conn: &'c Connection, now: i64) -> Self {
        ShipmentWriter {
            conn,
            now,
            orders: HashMap::new(),
            warehouses: HashMap::new(),
            touched_warehouses: BTreeSet::new(),
            assume_new: false,
        }
    }

    /// Checks the order, the warehouse (of the order's customer) and that every item
    /// belongs to the order.
    pub fn check(&mut self, s: &NewShipment) -> rusqlite::Result<Result<OrderRef, Details>> {
        let conn = self.conn;
        let order = match self.orders.get(&s.order_id) {
            Some(o) => *o,
            None => {
                let o = conn
                    .prepare_cached("SELECT customer_id, store_id FROM orders WHERE id = ?1")?
                    .query_row([s.order_id], |r| Ok(OrderRef { customer_id: r.get(0)?, store_id: r.get(1)? }))
                    .optional()?;
                self.orders.insert(s.order_id, o);
                o
            }
        };
        let mut problems = Details::new();
        let Some(order) = order else {
            problems.insert("order_id".to_string(), format!("unknown order {}", s.order_id));
            return Ok(Err(problems));
        };
        let owner = match self.warehouses.get(&s.warehouse_id) {
            Some(owner) => *owner,
            None => {
                let owner: Option<i64> = conn
                    .prepare_cached("SELECT customer_id FROM warehouses WHERE id = ?1")?
                    .query_row([s.warehouse_id], |r| r.get(0))
                    .optional()?;
                self.warehouses.insert(s.warehouse_id, owner);
                owner
            }
        };
        match owner {
            None => {
                problems.insert("warehouse_id".to_string(), format!("unknown warehouse {}", s.warehouse_id));
            }
            Some(c) if c != order.customer_id => {
                problems.insert(
                    "warehouse_id".to_string(),
                    format!("warehouse {} belongs to another customer than the order", s.warehouse_id),
                );
            }
            Some(_) => {}
        }
        let mut stmt = conn.prepare_cached("SELECT order_id FROM order_items WHERE id = ?1")?;
        for (i, item) in s.item_ids.iter().enumerate() {
            let of: Option<i64> = stmt.query_row([item], |r| r.get(0)).optional()?;
            if of != Some(s.order_id) {
                problems.insert(
                    format!("order_items[{i}]"),
                    format!("item {item} is not an item of order {}", s.order_id),
                );
            }
        }
        Ok(if problems.is_empty() { Ok(order) } else { Err(problems) })
    }

    pub fn write(&mut self, s: &NewShipment, order: OrderRef) -> rusqlite::Result<(i64, Written)> {
        self.touched_warehouses.insert(s.warehouse_id);
        let existing: Option<(i64, i64)> = if self.assume_new {
            None
        } else {
            self.conn
                .prepare_cached(
                    "SELECT id, created_at FROM shipments WHERE order_id = ?1 AND tracking_number = ?2",
                )?
                .query_row(params![s.order_id, s.tracking_number], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?
        };
        let (id, created_at, written) = match existing {
            None => {
                self.conn
                    .prepare_cached(
                        "INSERT INTO shipments (customer_id, store_id, order_id, warehouse_id, tracking_number, state,
                           shipped_at, weight, external_shipping_description, carrier_name, service_level, created_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                    )?
                    .execute(params![
                        order.customer_id,
                        order.store_id,
                        s.order_id,
                        s.warehouse_id,
                        s.tracking_number,
                        s.state,
                        s.shipped_at,
                        s.weight,
                        s.external_shipping_description,
                        s.carrier_name,
                        s.service_level,
                        self.now
                    ])?;
                (self.conn.last_insert_rowid(), self.now, Written::Created)
            }
            Some((id, created_at)) => {
                self.conn
                    .prepare_cached(
                        "UPDATE shipments SET warehouse_id = ?1, state = ?2, shipped_at = ?3, weight = ?4,
                           external_shipping_description = ?5, carrier_name = ?6, service_level = ?7
                         WHERE id = ?8",
                    )?
                    .execute(params![
                        s.warehouse_id,
                        s.state,
                        s.shipped_at,
                        s.weight,
                        s.external_shipping_description,
                        s.carrier_name,
                        s.service_level,
                        id
                    ])?;
                self.conn
                    .prepare_cached("DELETE FROM shipment_items WHERE shipment_id = ?1")?
                    .execute([id])?;
                (id, created_at, Written::Updated)
            }
        };
        let mut link = self.conn.prepare_cached(
            "INSERT INTO shipment_items (shipment_id, position, order_item_id, quantity) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for (position, item) in s.item_ids.iter().enumerate() {
            link.execute(params![id, position as i64, item, s.item_units.get(position)])?;
        }
        self.conn.prepare_cached(UPSERT_DOC)?.execute(params![id, s.render(id, created_at)])?;
        Ok((id, written))
    }

    /// Records the import time on every warehouse that shipped.
    pub fn finish(self) -> rusqlite::Result<()> {
        let mut stmt =
            self.conn.prepare_cached("UPDATE warehouses SET order_status_imported_at = ?1 WHERE id = ?2")?;
        for warehouse in &self.touched_warehouses {
            stmt.execute(params![self.now, warehouse])?;
        }
        Ok(())
    }
}
