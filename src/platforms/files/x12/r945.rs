//! The 945 Warehouse Shipping Advice read (files-x12.md §6): each set reports one order's
//! packages; packages of one order with one tracking number are one shipment.

use jiff::civil::{Date, Time};
use rust_decimal::Decimal;

use super::X12Settings;
use super::problems::SetCheck;
use super::segments::{self, Read, shown as text};
use crate::platforms::warehouse::{OrderReference, ShipmentLine, Units, weight_hundredths};

/// Carriers by SCAC when `scac_names` does not name them.
const CARRIERS: [(&str, &str); 4] = [("UPSN", "UPS"), ("FDEG", "FedEx"), ("FDXE", "FedEx"), ("USPS", "USPS")];

/// One shipment a file reports: one order (by our id, W0602 without `reference_prefix`) and
/// one tracking number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shipment945 {
    pub order_id: i64,
    pub tracking_number: String,
    pub carrier_name: Option<String>,
    pub service_level: Option<String>,
    /// Ms since the epoch; `None`: the set gives no date (the time the file was read).
    pub shipped_at: Option<i64>,
    /// W0302, when the set has exactly one tracking number.
    pub weight: Option<Decimal>,
    /// SKUs and units shipped, in the order first read; `None` ships every unit left (a
    /// package without W12).
    pub items: Option<Vec<(String, i64)>>,
}

impl Shipment945 {
    /// Adds another package of the same order and tracking number.
    pub(super) fn add(&mut self, other: Shipment945) {
        self.items = match (self.items.take(), other.items) {
            (Some(mut items), Some(more)) => {
                add_items(&mut items, more);
                Some(items)
            }
            _ => None,
        };
        self.weight = self.weight.or(other.weight);
        self.shipped_at = self.shipped_at.or(other.shipped_at);
        self.carrier_name = self.carrier_name.take().or(other.carrier_name);
        self.service_level = self.service_level.take().or(other.service_level);
    }

    /// The shipment as the engine's shipment lines (CONTRACT §11): one per SKU, or one
    /// shipping every unit left; the order named as one sent to this warehouse.
    pub fn lines(&self, reference: &str) -> Vec<ShipmentLine> {
        let line = |item: Option<(String, Units)>| ShipmentLine {
            line: 0,
            order: OrderReference::SentHere(self.order_id),
            reference: reference.to_string(),
            tracking_number: self.tracking_number.clone(),
            carrier_name: self.carrier_name.clone(),
            service_level: self.service_level.clone(),
            description: None,
            shipped_at: self.shipped_at,
            weight: self.weight.and_then(weight_hundredths),
            item,
        };
        match &self.items {
            None => vec![line(None)],
            Some(items) => {
                items.iter().map(|(sku, units)| line(Some((sku.clone(), Units::Count(*units))))).collect()
            }
        }
    }
}

/// Adds `more` to `items`, SKU by SKU.
fn add_items(items: &mut Vec<(String, i64)>, more: Vec<(String, i64)>) {
    for (sku, units) in more {
        match items.iter_mut().find(|(s, _)| *s == sku) {
            Some((_, held)) => *held = held.saturating_add(units),
            None => items.push((sku, units)),
        }
    }
}

/// One LX loop.
#[derive(Debug)]
struct Package {
    /// LX01, or the loop's number when LX01 is absent.
    name: String,
    tracking: Option<String>,
    items: Vec<(String, i64)>,
    w12s: usize,
}

/// A 945 set being read.
#[derive(Debug, Default)]
pub(super) struct Set945 {
    /// W06 seen: its segment number and W0602.
    w06: Option<(usize, Option<String>)>,
    ship_date: Option<Date>,
    shipped: Option<(Date, Option<Time>)>,
    bill_of_lading: Option<String>,
    scac: Option<String>,
    routing: Option<String>,
    weight: Option<Decimal>,
    packages: Vec<Package>,
}

impl Set945 {
    pub fn segment(&mut self, settings: &X12Settings, seg: &Read<'_>, pos: usize, check: &mut SetCheck<'_>) {
        let heading = self.packages.is_empty();
        match seg.id_bytes() {
            b"W06" => {
                check.required(seg, pos, &[2]);
                if let Some(date) = seg.el(3) {
                    match segments::date(date) {
                        Some(date) => self.ship_date = Some(date),
                        None => check.element(
                            seg,
                            pos,
                            3,
                            8,
                            format!("W0603 '{}' is not a date (CCYYMMDD)", text(date)),
                        ),
                    }
                }
                self.w06 = Some((seg.n, seg.trimmed(2)));
            }
            b"G62" => {
                let date = seg.el(2).map(|d| (segments::date(d), d));
                if let Some((None, bad)) = date {
                    check.element(seg, pos, 2, 8, format!("G6202 '{}' is not a date (CCYYMMDD)", text(bad)));
                }
                let time = seg.el(4).map(|t| (segments::time(t), t));
                if let Some((None, bad)) = time {
                    check.element(
                        seg,
                        pos,
                        4,
                        9,
                        format!("G6204 '{}' is not a time (HHMM or HHMMSS)", text(bad)),
                    );
                }
                if heading
                    && seg.el_is(1, "11")
                    && let Some((Some(date), _)) = date
                {
                    self.shipped = Some((date, time.and_then(|(t, _)| t)));
                }
            }
            b"N9" if heading && seg.el_is(1, "BM") => {
                self.bill_of_lading = self.bill_of_lading.take().or_else(|| seg.trimmed(2));
            }
            b"W27" => {
                self.scac = seg.trimmed(2);
                self.routing = seg.trimmed(3);
            }
            b"W03" => self.weight = seg.el(2).and_then(segments::number),
            b"LX" => {
                let name = seg.trimmed(1).unwrap_or_else(|| (self.packages.len() + 1).to_string());
                self.packages.push(Package { name, tracking: None, items: Vec::new(), w12s: 0 });
            }
            b"MAN" => {
                check.required(seg, pos, &[1, 2]);
                if let Some(package) = self.packages.last_mut()
                    && package.tracking.is_none()
                    && seg.el_is(1, "CP")
                {
                    package.tracking = seg.trimmed(2);
                }
            }
            b"W12" => self.w12(settings, seg, pos, check),
            _ => {}
        }
    }

    /// An item of the current package.
    fn w12(&mut self, settings: &X12Settings, seg: &Read<'_>, pos: usize, check: &mut SetCheck<'_>) {
        check.required(seg, pos, &[1, 3, 5]);
        let Some(quantity) = seg.el(3) else { return };
        let Some(quantity) = segments::number(quantity) else {
            check.element(seg, pos, 3, 6, format!("W1203 '{}' is not a number", text(quantity)));
            return;
        };
        let Some(package) = self.packages.last_mut() else {
            check.business(seg, "W12 before any LX: orderbridge cannot tell its package".to_string());
            return;
        };
        let unit = seg.trimmed(5).unwrap_or_default();
        if unit != "EA" {
            check.business(seg, format!("unit {unit}: orderbridge counts eaches"));
            return;
        }
        let Some(units) = whole(quantity) else {
            check.business(seg, format!("W1203 {quantity} is not a whole number of units of 0 or more"));
            return;
        };
        let sku = [7, 17, 19, 21]
            .iter()
            .find(|i| seg.trimmed(**i).is_some_and(|q| settings.product_qualifiers.contains(&q)))
            .and_then(|i| seg.trimmed(i + 1));
        let Some(sku) = sku else {
            let qualifiers = settings.product_qualifiers.join(" or ");
            check.business(seg, format!("W12 has no {qualifiers} product id"));
            return;
        };
        // Only a W12 read whole counts: a faulty one has been reported already.
        package.w12s += 1;
        if units > 0 {
            add_items(&mut package.items, vec![(sku, units)]);
        }
    }

    /// The set's SE: its shipments, when it is whole.
    pub fn end(
        self,
        settings: &X12Settings,
        se: &Read<'_>,
        pos: usize,
        check: &mut SetCheck<'_>,
    ) -> Vec<Shipment945> {
        let Some((w06_n, reference)) = self.w06 else {
            check.missing("W06", 2, se, "the set has no W06".to_string());
            return Vec::new();
        };
        if self.packages.is_empty() {
            check.missing("LX", pos, se, "the set has no LX".to_string());
        }
        if check.has_errors() {
            return Vec::new();
        }
        let reference = reference.unwrap_or_default();
        let Some(order_id) = order_id(&reference, &settings.reference_prefix) else {
            check.business_at(
                w06_n,
                "W06",
                format!(
                    "unknown order: W0602 '{}' names no order orderbridge sent",
                    text(reference.as_bytes())
                ),
            );
            return Vec::new();
        };
        let shipped = match (self.shipped, self.ship_date) {
            (Some((date, time)), _) => Some(date.to_datetime(time.unwrap_or_default())),
            (None, Some(date)) => Some(date.to_datetime(Time::midnight())),
            (None, None) => None,
        };
        let shipped_at = shipped
            .and_then(|at| at.to_zoned_datetime(settings.time_zone.clone()).ok())
            .map(|at| at.timestamp().as_millisecond());
        let carrier_name = self.scac.as_ref().map(|scac| {
            settings.scac_names.get(scac).cloned().unwrap_or_else(|| {
                CARRIERS
                    .iter()
                    .find(|(s, _)| s == scac)
                    .map_or_else(|| scac.clone(), |(_, name)| name.to_string())
            })
        });
        let mut shipments: Vec<(Shipment945, usize)> = Vec::new();
        for package in self.packages {
            let Some(tracking) = package.tracking.or_else(|| self.bill_of_lading.clone()) else {
                check.business(se, format!("no tracking number for LX {}", package.name));
                continue;
            };
            let shipment = Shipment945 {
                order_id,
                tracking_number: tracking,
                carrier_name: carrier_name.clone(),
                service_level: self.routing.clone(),
                shipped_at,
                weight: None,
                items: (package.w12s > 0).then_some(package.items),
            };
            match shipments.iter_mut().find(|(s, _)| s.tracking_number == shipment.tracking_number) {
                Some((kept, w12s)) => {
                    *w12s += package.w12s;
                    kept.add(shipment);
                }
                None => shipments.push((shipment, package.w12s)),
            }
        }
        let one = shipments.len() == 1;
        let mut out = Vec::with_capacity(shipments.len());
        for (mut shipment, w12s) in shipments {
            if w12s > 0 && shipment.items.as_ref().is_some_and(Vec::is_empty) {
                let message = format!("no units shipped for tracking number {}", shipment.tracking_number);
                check.business(se, message);
                continue;
            }
            if one {
                shipment.weight = self.weight;
            }
            out.push(shipment);
        }
        out
    }
}

/// An order id after `prefix`: decimal, no leading zeros, from 1.
fn order_id(reference: &str, prefix: &str) -> Option<i64> {
    let id = reference.strip_prefix(prefix)?;
    let digits =
        !id.is_empty() && !id.starts_with('0') && id.len() <= 18 && id.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| id.parse().ok()).flatten()
}

/// A quantity as whole units: 0 or more, no fraction.
fn whole(quantity: Decimal) -> Option<i64> {
    use rust_decimal::prelude::ToPrimitive;
    (quantity.fract().is_zero() && !quantity.is_sign_negative()).then(|| quantity.to_i64()).flatten()
}
