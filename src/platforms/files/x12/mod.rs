//! ANSI X12 004010 documents of a file warehouse whose adapter says `"file_format": "x12"`
//! (files-x12.md): the `x12` settings and their validation, the 940 and 997 written and the
//! 945, 846 and 997 read. A pure format layer: bytes in, bytes out, no files, no database; the
//! caller keeps the control-number counter and decides what an order id or a group number
//! read back means.
//!
//! The pieces: [`segments`] reads and writes segments, [`envelope`] frames a document
//! (ISA/GS … GE/IEA) and [`read`] walks one read, handing each set to the reader of its kind
//! (`r945`, `r846`, `ack997`); `w940` builds an order's set; `text` and `regions` are the
//! rules every written value follows.

pub mod ack997;
pub mod envelope;
mod problems;
pub mod r846;
pub mod r945;
pub mod r997;
mod reading;
pub mod regions;
pub mod segments;
pub mod text;
mod validate;
pub mod w940;

use std::collections::BTreeMap;

use jiff::tz::TimeZone;
use serde_json::{Map, Value};

pub use ack997::{Ack, AckGroup, AckSet};
pub use envelope::{GroupKind, Interchange, WrittenSet, file_name};
pub use problems::{Problem, SegmentPlace};
pub use r846::Skipped;
pub use r945::Shipment945;
pub use r997::{ReceivedAck, ReceivedSet};
pub use reading::{Contents, Reading, read};
pub use segments::Separators;
pub use validate::validate;
pub use w940::check_order;

/// The `x12` object of an adapter, read with the defaults of files-x12.md §1.1.
#[derive(Debug, Clone)]
pub struct X12Settings {
    pub sender_id: String,
    pub receiver_id: String,
    pub sender_qualifier: String,
    pub receiver_qualifier: String,
    pub gs_sender_id: String,
    pub gs_receiver_id: String,
    /// `P` or `T` (ISA15).
    pub usage: String,
    pub separators: Separators,
    /// A line feed after every segment written.
    pub newline: bool,
    pub file_extension: String,
    pub first_control_number: i64,
    pub send_997: bool,
    pub reference_prefix: String,
    pub depositor_name: Option<String>,
    pub depositor_code: Option<String>,
    pub product_qualifier: String,
    pub product_qualifiers: Vec<String>,
    pub stock_quantity_qualifiers: Vec<String>,
    /// The zone of every date and time written and read.
    pub time_zone: TimeZone,
    /// Carrier text → SCAC, in the order given (W6610).
    pub scac: Vec<(String, String)>,
    /// SCAC → carrier name, for the shipments read.
    pub scac_names: BTreeMap<String, String>,
}

impl X12Settings {
    /// The settings of an adapter whose `file_format` is `"x12"`; `None` for a CSV warehouse.
    /// The adapter has been validated ([`validate`]); a value that is off all the same takes
    /// its default rather than failing a pass.
    pub fn of(adapter: &Map<String, Value>) -> Option<X12Settings> {
        if adapter.get("file_format").and_then(Value::as_str) != Some("x12") {
            return None;
        }
        let x12 = adapter.get("x12")?.as_object()?;
        let text = |key: &str| x12.get(key).and_then(Value::as_str).map(str::to_string);
        let text_or = |key: &str, default: &str| text(key).unwrap_or_else(|| default.to_string());
        let separator = |key: &str, default: u8| {
            text(key).filter(|s| s.len() == 1).and_then(|s| s.bytes().next()).unwrap_or(default)
        };
        let codes = |key: &str, default: &[&str]| match x12.get(key).and_then(Value::as_array) {
            Some(list) if !list.is_empty() => {
                list.iter().filter_map(Value::as_str).map(str::to_string).collect()
            }
            _ => default.iter().map(|s| s.to_string()).collect(),
        };
        let strings = |key: &str| -> Vec<(String, String)> {
            x12.get(key)
                .and_then(Value::as_object)
                .map(|map| {
                    map.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))).collect()
                })
                .unwrap_or_default()
        };
        let sender_id = text_or("sender_id", "");
        let receiver_id = text_or("receiver_id", "");
        Some(X12Settings {
            gs_sender_id: text("gs_sender_id").unwrap_or_else(|| sender_id.clone()),
            gs_receiver_id: text("gs_receiver_id").unwrap_or_else(|| receiver_id.clone()),
            sender_id,
            receiver_id,
            sender_qualifier: text_or("sender_qualifier", "ZZ"),
            receiver_qualifier: text_or("receiver_qualifier", "ZZ"),
            usage: text_or("usage", "P"),
            separators: Separators {
                element: separator("element_separator", b'*'),
                component: separator("component_separator", b'>'),
                terminator: separator("segment_terminator", b'~'),
            },
            newline: x12.get("newline").and_then(boolean).unwrap_or(false),
            file_extension: text_or("file_extension", "edi"),
            first_control_number: x12
                .get("first_control_number")
                .and_then(integer)
                .filter(|n| (1..=envelope::MAX_CONTROL).contains(n))
                .unwrap_or(1),
            send_997: x12.get("send_997").and_then(boolean).unwrap_or(true),
            reference_prefix: text_or("reference_prefix", ""),
            depositor_name: text("depositor_name"),
            depositor_code: text("depositor_code"),
            product_qualifier: text_or("product_qualifier", "SK"),
            product_qualifiers: codes("product_qualifiers", &["SK", "VN"]),
            stock_quantity_qualifiers: codes("stock_quantity_qualifiers", &["33"]),
            time_zone: text("time_zone").and_then(|name| TimeZone::get(&name).ok()).unwrap_or(TimeZone::UTC),
            scac: strings("scac"),
            scac_names: strings("scac_names").into_iter().collect(),
        })
    }
}

/// A boolean as the service takes one (a form sends text).
fn boolean(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) if s == "true" || s == "1" => Some(true),
        Value::String(s) if s == "false" || s == "0" => Some(false),
        Value::Number(n) => n.as_i64().filter(|n| *n == 0 || *n == 1).map(|n| n == 1),
        _ => None,
    }
}

/// An integer as the service takes one (a form sends text).
fn integer(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64(),
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
