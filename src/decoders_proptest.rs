//! Property tests that no decoder panics (issue 12): the body decoders (JSON object, form
//! fields with bracket names, typed `Fields` reads), dateStrings, decimals, the listing query
//! and its plan, the import records and their validation, and the warehouse CSV readers.
//! Each is fed arbitrary text or bytes and, to get deep into it, input built from its own
//! vocabulary. Every rejection must be a 4xx in the contract's error body (or, for decoders
//! that answer with a `String` or bad lines, a non-empty explanation).
//!
//! The case counts are small so `cargo test` stays fast; `examples/fuzz_decoders.rs` runs the
//! same decoders over a million cases each.

use std::io::Cursor;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseError;
use serde_json::{Map, Number, Value};
use time::OffsetDateTime;
use time::macros::datetime;

use crate::body::{Fields, Patch, element_fields, fields_to_object, parse_json_object};
use crate::dates::{format_ms, parse_date_string, parse_date_string_at};
use crate::error::ApiError;
use crate::import::{parse_records, read_records};
use crate::listing::{MAX_LIMIT, Params, Plan};
use crate::money;
use crate::orders::ORDERS;
use crate::orders::fields::{ITEM_FIELDS, Kind, ORDER_FIELDS};
use crate::orders::model::NewOrder;
use crate::shipments::{NewShipment, SHIPMENTS, STATES};
use crate::sync::csv::{BadLine, read_shipments, read_stock};

/// Sunday 2026-11-22 10:00 UTC, as in the crate notes.
const NOW: OffsetDateTime = datetime!(2026-11-22 10:00:00 UTC);

/// Stored milliseconds of 0001-01-01 and 9999-12-31T23:59:59.999: the years ISO 8601
/// writes with four digits, so `format_ms` reads back.
const FIRST_MS: i64 = -62_135_596_800_000;
const LAST_MS: i64 = 253_402_300_799_999;

fn config(cases: u32) -> ProptestConfig {
    // No regression files in the source tree: a failure prints its minimal input, which
    // then belongs in a plain test beside the decoder.
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

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

// ---------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------

/// Any text, weighted towards short ASCII with the characters decoders care about.
pub(crate) fn text() -> BoxedStrategy<String> {
    prop_oneof![any::<String>(), "[ -~]{0,24}", r#"[\[\]{}",:=&%+\\0-9a-zA-Z \-.\r\n\t]{0,24}"#].boxed()
}

#[rustfmt::skip]
const JSON_TOKENS: &[&str] = &[
    "{", "}", "[", "]", ":", ",", " ", "\n", "\"a\"", "\"name\"", "\"\"", "\"\\u00e9\"", "\"\\ud800\"",
    "\"\\\"", "\"\\x\"", "0", "-0", "1", "-1", "1.5", "1e400", "-1e-400", "1e", "01", ".5",
    "18446744073709551616", "-9223372036854775809", "true", "false", "null", "nul", "tru", "\u{0}",
    "\u{feff}", "\"é\"", "//", "/*", "NaN", "Infinity",
];

/// Text built from JSON's own tokens: mostly almost-JSON.
pub(crate) fn json_like() -> BoxedStrategy<String> {
    vec(select(JSON_TOKENS), 0..40).prop_map(|t| t.concat()).boxed()
}

/// Names the API's bodies use, and a few that no body uses.
#[rustfmt::skip]
const KEYS: &[&str] = &[
    "name", "company_name", "customer_id", "store_id", "warehouse_id", "platform", "adapter", "enabled_at",
    "sku", "master_id", "bundle", "product_id", "qty", "product_ids", "ids", "locations", "customer",
    "store", "warehouse", "connection_type", "description", "url", "access_token", "store_hash",
    "connection_string", "0", "1", "", "x y", "é",
];

pub(crate) fn key() -> BoxedStrategy<String> {
    prop_oneof![4 => select(KEYS).prop_map(String::from), 1 => text()].boxed()
}

/// A dateString: ISO 8601 with numbers in and out of range, or a phrase.
pub(crate) fn date_string() -> BoxedStrategy<String> {
    prop_oneof![iso_date(), date_phrase(), text()].boxed()
}

const ZONES: &[&str] = &[
    "", "Z", "z", "+00:00", "+02:00", "-0500", "+01", "-23:59", "+24:00", "+99:99", "+2", "+", "-", "+0a:00",
];

pub(crate) fn iso_date() -> BoxedStrategy<String> {
    let year = prop_oneof![1900i64..2100, -20i64..12000, any::<i64>()];
    let time = prop::option::of((
        select(&["T", "t", " ", "  ", "TT"][..]),
        0u32..27,
        0u32..63,
        prop::option::of(0u32..63),
        prop::option::of("[0-9]{0,12}"),
        select(ZONES),
    ));
    (year, 0u32..14, 0u32..34, time)
        .prop_map(|(y, m, d, time)| {
            let mut s = format!("{y:04}-{m:02}-{d:02}");
            if let Some((sep, h, mi, sec, frac, zone)) = time {
                s.push_str(&format!("{sep}{h:02}:{mi:02}"));
                if let Some(sec) = sec {
                    s.push_str(&format!(":{sec:02}"));
                    if let Some(frac) = frac {
                        s.push('.');
                        s.push_str(&frac);
                    }
                }
                s.push_str(zone);
            }
            s
        })
        .boxed()
}

#[rustfmt::skip]
const DATE_WORDS: &[&str] = &[
    "now", "today", "yesterday", "tomorrow", "ago", "day", "days", "week", "weeks", "month", "months",
    "year", "years", "hour", "hours", "minute", "minutes", "second", "seconds", "last", "next", "this",
    "monday", "friday", "sunday", "March", "Jan", "january", "Dec", "Feb", "at", "am", "pm", "noon",
    "midnight", "in", "and", "+", "-", ",", ":", "T", "Z", "UTC", "the", "of", "PM", "AM", "Noon",
    "YESTERDAY", "abcdefghijklmnopq", "29", "31", "5th",
];

pub(crate) fn date_phrase() -> BoxedStrategy<String> {
    let word = prop_oneof![
        6 => select(DATE_WORDS).prop_map(String::from),
        2 => (0u32..100).prop_map(|n| n.to_string()),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        1 => (0u32..30, 0u32..70).prop_map(|(h, m)| format!("{h}:{m:02}")),
        1 => (0u32..12000).prop_map(|y| y.to_string()),
    ];
    vec(word, 1..7).prop_map(|w| w.join(" ")).boxed()
}

/// Decimal text, mostly the shapes `money` reads.
pub(crate) fn decimal_text() -> BoxedStrategy<String> {
    prop_oneof![
        r"[+-]?[0-9]{0,12}(\.[0-9]{0,4})?",
        r"[ +\-.0-9eE]{0,12}",
        any::<f64>().prop_map(|f| f.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        text(),
    ]
    .boxed()
}

pub(crate) fn number() -> BoxedStrategy<Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-3i64..20).prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        (-1_000_000i64..1_000_000).prop_map(|h| Value::from(h as f64 / 100.0)),
    ]
    .boxed()
}

pub(crate) fn scalar() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        text().prop_map(Value::String),
        date_string().prop_map(Value::String),
        decimal_text().prop_map(Value::String),
        select(&["1", "0", "true", "false", "-1", "07", "US", "usd", "new", "archived", ""][..])
            .prop_map(|s| Value::String(s.to_string())),
    ]
    .boxed()
}

/// Any JSON value a few levels deep.
pub(crate) fn json_value() -> BoxedStrategy<Value> {
    scalar()
        .prop_recursive(3, 24, 5, |inner| {
            prop_oneof![
                vec(inner.clone(), 0..5).prop_map(Value::Array),
                vec((key(), inner), 0..5).prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
        .boxed()
}

pub(crate) fn json_object() -> BoxedStrategy<Map<String, Value>> {
    vec((key(), json_value()), 0..8).prop_map(|kv| kv.into_iter().collect()).boxed()
}

/// A form field name in (and around) bracket notation.
pub(crate) fn form_name() -> BoxedStrategy<String> {
    let base = prop_oneof![4 => select(KEYS).prop_map(String::from), 1 => text()];
    let segment = prop_oneof![
        3 => select(&["[]", "[0]", "[1]", "[2]", "[qty]", "[product_id]", "[x]", "[access_token]"][..])
            .prop_map(String::from),
        1 => select(&["[", "]", "[[", "]]", "[a]b", "[]]", "[[]", "][", "[ ]", "[é]"][..]).prop_map(String::from),
        1 => text().prop_map(|t| format!("[{t}]")),
        1 => text(),
    ];
    (base, vec(segment, 0..5)).prop_map(|(base, segments)| base + &segments.concat()).boxed()
}

pub(crate) fn form_fields() -> BoxedStrategy<Vec<(String, String)>> {
    let value = prop_oneof![Just(String::new()), text(), date_string(), decimal_text()];
    vec((form_name(), value), 0..12).boxed()
}

/// The parameter names the listings read, and some they don't.
#[rustfmt::skip]
const PARAMS: &[&str] = &[
    "sort", "limit", "page", "session_id", "ordered_at_min", "ordered_at_max", "created_at_min",
    "created_at_max", "shipped_at_min", "shipped_at_max", "store_id", "warehouse_id", "customer_id",
    "external_id", "external_display_id", "state", "tracking_number", "unknown", "", "sort[]", "li%6dit",
    "page%00", "%",
];

pub(crate) fn sort_value() -> BoxedStrategy<String> {
    let names: Vec<&'static str> = ORDERS.sorts.iter().chain(SHIPMENTS.sorts).copied().collect();
    (select(&["", "-", " -", "--", "+", " "][..]), select(names), select(&["", " ", "x"][..]))
        .prop_map(|(pre, name, post)| format!("{pre}{name}{post}"))
        .boxed()
}

pub(crate) fn param_value() -> BoxedStrategy<String> {
    prop_oneof![
        date_string(),
        sort_value(),
        any::<i64>().prop_map(|n| n.to_string()),
        (-5i64..1005).prop_map(|n| n.to_string()),
        select(&STATES[..]).prop_map(String::from),
        "(%[0-9a-fA-F]{0,2}|\\+|[a-z=&;#]){0,10}",
        text(),
    ]
    .boxed()
}

/// A query string: known and unknown names, values raw or percent-encoded.
pub(crate) fn query_string() -> BoxedStrategy<String> {
    use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
    let pair = (select(PARAMS), param_value(), any::<bool>()).prop_map(|(name, value, encode)| {
        if encode {
            format!("{name}={}", utf8_percent_encode(&value, NON_ALPHANUMERIC))
        } else {
            format!("{name}={value}")
        }
    });
    prop_oneof![4 => vec(pair, 0..8).prop_map(|p| p.join("&")), 1 => text()].boxed()
}

/// A value for a field of `kind`: mostly one it accepts, sometimes anything.
pub(crate) fn value_for(kind: Kind) -> BoxedStrategy<Value> {
    let good: BoxedStrategy<Value> = match kind {
        Kind::Text | Kind::LongText => text().prop_map(Value::String).boxed(),
        Kind::Money8 | Kind::Money10 => prop_oneof![
            r"-?[0-9]{0,6}(\.[0-9]{1,2})?".prop_map(Value::String),
            (-99_999_999i64..99_999_999).prop_map(|h| Value::from(h as f64 / 100.0)),
        ]
        .boxed(),
        Kind::Date => prop_oneof![iso_date(), date_phrase()].prop_map(Value::String).boxed(),
        Kind::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        Kind::WarehouseId => (1i64..100).prop_map(Value::from).boxed(),
        Kind::Country => "[a-zA-Z]{2}".prop_map(Value::String).boxed(),
        Kind::Currency => "[a-zA-Z]{3}".prop_map(Value::String).boxed(),
        Kind::Quantity => (-2i64..1_000_000_002).prop_map(Value::from).boxed(),
    };
    prop_oneof![6 => good, 1 => Just(Value::Null), 1 => json_value()].boxed()
}

pub(crate) fn fields_of(
    table: &'static [(&'static str, Kind)],
    max: usize,
) -> BoxedStrategy<Map<String, Value>> {
    let one = (0..table.len()).prop_flat_map(move |i| {
        let (name, kind) = table[i];
        value_for(kind).prop_map(move |v| (name.to_string(), v))
    });
    vec(one, 0..max).prop_map(|kv| kv.into_iter().collect()).boxed()
}

pub(crate) fn string_map() -> BoxedStrategy<Value> {
    let v = prop_oneof![4 => text().prop_map(Value::String), 1 => Just(Value::Null), 1 => json_value()];
    vec((key(), v), 0..4).prop_map(|kv| Value::Object(kv.into_iter().collect())).boxed()
}

pub(crate) fn item() -> BoxedStrategy<Value> {
    (fields_of(&ITEM_FIELDS, 8), prop::option::of(vec(string_map(), 0..3)), prop::option::of(string_map()))
        .prop_map(|(mut m, options, custom)| {
            if let Some(options) = options {
                m.insert("options".into(), Value::Array(options));
            }
            if let Some(custom) = custom {
                m.insert("custom".into(), custom);
            }
            Value::Object(m)
        })
        .boxed()
}

pub(crate) fn address() -> BoxedStrategy<Value> {
    let field = select(
        &[
            "first_name",
            "last_name",
            "street1",
            "street2",
            "city",
            "region",
            "postal_code",
            "country",
            "telephone",
            "company",
        ][..],
    );
    let v = prop_oneof![3 => text().prop_map(Value::String), 1 => "[a-zA-Z]{2}".prop_map(Value::String), 1 => json_value()];
    vec((field, v), 0..6)
        .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()))
        .boxed()
}

/// An order record: usually `store_id` and `external_id`, then any of its fields.
pub(crate) fn order_record() -> BoxedStrategy<Map<String, Value>> {
    let id = prop_oneof![4 => (1i64..1000).prop_map(Value::from), 1 => scalar()];
    let external = prop_oneof![4 => "[A-Za-z0-9-]{1,10}".prop_map(Value::String), 1 => scalar()];
    (
        prop::option::weighted(0.9, id),
        prop::option::weighted(0.9, external),
        fields_of(&ORDER_FIELDS, 10),
        prop::option::of(address()),
        prop::option::of(address()),
        prop::option::of(string_map()),
        prop::option::of(prop_oneof![4 => vec(item(), 0..4).prop_map(Value::Array), 1 => json_value()]),
    )
        .prop_map(|(store_id, external_id, mut m, ship, bill, custom, items)| {
            let extra = [
                ("store_id", store_id),
                ("external_id", external_id),
                ("shipping_address", ship),
                ("billing_address", bill),
                ("custom", custom),
                ("order_items", items),
            ];
            for (k, v) in extra {
                if let Some(v) = v {
                    m.insert(k.to_string(), v);
                }
            }
            m
        })
        .boxed()
}

/// A shipment record: usually its required fields, then any of the others.
pub(crate) fn shipment_record() -> BoxedStrategy<Map<String, Value>> {
    let id = || prop_oneof![4 => (1i64..1000).prop_map(Value::from), 1 => scalar()];
    let items = vec(
        prop_oneof![
            3 => (0i64..20).prop_map(|id| serde_json::json!({ "id": id })),
            1 => any::<u32>().prop_map(|id| serde_json::json!({ "id": id.to_string() })),
            1 => json_value(),
        ],
        0..4,
    );
    (
        prop::option::weighted(0.9, id()),
        prop::option::weighted(0.9, id()),
        prop::option::weighted(0.9, prop_oneof![text().prop_map(Value::String), scalar()]),
        prop::option::of(prop_oneof![select(&STATES[..]).prop_map(Value::from), scalar()]),
        prop::option::of(date_string().prop_map(Value::String)),
        prop::option::of(prop_oneof![decimal_text().prop_map(Value::String), number()]),
        prop::option::of(prop_oneof![4 => items.prop_map(Value::Array), 1 => json_value()]),
        json_object(),
    )
        .prop_map(|(order, warehouse, tracking, state, shipped, weight, items, mut m)| {
            let fields = [
                ("order_id", order),
                ("warehouse_id", warehouse),
                ("tracking_number", tracking),
                ("state", state),
                ("shipped_at", shipped),
                ("weight", weight),
                ("order_items", items),
            ];
            for (k, v) in fields {
                if let Some(v) = v {
                    m.insert(k.to_string(), v);
                }
            }
            m
        })
        .boxed()
}

/// An import body: NDJSON of records and near-JSON lines, or a JSON array of records.
pub(crate) fn import_text() -> BoxedStrategy<String> {
    let record = prop_oneof![
        order_record().prop_map(|m| Value::Object(m).to_string()),
        shipment_record().prop_map(|m| Value::Object(m).to_string()),
        json_value().prop_map(|v| v.to_string()),
        json_like(),
        Just(String::new()),
        Just("   ".to_string()),
    ];
    prop_oneof![
        vec(record.clone(), 0..6).prop_map(|lines| lines.join("\n")),
        vec(record.clone(), 0..6).prop_map(|lines| lines.join("\r\n")),
        vec(record, 0..6).prop_map(|items| format!("  [{}]", items.join(","))),
        text(),
        json_like(),
    ]
    .boxed()
}

#[rustfmt::skip]
const CSV_COLUMNS: &[&str] = &[
    "order_id", "external_id", "store_id", "tracking_number", "carrier_name", "service_level", "shipped_at",
    "weight", "sku", "quantity", "Tracking_Number", " SKU ", "\u{feff}order_id", "\u{feff}sku", "extra", "",
    "quantity ",
];

/// A CSV cell: plain, quoted with quotes, commas and line breaks inside, or broken quoting.
pub(crate) fn csv_cell() -> BoxedStrategy<String> {
    prop_oneof![
        4 => "[A-Za-z0-9 .:-]{0,8}",
        2 => (-5i64..100).prop_map(|n| n.to_string()),
        1 => decimal_text(),
        1 => date_string(),
        1 => text().prop_map(|t| format!("\"{}\"", t.replace('"', "\"\""))),
        1 => r#"[",\r\n a]{0,6}"#,
        1 => text(),
    ]
    .boxed()
}

pub(crate) fn csv_line() -> BoxedStrategy<String> {
    vec(csv_cell(), 0..12).prop_map(|cells| cells.join(",")).boxed()
}

/// A warehouse file: a header of real and stray columns, then rows of any width.
pub(crate) fn csv_file() -> BoxedStrategy<Vec<u8>> {
    let header = vec(select(CSV_COLUMNS), 0..10).prop_map(|cols| cols.join(","));
    let eol = select(&["\n", "\r\n", "\r", "\n\n"][..]);
    (any::<bool>(), header, vec((csv_line(), eol), 0..8), prop_oneof![Just(vec![]), vec(any::<u8>(), 0..4)])
        .prop_map(|(bom, header, rows, tail)| {
            let mut text = if bom { "\u{feff}".to_string() } else { String::new() };
            text.push_str(&header);
            text.push('\n');
            for (row, eol) in rows {
                text.push_str(&row);
                text.push_str(eol);
            }
            let mut bytes = text.into_bytes();
            bytes.extend(tail);
            bytes
        })
        .boxed()
}

/// A cell for a warehouse file's `column`: mostly a value of its kind.
fn cell_for(column: &'static str) -> BoxedStrategy<String> {
    let good: BoxedStrategy<String> = match column {
        "sku" => "[A-Z0-9-]{1,6}".boxed(),
        "quantity" => (-5i64..1000).prop_map(|n| n.to_string()).boxed(),
        "order_id" | "store_id" => (1i64..100).prop_map(|n| n.to_string()).boxed(),
        "tracking_number" => "1Z[0-9A-Z]{4}".boxed(),
        "shipped_at" => prop_oneof![iso_date(), date_phrase()].boxed(),
        "weight" => decimal_text(),
        _ => csv_cell(),
    };
    prop_oneof![8 => good, 1 => Just(String::new()), 1 => csv_cell()].boxed()
}

/// A cell as RFC 4180 writes it: quoted when it holds a comma, a quote or a line break.
fn quoted(cell: &str) -> String {
    if cell.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell.to_string()
    }
}

/// A warehouse file that is mostly right: the real columns in any order, as spreadsheets
/// spell them, and rows of a cell per column (now and then one short or long).
pub(crate) fn warehouse_file() -> BoxedStrategy<Vec<u8>> {
    let columns = prop_oneof![
        Just(vec!["sku", "quantity"]),
        Just(vec!["sku", "quantity", "name", "warehouse"]),
        Just(vec!["order_id", "tracking_number", "sku", "quantity"]),
        Just(vec![
            "external_id",
            "store_id",
            "tracking_number",
            "carrier_name",
            "service_level",
            "shipped_at",
            "weight",
            "sku",
            "quantity",
        ]),
        Just(vec!["tracking_number", "order_id", "shipped_at", "weight", "extra"]),
    ]
    .prop_shuffle();
    columns
        .prop_flat_map(|columns| {
            let row: Vec<BoxedStrategy<String>> = columns.iter().map(|c| cell_for(c)).collect();
            let spelled = columns
                .iter()
                .map(|c| select(vec![c.to_string(), c.to_ascii_uppercase(), format!(" {c} ")]))
                .collect::<Vec<_>>();
            let eol = select(&["\n", "\r\n"][..]);
            (any::<bool>(), spelled, vec((row, eol, 0u8..12), 0..6))
        })
        .prop_map(|(bom, header, rows)| {
            let mut text = if bom { "\u{feff}".to_string() } else { String::new() };
            text.push_str(&header.join(","));
            text.push_str("\r\n");
            for (mut cells, eol, width) in rows {
                match width {
                    0 => {
                        cells.pop();
                    }
                    1 => cells.push("extra".into()),
                    _ => {}
                }
                text.push_str(&cells.iter().map(|c| quoted(c)).collect::<Vec<_>>().join(","));
                text.push_str(eol);
            }
            text.into_bytes()
        })
        .boxed()
}

/// Any warehouse file: mostly right, near CSV, or bytes.
pub(crate) fn any_warehouse_file() -> BoxedStrategy<Vec<u8>> {
    prop_oneof![3 => warehouse_file(), 2 => csv_file(), 1 => vec(any::<u8>(), 0..64)].boxed()
}

// ---------------------------------------------------------------------------------------
// Checks: one per decoder, shared with examples/fuzz_decoders.rs
// ---------------------------------------------------------------------------------------

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

/// Validates every record that is an object, as an order and as a shipment; accepted when
/// every record was JSON.
fn check_records(records: impl Iterator<Item = crate::import::Record>) -> Checked {
    let mut accepted = true;
    for (line, record) in records {
        prop_assert!(line >= 1);
        match record {
            Ok(Value::Object(map)) => {
                check_order_record(map.clone())?;
                check_shipment_record(map)?;
            }
            Ok(_) => {}
            Err(problem) => {
                accepted = false;
                prop_assert!(!problem.is_empty());
            }
        }
    }
    Ok(verdict(accepted))
}

/// An import record as an order: accepted, its stored document is JSON; refused, the
/// problems name fields.
pub(crate) fn check_order_record(map: Map<String, Value>) -> Checked {
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

/// An import body, split as the route splits it and read as the CLI reads a file: a refusal
/// is a 400; both agree on whether the body is all JSON.
pub(crate) fn check_import_text(text: &str) -> Checked {
    let from_text = match parse_records(text) {
        Ok(records) => check_records(records.into_iter())?,
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

/// A shipment file: rows numbered after the header, in order, within the file.
pub(crate) fn check_shipments_csv(bytes: &[u8]) -> Checked {
    let lines = bytes.iter().filter(|b| **b == b'\n').count() as u64 + 1;
    match read_shipments(bytes) {
        Ok(rows) => {
            let mut last = 1;
            for row in rows {
                prop_assert!(row.line > 1 && row.line <= lines && row.line >= last, "{row:?} of {lines}");
                last = row.line;
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

// ---------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn json_bodies_never_panic(text in prop_oneof![text(), json_like()]) {
        check_json_body(&text)?;
    }

    #[test]
    fn json_objects_decode_and_read(object in json_object()) {
        check_json_body(&Value::Object(object).to_string())?;
    }

    #[test]
    fn form_fields_with_bracket_names_never_panic(fields in form_fields()) {
        check_form(&fields)?;
    }

    #[test]
    fn date_strings_never_panic(input in date_string()) {
        check_date(&input)?;
    }

    #[test]
    fn decimals_never_panic(text in decimal_text()) {
        check_decimal(&text)?;
    }

    #[test]
    fn listing_queries_never_panic(raw in query_string(), scope in prop::option::of(any::<i64>())) {
        check_query(&raw, scope)?;
    }

    #[test]
    fn import_bodies_never_panic(text in import_text()) {
        check_import_text(&text)?;
    }

    #[test]
    fn import_bytes_never_panic(bytes in vec(any::<u8>(), 0..64)) {
        check_import_bytes(bytes)?;
    }

    #[test]
    fn import_records_never_panic(order in order_record(), shipment in shipment_record()) {
        check_order_record(order.clone())?;
        check_shipment_record(order)?;
        check_order_record(shipment.clone())?;
        check_shipment_record(shipment)?;
    }

    #[test]
    fn warehouse_csv_files_never_panic(bytes in any_warehouse_file()) {
        check_shipments_csv(&bytes)?;
        check_stock_csv(&bytes)?;
    }
}

/// A form name nested deeper than any body needs is refused, not recursed into until the
/// stack runs out.
#[test]
fn deeply_nested_form_names_are_refused_not_overflowed() {
    let name = format!("a{}", "[b]".repeat(100_000));
    let result = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || fields_to_object(&[(name, "1".to_string())]).map(drop))
        .expect("thread")
        .join()
        .expect("no stack overflow or panic");
    let e = result.expect_err("refused");
    assert_eq!(e.status().code, 400);
}

/// interim asserts that the word after an hour is lower case and under 16 letters; these
/// panicked inside it (a 500 from any dateString parameter or field).
#[test]
fn a_word_after_an_hour_is_read_or_refused_without_a_panic() {
    let at = |s: &str| parse_date_string_at(s, NOW).map(format_ms);
    assert_eq!(at("today 9 PM"), Ok("2026-11-22T21:00:00.000Z".to_string()));
    assert_eq!(at("Yesterday 10 AM"), Ok("2026-11-21T10:00:00.000Z".to_string()));
    for input in ["now 0 T", "yesterday 10 AMX", "now 5 abcdefghijklmnopq", "abcdefghijklmnopqrstuvwxyz"] {
        assert!(at(input).is_err(), "{input}: {:?}", at(input));
    }
}
