//! Inputs for the decoders: arbitrary text and bytes, and text built from each decoder's own
//! vocabulary so the cases get past its first check.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Number, Value};

use crate::orders::fields::{ITEM_FIELDS, Kind, ORDER_FIELDS};
use crate::orders::model::ADDRESS_FIELDS;
use crate::resources::orders::ORDERS;
use crate::resources::shipments::SHIPMENTS;
use crate::shipments::STATES;

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

/// An address: its fields, and one it does not have.
pub(crate) fn address() -> BoxedStrategy<Value> {
    let field = select([&ADDRESS_FIELDS[..], &["company"]].concat());
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
        prop::option::of(prop_oneof![
            4 => vec(prop_oneof![8 => item(), 1 => json_value()], 0..4).prop_map(Value::Array),
            1 => json_value(),
        ]),
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
