//! A merchant account's records (channels, products and their inventory items, orders and
//! their shipments) and what happens to them: an order created, shipped in one parcel or two,
//! held in `Exception`, a label voided, a cancel; and their JSON as ShipBob writes it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{Value, json};

use super::{AutoShip, Carrier};
use crate::simulate::Rng;

/// ShipBob's fulfillment centers: (id, name).
pub(super) const LOCATIONS: [(i64, &str); 4] =
    [(6, "Cicero (IL)"), (10, "Moreno Valley (CA)"), (8, "Bethlehem (PA)"), (165, "Twin Lakes (WI)")];

#[derive(Debug, Clone)]
pub(super) struct Channel {
    pub id: i64,
    pub application_name: &'static str,
    pub name: String,
    pub scopes: &'static [&'static str],
}

pub(super) const SMA_SCOPES: &[&str] =
    &["channels_read", "orders_read", "orders_write", "inventory_read", "inventory_write", "products_read"];
pub(super) const READ_SCOPES: &[&str] = &["channels_read", "orders_read", "inventory_read", "products_read"];

#[derive(Debug, Clone)]
pub(super) struct Item {
    pub inventory_id: i64,
    pub product_id: i64,
    pub sku: String,
    pub name: String,
    pub on_hand: i64,
    pub committed: i64,
    pub awaiting: i64,
}

#[derive(Debug, Clone)]
pub(super) struct Line {
    pub product_id: i64,
    pub inventory_id: i64,
    pub sku: String,
    pub name: String,
    pub quantity: i64,
    pub unit_price: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Status {
    Processing,
    Exception,
    Completed,
    Cancelled,
}

#[derive(Debug, Clone)]
pub(super) struct Tracking {
    pub carrier: Carrier,
    pub service: &'static str,
    pub number: String,
    pub at_ms: i64,
}

#[derive(Debug, Clone)]
pub(super) struct Shipment {
    pub id: i64,
    pub created_ms: i64,
    pub location: usize,
    pub status: Status,
    /// (index into the order's lines, units).
    pub units: Vec<(usize, i64)>,
    pub tracking: Option<Tracking>,
    pub updated_ms: i64,
    pub tracking_updated_ms: Option<i64>,
    /// When it ships by itself, and when it waits in `Exception` before that.
    pub ship_due: Option<i64>,
    pub exception_due: Option<i64>,
}

#[derive(Debug, Clone)]
pub(super) struct Order {
    pub id: i64,
    pub channel: usize,
    pub reference_id: String,
    pub order_number: Option<String>,
    pub created_ms: i64,
    pub purchase_date: Option<String>,
    pub shipping_method: String,
    pub kind: String,
    pub gift_message: Option<String>,
    pub recipient: Value,
    pub lines: Vec<Line>,
    pub shipments: Vec<Shipment>,
    pub cancelled_ms: Option<i64>,
    /// It ships in two parcels from two centers, the second `split_gap_ms` after the first.
    pub split_gap_ms: Option<i64>,
}

/// What a create asks for, once its body holds.
pub(super) struct NewOrder {
    pub reference_id: String,
    pub order_number: Option<String>,
    pub purchase_date: Option<String>,
    pub shipping_method: String,
    pub kind: String,
    pub gift_message: Option<String>,
    pub recipient: Value,
    /// (reference id, name, units, unit price).
    pub products: Vec<(String, Option<String>, i64, Option<f64>)>,
}

#[derive(Default)]
pub(super) struct Account {
    pub channels: Vec<Channel>,
    pub items: Vec<Item>,
    pub orders: BTreeMap<i64, Order>,
    /// Indexes, so a request costs the same with 100,000 orders as with ten: the first item
    /// of each SKU, each item's place by inventory id, each order by reference, and the
    /// orders with a shipment waiting for its time to ship.
    pub(super) skus: HashMap<String, usize>,
    pub(super) inventory_at: HashMap<i64, usize>,
    pub(super) references: HashMap<String, i64>,
    pub(super) due: BTreeSet<i64>,
    /// Orders a walk of shipments lists before the account's own, with nothing shipped: a
    /// backlog after an outage, at no cost to keep (`list_backlog_first`).
    pub backlog: usize,
}

/// The ids every account draws from, so no two accounts share one.
pub(super) struct Ids {
    pub order: i64,
    pub shipment: i64,
    pub product: i64,
    pub inventory: i64,
    pub channel: i64,
}

impl Default for Ids {
    fn default() -> Self {
        Ids { order: 200_400, shipment: 900_100, product: 7_700_000, inventory: 5_500, channel: 128_940 }
    }
}

impl Ids {
    pub fn next(counter: &mut i64) -> i64 {
        *counter += 1;
        *counter
    }
}

impl Account {
    pub fn channel_index(&self, id: i64) -> Option<usize> {
        self.channels.iter().position(|c| c.id == id)
    }

    pub fn by_reference(&self, reference: &str) -> Option<i64> {
        self.references.get(reference).copied()
    }

    /// The item of an inventory id.
    fn item_mut(&mut self, inventory_id: i64) -> Option<&mut Item> {
        let at = *self.inventory_at.get(&inventory_id)?;
        self.items.get_mut(at)
    }

    /// The inventory item a SKU ships from, made (with nothing on hand) for a SKU ShipBob
    /// does not know, as it makes a product from `reference_id` and `name`.
    fn item_for(&mut self, ids: &mut Ids, sku: &str, name: &str) -> usize {
        if let Some(&at) = self.skus.get(sku) {
            return at;
        }
        self.add_item(ids, sku, name, 0, 0)
    }

    pub fn add_item(&mut self, ids: &mut Ids, sku: &str, name: &str, on_hand: i64, awaiting: i64) -> usize {
        let inventory_id = Ids::next(&mut ids.inventory);
        self.skus.entry(sku.to_string()).or_insert(self.items.len());
        self.inventory_at.insert(inventory_id, self.items.len());
        self.items.push(Item {
            inventory_id,
            product_id: Ids::next(&mut ids.product),
            sku: sku.to_string(),
            name: name.to_string(),
            on_hand,
            committed: 0,
            awaiting,
        });
        self.items.len() - 1
    }

    fn commit(&mut self, inventory_id: i64, units: i64) {
        if let Some(item) = self.item_mut(inventory_id) {
            item.committed = (item.committed + units).max(0);
        }
    }

    /// Creates the order, committing its units, with one `Processing` shipment at a center
    /// ShipBob chooses; when `auto` ships orders, its plan (when, split, exception) is drawn.
    pub fn create(
        &mut self,
        ids: &mut Ids,
        rng: &mut Rng,
        auto: Option<&AutoShip>,
        channel: usize,
        new: NewOrder,
        now_ms: i64,
    ) -> i64 {
        let mut lines = Vec::new();
        for (sku, name, quantity, unit_price) in new.products {
            let name = name.unwrap_or_else(|| sku.clone());
            let at = self.item_for(ids, &sku, &name);
            let item = &self.items[at];
            lines.push(Line {
                product_id: item.product_id,
                inventory_id: item.inventory_id,
                sku,
                name: item.name.clone(),
                quantity,
                unit_price,
            });
        }
        for line in &lines {
            self.commit(line.inventory_id, line.quantity);
        }
        let id = Ids::next(&mut ids.order);
        let mut shipment = Shipment {
            id: Ids::next(&mut ids.shipment),
            created_ms: now_ms,
            location: rng.below(LOCATIONS.len() as u64) as usize,
            status: Status::Processing,
            units: lines.iter().enumerate().map(|(i, l)| (i, l.quantity)).collect(),
            tracking: None,
            updated_ms: now_ms,
            tracking_updated_ms: None,
            ship_due: None,
            exception_due: None,
        };
        let mut split_gap_ms = None;
        if let Some(auto) = auto {
            let spread = auto.spread.as_millis() as u64;
            let due = now_ms + auto.after.as_millis() as i64 + rng.below(spread + 1) as i64;
            shipment.ship_due = Some(due);
            if auto.exception_one_in > 0 && rng.below(auto.exception_one_in) == 0 {
                shipment.exception_due = Some(due);
                shipment.ship_due = Some(due + auto.exception_wait.as_millis() as i64);
            }
            if lines.len() > 1 && auto.split_one_in > 0 && rng.below(auto.split_one_in) == 0 {
                split_gap_ms = Some(auto.split_gap.as_millis() as i64);
            }
        }
        if shipment.ship_due.is_some() {
            self.due.insert(id);
        }
        self.references.entry(new.reference_id.clone()).or_insert(id);
        self.orders.insert(
            id,
            Order {
                id,
                channel,
                reference_id: new.reference_id,
                order_number: new.order_number,
                created_ms: now_ms,
                purchase_date: new.purchase_date,
                shipping_method: new.shipping_method,
                kind: new.kind,
                gift_message: new.gift_message,
                recipient: new.recipient,
                lines,
                shipments: vec![shipment],
                cancelled_ms: None,
                split_gap_ms,
            },
        );
        id
    }

    /// Every shipment whose time has come enters `Exception` or ships, in the order of
    /// those times, each at its own time (not at the time of the request that noticed it).
    pub fn advance(&mut self, ids: &mut Ids, rng: &mut Rng, now_ms: i64) {
        let due: Vec<i64> = self
            .due
            .iter()
            .filter_map(|id| self.orders.get(id))
            .filter(|o| {
                o.cancelled_ms.is_none()
                    && o.shipments.iter().any(|s| {
                        unshipped(s.status)
                            && (s.ship_due.is_some_and(|t| t <= now_ms)
                                || s.exception_due.is_some_and(|t| t <= now_ms))
                    })
            })
            .map(|o| o.id)
            .collect();
        for id in due {
            // Bounded: each turn clears one due time (a split adds one shipment, once).
            for _ in 0..8 {
                let Some(order) = self.orders.get_mut(&id) else { break };
                let next = order
                    .shipments
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| unshipped(s.status))
                    .flat_map(|(i, s)| {
                        let exception = s.exception_due.filter(|_| s.status == Status::Processing);
                        [(exception, i, true), (s.ship_due, i, false)]
                    })
                    .filter_map(|(t, i, exception)| t.filter(|t| *t <= now_ms).map(|t| (t, i, exception)))
                    .min();
                let Some((at, index, exception)) = next else { break };
                if exception {
                    let shipment = &mut order.shipments[index];
                    shipment.status = Status::Exception;
                    shipment.exception_due = None;
                    shipment.updated_ms = at;
                    continue;
                }
                if let Some(gap) = order.split_gap_ms.take()
                    && order.shipments[index].units.len() > 1
                {
                    let units = &mut order.shipments[index].units;
                    let moved = units.split_off(units.len() / 2);
                    let location = (order.shipments[index].location + 1) % LOCATIONS.len();
                    order.shipments.push(Shipment {
                        id: Ids::next(&mut ids.shipment),
                        created_ms: at,
                        location,
                        status: Status::Processing,
                        units: moved,
                        tracking: None,
                        updated_ms: at,
                        tracking_updated_ms: None,
                        ship_due: Some(at + gap),
                        exception_due: None,
                    });
                }
                let tracking = Tracking::draw(rng, None, None, at);
                self.ship_shipment(id, index, tracking);
            }
        }
        // Only orders with a shipment still waiting for its time stay due.
        let orders = &self.orders;
        self.due.retain(|id| {
            orders.get(id).is_some_and(|o| {
                o.cancelled_ms.is_none()
                    && o.shipments
                        .iter()
                        .any(|s| unshipped(s.status) && (s.ship_due.is_some() || s.exception_due.is_some()))
            })
        });
    }

    /// Ships one shipment of an order with `tracking`: its units leave the shelf.
    pub fn ship_shipment(&mut self, order_id: i64, index: usize, tracking: Tracking) {
        let Some(order) = self.orders.get_mut(&order_id) else { return };
        let at = tracking.at_ms;
        let shipment = &mut order.shipments[index];
        shipment.status = Status::Completed;
        shipment.tracking = Some(tracking);
        shipment.updated_ms = at;
        shipment.tracking_updated_ms = Some(at);
        shipment.ship_due = None;
        shipment.exception_due = None;
        let leaving: Vec<(i64, i64)> =
            shipment.units.iter().map(|(line, units)| (order.lines[*line].inventory_id, *units)).collect();
        for (inventory_id, units) in leaving {
            if let Some(item) = self.item_mut(inventory_id) {
                item.committed = (item.committed - units).max(0);
                item.on_hand = (item.on_hand - units).max(0);
            }
        }
    }

    /// Ships `units` of the order's SKUs (all it has left when `None`) in one parcel, taken
    /// from the shipments not yet shipped; the id of the shipment that carries them.
    pub fn ship_units(
        &mut self,
        ids: &mut Ids,
        order_id: i64,
        units: Option<&[(&str, i64)]>,
        tracking: Tracking,
    ) -> Result<i64, String> {
        let order = self.orders.get_mut(&order_id).ok_or_else(|| format!("no order {order_id}"))?;
        if order.cancelled_ms.is_some() {
            return Err(format!("order {order_id} is cancelled"));
        }
        let open: Vec<usize> =
            (0..order.shipments.len()).filter(|i| unshipped(order.shipments[*i].status)).collect();
        let Some(&first) = open.first() else { return Err(format!("order {order_id} has shipped")) };
        let mut taken: Vec<(usize, i64)> = Vec::new();
        match units {
            None => {
                for &i in &open {
                    taken.extend(std::mem::take(&mut order.shipments[i].units));
                }
            }
            Some(units) => {
                // Nothing changes unless every unit asked for is there.
                for (sku, wanted) in units {
                    let have: i64 = open
                        .iter()
                        .flat_map(|i| &order.shipments[*i].units)
                        .filter(|(line, _)| order.lines[*line].sku == *sku)
                        .map(|(_, n)| n)
                        .sum();
                    if have < *wanted {
                        return Err(format!("order {order_id} has not {wanted} unshipped units of {sku}"));
                    }
                }
                for (sku, wanted) in units {
                    let mut left = *wanted;
                    for &i in &open {
                        for (line, have) in order.shipments[i].units.iter_mut() {
                            if order.lines[*line].sku == *sku && left > 0 {
                                let take = left.min(*have);
                                *have -= take;
                                left -= take;
                                taken.push((*line, take));
                            }
                        }
                        order.shipments[i].units.retain(|(_, n)| *n > 0);
                    }
                }
            }
        }
        // The first open shipment carries the parcel when nothing else is left in it.
        let index = if order.shipments[first].units.is_empty() {
            order.shipments[first].units = taken;
            first
        } else {
            let location = order.shipments[first].location;
            order.shipments.push(Shipment {
                id: Ids::next(&mut ids.shipment),
                created_ms: tracking.at_ms,
                location,
                status: Status::Processing,
                units: taken,
                tracking: None,
                updated_ms: tracking.at_ms,
                tracking_updated_ms: None,
                ship_due: None,
                exception_due: None,
            });
            order.shipments.len() - 1
        };
        // Open shipments emptied by the parcel are gone, as ShipBob merges them.
        let id = order.shipments[index].id;
        order.shipments.retain(|s| !(unshipped(s.status) && s.units.is_empty()));
        let index = order.shipments.iter().position(|s| s.id == id).unwrap_or_default();
        self.ship_shipment(order_id, index, tracking);
        Ok(id)
    }

    /// Cancels as ShipBob does: an order with nothing shipped is cancelled whole; otherwise
    /// nothing changes and each shipment says why. (order status, results).
    pub fn cancel(&mut self, order_id: i64, now_ms: i64) -> Option<(&'static str, Vec<Value>)> {
        let order = self.orders.get_mut(&order_id)?;
        let shipped = order.shipments.iter().any(|s| s.status == Status::Completed);
        let results = order
            .shipments
            .iter()
            .map(|s| {
                let reason = match s.status {
                    Status::Completed => "Shipment is already labeled",
                    Status::Cancelled => "Shipment is already cancelled",
                    _ if shipped => "Order has a shipment that is already labeled",
                    _ => "Shipment cancelled",
                };
                json!({"shipment_id": s.id, "action": "Cancel", "is_success": !shipped, "reason": reason})
            })
            .collect();
        if shipped {
            return Some(("Failure", results));
        }
        order.cancelled_ms = Some(now_ms);
        let mut released = Vec::new();
        for shipment in &mut order.shipments {
            if unshipped(shipment.status) {
                released.extend(shipment.units.iter().map(|(l, n)| (order.lines[*l].inventory_id, *n)));
            }
            shipment.status = Status::Cancelled;
            shipment.updated_ms = now_ms;
            shipment.ship_due = None;
            shipment.exception_due = None;
        }
        for (inventory_id, units) in released {
            self.commit(inventory_id, -units);
        }
        Some(("Success", results))
    }

    /// A voided label: the shipment turns `Cancelled` and its units return to the shelf.
    pub fn void(&mut self, shipment_id: i64, now_ms: i64) -> bool {
        let mut back = Vec::new();
        for order in self.orders.values_mut() {
            if let Some(shipment) = order.shipments.iter_mut().find(|s| s.id == shipment_id) {
                if shipment.status == Status::Completed {
                    back.extend(shipment.units.iter().map(|(l, n)| (order.lines[*l].inventory_id, *n)));
                }
                shipment.status = Status::Cancelled;
                shipment.updated_ms = now_ms;
                shipment.tracking_updated_ms = Some(now_ms);
                break;
            }
        }
        for (inventory_id, units) in &back {
            if let Some(item) = self.item_mut(*inventory_id) {
                item.on_hand += units;
            }
        }
        !back.is_empty()
    }
}

pub(super) fn unshipped(status: Status) -> bool {
    matches!(status, Status::Processing | Status::Exception)
}

impl Tracking {
    /// A parcel of `carrier` (drawn when `None`) with a number in that carrier's form.
    pub fn draw(rng: &mut Rng, carrier: Option<Carrier>, number: Option<String>, at_ms: i64) -> Tracking {
        let carrier = carrier.unwrap_or(Carrier::ALL[rng.below(4) as usize]);
        let mut digits =
            |n: usize| (0..n).map(|_| char::from(b'0' + rng.below(10) as u8)).collect::<String>();
        let (service, drawn) = match carrier {
            Carrier::Usps => ("Ground Advantage", format!("9400{}", digits(18))),
            Carrier::Ups => ("Ground", format!("1Z{}03{}", digits(6), digits(8))),
            Carrier::FedEx => ("Home Delivery", digits(12)),
            Carrier::DhlExpress => ("Express Worldwide", digits(10)),
        };
        Tracking { carrier, service, number: number.unwrap_or(drawn), at_ms }
    }

    pub(super) fn url(&self) -> String {
        let n = &self.number;
        match self.carrier {
            Carrier::Usps => format!("https://tools.usps.com/go/TrackConfirmAction?tLabels={n}"),
            Carrier::Ups => format!("https://www.ups.com/track?tracknum={n}"),
            Carrier::FedEx => format!("https://www.fedex.com/fedextrack/?trknbr={n}"),
            Carrier::DhlExpress => format!("https://www.dhl.com/en/express/tracking.html?AWB={n}"),
        }
    }
}
