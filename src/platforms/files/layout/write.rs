//! Order files as an orders layout says (§4.1, §5, §6): the name, the header row, and each
//! order's rows, handed out in chunks so a large file is never held whole.

use jiff::Timestamp;

use super::{Column, Field, OrdersLayout, Rows};
use crate::platforms::warehouse::{OutgoingItem, OutgoingOrder};

impl OrdersLayout {
    /// Why the layout cannot write `order`: more items than a `rows: "order"` layout's
    /// `max_items`.
    pub fn refusal(&self, order: &OutgoingOrder) -> Option<String> {
        match self.rows {
            Rows::Order { max_items } if order.items.len() > max_items => {
                Some(format!("order has {} items; orders_layout.max_items is {max_items}", order.items.len()))
            }
            _ => None,
        }
    }

    /// The order file's name: `file_name` with `{connection_id}`, `{batch}` and `{date}` (the
    /// day the send was first claimed, `YYYYMMDD` in the layout's time zone) put in.
    pub fn file_name(&self, connection_id: i64, batch: i64, created_at_ms: i64) -> String {
        let day = self
            .time_zone
            .to_datetime(Timestamp::from_millisecond(created_at_ms).unwrap_or(Timestamp::UNIX_EPOCH));
        let date = format!("{:04}{:02}{:02}", day.year(), day.month(), day.day());
        self.file_name
            .replace("{connection_id}", &connection_id.to_string())
            .replace("{batch}", &batch.to_string())
            .replace("{date}", &date)
    }
}

/// An order file being written.
pub struct OrderWriter {
    layout: OrdersLayout,
    /// What each written column holds: the layout's column, and for an item column of a
    /// `rows: "order"` layout the item (from 0) of its group.
    cells: Vec<(usize, Option<usize>)>,
    buffer: Vec<u8>,
}

impl OrderWriter {
    /// A file with its header row, when the layout has one.
    pub fn new(layout: &OrdersLayout) -> OrderWriter {
        let columns = &layout.columns;
        let cells = match layout.rows {
            Rows::Item => (0..columns.len()).map(|i| (i, None)).collect(),
            Rows::Order { max_items } => {
                let is_item = |c: &Column| c.field.is_some_and(Field::is_item);
                let first = columns.iter().position(is_item).unwrap_or(columns.len());
                let end = columns.iter().rposition(is_item).map_or(first, |last| last + 1);
                let group = (0..max_items).flat_map(|n| (first..end).map(move |i| (i, Some(n))));
                (0..first)
                    .map(|i| (i, None))
                    .chain(group)
                    .chain((end..columns.len()).map(|i| (i, None)))
                    .collect()
            }
        };
        let mut file = OrderWriter { layout: layout.clone(), cells, buffer: Vec::with_capacity(64 * 1024) };
        if layout.header {
            let headers: Vec<String> = file
                .cells
                .iter()
                .map(|&(i, n)| {
                    let header = file.layout.columns.get(i).map_or("", |c| c.header.as_str());
                    match n {
                        Some(n) => header.replace("{n}", &(n + 1).to_string()),
                        None => header.to_string(),
                    }
                })
                .collect();
            file.record(&headers);
        }
        file
    }

    /// Writes the order's rows, or refuses an order with more items than a `rows: "order"`
    /// layout's `max_items` (the refusal is the order's error, and the file goes on without
    /// it).
    pub fn order(&mut self, order: &OutgoingOrder) -> Result<(), String> {
        if let Some(refusal) = self.layout.refusal(order) {
            return Err(refusal);
        }
        self.rows(order);
        Ok(())
    }

    /// The order's rows, with no more than `max_items` items in a `rows: "order"` layout.
    /// `rows: "item"`: one row per item, an order without items being one row with the item
    /// cells empty; `rows: "order"`: one row.
    pub(in crate::platforms::files) fn rows(&mut self, order: &OutgoingOrder) {
        match self.layout.rows {
            Rows::Order { .. } => self.row(order, None),
            Rows::Item if order.items.is_empty() => self.row(order, None),
            Rows::Item => {
                for line in 0..order.items.len() {
                    self.row(order, Some(line));
                }
            }
        }
    }

    /// One row: `line` is the item of a `rows: "item"` row.
    fn row(&mut self, order: &OutgoingOrder, line: Option<usize>) {
        let cells: Vec<String> = self
            .cells
            .iter()
            .map(|&(i, n)| {
                let Some(column) = self.layout.columns.get(i) else { return String::new() };
                if let Some(value) = &column.value {
                    return value.clone();
                }
                let Some(field) = column.field else { return String::new() };
                if !field.is_item() {
                    return self.cell(column, self.order_text(column, field, order));
                }
                // An item cell with no item (beyond the order's items) is empty: no default.
                match n.or(line).and_then(|at| Some((at, order.items.get(at)?))) {
                    Some((at, item)) => self.cell(column, self.item_text(field, at, item)),
                    None => String::new(),
                }
            })
            .collect();
        self.record(&cells);
    }

    /// A written cell from its field's text (§5.3): mapped, defaulted, prefixed, cut.
    fn cell(&self, column: &Column, text: String) -> String {
        let text = column.map.get(&text).cloned().unwrap_or(text);
        let text = match &column.default {
            Some(default) if text.is_empty() => default.clone(),
            _ => text,
        };
        let text = match &column.prefix {
            Some(prefix) if !text.is_empty() => format!("{prefix}{text}"),
            _ => text,
        };
        match column.max_length {
            Some(most) => text.chars().take(most).collect(),
            None => text,
        }
    }

    /// The text of an order field (§4.1); empty for null.
    fn order_text(&self, column: &Column, field: Field, order: &OutgoingOrder) -> String {
        let text = |value: &Option<String>| value.clone().unwrap_or_default();
        let date = |ms: Option<i64>| {
            let format = column.format.as_ref().unwrap_or(&self.layout.date_format);
            ms.map(|ms| format.write(ms, &self.layout.time_zone)).unwrap_or_default()
        };
        let a = &order.ship_to;
        match field {
            Field::OrderId => order.order_id.to_string(),
            Field::ExternalId => text(&order.external_id),
            Field::ExternalDisplayId => text(&order.external_display_id),
            Field::StoreId => order.store_id.to_string(),
            Field::OrderedAt => date(order.ordered_at),
            Field::CustomerEmail => text(&order.customer_email),
            Field::ShipFirstName => text(&a.first_name),
            Field::ShipLastName => text(&a.last_name),
            Field::ShipStreet1 => text(&a.street1),
            Field::ShipStreet2 => text(&a.street2),
            Field::ShipCity => text(&a.city),
            Field::ShipRegion => text(&a.region),
            Field::ShipPostalCode => text(&a.postal_code),
            Field::ShipCountry => text(&a.country),
            Field::ShipTelephone => text(&a.telephone),
            Field::ShipName => {
                let parts = [text(&a.first_name), text(&a.last_name)];
                parts.into_iter().filter(|p| !p.is_empty()).collect::<Vec<_>>().join(" ")
            }
            Field::Carrier => text(&order.carrier),
            Field::ServiceLevel => text(&order.service_level),
            Field::GiftMessage => text(&order.gift_message),
            Field::Notes => text(&order.notes),
            Field::PurchaseOrderId => text(&order.purchase_order_id),
            Field::RequestedShipDate => date(order.requested_ship_date),
            // Item fields and the read layouts' own are not order fields.
            _ => String::new(),
        }
    }

    /// The text of an item field of the item at `at` (from 0).
    fn item_text(&self, field: Field, at: usize, item: &OutgoingItem) -> String {
        let text = |value: &Option<String>| value.clone().unwrap_or_default();
        let decimal = |hundredths: Option<i64>| {
            hundredths
                .map(|h| decimal(h, self.layout.decimal_places, self.layout.decimal_separator))
                .unwrap_or_default()
        };
        match field {
            Field::Line => (at + 1).to_string(),
            Field::Sku => text(&item.sku),
            Field::Upc => text(&item.upc),
            Field::Name => text(&item.name),
            Field::Quantity => item.quantity.to_string(),
            Field::UnitPrice => decimal(item.unit_price),
            Field::Weight => decimal(item.weight),
            _ => String::new(),
        }
    }

    /// Appends a row: cells quoted only where they must be (§5.1), then the line ending.
    fn record(&mut self, cells: &[String]) {
        let delimiter = self.layout.delimiter;
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                self.buffer.push(delimiter);
            }
            if cell.bytes().any(|b| b == delimiter || matches!(b, b'"' | b'\r' | b'\n')) {
                self.buffer.push(b'"');
                self.buffer.extend_from_slice(cell.replace('"', "\"\"").as_bytes());
                self.buffer.push(b'"');
            } else {
                self.buffer.extend_from_slice(cell.as_bytes());
            }
        }
        self.buffer.extend_from_slice(self.layout.line_ending.as_bytes());
    }

    /// What is written so far, once it is at least `size` bytes.
    pub fn chunk(&mut self, size: usize) -> Option<Vec<u8>> {
        (self.buffer.len() >= size).then(|| std::mem::take(&mut self.buffer))
    }

    /// The rest of the file.
    pub fn finish(self) -> Vec<u8> {
        self.buffer
    }
}

/// Hundredths with `places` digits after `separator`, rounded half to even (§5.1).
fn decimal(hundredths: i64, places: u32, separator: char) -> String {
    let magnitude = u128::from(hundredths.unsigned_abs());
    let scaled = if places >= 2 {
        magnitude * 10u128.pow(places - 2)
    } else {
        let divisor = 10u128.pow(2 - places);
        let (whole, rest) = (magnitude / divisor, magnitude % divisor);
        let up = 2 * rest > divisor || 2 * rest == divisor && whole % 2 == 1;
        whole + u128::from(up)
    };
    let unit = 10u128.pow(places);
    let sign = if hundredths < 0 && scaled != 0 { "-" } else { "" };
    match places {
        0 => format!("{sign}{scaled}"),
        _ => format!("{sign}{}{separator}{:0width$}", scaled / unit, scaled % unit, width = places as usize),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_round_half_to_even_with_the_separator() {
        for (hundredths, places, separator, text) in [
            (1250, 2, '.', "12.50"),
            (1250, 2, ',', "12,50"),
            (1250, 0, '.', "12"),
            (1350, 0, '.', "14"),
            (1251, 0, '.', "13"),
            (125, 1, '.', "1.2"),
            (135, 1, ',', "1,4"),
            (999, 4, '.', "9.9900"),
            (-50, 0, '.', "0"),
            (-150, 0, '.', "-2"),
            (-5, 2, '.', "-0.05"),
        ] {
            assert_eq!(decimal(hundredths, places, separator), text, "{hundredths} to {places}");
        }
    }
}
