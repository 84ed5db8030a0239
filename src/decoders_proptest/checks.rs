//! One check per decoder, shared with `examples/fuzz_decoders.rs`: no panic, every rejection
//! a 4xx in the contract's error body (or a non-empty explanation), and a cheap property of
//! what it accepts.

use std::io::Cursor;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Map, Value};
use time::OffsetDateTime;
use time::macros::datetime;

use crate::dates::{format_ms, parse_date_string, parse_date_string_at};
use crate::http::body::{Fields, Patch, element_fields, fields_to_object, parse_json_object};
use crate::http::error::ApiError;
use crate::money;
use crate::orders::model::NewOrder;
use crate::orders::write::OrderWriter;
use crate::platforms::files::csv::{BadLine, read_shipments, read_stock};
use crate::resources::import::{Importer, read_body, read_records};
use crate::resources::listing::{MAX_LIMIT, Params, Plan};
use crate::resources::orders::ORDERS;
use crate::resources::shipments::SHIPMENTS;
use crate::shipments::{NewShipment, ShipmentWriter};

/// Sunday 2026-11-22 10:00 UTC, as in the crate notes.
pub(crate) const NOW: OffsetDateTime = datetime!(2026-11-22 10:00:00 UTC);

/// Stored milliseconds of 0001-01-01 and 9999-12-31T23:59:59.999: the years ISO 8601
/// writes with four digits, so `format_ms` reads back.
const FIRST_MS: i64 = -62_135_596_800_000;
const LAST_MS: i64 = 253_402_300_799_999;

/// A rejection in the contract's shape: a 4xx with a code and a message.
fn check_rejection(e: &ApiError) -> Result<(), TestCaseError> {
    let status = e.status().code;
    prop_assert!((400..500).contains(&status), "status {status} for {e:?}");
    let body = serde_json::to_value(e.body()).map_err(|x| TestCaseError::fail(x.to_string()))?;
    prop_assert!(body["error"]["code"].as_str().is_some_and(|c| !c.is_empty()), "{body}");
    prop_assert!(body["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
    prop_assert!(body["error"].get("details").is_none_or(Value::is_object), "{body}");
    Ok(())
}

fn check_bad_lines(bad: &[BadLine]) -> Result<(), TestCaseError> {
    prop_assert!(!bad.is_empty(), "a refusal names at least one line");
    for b in bad {
        prop_assert!(b.line >= 1 && !b.problem.is_empty(), "{b:?}");
    }
    Ok(())
}

/// What a decoder made of one input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Accepted,
    Rejected,
}

/// A verdict, or the property the input broke.
pub(crate) type Checked = Result<Verdict, TestCaseError>;

fn verdict(accepted: bool) -> Verdict {
    if accepted { Verdict::Accepted } else { Verdict::Rejected }
}

/// The JSON body decoder: a rejection is a 400; an accepted body re-parses to the same keys
/// and its fields read without panicking.
pub(crate) fn check_json_body(text: &str) -> Checked {
    match parse_json_object(text) {
        Ok(body) => {
            let again = parse_json_object(&Value::Object(body.0.clone()).to_string())
                .map_err(|e| TestCaseError::fail(format!("re-parse of {text:?}: {e:?}")))?;
            prop_assert!(again.0.keys().eq(body.0.keys()), "{text:?}");
            check_fields(&body.0)?;
            Ok(Verdict::Accepted)
        }
        Err(e) => {
            prop_assert_eq!(e.status().code, 400, "{:?}", text);
            check_rejection(&e)?;
            Ok(Verdict::Rejected)
        }
    }
}

/// The form decoder: a rejection is a 400; an accepted form holds only strings, nulls,
/// arrays and objects, with every top-level name the base of some field's name.
pub(crate) fn check_form(fields: &[(String, String)]) -> Checked {
    match fields_to_object(fields) {
        Ok(map) => {
            fn only_text(v: &Value) -> bool {
                match v {
                    Value::Null | Value::String(_) => true,
                    Value::Array(items) => items.iter().all(only_text),
                    Value::Object(m) => m.values().all(only_text),
                    _ => false,
                }
            }
            prop_assert!(map.values().all(only_text), "{fields:?}");
            for k in map.keys() {
                prop_assert!(fields.iter().any(|(name, _)| name.split('[').next() == Some(k)), "{k}");
            }
            check_fields(&map)?;
            Ok(Verdict::Accepted)
        }
        Err(e) => {
            prop_assert_eq!(e.status().code, 400, "{:?}", fields);
            check_rejection(&e)?;
            Ok(Verdict::Rejected)
        }
    }
}

/// Every typed read of every field, and of every nested object's fields: never a panic, and
/// the collected problems are a 422.
fn check_fields(map: &Map<String, Value>) -> Result<(), TestCaseError> {
    let keys: Vec<String> = map.keys().cloned().collect();
    for reader in 0..12 {
        let mut f = Fields::new(map.clone());
        for key in &keys {
            match reader {
                0 => {
                    let _ = f.text(key);
                }
                1 => {
                    let _ = f.id(key);
                }
                2 => {
                    let _ = f.integer(key);
                }
                3 => {
                    let _ = f.boolean(key);
                }
                4 => {
                    if let Patch::Value(ms) = f.date(key) {
                        prop_assert!(!format_ms(ms).is_empty());
                    }
                }
                5 => {
                    if let Patch::Value(m) = f.object(key) {
                        let inner: Vec<String> = m.keys().cloned().collect();
                        let mut child = f.child(key, m);
                        for (i, k) in inner.iter().enumerate() {
                            if i % 2 == 0 {
                                let _ = child.text(k);
                            } else {
                                let _ = child.id(k);
                            }
                        }
                        f.absorb(child);
                    }
                }
                6 => {
                    if let Patch::Value(items) = f.array(key) {
                        for (i, item) in items.into_iter().enumerate() {
                            match element_fields(&f, key, i, item) {
                                Ok(mut child) => {
                                    let _ = child.required("qty", Fields::integer);
                                    let _ = child.id("product_id");
                                    f.absorb(child);
                                }
                                Err(problem) => f.error(&format!("{key}[{i}]"), problem),
                            }
                        }
                    }
                }
                7 => {
                    if let Patch::Value(ids) = f.ids(key) {
                        prop_assert!(ids.iter().all(|id| *id >= 1));
                    }
                }
                8 => {
                    let _ = f.required(key, Fields::text);
                }
                9 => {
                    let _ = f.not_null(key, Fields::integer);
                }
                10 => {
                    let _ = f.read(key, |v| money::parse(&v, 6));
                }
                _ => {
                    let _ = f.required(key, Fields::object);
                }
            }
        }
        if let Err(e) = f.finish() {
            let e = ApiError::from(e);
            prop_assert_eq!(e.status().code, 422);
            check_rejection(&e)?;
        }
    }
    Ok(())
}

/// dateStrings, against a fixed now and the real one: an accepted date in years 1..=9999
/// reads back from its rendering to the same millisecond.
pub(crate) fn check_date(input: &str) -> Checked {
    let at_now = parse_date_string_at(input, NOW);
    let accepted = at_now.is_ok();
    for result in [at_now, parse_date_string(input)] {
        match result {
            Ok(ms) => {
                let text = format_ms(ms);
                if (FIRST_MS..=LAST_MS).contains(&ms) {
                    let back = parse_date_string_at(&text, NOW);
                    prop_assert_eq!(back, Ok(ms), "{:?} read as {}", input, text);
                }
            }
            Err(problem) => prop_assert!(!problem.is_empty()),
        }
    }
    Ok(verdict(accepted))
}

/// Decimals: an accepted amount reads back from its rendering.
pub(crate) fn check_decimal(text: &str) -> Checked {
    let mut accepted = false;
    for digits in [6, 8] {
        if let Ok(h) = money::parse_text(text, digits) {
            accepted = true;
            prop_assert_eq!(money::parse_text(&money::format(h), digits), Ok(h), "{:?}", text);
        }
        let _ = money::parse(&Value::String(text.to_string()), digits);
    }
    Ok(verdict(accepted))
}

/// The query parser and the plans of both listings: a refusal is a 400 naming a parameter;
/// a plan has a limit in range, a whitelisted sort and a parameter per placeholder.
pub(crate) fn check_query(raw: &str, scope: Option<i64>) -> Checked {
    let p = Params::parse(raw);
    for name in ["ordered_at_min", "created_at_max", "shipped_at_min", "sort"] {
        if let Err(e) = p.date(name) {
            check_rejection(&e)?;
        }
    }
    for (name, max) in [("page", i64::MAX), ("limit", MAX_LIMIT), ("sort", 10)] {
        match p.positive(name, max) {
            Ok(Some(n)) => prop_assert!((1..=max).contains(&n)),
            Ok(None) => {}
            Err(e) => check_rejection(&e)?,
        }
    }
    let mut accepted = true;
    for resource in [&ORDERS, &SHIPMENTS] {
        match Plan::new(resource, &p, scope) {
            Ok(plan) => {
                prop_assert!((1..=MAX_LIMIT).contains(&plan.limit));
                prop_assert!(resource.sorts.contains(&plan.sort.column));
                // The SQL is built from whitelisted names only; values are bound.
                let (sql, params) = plan.count_query(Some(10_001));
                prop_assert_eq!(sql.matches('?').count(), params.len(), "{}", sql);
                let _ = plan.offset_query(9_900, plan.limit);
                let _ = plan.segments(None);
            }
            Err(e) => {
                accepted = false;
                prop_assert_eq!(e.status().code, 400, "{:?}", raw);
                check_rejection(&e)?;
            }
        }
    }
    Ok(verdict(accepted))
}

/// Validates every record that is an object, as an order and as a shipment, and as the
/// import reads each from its text; accepted when every record was JSON.
fn check_records(records: impl Iterator<Item = crate::resources::import::Record>) -> Checked {
    let mut accepted = true;
    for (line, record) in records {
        prop_assert!(line >= 1);
        let text = match record {
            Ok(text) => text,
            Err(problem) => {
                accepted = false;
                prop_assert!(!problem.is_empty());
                continue;
            }
        };
        let as_order = <OrderWriter<'_> as Importer>::parse(&text);
        let as_shipment = <ShipmentWriter<'_> as Importer>::parse(&text);
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => {
                check_order_record(map.clone())?;
                same_order(&text, &map)?;
                check_shipment_record(map)?;
            }
            Ok(_) => {
                for problems in [as_order.map(|_| ()).unwrap_err(), as_shipment.map(|_| ()).unwrap_err()] {
                    prop_assert_eq!(problems["record"].as_str(), "must be a JSON object");
                }
            }
            Err(_) => {
                accepted = false;
                for problems in [as_order.map(|_| ()).unwrap_err(), as_shipment.map(|_| ()).unwrap_err()] {
                    prop_assert!(problems["record"].starts_with("is not valid JSON"), "{problems:?}");
                }
            }
        }
    }
    Ok(verdict(accepted))
}

/// The import's reading of an order's text (into slots) and the API's (a decoded map) agree:
/// the same order, or the same problems. Natural-language dates ("midnight") are read against
/// the clock, so a pair read across a millisecond's tick is read again.
fn same_order(text: &str, map: &Map<String, Value>) -> Result<(), TestCaseError> {
    let read = || {
        let from_text = format!("{:?}", <OrderWriter<'_> as Importer>::parse(text).map(|p| p.order));
        (from_text, format!("{:?}", NewOrder::from_record(map.clone())))
    };
    let mut pair = read();
    for _ in 0..5 {
        if pair.0 == pair.1 {
            break;
        }
        pair = read();
    }
    prop_assert_eq!(pair.0, pair.1);
    if let Ok(parsed) = <OrderWriter<'_> as Importer>::parse(text) {
        // The document the import fills in is the one `render` renders, byte for byte.
        let keys: Vec<(i64, i64)> = (0..parsed.order.items.len() as i64).map(|i| (i + 10, i)).collect();
        prop_assert_eq!(parsed.document.fill(7, 8, &keys), parsed.order.render(7, 8, &keys));
    }
    Ok(())
}

/// An import record as an order: accepted, its stored document is JSON; refused, the
/// problems name fields. Read from its text as the import reads it, it is the same order.
pub(crate) fn check_order_record(map: Map<String, Value>) -> Checked {
    same_order(&Value::Object(map.clone()).to_string(), &map)?;
    match NewOrder::from_record(map) {
        Ok(order) => {
            let keys: Vec<(i64, i64)> = (0..order.items.len() as i64).map(|i| (i + 1, 0)).collect();
            let doc = order.render(1, 0, &keys);
            prop_assert!(serde_json::from_str::<Value>(&doc).is_ok(), "not JSON: {doc}");
            Ok(Verdict::Accepted)
        }
        Err(problems) => {
            prop_assert!(!problems.is_empty());
            Ok(Verdict::Rejected)
        }
    }
}

/// An import record as a shipment, as for orders.
pub(crate) fn check_shipment_record(map: Map<String, Value>) -> Checked {
    match NewShipment::from_record(map) {
        Ok(shipment) => {
            let doc = shipment.render(1, 0);
            prop_assert!(serde_json::from_str::<Value>(&doc).is_ok(), "not JSON: {doc}");
            Ok(Verdict::Accepted)
        }
        Err(problems) => {
            prop_assert!(!problems.is_empty());
            Ok(Verdict::Rejected)
        }
    }
}

/// An import body, read as the route reads it and as the CLI reads a file: a refusal is a
/// 400; both agree on whether the body is all JSON.
pub(crate) fn check_import_text(text: &str) -> Checked {
    let from_text = match read_body(Cursor::new(text.as_bytes().to_vec())) {
        Ok(records) => check_records(records)?,
        Err(e) => {
            prop_assert_eq!(e.status().code, 400, "{:?}", text);
            check_rejection(&e)?;
            Verdict::Rejected
        }
    };
    let from_reader = check_import_bytes(text.as_bytes().to_vec())?;
    prop_assert_eq!(from_text, from_reader, "{:?}", text);
    Ok(from_text)
}

/// An import file of any bytes, read as `orderbridge import` reads it.
pub(crate) fn check_import_bytes(bytes: Vec<u8>) -> Checked {
    match read_records(Cursor::new(bytes)) {
        Ok(records) => check_records(records),
        Err(problem) => {
            prop_assert!(!problem.is_empty());
            Ok(Verdict::Rejected)
        }
    }
}

/// A shipment file: rows numbered after the header, in order, within the file, whether read
/// or found bad.
pub(crate) fn check_shipments_csv(bytes: &[u8]) -> Checked {
    let lines = bytes.iter().filter(|b| **b == b'\n').count() as u64 + 1;
    match read_shipments(bytes) {
        Ok(rows) => {
            let mut last = 1;
            for row in rows {
                let line = match &row {
                    Ok(read) => read.line,
                    Err(bad) => {
                        prop_assert!(!bad.problem.is_empty(), "{row:?}");
                        bad.line
                    }
                };
                prop_assert!(line > 1 && line <= lines && line >= last, "{row:?} of {lines}");
                last = line;
            }
            Ok(Verdict::Accepted)
        }
        Err(bad) => {
            check_bad_lines(&bad)?;
            Ok(Verdict::Rejected)
        }
    }
}

/// A stock file: every row has a sku and a count of at least 0.
pub(crate) fn check_stock_csv(bytes: &[u8]) -> Checked {
    match read_stock(bytes) {
        Ok(rows) => {
            for row in rows {
                prop_assert!(!row.sku.is_empty() && row.quantity >= 0, "{row:?}");
            }
            Ok(Verdict::Accepted)
        }
        Err(bad) => {
            check_bad_lines(&bad)?;
            Ok(Verdict::Rejected)
        }
    }
}
