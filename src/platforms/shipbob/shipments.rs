//! ShipBob's shipments as orderbridge's shipment lines (annex §7): each element of an order's
//! `shipments` with a tracking number and not `Cancelled` is one shipment; its products are
//! its lines, with their units where ShipBob says them plainly, or every unit left of the SKU
//! where it does not (none, or several inventory items: a bundle ShipBob assembles).

use rust_decimal::Decimal;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::orders::Shaping;
use super::wire::Order;
use crate::platforms::warehouse::{OrderReference, ShipmentLine, Units, weight_hundredths};

/// The lines of one page of Get Orders, and the latest tracking update among its shipments
/// (ms), or why a record cannot be read.
pub fn lines(orders: &[Order], shaping: &Shaping) -> Result<(Vec<ShipmentLine>, Option<i64>), String> {
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
            // Ounces, in the adapter's pounds.
            let weight = match shipment.measurements.as_ref().and_then(|m| m.total_weight_oz) {
                Some(oz) if oz > 0 => match weight_hundredths(Decimal::from(oz) / Decimal::from(16)) {
                    Some(hundredths) => Some(hundredths),
                    None if ours.is_none() => None,
                    None => {
                        return Err(format!("{named}: shipment {number} weighs {oz} oz, beyond any weight"));
                    }
                },
                _ => None,
            };
            let text = |v: Option<&str>| v.map(str::trim).filter(|t| !t.is_empty()).map(str::to_string);
            let service = text(tracking.and_then(|t| t.carrier_service.as_deref()))
                .or_else(|| text(shipment.ship_option.as_deref()));
            let order_ref = match ours {
                Some(order_id) => {
                    OrderReference::Warehouse { warehouse_order_id: order.id.to_string(), order_id }
                }
                None => OrderReference::Stranger,
            };
            let base = ShipmentLine {
                line: 0,
                order: order_ref,
                reference: named.clone(),
                tracking_number: number.to_string(),
                carrier_name: text(tracking.and_then(|t| t.carrier.as_deref())),
                service_level: service,
                description: text(shipment.ship_option.as_deref()),
                shipped_at: shipped,
                weight,
                item: None,
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
                let units = match items {
                    [one] => match one.quantity {
                        Some(q) if q >= 1 => Units::Count(i64::from(q)),
                        // A product of no units in this shipment ships nothing of it.
                        _ => continue,
                    },
                    _ => Units::AllLeft,
                };
                if sku.is_empty() {
                    return Err(format!("{named}: shipment {number} has a product without a SKU"));
                }
                rows.push(ShipmentLine { item: Some((sku.to_string(), units)), ..base.clone() });
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
    use crate::dates::format_ms;

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
        let ours = OrderReference::Warehouse { warehouse_order_id: "200417".into(), order_id: 5 };
        assert_eq!(
            (&rows[0].order, rows[0].tracking_number.as_str(), rows[0].carrier_name.as_deref()),
            (&ours, "9400111899560000000011", Some("USPS"))
        );
        assert_eq!((rows[0].service_level.as_deref(), rows[0].weight), (Some("Ground Advantage"), Some(125)));
        assert_eq!(rows[0].item, Some(("MUG-BLUE".to_string(), Units::Count(2))));
        assert_eq!(rows[0].shipped_at.map(format_ms).as_deref(), Some("2026-11-28T09:30:00.000Z"));
        assert_eq!(rows[0].description.as_deref(), Some("Standard"));
        assert_eq!((&rows[1].item, rows[1].weight), (&Some(("TEA-GRN".to_string(), Units::AllLeft)), None));
        assert_eq!((&rows[2].order, rows[2].tracking_number.as_str()), (&OrderReference::Stranger, "X1"));
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
            assert_eq!((&rows[0].order, rows[0].tracking_number.as_str()), (&OrderReference::Stranger, "T1"));
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
