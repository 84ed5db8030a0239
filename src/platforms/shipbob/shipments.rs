//! ShipBob's shipments as orderbridge's shipment lines (annex §7): each element of an order's
//! `shipments` with a tracking number and not `Cancelled` is one shipment; its products are
//! its lines, with their units where ShipBob says them plainly, or every unit left of the SKU
//! where it does not (none, or several inventory items: a bundle ShipBob assembles).

use rust_decimal::{Decimal, RoundingStrategy};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::orders::Shaping;
use super::wire::Order;
use crate::dates::format_ms;
use crate::platforms::warehouse::{ALL_LEFT, ShipmentRow};

/// The lines of one page of Get Orders, and the latest tracking update among its shipments
/// (ms), or why a record cannot be read.
pub fn lines(orders: &[Order], shaping: &Shaping) -> Result<(Vec<ShipmentRow>, Option<i64>), String> {
    let mut rows = Vec::new();
    let mut latest: Option<i64> = None;
    for order in orders {
        let reference = order.reference_id.clone().unwrap_or_default();
        let ours = shaping.references.order_of(&reference);
        let named = format!("ShipBob order {} (reference {reference:?})", order.id);
        for shipment in order.shipments.as_deref().unwrap_or_default() {
            let tracking = shipment.tracking.as_ref();
            let Some(number) = tracking.and_then(|t| t.tracking_number.as_deref()).map(str::trim) else {
                continue;
            };
            if number.is_empty() || shipment.status.as_deref() == Some("Cancelled") {
                continue;
            }
            // Ours is read or fails the page; another's is kept only as far as it can be read
            // (the pull names it and skips it).
            let when = |text: &Option<String>, what: &str| -> Result<Option<i64>, String> {
                let Some(t) = text.as_deref().filter(|t| !t.trim().is_empty()) else { return Ok(None) };
                match time_ms(t) {
                    Some(ms) => Ok(Some(ms)),
                    None if ours.is_none() => Ok(None),
                    None => Err(format!("{named}: shipment {number} has {what} {t:?}, not a time")),
                }
            };
            let updated = when(&shipment.last_tracking_update_at, "last_tracking_update_at")?;
            latest = latest.max(updated);
            let shipped = when(&tracking.and_then(|t| t.shipping_date.clone()), "shipping_date")?
                .or(when(&shipment.actual_fulfillment_date, "actual_fulfillment_date")?)
                .or(updated);
            let weight = shipment
                .measurements
                .as_ref()
                .and_then(|m| m.total_weight_oz)
                .filter(|oz| *oz > 0)
                .and_then(|oz| Decimal::from(oz).checked_div(Decimal::from(16)))
                .map(|pounds| {
                    format!("{:.2}", pounds.round_dp_with_strategy(2, RoundingStrategy::MidpointNearestEven))
                });
            let text = |v: Option<&str>| v.map(str::trim).unwrap_or_default().to_string();
            let service = match text(tracking.and_then(|t| t.carrier_service.as_deref())) {
                none if none.is_empty() => text(shipment.ship_option.as_deref()),
                given => given,
            };
            let base = ShipmentRow {
                line: 0,
                order_id: ours.map(|id| id.to_string()).unwrap_or_default(),
                tracking_number: number.to_string(),
                carrier_name: text(tracking.and_then(|t| t.carrier.as_deref())),
                service_level: service,
                shipped_at: shipped.map(format_ms).unwrap_or_default(),
                weight: weight.unwrap_or_default(),
                warehouse_order_id: order.id.to_string(),
                description: text(shipment.ship_option.as_deref()),
                reference: named.clone(),
                ..ShipmentRow::default()
            };
            let products = shipment.products.as_deref().unwrap_or_default();
            if products.is_empty() || ours.is_none() {
                rows.push(base);
                continue;
            }
            for product in products {
                let sku = product
                    .reference_id
                    .as_deref()
                    .or(product.sku.as_deref())
                    .map(str::trim)
                    .unwrap_or_default();
                let items = product.inventory_items.as_deref().unwrap_or_default();
                let quantity = match items {
                    [one] => match one.quantity {
                        Some(q) if q >= 1 => q.to_string(),
                        // A product of no units in this shipment ships nothing of it.
                        _ => continue,
                    },
                    _ => ALL_LEFT.to_string(),
                };
                if sku.is_empty() {
                    return Err(format!("{named}: shipment {number} has a product without a SKU"));
                }
                rows.push(ShipmentRow { sku: sku.to_string(), quantity, ..base.clone() });
            }
        }
    }
    Ok((rows, latest))
}

/// A time as ShipBob writes it (RFC 3339 with any fraction; without an offset, UTC), in ms.
pub fn time_ms(text: &str) -> Option<i64> {
    let text = text.trim();
    let parsed = OffsetDateTime::parse(text, &Rfc3339)
        .or_else(|_| OffsetDateTime::parse(&format!("{text}Z"), &Rfc3339))
        .ok()?;
    i64::try_from(parsed.unix_timestamp_nanos() / 1_000_000).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_annexs_walk_is_two_shipments_with_their_units_weight_and_times() {
        let page = r#"[{"id": 200417, "reference_id": "ob-5", "status": "Fulfilled",
          "shipments": [
           {"id": 900123, "status": "Completed", "actual_fulfillment_date": "2026-11-28T09:29:50+00:00",
            "last_tracking_update_at": "2026-11-28T09:30:11.1200000+00:00", "ship_option": "Standard",
            "measurements": {"total_weight_oz": 20},
            "tracking": {"carrier": "USPS", "carrier_service": "Ground Advantage", "tracking_number": "9400111899560000000011",
                         "shipping_date": "2026-11-28T09:30:00+00:00"},
            "products": [{"id": 7700001, "reference_id": "MUG-BLUE", "sku": "MUG-BLUE",
                          "inventory_items": [{"id": 5501, "quantity": 2}]}]},
           {"id": 900124, "status": "Completed", "last_tracking_update_at": "2026-11-28T09:41:03",
            "ship_option": "Standard",
            "tracking": {"carrier": "UPS", "carrier_service": "Ground", "tracking_number": "1Z999AA10123456784",
                         "shipping_date": "2026-11-28T09:41:00Z"},
            "products": [{"reference_id": "TEA-GRN", "inventory_items": [{"quantity": 1}, {"quantity": 1}]}]},
           {"id": 900125, "status": "Cancelled", "tracking": {"tracking_number": "VOID"}},
           {"id": 900126, "status": "Processing"}]},
          {"id": 300, "reference_id": "SHOPIFY-77", "shipments": [{"status": "Completed", "tracking": {"tracking_number": "X1"}}]}]"#;
        let orders: Vec<Order> = serde_json::from_str(page).unwrap();
        let (rows, latest) = lines(&orders, &Shaping::default()).unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(
            (rows[0].order_id.as_str(), rows[0].tracking_number.as_str(), rows[0].carrier_name.as_str()),
            ("5", "9400111899560000000011", "USPS")
        );
        assert_eq!((rows[0].service_level.as_str(), rows[0].weight.as_str()), ("Ground Advantage", "1.25"));
        assert_eq!((rows[0].sku.as_str(), rows[0].quantity.as_str()), ("MUG-BLUE", "2"));
        assert_eq!(rows[0].shipped_at, "2026-11-28T09:30:00.000Z");
        assert_eq!(
            (rows[0].warehouse_order_id.as_str(), rows[0].description.as_str()),
            ("200417", "Standard")
        );
        assert_eq!(
            (rows[1].sku.as_str(), rows[1].quantity.as_str(), rows[1].weight.as_str()),
            ("TEA-GRN", ALL_LEFT, "")
        );
        assert_eq!((rows[2].order_id.as_str(), rows[2].tracking_number.as_str()), ("", "X1"));
        assert_eq!(latest.map(format_ms).as_deref(), Some("2026-11-28T09:41:03.000Z"));
    }

    #[test]
    fn a_foreign_shipment_with_unreadable_times_or_no_sku_is_a_stranger_not_a_halt() {
        let page = |reference: &str, shipment: &str| {
            let orders: Vec<Order> = serde_json::from_str(&format!(
                r#"[{{"id": 7, "reference_id": "{reference}", "shipments": [{shipment}]}}]"#
            ))
            .unwrap();
            lines(&orders, &Shaping::default())
        };
        for shipment in [
            r#"{"status": "Completed", "last_tracking_update_at": "yesterday", "tracking": {"tracking_number": "T1"}}"#,
            r#"{"status": "Completed", "tracking": {"tracking_number": "T1", "shipping_date": "somedayT00:00:00Z"}}"#,
            r#"{"status": "Completed", "tracking": {"tracking_number": "T1"}, "products": [{"inventory_items": [{"quantity": 1}]}]}"#,
        ] {
            let (rows, latest) = page("SHOPIFY-77", shipment).unwrap();
            assert_eq!(rows.len(), 1, "{shipment}");
            assert_eq!((rows[0].order_id.as_str(), rows[0].tracking_number.as_str()), ("", "T1"));
            assert!(rows[0].reference.contains("ShipBob order 7"), "{shipment}");
            assert_eq!(latest, None);
            let why = page("ob-3", shipment).unwrap_err();
            assert!(why.contains("ShipBob order 7") && why.contains("T1"), "{why}");
        }
    }

    #[test]
    fn an_unreadable_time_names_the_order_and_shipment() {
        let page = r#"[{"id": 1, "reference_id": "ob-1", "shipments": [{"status": "Completed",
            "last_tracking_update_at": "yesterday", "tracking": {"tracking_number": "T1"}}]}]"#;
        let orders: Vec<Order> = serde_json::from_str(page).unwrap();
        let why = lines(&orders, &Shaping::default()).unwrap_err();
        assert!(why.contains("ShipBob order 1") && why.contains("T1") && why.contains("yesterday"), "{why}");
    }
}
