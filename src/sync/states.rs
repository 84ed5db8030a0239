//! Order `fulfillment_state` and shipment `state` as sync moves them (CONTRACT §11). Every
//! move also renders the stored document again, so the API shows the new state at once.

use rusqlite::{Connection, OptionalExtension, params};

/// The order states sync sets. Other values an import wrote are never touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderState {
    New,
    PendingShipment,
    PartiallyShipped,
    Shipped,
    Canceled,
    Errored,
}

impl OrderState {
    pub fn as_str(self) -> &'static str {
        match self {
            OrderState::New => "new",
            OrderState::PendingShipment => "pending_shipment",
            OrderState::PartiallyShipped => "partially_shipped",
            OrderState::Shipped => "shipped",
            OrderState::Canceled => "canceled",
            OrderState::Errored => "errored",
        }
    }

    pub fn parse(s: Option<&str>) -> Option<OrderState> {
        Some(match s? {
            "new" => OrderState::New,
            "pending_shipment" => OrderState::PendingShipment,
            "partially_shipped" => OrderState::PartiallyShipped,
            "shipped" => OrderState::Shipped,
            "canceled" => OrderState::Canceled,
            "errored" => OrderState::Errored,
            _ => return None,
        })
    }

    /// A store's cancellation applies until the order has shipped.
    pub fn can_cancel(self) -> bool {
        matches!(
            self,
            OrderState::New
                | OrderState::PendingShipment
                | OrderState::PartiallyShipped
                | OrderState::Errored
        )
    }

    /// Shipments move an order forward from these.
    fn can_ship(self) -> bool {
        matches!(self, OrderState::New | OrderState::PendingShipment | OrderState::PartiallyShipped)
    }
}

/// Sets an order's state (and when it changed) and renders its document again.
pub fn move_order(conn: &Connection, order_id: i64, to: OrderState, now: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "UPDATE orders SET fulfillment_state = ?2, fulfillment_transitioned_at = ?3 WHERE id = ?1",
    )?
    .execute(params![order_id, to.as_str(), now])?;
    crate::orders::rerender(conn, order_id)
}

/// The store cancelled a known order. One a warehouse holds under its own id, and one whose
/// create may be on its way to a warehouse (`new` in a send not yet finished), keep their
/// state until the send step has asked the warehouse (CONTRACT §11, "Warehouses reached by
/// API", cancellations): the warehouse cancels it, or the conflict is reported once, shipped
/// or not. Any other order that can still be cancelled is `canceled` now. A cancellation read
/// again (an overlap) asks nothing twice.
pub fn cancel_by_store(conn: &Connection, order_id: i64, now: i64) -> rusqlite::Result<()> {
    let found: Option<(Option<String>, bool, bool)> = conn
        .prepare_cached(
            "SELECT o.fulfillment_state,
                    o.external_warehouse_order_id IS NOT NULL AND o.fulfillment_warehouse_id IS NOT NULL,
                    EXISTS (SELECT 1 FROM order_batch_orders bo JOIN order_batches b ON b.id = bo.batch_id
                             WHERE bo.order_id = o.id AND b.delivered_at IS NULL)
             FROM orders o WHERE o.id = ?1",
        )?
        .query_row([order_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    let Some((state, held, sending)) = found else { return Ok(()) };
    let Some(state) = OrderState::parse(state.as_deref()) else { return Ok(()) };
    let at_warehouse = held
        && matches!(state, OrderState::PendingShipment | OrderState::PartiallyShipped | OrderState::Shipped);
    if at_warehouse || (state == OrderState::New && sending) {
        conn.prepare_cached(
            "INSERT INTO order_cancels (order_id, requested_at) VALUES (?1, ?2) ON CONFLICT (order_id) DO NOTHING",
        )?
        .execute(params![order_id, now])?;
        return Ok(());
    }
    if state.can_cancel() {
        move_order(conn, order_id, OrderState::Canceled, now)?;
    }
    Ok(())
}

/// An order whose create was in doubt, found at the warehouse under `warehouse_order_id`: it
/// waits for its shipment there, as if the create's answer had arrived.
pub fn adopt(
    tx: &Connection,
    order_id: i64,
    warehouse_id: i64,
    warehouse_order_id: &str,
    now: i64,
) -> rusqlite::Result<bool> {
    let changed = tx
        .prepare_cached(
            "UPDATE orders SET fulfillment_state = 'pending_shipment', fulfillment_transitioned_at = ?3,
               fulfillment_warehouse_id = ?2, external_warehouse_order_id = ?4
             WHERE id = ?1 AND fulfillment_state = 'new'",
        )?
        .execute(params![order_id, warehouse_id, now, warehouse_order_id])?;
    if changed > 0 {
        crate::orders::rerender(tx, order_id)?;
    }
    Ok(changed > 0)
}

/// Moves an order to `partially_shipped` or `shipped` from what its shipments (other than
/// those that failed processing) hold: shipped when every unit of every item is in one.
pub fn update_progress(conn: &Connection, order_id: i64, now: i64) -> rusqlite::Result<()> {
    let state: Option<Option<String>> = conn
        .prepare_cached("SELECT fulfillment_state FROM orders WHERE id = ?1")?
        .query_row([order_id], |r| r.get(0))
        .optional()?;
    let Some(from) = state.and_then(|s| OrderState::parse(s.as_deref())) else { return Ok(()) };
    if !from.can_ship() {
        return Ok(());
    }
    let (items, complete, touched, any_shipment): (i64, i64, i64, bool) = conn
        .prepare_cached(
            "SELECT COUNT(*), COALESCE(SUM(shipped >= quantity), 0), COALESCE(SUM(shipped > 0), 0),
                    EXISTS (SELECT 1 FROM shipments WHERE order_id = ?1 AND state != 'errored_processing')
             FROM (
               SELECT oi.quantity, (SELECT COALESCE(SUM(COALESCE(si.quantity, oi.quantity)), 0)
                                      FROM shipment_items si JOIN shipments s ON s.id = si.shipment_id
                                     WHERE si.order_item_id = oi.id AND s.state != 'errored_processing') AS shipped
                 FROM order_items oi WHERE oi.order_id = ?1)",
        )?
        .query_row([order_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
    let to = if items == complete && any_shipment {
        OrderState::Shipped
    } else if touched > 0 {
        OrderState::PartiallyShipped
    } else {
        return Ok(());
    };
    if to != from {
        move_order(conn, order_id, to, now)?;
    }
    Ok(())
}

/// Sets a shipment's state and renders its document again.
pub fn move_shipment(conn: &Connection, shipment_id: i64, to: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE shipments SET state = ?2 WHERE id = ?1")?
        .execute(params![shipment_id, to])?;
    crate::shipments::rerender(conn, shipment_id)
}
