//! Orders, shipments and inventory items as ShipBob writes them in its answers.

use serde_json::{Value, json};

use super::data::{Channel, Item, LOCATIONS, Order, Shipment, Status};

/// A time as ShipBob writes it: seven fraction digits and an offset.
pub(super) fn shipbob_time(ms: i64) -> String {
    let at = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}0000+00:00",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond()
    )
}

impl Order {
    pub fn status(&self) -> &'static str {
        let live: Vec<Status> =
            self.shipments.iter().map(|s| s.status).filter(|s| *s != Status::Cancelled).collect();
        let shipped = live.iter().filter(|s| **s == Status::Completed).count();
        match () {
            _ if self.cancelled_ms.is_some() => "Cancelled",
            _ if shipped > 0 && shipped == live.len() => "Fulfilled",
            _ if shipped > 0 => "PartiallyFulfilled",
            _ if live.contains(&Status::Exception) => "Exception",
            _ => "Processing",
        }
    }

    /// The latest change to the order or any of its shipments.
    pub fn updated_ms(&self) -> i64 {
        let shipments = self.shipments.iter().map(|s| s.updated_ms).max().unwrap_or_default();
        self.created_ms.max(shipments).max(self.cancelled_ms.unwrap_or_default())
    }

    pub fn tracking_updated_ms(&self) -> Option<i64> {
        self.shipments.iter().filter_map(|s| s.tracking_updated_ms).max()
    }

    pub fn has_tracking(&self) -> bool {
        self.shipments.iter().any(|s| s.tracking.is_some())
    }

    pub fn view(&self, channel: &Channel) -> Value {
        let mut order = json!({
            "id": self.id,
            "created_date": shipbob_time(self.created_ms),
            "reference_id": self.reference_id,
            "order_number": self.order_number.clone().unwrap_or_else(|| self.reference_id.clone()),
            "status": self.status(),
            "type": self.kind,
            "channel": {"id": channel.id, "name": channel.name},
            "shipping_method": self.shipping_method,
            "recipient": self.recipient,
            "products": self.lines.iter().map(|l| {
                let mut p = json!({"id": l.product_id, "reference_id": l.sku, "sku": l.sku, "quantity": l.quantity});
                if let Some(price) = l.unit_price {
                    p["unit_price"] = json!(price);
                }
                p
            }).collect::<Vec<_>>(),
            "shipments": self.shipments.iter().map(|s| self.shipment_view(s)).collect::<Vec<_>>(),
        });
        if let Some(date) = &self.purchase_date {
            order["purchase_date"] = json!(date);
        }
        if let Some(message) = &self.gift_message {
            order["gift_message"] = json!(message);
        }
        order
    }

    fn shipment_view(&self, s: &Shipment) -> Value {
        let (location_id, location) = LOCATIONS[s.location];
        let status = match s.status {
            Status::Processing => "Processing",
            Status::Exception => "Exception",
            Status::Completed => "Completed",
            Status::Cancelled => "Cancelled",
        };
        let products: Vec<Value> = s
            .units
            .iter()
            .map(|(line, units)| {
                let l = &self.lines[*line];
                json!({"id": l.product_id, "reference_id": l.sku, "sku": l.sku, "name": l.name,
                       "inventory_items": [{"id": l.inventory_id, "name": l.name, "quantity": units,
                                            "quantity_committed": units, "is_dangerous_goods": false}]})
            })
            .collect();
        let mut view = json!({
            "id": s.id, "order_id": self.id, "reference_id": self.reference_id, "status": status,
            "created_date": shipbob_time(s.created_ms), "last_update_at": shipbob_time(s.updated_ms),
            "is_tracking_uploaded": false, "require_signature": false, "ship_option": "Standard",
            "location": {"id": location_id, "name": location}, "products": products,
        });
        if s.status == Status::Exception {
            view["status_details"] = json!([{"id": 1, "name": "OutOfStock",
                "description": "Not enough inventory to fulfill this shipment",
                "exception_fulfillment_center_id": location_id}]);
        }
        if let Some(at) = s.tracking_updated_ms {
            view["last_tracking_update_at"] = json!(shipbob_time(at));
        }
        if let Some(t) = &s.tracking {
            let weight: i64 = s.units.iter().map(|(l, n)| n * (4 + self.lines[*l].product_id % 37)).sum();
            view["actual_fulfillment_date"] = json!(shipbob_time(t.at_ms));
            view["measurements"] =
                json!({"total_weight_oz": weight.max(1), "length_in": 12, "width_in": 9, "depth_in": 4});
            let shipped = time::OffsetDateTime::from_unix_timestamp(t.at_ms.div_euclid(1000))
                .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
            let date = shipped.format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
            view["tracking"] = json!({"carrier": t.carrier.name(), "carrier_service": t.service,
                "tracking_number": t.number, "tracking_url": t.url(), "shipping_date": date});
        }
        view
    }
}

impl Item {
    pub fn view(&self) -> Value {
        json!({
            "inventory_id": self.inventory_id, "name": self.name, "sku": self.sku,
            "total_fulfillable_quantity": self.on_hand - self.committed,
            "total_on_hand_quantity": self.on_hand, "total_committed_quantity": self.committed,
            "total_sellable_quantity": self.on_hand + self.awaiting,
            "total_awaiting_quantity": self.awaiting, "total_exception_quantity": 0,
            "total_backordered_quantity": (self.committed - self.on_hand).max(0),
            "total_internal_transfer_quantity": 0,
        })
    }
}
