//! The scalar fields of orders and order items, described once: each table below drives the
//! columns written, the validation of an import record, the rendered document and (for
//! orders) the sort whitelist. Column names equal the JSON property names.

use rusqlite::ToSql;
use rusqlite::types::{ToSqlOutput, ValueRef};
use serde_json::Value;

use crate::fields::{Fields, Patch};
use crate::jsondoc::Obj;
use crate::money;

/// How a scalar field is validated, stored and rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A string of at most 65,535 characters.
    Text,
    /// A string of at most 16,777,215 characters (`shipment_contents`).
    LongText,
    /// `decimal (8.2)`, stored as hundredths.
    Money8,
    /// `decimal (10.2)`, stored as hundredths (an item's weight).
    Money10,
    /// A dateString, stored as milliseconds.
    Date,
    Bool,
    /// A warehouse id of the order's customer.
    WarehouseId,
    /// A 2-letter country code, stored upper-case.
    Country,
    /// A 3-letter currency code, stored upper-case.
    Currency,
    /// A non-negative item quantity, 1 when absent.
    Quantity,
}

use Kind::*;

/// An order's scalar fields after `id` and `store_id`, in the order of service-api.md.
pub const ORDER_FIELDS: [(&str, Kind); 53] = [
    ("external_id", Text),
    ("external_display_id", Text),
    ("external_billing_customer_id", Text),
    ("external_shipping_customer_id", Text),
    ("customer_email", Text),
    ("ordered_at", Date),
    ("invoice_number", Text),
    ("payment_type", Text),
    ("external_warehouse_order_id", Text),
    ("shipping_carrier_name", Text),
    ("shipping_carrier_service_level", Text),
    ("shipping_warehouse_code", Text),
    ("signature_required", Bool),
    ("shipping_insurance", Bool),
    ("external_shipping_description", Text),
    ("external_source_display_id", Text),
    ("purchase_order_id", Text),
    ("notes", Text),
    ("shipping_notes", Text),
    ("gift_message", Text),
    ("batch_id", Text),
    ("shipping_amount", Money8),
    ("discount_amount", Money8),
    ("tax_amount", Money8),
    ("shipping_tax_amount", Money8),
    ("third_party_account_number", Text),
    ("third_party_billing_code", Text),
    ("discount_codes", Text),
    ("external_source_id", Text),
    ("lead_source", Text),
    ("packing_slip_id", Text),
    ("requested_ship_date", Date),
    ("requested_cancel_date", Date),
    ("payment_date", Date),
    ("external_tags", Text),
    ("retailer_id", Text),
    ("supplier_id", Text),
    ("insured_amount", Money8),
    ("terms", Text),
    ("sales_rep_last_name", Text),
    ("sales_rep_first_name", Text),
    ("sales_rep_email", Text),
    ("fulfillment_state", Text),
    ("fulfillment_transitioned_at", Date),
    ("external_type", Text),
    ("fulfillment_warehouse_id", WarehouseId),
    ("country_of_origin", Country),
    ("shipment_contents", LongText),
    ("declared_value", Money8),
    ("currency_code", Currency),
    ("customer_service_url", Text),
    ("customer_service_email", Text),
    ("customer_service_telephone", Text),
];

/// Index of a field in `ORDER_FIELDS`, for the few the code reads by name.
pub const fn order_field(name: &str) -> usize {
    let mut i = 0;
    while i < ORDER_FIELDS.len() {
        if const_eq(ORDER_FIELDS[i].0, name) {
            return i;
        }
        i += 1;
    }
    panic!("unknown order field");
}

const fn const_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

pub const EXTERNAL_ID: usize = order_field("external_id");
pub const FULFILLMENT_WAREHOUSE_ID: usize = order_field("fulfillment_warehouse_id");

/// An order item's scalar fields after `id`, in the order of service-api.md, then `quantity`.
pub const ITEM_FIELDS: [(&str, Kind); 20] = [
    ("name", Text),
    ("sku", Text),
    ("upc", Text),
    ("unit_price", Money8),
    ("unit_cost", Money8),
    ("weight", Money10),
    ("external_order_item_id", Text),
    ("external_product_id", Text),
    ("discount_amount", Money8),
    ("tax_amount", Money8),
    ("gift_wrap", Bool),
    ("customer_notes", Text),
    ("vendor_id", Text),
    ("vendor_part_number", Text),
    ("buyer_part_number", Text),
    ("color_description", Text),
    ("size_description", Text),
    ("drop_ship", Text),
    ("product_type", Text),
    ("quantity", Quantity),
];

pub const EXTERNAL_ORDER_ITEM_ID: usize = 6;

/// A stored scalar: text, or an integer (hundredths, milliseconds, 0/1, ids).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scalar {
    Null,
    Text(String),
    Int(i64),
}

impl Scalar {
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Scalar::Text(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Scalar::Int(n) => Some(*n),
            _ => None,
        }
    }
}

impl ToSql for Scalar {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Scalar::Null => ValueRef::Null,
            Scalar::Text(s) => ValueRef::Text(s.as_bytes()),
            Scalar::Int(n) => return Ok(ToSqlOutput::from(*n)),
        }))
    }
}

impl rusqlite::types::FromSql for Scalar {
    fn column_result(value: ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        Ok(match value {
            ValueRef::Null => Scalar::Null,
            ValueRef::Integer(n) => Scalar::Int(n),
            ValueRef::Text(t) => Scalar::Text(String::from_utf8_lossy(t).into_owned()),
            _ => return Err(rusqlite::types::FromSqlError::InvalidType),
        })
    }
}

fn text_limited(v: Value, max_chars: usize) -> Result<String, String> {
    match v {
        Value::String(s) if s.chars().count() <= max_chars => Ok(s),
        Value::String(_) => Err(format!("must be at most {max_chars} characters")),
        _ => Err("must be a string".to_string()),
    }
}

fn code(v: Value, len: usize, what: &str) -> Result<String, String> {
    match v {
        Value::String(s) if s.len() == len && s.bytes().all(|b| b.is_ascii_alphabetic()) => {
            Ok(s.to_ascii_uppercase())
        }
        _ => Err(format!("must be a {len}-letter {what} code")),
    }
}

/// Reads one scalar of `kind` from an import record; a problem is recorded in `fields`.
pub fn read(fields: &mut Fields, key: &str, kind: Kind) -> Scalar {
    match kind {
        Text => stored(fields.read(key, |v| text_limited(v, 65_535))),
        LongText => stored(fields.read(key, |v| text_limited(v, 16_777_215))),
        Money8 => stored(fields.read(key, |v| money::parse(&v, 6))),
        Money10 => stored(fields.read(key, |v| money::parse(&v, 8))),
        Date => stored(fields.date(key)),
        Bool => stored(fields.boolean(key)),
        WarehouseId => stored(fields.id(key)),
        Country => stored(fields.read(key, |v| code(v, 2, "country"))),
        Currency => stored(fields.read(key, |v| code(v, 3, "currency"))),
        Quantity => match fields.integer(key) {
            Patch::Value(n) if !(0..=1_000_000_000).contains(&n) => {
                fields.error(key, "must be an integer from 0 to 1000000000");
                Scalar::Int(1)
            }
            Patch::Value(n) => Scalar::Int(n),
            _ => Scalar::Int(1),
        },
    }
}

/// A read field as stored: absent, null and invalid all store NULL (invalid ones also
/// recorded a problem, so nothing is written).
fn stored<T: Into<Scalar>>(patch: Patch<T>) -> Scalar {
    match patch {
        Patch::Value(v) => v.into(),
        _ => Scalar::Null,
    }
}

impl From<String> for Scalar {
    fn from(s: String) -> Self {
        Scalar::Text(s)
    }
}

impl From<i64> for Scalar {
    fn from(n: i64) -> Self {
        Scalar::Int(n)
    }
}

impl From<bool> for Scalar {
    fn from(b: bool) -> Self {
        Scalar::Int(i64::from(b))
    }
}

/// Renders one stored scalar of `kind` into a document.
pub fn render(obj: &mut Obj<'_>, key: &str, kind: Kind, value: &Scalar) {
    match kind {
        Text | LongText | Country | Currency => obj.str(key, value.as_text()),
        Money8 | Money10 => obj.money(key, value.as_int()),
        Date => obj.timestamp(key, value.as_int()),
        Bool => obj.bool(key, value.as_int().map(|n| n != 0)),
        WarehouseId | Quantity => obj.int(key, value.as_int()),
    }
}
