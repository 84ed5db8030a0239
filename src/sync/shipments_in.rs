//! Step 3, pull shipments: the warehouse hands out its shipment lines a piece at a time (a
//! settled `*.csv` of a file drop's `shipments_dir`, in name order; a page of an API
//! warehouse's orders changed since its cursor). A piece whose every line is good is imported
//! in one transaction (with the warehouse's cursor, when the piece ends its walk), and the
//! warehouse told (a file moves to `processed/`); a file with any bad line imports nothing
//! and is moved to `failed/` beside a `{name}.errors.txt` that lists each bad line. An API
//! warehouse's shipment of an order that is not ours is skipped and named once. Shipments are
//! keyed by (order, tracking number), so a piece read twice (a crash before its move, the
//! overlap of a cursor) changes nothing.
//!
//! Then every shipment of this connection still `new` (or scheduled for processing again)
//! is matched to its order's items: `ready_for_shipment_notification`, or
//! `errored_processing` with the reason.

use std::collections::{BTreeMap, HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, params};

use crate::dates::now_ms;
use crate::db;
use crate::platforms::PlatformError;
use crate::platforms::warehouse::{
    Acknowledged, BadLine, Inbound, Inbox, LineRead, OrderReference, ShipmentLine, Since, StoreKey,
    Strangers, Units, WalkPlace, WarehouseClient,
};
use crate::shipments::model::OrderRef;
use crate::shipments::{NewShipment, ShipmentWriter};

use super::context::Context;
use super::inbox::{MAX_PIECES, Reading, lines};
use super::matching::{Requested, allocate, process, processing_failed};
use super::problems::{self, ProblemKind};
use super::runs::Step;
use super::states;
use super::step::{StepError, note};

/// A shipment of a piece: the first line's fields and every line's item.
struct Group {
    order_id: i64,
    /// The order's store: a warehouse serves every store of its customer.
    store_id: i64,
    tracking_number: String,
    carrier_name: Option<String>,
    service_level: Option<String>,
    description: Option<String>,
    shipped_at: i64,
    weight: Option<i64>,
    items: Vec<Requested>,
}

/// Whose shipments a piece holds: the connection's customer and warehouse, and the run.
#[derive(Debug, Clone, Copy)]
struct Reader {
    customer_id: i64,
    warehouse_id: i64,
    /// The store of the connection whose pass reads the piece: a layout's keys name its orders.
    store_id: i64,
    run_id: i64,
}

/// A piece as the database thread takes it.
struct Piece {
    name: String,
    rows: Vec<LineRead>,
    /// What the warehouse says of documents of ours.
    acknowledged: Vec<Acknowledged>,
    read_at: i64,
    strangers: Strangers,
    cursor: Option<i64>,
    walk: WalkPlace,
}

/// Reads every piece the warehouse has; `pulled` counts the shipments created as they commit.
pub async fn pull(
    ctx: &Context<'_>,
    warehouse: &mut dyn WarehouseClient,
    pulled: &mut u64,
) -> Result<(), StepError> {
    let (link, run_id) = (ctx.link, ctx.run_id);
    let started = now_ms();
    let reader = Reader {
        customer_id: link.customer_id,
        warehouse_id: link.warehouse_id,
        store_id: link.store_id,
        run_id,
    };
    let warehouse_id = link.warehouse_id;
    let since = ctx.sql(move |conn| since(conn, warehouse_id)).await?;
    let mut inbox = Reading::open(warehouse, Inbox::Shipments, since).await?;
    for _ in 0..MAX_PIECES {
        let Some(Inbound { name, records, cursor, walk, strangers, reports }) =
            inbox.warehouse.next_shipments().await?
        else {
            break;
        };
        let imported = match records {
            Ok(rows) => {
                let acknowledged = reports.acknowledged;
                let piece = Piece {
                    name: name.clone(),
                    rows,
                    acknowledged,
                    read_at: now_ms(),
                    strangers,
                    cursor,
                    walk,
                };
                ctx.db(move |conn| import_piece(conn, reader, piece)).await?
            }
            Err(bad) => Err(bad),
        };
        if let (Err(bad), Strangers::Skip) = (&imported, strangers) {
            // A platform's page is no file a person can fix and put back: the step fails.
            return Err(StepError::Platform(PlatformError::BadData(format!(
                "The warehouse's {name} cannot be read: {}.",
                lines(bad)
            ))));
        }
        if let Ok(created) = &imported {
            *pulled += created;
        }
        inbox.settle(ctx, name, imported.map(drop)).await?;
    }
    let store_id = link.store_id;
    ctx.sql(move |conn| process(conn, store_id, run_id)).await?;
    inbox.finish()?;
    ctx.sql(move |conn| {
        conn.prepare_cached("UPDATE warehouses SET order_status_imported_at = ?1 WHERE id = ?2")?
            .execute(params![started, warehouse_id])?;
        Ok(())
    })
    .await
}

/// Where the warehouse's shipments are read from: its cursor, and when it was created.
fn since(conn: &Connection, warehouse_id: i64) -> rusqlite::Result<Since> {
    conn.prepare_cached(
        "SELECT (SELECT cursor FROM warehouse_cursors WHERE warehouse_id = ?1), w.created_at
         FROM warehouses w WHERE w.id = ?1",
    )?
    .query_row([warehouse_id], |r| Ok(Since { cursor: r.get(0)?, created_at: r.get(1)?, walk: None }))
    .and_then(|since| Ok(Since { walk: super::warehouse_walks::kept(conn, warehouse_id)?, ..since }))
}

/// Finds every line's order, then writes the piece's new shipments (and the cursor it ends
/// with) in one transaction. Lines the warehouse could not read, and lines of orders not
/// found, come back as the piece's bad lines and nothing is written, unless the piece says a
/// line of an order not ours is skipped (then it is named once). The warehouse holds the
/// shipments of every store of its customer, whichever connection's pass reads it.
fn import_piece(
    conn: &mut Connection,
    reader: Reader,
    piece: Piece,
) -> Result<Result<u64, Vec<BadLine>>, StepError> {
    let Reader { customer_id, warehouse_id, .. } = reader;
    let tx = db::write(conn)?;
    let mut bad = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    let mut index: HashMap<(i64, String), usize> = HashMap::new();
    for row in piece.rows {
        let row = match row {
            Ok(row) => row,
            Err(unread) => {
                bad.push(unread);
                continue;
            }
        };
        match find_order(&tx, reader, &row, piece.read_at)? {
            Found::Ambiguous(count) => bad.push(BadLine {
                line: row.line,
                problem: format!(
                    "names an ambiguous order ({}): {count} orders of the store carry it",
                    row.reference
                ),
            }),
            Found::None if piece.strangers == Strangers::Skip => stranger(&tx, reader, &piece.name, &row)?,
            Found::None => bad.push(BadLine {
                line: row.line,
                problem: format!("names an unknown order ({})", row.reference),
            }),
            Found::Order(order) => {
                let group = group(row, order, piece.read_at);
                match index.get(&(group.order_id, group.tracking_number.clone())) {
                    Some(&at) => groups[at].items.extend(group.items),
                    None => {
                        index.insert((group.order_id, group.tracking_number.clone()), groups.len());
                        groups.push(group);
                    }
                }
            }
        }
    }
    let turned_back = acknowledged(&tx, warehouse_id, &piece.acknowledged, &mut bad)?;
    if !bad.is_empty() {
        return Ok(Err(bad));
    }
    for (order_id, message) in turned_back {
        turn_back(&tx, reader.run_id, order_id, &message)?;
    }
    if let Some(cursor) = piece.cursor {
        tx.prepare_cached(
            "INSERT INTO warehouse_cursors (warehouse_id, cursor) VALUES (?1, ?2)
             ON CONFLICT (warehouse_id) DO UPDATE SET cursor = max(cursor, excluded.cursor)",
        )?
        .execute(params![warehouse_id, cursor])?;
    }
    super::warehouse_walks::write(&tx, warehouse_id, &piece.walk)?;
    let now = now_ms();
    let mut writer = ShipmentWriter::new(&tx, now);
    // Each shipment is looked for (by order and tracking number) before it is written.
    writer.assume_new = true;
    let mut created = 0;
    for group in groups {
        let known: bool = tx
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM shipments WHERE order_id = ?1 AND tracking_number = ?2)",
            )?
            .query_row(params![group.order_id, group.tracking_number], |r| r.get(0))?;
        if known {
            continue;
        }
        // Read and matched in one go: a shipment from a file goes from `new` through
        // processing to its outcome inside this transaction, and is written once.
        let (state, links, problem) = match allocate(&tx, group.order_id, &group.items, 0)? {
            Ok(links) => ("ready_for_shipment_notification", links, None),
            Err(problem) => ("errored_processing", Vec::new(), Some(problem)),
        };
        let shipment = NewShipment {
            order_id: group.order_id,
            warehouse_id,
            tracking_number: group.tracking_number,
            state: state.to_string(),
            shipped_at: Some(group.shipped_at),
            weight: group.weight,
            external_shipping_description: group.description,
            carrier_name: group.carrier_name,
            service_level: group.service_level,
            item_ids: links.iter().map(|(item, _)| *item).collect(),
            item_units: links.iter().map(|(_, units)| *units).collect(),
        };
        // The order was found among the customer's (find_order) and the warehouse is the
        // connection's, of the same customer: the references an import checks hold.
        let (id, _) = writer.write(&shipment, OrderRef { customer_id, store_id: group.store_id })?;
        let requested = serde_json::to_string(&group.items).unwrap_or_else(|_| "[]".into());
        tx.prepare_cached("INSERT INTO shipment_sync (shipment_id, requested) VALUES (?1, ?2)")?
            .execute(params![id, requested])?;
        if let Some(problem) = &problem {
            processing_failed(&tx, reader.run_id, id, problem)?;
        }
        states::update_progress(&tx, group.order_id, now)?;
        created += 1;
    }
    tx.commit()?;
    Ok(Ok(created))
}

/// The orders the warehouse's acknowledgements turn back, with the warehouse's words; an
/// acknowledgement of a document or part that is not ours at this warehouse is a bad line.
fn acknowledged(
    tx: &Connection,
    warehouse_id: i64,
    acknowledged: &[Acknowledged],
    bad: &mut Vec<BadLine>,
) -> rusqlite::Result<Vec<(i64, String)>> {
    // Each document's orders by part, read once however many of its parts are named.
    let mut documents: HashMap<i64, (BTreeMap<i64, i64>, HashSet<i64>)> = HashMap::new();
    for ack in acknowledged {
        if let std::collections::hash_map::Entry::Vacant(entry) = documents.entry(ack.document) {
            let parts: BTreeMap<i64, i64> = tx
                .prepare_cached(
                    "SELECT bo.part, bo.order_id FROM order_batches b
                       JOIN connections c ON c.id = b.connection_id
                       JOIN order_batch_orders bo ON bo.batch_id = b.id
                      WHERE c.warehouse_id = ?1 AND b.document = ?2 AND bo.part IS NOT NULL",
                )?
                .query_map(params![warehouse_id, ack.document], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            entry.insert((parts, HashSet::new()));
        }
        if let (Some(part), Some((_, named))) = (ack.part, documents.get_mut(&ack.document)) {
            named.insert(part);
        }
    }
    let mut turned_back = Vec::new();
    for ack in acknowledged {
        let Some((parts, named)) = documents.get(&ack.document) else { continue };
        let meant: Vec<i64> = match ack.part {
            Some(part) => parts.get(&part).copied().into_iter().collect(),
            None => parts.iter().filter(|(part, _)| !named.contains(part)).map(|(_, order)| *order).collect(),
        };
        if parts.is_empty() || (ack.part.is_some() && meant.is_empty()) {
            bad.push(BadLine {
                line: 0,
                problem: format!("{} names no document orderbridge sent this warehouse", ack.reference),
            });
            continue;
        }
        if let Some(message) = &ack.rejected {
            turned_back.extend(meant.into_iter().map(|order| (order, message.clone())));
        }
    }
    Ok(turned_back)
}

/// An order the warehouse turned back after it took it: `errored` with the warehouse's words
/// while it waits for its shipment (an order already shipped or errored keeps its state), and
/// named in the run.
fn turn_back(tx: &Connection, run_id: i64, order_id: i64, message: &str) -> rusqlite::Result<()> {
    let state: Option<Option<String>> = tx
        .prepare_cached("SELECT fulfillment_state FROM orders WHERE id = ?1")?
        .query_row([order_id], |r| r.get(0))
        .optional()?;
    if state.flatten().as_deref() != Some(states::OrderState::PendingShipment.as_str()) {
        return Ok(());
    }
    states::move_order(tx, order_id, states::OrderState::Errored, now_ms())?;
    note(tx, run_id, Step::PullShipments, ProblemKind::Order, &order_id.to_string(), message)?;
    problems::order_error(tx, order_id, Step::PullShipments, message)
}

/// Names a warehouse's shipment of an order that is not ours in the run, the first time it
/// is read.
fn stranger(tx: &Connection, reader: Reader, piece: &str, row: &ShipmentLine) -> rusqlite::Result<()> {
    let reference =
        if row.reference.is_empty() { format!("{piece}, line {}", row.line) } else { row.reference.clone() };
    let key = format!("{reference} {}", row.tracking_number);
    let new = tx
        .prepare_cached(
            "INSERT INTO warehouse_strangers (warehouse_id, ref, seen_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (warehouse_id, ref) DO NOTHING",
        )?
        .execute(params![reader.warehouse_id, key, now_ms()])?;
    if new == 0 {
        return Ok(());
    }
    let message = format!(
        "The warehouse's {reference} is not an order orderbridge sent it; its shipment {} was skipped.",
        row.tracking_number
    );
    note(tx, reader.run_id, Step::PullShipments, ProblemKind::Shipment, &row.tracking_number, &message)
}

/// What a line's reference found.
enum Found {
    /// The order and its store.
    Order((i64, i64)),
    None,
    /// A key several orders of the store carry (a display id), with how many.
    Ambiguous(i64),
}

/// The order (and its store) a line names among the customer's, `None` for a stranger. A line
/// that carries the warehouse's own order id is the order's only when the order was sent to
/// this warehouse under that id; a line naming an order by a key of the reading connection's
/// store finds it in that store alone.
fn find_order(
    conn: &Connection,
    reader: Reader,
    row: &ShipmentLine,
    read_at: i64,
) -> rusqlite::Result<Found> {
    let Reader { customer_id, warehouse_id, store_id, .. } = reader;
    let pair = |r: &rusqlite::Row<'_>| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?));
    let found = match &row.order {
        OrderReference::Warehouse { warehouse_order_id, order_id } => {
            let sent = conn
                .prepare_cached(
                    "SELECT id, store_id FROM orders WHERE id = ?1 AND customer_id = ?2
                       AND fulfillment_warehouse_id = ?3 AND external_warehouse_order_id = ?4",
                )?
                .query_row(params![order_id, customer_id, warehouse_id, warehouse_order_id], pair)
                .optional()?;
            match sent {
                Some(order) => Some(order),
                None => in_doubt_here(conn, (customer_id, warehouse_id), *order_id, warehouse_order_id, read_at)?,
            }
        }
        OrderReference::Order(id) => conn
            .prepare_cached("SELECT id, store_id FROM orders WHERE id = ?1 AND customer_id = ?2")?
            .query_row(params![id, customer_id], pair)
            .optional()?,
        OrderReference::External { store_id, external_id } => conn
            .prepare_cached(
                "SELECT id, store_id FROM orders WHERE store_id = ?1 AND external_id = ?2 AND customer_id = ?3",
            )?
            .query_row(params![store_id, external_id, customer_id], pair)
            .optional()?,
        OrderReference::InStore { store_id: Some(given), .. } if *given != store_id => None,
        OrderReference::InStore { key, .. } => {
            let (sql, value): (&str, rusqlite::types::Value) = match key {
                StoreKey::Id(id) => ("SELECT id, store_id FROM orders WHERE id = ?2 AND store_id = ?1", (*id).into()),
                StoreKey::External(external) => (
                    "SELECT id, store_id FROM orders WHERE store_id = ?1 AND external_id = ?2",
                    external.clone().into(),
                ),
                StoreKey::Display(display) => (
                    "SELECT id, store_id FROM orders WHERE store_id = ?1 AND external_display_id = ?2 LIMIT 3",
                    display.clone().into(),
                ),
            };
            let mut stmt = conn.prepare_cached(sql)?;
            let orders = stmt.query_map(params![store_id, value], pair)?.collect::<rusqlite::Result<Vec<_>>>()?;
            match orders[..] {
                [] => None,
                [order] => Some(order),
                _ => {
                    let count: i64 = conn
                        .prepare_cached("SELECT COUNT(*) FROM orders WHERE store_id = ?1 AND external_display_id = ?2")?
                        .query_row(params![store_id, value], |r| r.get(0))?;
                    return Ok(Found::Ambiguous(count));
                }
            }
        }
        OrderReference::SentHere(id) => sent_here(conn, (customer_id, warehouse_id), *id)?,
        OrderReference::Stranger => None,
    };
    Ok(found.map_or(Found::None, Found::Order))
}

/// Order `order_id` of the customer, when this warehouse was sent it by any of its connections.
fn sent_here(
    conn: &Connection,
    (customer_id, warehouse_id): (i64, i64),
    order_id: i64,
) -> rusqlite::Result<Option<(i64, i64)>> {
    conn.prepare_cached(
        "SELECT o.id, o.store_id FROM orders o
          WHERE o.id = ?1 AND o.customer_id = ?2
            AND (o.fulfillment_warehouse_id = ?3 OR EXISTS (
                   SELECT 1 FROM order_batch_orders bo JOIN order_batches b ON b.id = bo.batch_id
                     JOIN connections c ON c.id = b.connection_id
                    WHERE bo.order_id = o.id AND c.warehouse_id = ?3))",
    )?
    .query_row(params![order_id, customer_id, warehouse_id], |r| Ok((r.get(0)?, r.get(1)?)))
    .optional()
}

/// A line of order `order_id` of store `store_id` as a shipment of its item; a line that does
/// not say when it shipped shipped when it was read.
fn group(row: ShipmentLine, (order_id, store_id): (i64, i64), read_at: i64) -> Group {
    let items = row.item.into_iter().map(|(sku, units)| match units {
        Units::Count(quantity) => Requested { sku, quantity, all: false },
        Units::AllLeft => Requested { sku, quantity: 0, all: true },
    });
    Group {
        order_id,
        store_id,
        tracking_number: row.tracking_number,
        carrier_name: row.carrier_name,
        service_level: row.service_level,
        description: row.description,
        shipped_at: row.shipped_at.unwrap_or(read_at),
        weight: row.weight,
        items: items.collect(),
    }
}

/// An order of the customer whose create a connection to this warehouse sent without a verdict
/// (`new` in its unfinished send), named by the warehouse's line under our reference: the
/// create reached the warehouse, so the order is the warehouse's under the line's id, whichever
/// connection reads the line. Never a stranger, and never passed over.
fn in_doubt_here(
    conn: &Connection,
    (customer_id, warehouse_id): (i64, i64),
    order_id: i64,
    warehouse_order_id: &str,
    read_at: i64,
) -> rusqlite::Result<Option<(i64, i64)>> {
    let found: Option<i64> = conn
        .prepare_cached(
            "SELECT o.store_id FROM orders o
             WHERE o.id = ?1 AND o.customer_id = ?2 AND o.fulfillment_state = 'new'
               AND EXISTS (SELECT 1 FROM order_batch_orders bo
                             JOIN order_batches b ON b.id = bo.batch_id
                             JOIN connections c ON c.id = b.connection_id
                            WHERE bo.order_id = o.id AND b.delivered_at IS NULL AND c.warehouse_id = ?3)",
        )?
        .query_row(params![order_id, customer_id, warehouse_id], |r| r.get(0))
        .optional()?;
    let Some(store_id) = found.filter(|_| !warehouse_order_id.is_empty()) else { return Ok(None) };
    states::adopt(conn, order_id, warehouse_id, warehouse_order_id, read_at)?;
    Ok(Some((order_id, store_id)))
}
