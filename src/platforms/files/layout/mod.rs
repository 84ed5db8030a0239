//! CSV/TSV layouts of a file warehouse (`platforms/files-csv-layouts.md`): per warehouse, how
//! the order file is written (`orders_layout`) and how shipment and stock files are read
//! (`shipments_layout`, `inventory_layout`). An absent layout is today's file (§9), so a
//! warehouse without layouts writes and reads the bytes it always did.
//!
//! This file holds the parsed layouts and reads them from an adapter already validated
//! ([`validate()`]); `write` renders orders, `read` reads shipments and stock, `dates` owns
//! date formats and time zones.

mod dates;
mod read;
mod validate;
mod write;

#[cfg(test)]
mod examples;

use std::collections::HashMap;

use jiff::tz::TimeZone;
use serde_json::{Map, Value, json};

pub use dates::DateFormat;
pub use read::{read_shipments, read_stock};
pub use validate::{refuse_on_api_warehouse, validate};
pub use write::OrderWriter;

/// The adapter keys of the three layouts, in the order they are checked.
pub const LAYOUT_KEYS: [&str; 3] = ["orders_layout", "shipments_layout", "inventory_layout"];

/// Today's order file's columns (§9.1), in order.
pub const ORDER_COLUMNS: [&str; 25] = [
    "order_id",
    "external_id",
    "external_display_id",
    "store_id",
    "ordered_at",
    "customer_email",
    "ship_first_name",
    "ship_last_name",
    "ship_street1",
    "ship_street2",
    "ship_city",
    "ship_region",
    "ship_postal_code",
    "ship_country",
    "ship_telephone",
    "carrier",
    "service_level",
    "gift_message",
    "notes",
    "line",
    "sku",
    "name",
    "quantity",
    "unit_price",
    "weight",
];

/// Today's shipment file's columns (§9.2).
const SHIPMENT_COLUMNS: [&str; 10] = [
    "order_id",
    "external_id",
    "store_id",
    "tracking_number",
    "carrier_name",
    "service_level",
    "shipped_at",
    "weight",
    "sku",
    "quantity",
];

/// Which of the three files a layout describes: each takes its own keys and fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutKind {
    Orders,
    Shipments,
    Inventory,
}

impl LayoutKind {
    /// The adapter key holding the layout.
    pub const fn key(self) -> &'static str {
        match self {
            LayoutKind::Orders => "orders_layout",
            LayoutKind::Shipments => "shipments_layout",
            LayoutKind::Inventory => "inventory_layout",
        }
    }

    /// The fields a column of this layout may hold (§4).
    pub fn fields(self) -> &'static [Field] {
        use Field::*;
        match self {
            LayoutKind::Orders => &[
                OrderId,
                ExternalId,
                ExternalDisplayId,
                StoreId,
                OrderedAt,
                CustomerEmail,
                ShipFirstName,
                ShipLastName,
                ShipStreet1,
                ShipStreet2,
                ShipCity,
                ShipRegion,
                ShipPostalCode,
                ShipCountry,
                ShipTelephone,
                ShipName,
                Carrier,
                ServiceLevel,
                GiftMessage,
                Notes,
                PurchaseOrderId,
                RequestedShipDate,
                Line,
                Sku,
                Upc,
                Name,
                Quantity,
                UnitPrice,
                Weight,
            ],
            LayoutKind::Shipments => &[
                OrderId,
                ExternalId,
                ExternalDisplayId,
                StoreId,
                TrackingNumber,
                CarrierName,
                ServiceLevel,
                ShippedAt,
                Weight,
                Sku,
                Quantity,
            ],
            LayoutKind::Inventory => &[Sku, Quantity],
        }
    }

    /// The field named `name`, when this layout has it.
    pub fn field(self, name: &str) -> Option<Field> {
        self.fields().iter().copied().find(|f| f.name() == name)
    }
}

/// An orderbridge field a column holds (§4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    OrderId,
    ExternalId,
    ExternalDisplayId,
    StoreId,
    OrderedAt,
    CustomerEmail,
    ShipFirstName,
    ShipLastName,
    ShipStreet1,
    ShipStreet2,
    ShipCity,
    ShipRegion,
    ShipPostalCode,
    ShipCountry,
    ShipTelephone,
    ShipName,
    Carrier,
    ServiceLevel,
    GiftMessage,
    Notes,
    PurchaseOrderId,
    RequestedShipDate,
    Line,
    Sku,
    Upc,
    Name,
    Quantity,
    UnitPrice,
    Weight,
    TrackingNumber,
    CarrierName,
    ShippedAt,
}

impl Field {
    /// The field's name in a layout.
    pub const fn name(self) -> &'static str {
        use Field::*;
        match self {
            OrderId => "order_id",
            ExternalId => "external_id",
            ExternalDisplayId => "external_display_id",
            StoreId => "store_id",
            OrderedAt => "ordered_at",
            CustomerEmail => "customer_email",
            ShipFirstName => "ship_first_name",
            ShipLastName => "ship_last_name",
            ShipStreet1 => "ship_street1",
            ShipStreet2 => "ship_street2",
            ShipCity => "ship_city",
            ShipRegion => "ship_region",
            ShipPostalCode => "ship_postal_code",
            ShipCountry => "ship_country",
            ShipTelephone => "ship_telephone",
            ShipName => "ship_name",
            Carrier => "carrier",
            ServiceLevel => "service_level",
            GiftMessage => "gift_message",
            Notes => "notes",
            PurchaseOrderId => "purchase_order_id",
            RequestedShipDate => "requested_ship_date",
            Line => "line",
            Sku => "sku",
            Upc => "upc",
            Name => "name",
            Quantity => "quantity",
            UnitPrice => "unit_price",
            Weight => "weight",
            TrackingNumber => "tracking_number",
            CarrierName => "carrier_name",
            ShippedAt => "shipped_at",
        }
    }

    /// A date-time field: the only kind a column's `format` applies to.
    pub const fn is_date(self) -> bool {
        matches!(self, Field::OrderedAt | Field::RequestedShipDate | Field::ShippedAt)
    }

    /// A field of an order item, in an orders layout (repeated per item with `rows: "order"`).
    pub const fn is_item(self) -> bool {
        use Field::*;
        matches!(self, Line | Sku | Upc | Name | Quantity | UnitPrice | Weight)
    }

    /// A field a shipment line names its order by (§4.2).
    pub const fn is_order_match(self) -> bool {
        matches!(self, Field::OrderId | Field::ExternalId | Field::ExternalDisplayId)
    }
}

/// One column of a layout (§3).
#[derive(Debug, Clone)]
pub struct Column {
    /// The header cell's text (with `{n}` for an item column of a `rows: "order"` layout).
    pub header: String,
    /// The field it holds; `None` for a constant column, or a read column not imported.
    pub field: Option<Field>,
    /// The constant text of an orders layout's `value` column.
    pub value: Option<String>,
    pub default: Option<String>,
    pub map: HashMap<String, String>,
    pub prefix: Option<String>,
    /// The column's own date format, else the layout's.
    pub format: Option<DateFormat>,
    /// Characters (Unicode scalar values) a written cell is cut to.
    pub max_length: Option<usize>,
    /// What joins several tracking numbers in one cell.
    pub split: Option<String>,
}

/// How many rows an order takes in the order file (§6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// One row per item (today's).
    Item,
    /// One row per order, the item columns repeated `max_items` times.
    Order { max_items: usize },
}

/// How the order file is written.
#[derive(Debug, Clone)]
pub struct OrdersLayout {
    pub delimiter: u8,
    pub header: bool,
    pub rows: Rows,
    /// `\n` or `\r\n`, after every row.
    pub line_ending: &'static str,
    pub date_format: DateFormat,
    pub time_zone: TimeZone,
    pub decimal_separator: char,
    pub decimal_places: u32,
    /// The name template, with `{connection_id}`, `{batch}` and maybe `{date}`.
    pub file_name: String,
    pub columns: Vec<Column>,
}

/// A row a read layout skips unless its cell under `header` is (or, `equals: false`, is not)
/// `value`.
#[derive(Debug, Clone)]
pub struct Filter {
    pub header: String,
    pub value: String,
    pub equals: bool,
}

/// How shipment or stock files are read.
#[derive(Debug, Clone)]
pub struct ReadLayout {
    pub delimiter: u8,
    pub header: bool,
    pub date_format: DateFormat,
    pub time_zone: TimeZone,
    pub decimal_separator: char,
    pub file_pattern: String,
    pub filters: Vec<Filter>,
    pub columns: Vec<Column>,
}

/// A warehouse's three layouts, each today's where the adapter gives none.
#[derive(Debug, Clone)]
pub struct Layouts {
    pub orders: OrdersLayout,
    pub shipments: ReadLayout,
    pub inventory: ReadLayout,
}

impl Layouts {
    /// The layouts of an adapter already validated: an absent (or null) layout is today's
    /// (§9), and a layout given with only some keys takes today's for the others, columns
    /// included.
    pub fn of(adapter: &Map<String, Value>) -> Layouts {
        let given = |kind: LayoutKind| adapter.get(kind.key());
        Layouts {
            orders: OrdersLayout::of(given(LayoutKind::Orders)),
            shipments: ReadLayout::of(LayoutKind::Shipments, given(LayoutKind::Shipments)),
            inventory: ReadLayout::of(LayoutKind::Inventory, given(LayoutKind::Inventory)),
        }
    }
}

impl Default for OrdersLayout {
    /// Today's order file (§9.1).
    fn default() -> Self {
        OrdersLayout::of(None)
    }
}

impl OrdersLayout {
    /// The layout `given` (validated), over today's.
    fn of(given: Option<&Value>) -> OrdersLayout {
        let layout = over_default(LayoutKind::Orders, given);
        let time_zone = time_zone(&layout);
        let rows = match (text(&layout, "rows"), layout.get("max_items").and_then(integer)) {
            (Some("order"), Some(max)) => Rows::Order { max_items: usize::try_from(max).unwrap_or(1).max(1) },
            _ => Rows::Item,
        };
        OrdersLayout {
            delimiter: delimiter(&layout),
            header: header(&layout),
            rows,
            line_ending: if text(&layout, "line_ending") == Some("crlf") { "\r\n" } else { "\n" },
            date_format: date_format(&layout),
            time_zone,
            decimal_separator: decimal_separator(&layout),
            decimal_places: layout
                .get("decimal_places")
                .and_then(integer)
                .and_then(|p| u32::try_from(p).ok())
                .unwrap_or(2)
                .min(4),
            file_name: text(&layout, "file_name").unwrap_or("orders-{connection_id}-{batch}.csv").to_string(),
            columns: columns(LayoutKind::Orders, &layout),
        }
    }
}

impl ReadLayout {
    /// Today's shipment file (§9.2).
    pub fn default_shipments() -> ReadLayout {
        ReadLayout::of(LayoutKind::Shipments, None)
    }

    /// Today's stock file (§9.3).
    pub fn default_inventory() -> ReadLayout {
        ReadLayout::of(LayoutKind::Inventory, None)
    }

    /// The layout `given` (validated), over today's.
    fn of(kind: LayoutKind, given: Option<&Value>) -> ReadLayout {
        let layout = over_default(kind, given);
        let filters = layout.get("filters").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        ReadLayout {
            delimiter: delimiter(&layout),
            header: header(&layout),
            date_format: date_format(&layout),
            time_zone: time_zone(&layout),
            decimal_separator: decimal_separator(&layout),
            file_pattern: text(&layout, "file_pattern").unwrap_or("*.csv").to_string(),
            filters: filters.iter().filter_map(filter).collect(),
            columns: columns(kind, &layout),
        }
    }

    /// The column holding `field`, with its position in the layout.
    pub fn column(&self, field: Field) -> Option<(usize, &Column)> {
        self.columns.iter().enumerate().find(|(_, c)| c.field == Some(field))
    }
}

/// Today's layout of `kind` (§9) as the adapter would give it.
fn default_layout(kind: LayoutKind) -> Map<String, Value> {
    let layout = match kind {
        LayoutKind::Orders => json!({
            "delimiter": ",", "header": true, "rows": "item", "line_ending": "lf",
            "date_format": "iso8601", "time_zone": "UTC", "decimal_separator": ".",
            "decimal_places": 2, "file_name": "orders-{connection_id}-{batch}.csv",
            "columns": ORDER_COLUMNS,
        }),
        LayoutKind::Shipments => json!({
            "delimiter": ",", "header": true, "date_format": "iso8601", "time_zone": "UTC",
            "decimal_separator": ".", "file_pattern": "*.csv", "filters": [],
            "columns": SHIPMENT_COLUMNS,
        }),
        LayoutKind::Inventory => json!({
            "delimiter": ",", "header": true, "decimal_separator": ".", "file_pattern": "*.csv",
            "filters": [], "columns": ["sku", "quantity"],
        }),
    };
    match layout {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The keys `given` sets (null ones are not set), over today's layout.
fn over_default(kind: LayoutKind, given: Option<&Value>) -> Map<String, Value> {
    let mut layout = default_layout(kind);
    if let Some(Value::Object(given)) = given {
        for (key, value) in given.iter().filter(|(_, v)| !v.is_null()) {
            layout.insert(key.clone(), value.clone());
        }
    }
    layout
}

fn text<'a>(layout: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    layout.get(key).and_then(Value::as_str)
}

/// An integer given as a number or as its digits (a form's text).
fn integer(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64(),
        Value::String(s) if !s.is_empty() && s.len() <= 18 && s.bytes().all(|b| b.is_ascii_digit()) => {
            s.parse().ok()
        }
        _ => None,
    }
}

/// A boolean given as one or as its text (a form's `true`/`false`).
fn boolean(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) if s == "true" => Some(true),
        Value::String(s) if s == "false" => Some(false),
        _ => None,
    }
}

/// The one byte of a valid `delimiter`.
fn delimiter_byte(text: &str) -> Option<u8> {
    match text {
        "," | "\t" | "|" | ";" => text.bytes().next(),
        _ => None,
    }
}

fn delimiter(layout: &Map<String, Value>) -> u8 {
    text(layout, "delimiter").and_then(delimiter_byte).unwrap_or(b',')
}

fn header(layout: &Map<String, Value>) -> bool {
    layout.get("header").and_then(boolean).unwrap_or(true)
}

fn decimal_separator(layout: &Map<String, Value>) -> char {
    if text(layout, "decimal_separator") == Some(",") { ',' } else { '.' }
}

fn date_format(layout: &Map<String, Value>) -> DateFormat {
    text(layout, "date_format").and_then(|f| DateFormat::parse(f).ok()).unwrap_or(DateFormat::Iso8601)
}

fn time_zone(layout: &Map<String, Value>) -> TimeZone {
    text(layout, "time_zone").and_then(|name| TimeZone::get(name).ok()).unwrap_or(TimeZone::UTC)
}

fn columns(kind: LayoutKind, layout: &Map<String, Value>) -> Vec<Column> {
    let given = layout.get("columns").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    given.iter().filter_map(|c| column(kind, c)).collect()
}

fn column(kind: LayoutKind, value: &Value) -> Option<Column> {
    let empty = Map::new();
    let (header, object) = match value {
        Value::String(name) => (name.clone(), &empty),
        Value::Object(object) => (object.get("header")?.as_str()?.to_string(), object),
        _ => return None,
    };
    let field = match value {
        Value::String(name) => kind.field(name),
        _ => object.get("field").and_then(Value::as_str).and_then(|name| kind.field(name)),
    };
    let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_string);
    let map = object.get("map").and_then(Value::as_object).map(|map| {
        map.iter().filter_map(|(from, to)| Some((from.clone(), to.as_str()?.to_string()))).collect()
    });
    Some(Column {
        header,
        field,
        value: text("value"),
        default: text("default"),
        map: map.unwrap_or_default(),
        prefix: text("prefix").filter(|p| !p.is_empty()),
        format: object.get("format").and_then(Value::as_str).and_then(|f| DateFormat::parse(f).ok()),
        max_length: object.get("max_length").and_then(integer).and_then(|n| usize::try_from(n).ok()),
        split: text("split").filter(|s| !s.is_empty()),
    })
}

fn filter(value: &Value) -> Option<Filter> {
    let object = value.as_object()?;
    let header = object.get("header")?.as_str()?.to_string();
    let (value, equals) = match (object.get("equals"), object.get("not_equals")) {
        (Some(Value::String(v)), None) => (v.clone(), true),
        (None, Some(Value::String(v))) => (v.clone(), false),
        _ => return None,
    };
    Some(Filter { header, value, equals })
}

/// A header as it is compared: trimmed of spaces and tabs, ASCII lower case (§7.2).
fn header_key(header: &str) -> String {
    trim(header).to_ascii_lowercase()
}

/// A cell as it is read: trimmed of spaces and tabs at both ends (§5.1).
fn trim(cell: &str) -> &str {
    cell.trim_matches([' ', '\t'])
}
