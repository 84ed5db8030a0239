//! The rules of an adapter's `x12` object (files-x12.md §1.2). Problems are named
//! `adapter[x12][key]`; `file_format` itself and the CSV layout keys are checked elsewhere.

use serde_json::{Map, Value};

use super::envelope::MAX_CONTROL;
use crate::fields::{Fields, Patch};

/// Every key the `x12` object takes.
const KEYS: [&str; 24] = [
    "sender_id",
    "receiver_id",
    "sender_qualifier",
    "receiver_qualifier",
    "gs_sender_id",
    "gs_receiver_id",
    "version",
    "usage",
    "element_separator",
    "component_separator",
    "segment_terminator",
    "newline",
    "file_extension",
    "first_control_number",
    "send_997",
    "reference_prefix",
    "depositor_name",
    "depositor_code",
    "product_qualifier",
    "product_qualifiers",
    "stock_quantity_qualifiers",
    "time_zone",
    "scac",
    "scac_names",
];

/// Checks `x12` against `file_format` and, for an X12 warehouse, every rule of §1.2.
pub fn validate(adapter: &mut Fields) {
    let x12_format = adapter.peek("file_format").and_then(Value::as_str) == Some("x12");
    match adapter.read("x12", Ok) {
        Patch::Value(_) if !x12_format => {
            adapter.error("x12", "is only for a warehouse whose file_format is \"x12\"");
        }
        Patch::Value(Value::Object(map)) => {
            let unknown: Vec<String> = map.keys().filter(|k| !KEYS.contains(&k.as_str())).cloned().collect();
            let mut x12 = adapter.child("x12", map);
            for key in unknown {
                x12.error(&key, "is not a key of x12 (files-x12.md §1.1)");
            }
            validate_x12(&mut x12);
            adapter.absorb(x12);
        }
        Patch::Value(_) => adapter.error("x12", "must be an object (files-x12.md §1.1)"),
        Patch::Absent | Patch::Null if x12_format => {
            adapter.error("x12", "is required when file_format is \"x12\"");
        }
        Patch::Absent | Patch::Null => {}
    }
}

/// The rules of the object's keys.
fn validate_x12(x12: &mut Fields) {
    // The separators first: the ids must not contain them.
    let mut separators: Vec<char> = Vec::new();
    let defaults = [("element_separator", '*'), ("component_separator", '>'), ("segment_terminator", '~')];
    for (key, default) in defaults {
        let value = optional_text(x12, key);
        let c = match value {
            None => default,
            Some(v) => {
                let mut chars = v.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) if (c.is_ascii_graphic()) && !c.is_ascii_alphanumeric() => c,
                    _ => {
                        x12.error(
                            key,
                            "must be one printable ASCII character, not a letter, a digit or a space",
                        );
                        default
                    }
                }
            }
        };
        if separators.contains(&c) {
            x12.error(key, format!("is {c:?}, already another separator; the three separators must differ"));
        }
        separators.push(c);
    }

    for key in ["sender_id", "receiver_id"] {
        match optional_text(x12, key) {
            Some(id) => check_id(x12, key, &id, &separators),
            None => x12.error(key, "is required"),
        }
    }
    for key in ["gs_sender_id", "gs_receiver_id"] {
        if let Some(id) = optional_text(x12, key) {
            check_id(x12, key, &id, &separators);
        }
    }
    for key in ["sender_qualifier", "receiver_qualifier", "product_qualifier"] {
        if let Some(code) = optional_text(x12, key)
            && !is_code(&code)
        {
            x12.error(key, "must be exactly 2 upper-case letters or digits");
        }
    }
    if let Some(version) = optional_text(x12, "version")
        && version != "004010"
    {
        x12.error("version", "must be \"004010\", the only X12 version orderbridge speaks");
    }
    if let Some(usage) = optional_text(x12, "usage")
        && usage != "P"
        && usage != "T"
    {
        x12.error("usage", "must be \"P\" (production) or \"T\" (test)");
    }
    for key in ["newline", "send_997"] {
        let _ = x12.boolean(key);
    }
    if let Some(extension) = optional_text(x12, "file_extension")
        && (!(1..=5).contains(&extension.len()) || !extension.bytes().all(|b| b.is_ascii_alphanumeric()))
    {
        x12.error("file_extension", "must be 1 to 5 ASCII letters or digits");
    }
    if let Patch::Value(n) = x12.integer("first_control_number")
        && !(1..=MAX_CONTROL).contains(&n)
    {
        x12.error("first_control_number", format!("must be an integer from 1 to {MAX_CONTROL}"));
    }
    if let Some(prefix) = optional_text(x12, "reference_prefix")
        && (prefix.chars().count() > 12 || !prefix.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    {
        x12.error("reference_prefix", "must be at most 12 ASCII letters, digits or '-'");
    }
    let depositor_name = optional_text(x12, "depositor_name");
    if let Some(name) = &depositor_name
        && (name.trim().is_empty() || name.chars().count() > 60)
    {
        x12.error("depositor_name", "must be 1 to 60 characters");
    }
    if let Some(code) = optional_text(x12, "depositor_code") {
        if !(2..=80).contains(&code.chars().count()) {
            x12.error("depositor_code", "must be 2 to 80 characters");
        } else if depositor_name.is_none() {
            x12.error("depositor_code", "is given without depositor_name, which the N1*DE segment needs");
        }
    }
    for key in ["product_qualifiers", "stock_quantity_qualifiers"] {
        match x12.read(key, Ok) {
            Patch::Value(Value::Array(list))
                if !list.is_empty() && list.iter().all(|v| v.as_str().is_some_and(is_code)) => {}
            Patch::Absent | Patch::Null => {}
            Patch::Value(_) => x12
                .error(key, "must be a non-empty array of 2-character codes (upper-case letters or digits)"),
        }
    }
    if let Some(zone) = optional_text(x12, "time_zone")
        && jiff::tz::TimeZone::get(&zone).is_err()
    {
        x12.error("time_zone", format!("{zone:?} is not an IANA time zone name"));
    }
    check_scacs(x12, "scac", false);
    check_scacs(x12, "scac_names", true);
}

/// A text value, or `None` when absent or null; another type is recorded as a problem.
fn optional_text(x12: &mut Fields, key: &str) -> Option<String> {
    x12.text(key).value()
}

/// The rules of an interchange or group id.
fn check_id(x12: &mut Fields, key: &str, id: &str, separators: &[char]) {
    let problem = if !(2..=15).contains(&id.chars().count()) {
        "must be 2 to 15 characters".to_string()
    } else if !id.chars().all(|c| c == ' ' || c.is_ascii_graphic()) {
        "must be printable ASCII characters (space to '~')".to_string()
    } else if id.starts_with(' ') || id.ends_with(' ') {
        "must not start or end with a space".to_string()
    } else if let Some(c) = id.chars().find(|c| separators.contains(c)) {
        format!("must not contain {c:?}, a separator")
    } else {
        return;
    };
    x12.error(key, problem);
}

/// Two upper-case letters or digits.
fn is_code(code: &str) -> bool {
    code.len() == 2 && code.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

/// A SCAC: 2 to 4 upper-case letters.
fn is_scac(scac: &str) -> bool {
    (2..=4).contains(&scac.len()) && scac.bytes().all(|b| b.is_ascii_uppercase())
}

/// An object of strings whose SCACs (its keys when `keyed`, else its values) are SCACs.
fn check_scacs(x12: &mut Fields, key: &str, keyed: bool) {
    let map: Map<String, Value> = match x12.read(key, Ok) {
        Patch::Value(Value::Object(map)) => map,
        Patch::Absent | Patch::Null => return,
        Patch::Value(_) => return x12.error(key, "must be an object of strings"),
    };
    for (k, v) in &map {
        let Some(v) = v.as_str() else {
            return x12.error(key, format!("must be an object of strings; {k:?} is not a string"));
        };
        let scac = if keyed { k.as_str() } else { v };
        if !is_scac(scac) {
            return x12.error(key, format!("{scac:?} is not a SCAC (2 to 4 upper-case letters)"));
        }
    }
}
