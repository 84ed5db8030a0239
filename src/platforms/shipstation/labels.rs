//! ShipStation's labels as orderbridge's shipment lines (annex §5.5): a label `completed`, not
//! voided and not a return is one shipment of every unit of its order not yet shipped, keyed by
//! its tracking number; its carrier named as the annex's table says, its ship date at midnight
//! UTC, its packages' weights summed in the adapter's unit. A label still `processing` holds the
//! cursor back, so the next pull reads it again.

use rust_decimal::Decimal;
use rust_decimal::prelude::FromPrimitive;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::orders::Shaping;
use super::wire::Label;
use crate::platforms::warehouse::{OrderReference, ShipmentLine, weight_hundredths};

/// The carrier name of a `carrier_code` (annex §5.5); another code is kept as it is.
pub fn carrier_name(code: &str) -> &str {
    match code {
        "usps" | "stamps_com" | "endicia" => "USPS",
        "ups" | "ups_walleted" => "UPS",
        "fedex" | "fedex_uk" | "fedex_walleted" => "FedEx",
        "dhl_express"
        | "dhl_express_worldwide"
        | "dhl_express_uk"
        | "dhl_express_canada"
        | "dhl_express_australia" => "DHL Express",
        "dhl_global_mail" | "dhl_ecommerce" => "DHL eCommerce",
        "ontrac" => "OnTrac",
        "dpd" => "DPD",
        "canada_post" => "Canada Post",
        "royal_mail" => "Royal Mail",
        "australia_post" => "Australia Post",
        other => other,
    }
}

/// Grams in one unit of the file's `weight_unit`.
fn grams(unit: &str) -> Option<Decimal> {
    match unit {
        "pound" => Decimal::from_str_exact("453.59237").ok(),
        "ounce" => Decimal::from_str_exact("28.349523125").ok(),
        "gram" => Some(Decimal::ONE),
        "kilogram" => Some(Decimal::from(1000)),
        _ => None,
    }
}

/// What one page of labels gives: its lines, the latest `created_at` read, and the earliest
/// `created_at` of a label not yet done (the cursor stays at or before it).
#[derive(Debug, Default)]
pub struct Page {
    pub rows: Vec<ShipmentLine>,
    pub latest: Option<i64>,
    pub held: Option<i64>,
    /// The last label's `created_at`, for the next page's start.
    pub last: Option<i64>,
}

/// The lines of one page of `list_labels`, or why a label of ours cannot be read. A label
/// whose reference is not ours that cannot be read (its times, its weights) is still a line,
/// of no order, without what could not be read: the pull names it and skips it.
pub fn page(labels: &[Label], shaping: &Shaping) -> Result<Page, String> {
    let mut page = Page::default();
    for label in labels {
        let id = label.label_id.as_deref().unwrap_or("?");
        let reference = label.external_shipment_id.clone().unwrap_or_default();
        let ours = shaping.references.order_of(&reference);
        // Ours is read or fails the page; another's is kept only as far as it can be read.
        let read = |value: Result<Option<i64>, String>| match value {
            Err(why) if ours.is_some() => Err(why),
            Err(_) => Ok(None),
            Ok(v) => Ok(v),
        };
        let created = read(
            label
                .created_at
                .as_deref()
                .and_then(time_ms)
                .map(Some)
                .ok_or_else(|| format!("label {id} has created_at {:?}, not a time", label.created_at)),
        )?;
        if let Some(created) = created {
            page.last = Some(created);
        }
        match label.status.as_deref() {
            Some("processing") => {
                if let Some(created) = created {
                    page.held = Some(page.held.map_or(created, |h| h.min(created)));
                }
                continue;
            }
            Some("completed") => page.latest = page.latest.max(created),
            _ => {
                page.latest = page.latest.max(created);
                continue;
            }
        }
        let number = label.tracking_number.as_deref().map(str::trim).unwrap_or_default();
        if label.voided == Some(true) || label.is_return_label == Some(true) || number.is_empty() {
            continue;
        }
        let shipment = label.shipment_id.clone().unwrap_or_default();
        let shipped_at = match label.ship_date.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
            Some(date) => read(
                date_ms(date)
                    .map(Some)
                    .ok_or_else(|| format!("label {id} has ship_date {date:?}, not a date")),
            )?,
            None => created,
        };
        let weight = match weight(label, &shaping.weight_unit) {
            Ok(weight) => weight,
            Err(why) if ours.is_some() => return Err(format!("label {id} {why}")),
            Err(_) => None,
        };
        let text = |v: &Option<String>| v.as_deref().map(str::trim).unwrap_or_default().to_string();
        let order = match ours {
            // A label of no shipment id cannot be matched to an order sent here under one: it
            // is a stranger even under our reference.
            Some(order_id) if !shipment.is_empty() => {
                OrderReference::Warehouse { warehouse_order_id: shipment.clone(), order_id }
            }
            _ => OrderReference::Stranger,
        };
        let present = |v: String| Some(v).filter(|v| !v.is_empty());
        page.rows.push(ShipmentLine {
            line: 0,
            order,
            reference: format!("ShipStation shipment {shipment} (external_shipment_id {reference:?})"),
            tracking_number: number.to_string(),
            carrier_name: present(carrier_name(&text(&label.carrier_code)).to_string()),
            service_level: present(text(&label.service_code)),
            description: None,
            shipped_at,
            weight,
            item: None,
        });
    }
    Ok(page)
}

/// The sum of the packages' weights in hundredths of `unit`, rounded half-even; `None` when no
/// package has one; an error when the weights are beyond any shipment's weight (checked:
/// ShipStation's values are not ours to trust).
fn weight(label: &Label, unit: &str) -> Result<Option<i64>, String> {
    let Some(to) = grams(unit) else { return Ok(None) };
    let mut sum: Option<Decimal> = None;
    for package in label.packages.as_deref().unwrap_or_default() {
        let Some(w) = &package.weight else { continue };
        let (Some(value), Some(from)) = (w.value, w.unit.as_deref().and_then(grams)) else {
            continue;
        };
        let beyond = || {
            format!("has a package weight of {value} {}, beyond any weight", w.unit.as_deref().unwrap_or(""))
        };
        let grams = Decimal::from_f64(value).and_then(|v| v.checked_mul(from)).ok_or_else(beyond)?;
        sum = Some(sum.unwrap_or_default().checked_add(grams).ok_or_else(beyond)?);
    }
    let Some(sum) = sum else { return Ok(None) };
    let converted = sum.checked_div(to).ok_or_else(|| "has package weights beyond any weight".to_string())?;
    weight_hundredths(converted)
        .map(Some)
        .ok_or_else(|| format!("has package weights of {converted} {unit} in all, no shipment's weight"))
}

/// A time as ShipStation writes it (RFC 3339), in ms.
pub fn time_ms(text: &str) -> Option<i64> {
    let parsed = OffsetDateTime::parse(text.trim(), &Rfc3339).ok()?;
    i64::try_from(parsed.unix_timestamp_nanos() / 1_000_000).ok()
}

/// The date of a `ship_date` (a date-time, or a date alone) at 00:00:00.000 UTC, in ms.
fn date_ms(text: &str) -> Option<i64> {
    let date = text.get(..10)?;
    time_ms(&format!("{date}T00:00:00Z"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dates::format_ms;

    fn labels(json: &str) -> Vec<Label> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_annexs_label_is_its_shipment() {
        let page = page(
            &labels(
                r#"[{"label_id": "se-9001", "status": "completed", "shipment_id": "se-4417",
                 "external_shipment_id": "ob-4312", "ship_date": "2026-03-05T00:00:00Z",
                 "created_at": "2026-03-05T14:07:09.120Z", "tracking_number": "9400111899560000000001",
                 "is_return_label": false, "carrier_id": "se-1001", "carrier_code": "stamps_com",
                 "service_code": "usps_priority_mail", "voided": false, "voided_at": null,
                 "packages": [{"package_id": 1, "weight": {"value": 24, "unit": "ounce"},
                               "tracking_number": "9400111899560000000001"}]}]"#,
            ),
            &Shaping { weight_unit: "pound".into(), ..Shaping::default() },
        )
        .unwrap();
        let row = &page.rows[0];
        assert_eq!(
            (
                &row.order,
                row.tracking_number.as_str(),
                row.carrier_name.as_deref(),
                row.service_level.as_deref()
            ),
            (
                &OrderReference::Warehouse { warehouse_order_id: "se-4417".into(), order_id: 4312 },
                "9400111899560000000001",
                Some("USPS"),
                Some("usps_priority_mail")
            )
        );
        assert_eq!(
            (row.shipped_at.map(format_ms).as_deref(), row.weight),
            (Some("2026-03-05T00:00:00.000Z"), Some(150))
        );
        assert_eq!(row.item, None);
        assert_eq!(page.latest.map(format_ms).as_deref(), Some("2026-03-05T14:07:09.120Z"));
        assert_eq!(page.held, None);
    }

    #[test]
    fn voided_returns_processing_and_foreign_labels_are_not_our_shipments() {
        let page = page(
            &labels(
                r#"[{"label_id": "a", "status": "completed", "voided": true, "shipment_id": "se-1", "external_shipment_id": "ob-1",
                     "created_at": "2026-03-05T10:00:00Z", "tracking_number": "V1"},
                    {"label_id": "b", "status": "completed", "is_return_label": true, "shipment_id": "se-2", "external_shipment_id": "ob-2",
                     "created_at": "2026-03-05T10:01:00Z", "tracking_number": "R1"},
                    {"label_id": "c", "status": "processing", "shipment_id": "se-3", "external_shipment_id": "ob-3",
                     "created_at": "2026-03-05T10:02:00Z"},
                    {"label_id": "d", "status": "completed", "shipment_id": "se-4", "external_shipment_id": "SHOP-77",
                     "created_at": "2026-03-05T10:03:00Z", "tracking_number": "F1", "carrier_code": "canada_post",
                     "ship_date": "2026-03-05"},
                    {"label_id": "e", "status": "voided", "shipment_id": "se-5", "created_at": "2026-03-05T10:04:00Z"}]"#,
            ),
            &Shaping { weight_unit: "gram".into(), ..Shaping::default() },
        )
        .unwrap();
        assert_eq!(page.rows.len(), 1);
        let foreign = &page.rows[0];
        assert_eq!(
            (&foreign.order, foreign.carrier_name.as_deref(), foreign.weight),
            (&OrderReference::Stranger, Some("Canada Post"), None)
        );
        assert_eq!(foreign.shipped_at.map(format_ms).as_deref(), Some("2026-03-05T00:00:00.000Z"));
        assert_eq!(page.held.map(format_ms).as_deref(), Some("2026-03-05T10:02:00.000Z"));
        assert_eq!(page.last.map(format_ms).as_deref(), Some("2026-03-05T10:04:00.000Z"));
    }

    #[test]
    fn weights_convert_between_units_half_even() {
        let label = |packages: &str| labels(&format!(r#"[{{"packages": {packages}}}]"#)).remove(0);
        let two = label(
            r#"[{"weight": {"value": 1, "unit": "kilogram"}}, {"weight": {"value": 8, "unit": "ounce"}}]"#,
        );
        assert_eq!(weight(&two, "pound"), Ok(Some(270)));
        assert_eq!(weight(&two, "gram"), Ok(Some(122_680)));
        assert_eq!(weight(&label(r#"[{"weight": {"value": 0.125, "unit": "gram"}}]"#), "gram"), Ok(Some(12)));
        assert_eq!(weight(&label("[{}]"), "pound"), Ok(None));
    }

    #[test]
    fn a_foreign_label_of_absurd_weight_or_dates_is_a_stranger_and_ours_names_the_label() {
        let shaping = Shaping { weight_unit: "gram".into(), ..Shaping::default() };
        let label = |reference: &str, members: &str| {
            labels(&format!(
                r#"[{{"label_id": "se-7", "status": "completed", "shipment_id": "se-8",
                     "external_shipment_id": "{reference}", "created_at": "2026-03-05T10:00:00Z",
                     "tracking_number": "T7", {members}}}]"#
            ))
        };
        let heavy = r#""packages": [{"weight": {"value": 1e28, "unit": "pound"}}]"#;
        let heavier = r#""packages": [{"weight": {"value": 7e28, "unit": "gram"}},
                                      {"weight": {"value": 7e28, "unit": "gram"}}]"#;
        let someday = r#""ship_date": "somedayT00:00:00Z""#;
        for members in [heavy, heavier, someday] {
            let read = page(&label("SHOP-77", members), &shaping).unwrap();
            assert_eq!(read.rows.len(), 1, "{members}");
            let row = &read.rows[0];
            assert_eq!(
                (&row.order, row.tracking_number.as_str()),
                (&OrderReference::Stranger, "T7"),
                "{members}"
            );
            assert!(row.reference.contains("se-8"), "{members}: {row:?}");
            let why = page(&label("ob-12", members), &shaping).unwrap_err();
            assert!(why.contains("se-7"), "{members}: {why}");
        }
        let undated = r#""ship_date": null, "created_at": "yesterday""#;
        let undated = labels(&format!(
            r#"[{{"label_id": "se-9", "status": "completed", "external_shipment_id": "SHOP-78",
                 "tracking_number": "T9", {undated}}}]"#
        ));
        let read = page(&undated, &shaping).unwrap();
        assert_eq!((read.rows.len(), read.last, read.latest), (1, None, None));
        assert_eq!(read.rows[0].order, OrderReference::Stranger);
    }

    #[test]
    fn an_unreadable_time_names_the_label() {
        let bad = labels(
            r#"[{"label_id": "se-9", "status": "completed", "external_shipment_id": "ob-3", "created_at": "yesterday"}]"#,
        );
        assert!(page(&bad, &Shaping::default()).unwrap_err().contains("se-9"));
    }
}
