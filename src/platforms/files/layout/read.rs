//! Shipment and stock files as a read layout says (§4.2, §4.3, §5.4, §7): which files are
//! read, where each column is, which rows are skipped, and each row read into what it means
//! or found bad, numbered by the line it starts on.

use std::collections::HashMap;
use std::str::FromStr;

use rust_decimal::Decimal;

use super::{Column, Field, ReadLayout, header_key, trim};
use crate::platforms::warehouse::{
    BadLine, LineRead, OrderReference, Parsed, ShipmentLine, StockRow, StoreKey, Units, weight_hundredths,
};

/// Name endings of files still being written: never read, whatever the pattern.
const PARTIAL_ENDINGS: [&str; 4] = [".tmp", ".part", ".filepart", ".partial"];

impl ReadLayout {
    /// Whether the file `file_name` is one of this layout's (§7.1): the whole name matches
    /// `file_pattern` (`*` any run, `?` one character, ASCII case-insensitive), and it is not
    /// hidden or still being written.
    pub fn matches(&self, file_name: &str) -> bool {
        let lower = file_name.to_ascii_lowercase();
        if lower.starts_with('.') || PARTIAL_ENDINGS.iter().any(|end| lower.ends_with(end)) {
            return false;
        }
        let name: Vec<char> = lower.chars().collect();
        let pattern: Vec<char> = self.file_pattern.to_ascii_lowercase().chars().collect();
        glob(&pattern, &name)
    }
}

/// A glob over a whole name: each `*` tried at the fewest characters first, going back to
/// the last `*` on a mismatch (at most pattern × name steps).
fn glob(pattern: &[char], name: &[char]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == '?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((at, from)) => {
                    p = at + 1;
                    n = from + 1;
                    star = Some((at, from + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

/// How the shipment lines of a layout name their order (§4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Naming {
    /// Today's: `order_id` when not empty, else `external_id` with `store_id`.
    Pair,
    /// One order match field, looked up in the reading connection's store.
    Single(Field),
}

fn naming(layout: &ReadLayout) -> Naming {
    let has = |field| layout.column(field).is_some();
    match (has(Field::OrderId), has(Field::ExternalId), has(Field::ExternalDisplayId)) {
        (true, true, _) => Naming::Pair,
        (true, false, _) => Naming::Single(Field::OrderId),
        (false, true, _) => Naming::Single(Field::ExternalId),
        (false, false, true) => Naming::Single(Field::ExternalDisplayId),
        // A layout that validation let through always names the order; with none, the header
        // check refuses the file.
        (false, false, false) => Naming::Pair,
    }
}

/// The lines of a shipment file, each read into a shipment line or found bad; a file whose
/// header cannot name an order, or that is not CSV, is refused whole. Which orders the lines
/// name is the engine's to find.
pub fn read_shipments(layout: &ReadLayout, bytes: &[u8]) -> Parsed<LineRead> {
    let naming = naming(layout);
    let header_of = |field: Field| layout.column(field).map_or(field.name(), |(_, c)| c.header.as_str());
    let mut required = vec![Field::TrackingNumber];
    if let Naming::Single(field) = naming {
        required.push(field);
    }
    let table = Table::read(layout, bytes, &required)?;
    if naming == Naming::Pair
        && !(table.found(Field::OrderId) || table.found(Field::ExternalId) && table.found(Field::StoreId))
    {
        return Err(vec![BadLine {
            line: table.header_line,
            problem: format!(
                "the header needs an {} column, or {} with {}",
                header_of(Field::OrderId),
                header_of(Field::ExternalId),
                header_of(Field::StoreId)
            ),
        }]);
    }
    Ok(table
        .rows
        .iter()
        .map(|(line, row)| {
            let row = Row { table: &table, cells: row };
            shipment_line(*line, naming, &row).map_err(|problem| BadLine { line: *line, problem })
        })
        .collect())
}

/// One row of a shipment file, or what is wrong with it.
fn shipment_line(line: u64, naming: Naming, row: &Row) -> Result<ShipmentLine, String> {
    let (order, reference) = match naming {
        Naming::Pair => {
            let (order_id, external_id, store_id) =
                (row.text(Field::OrderId)?, row.text(Field::ExternalId)?, row.text(Field::StoreId)?);
            if !order_id.is_empty() {
                let Ok(id) = order_id.parse::<i64>() else {
                    return Err(format!("order_id {order_id:?} is not a number"));
                };
                (OrderReference::Order(id), format!("order_id {order_id}"))
            } else {
                let reference = format!("external_id {external_id:?} of store {store_id:?}");
                match (external_id.is_empty(), store_id.parse::<i64>()) {
                    (false, Ok(store_id)) => (OrderReference::External { store_id, external_id }, reference),
                    _ => (OrderReference::Stranger, reference),
                }
            }
        }
        Naming::Single(field) => {
            let (header, key) = (row.header(field), row.text(field)?);
            if key.is_empty() {
                return Err(format!("has no {header}"));
            }
            let reference = format!("{header} {}", row.raw(field));
            let key = match field {
                Field::OrderId => {
                    StoreKey::Id(key.parse().map_err(|_| format!("{header} {key:?} is not a number"))?)
                }
                Field::ExternalId => StoreKey::External(key),
                _ => StoreKey::Display(key),
            };
            let store_id = match row.text(Field::StoreId)? {
                store if store.is_empty() => None,
                store => Some(
                    store
                        .parse()
                        .map_err(|_| format!("{} {store:?} is not a number", row.header(Field::StoreId)))?,
                ),
            };
            (OrderReference::InStore { key, store_id }, reference)
        }
    };
    let tracking_number = row.text(Field::TrackingNumber)?;
    if tracking_number.is_empty() {
        return Err(format!("has no {}", row.header(Field::TrackingNumber)));
    }
    let shipped_at = match row.text(Field::ShippedAt)? {
        text if text.is_empty() => None,
        text => Some(row.date(Field::ShippedAt, &text)?),
    };
    let weight = match row.text(Field::Weight)? {
        text if text.is_empty() => None,
        text => Some(
            weight(&text, row.table.layout.decimal_separator)
                .map_err(|problem| format!("{} {problem}", row.header(Field::Weight)))?,
        ),
    };
    let item = match (row.text(Field::Sku)?, row.text(Field::Quantity)?) {
        (sku, _) if sku.is_empty() => None,
        (sku, quantity) if quantity.is_empty() => Some((sku, Units::Count(1))),
        (sku, quantity) => match quantity.parse::<i64>() {
            Ok(q) if q >= 1 => Some((sku, Units::Count(q))),
            _ => {
                let header = row.header(Field::Quantity);
                return Err(format!("{header} {quantity:?} is not a whole number of at least 1"));
            }
        },
    };
    let text = |field| Ok::<_, String>(Some(row.text(field)?).filter(|t| !t.is_empty()));
    Ok(ShipmentLine {
        line,
        order,
        reference,
        tracking_number,
        carrier_name: text(Field::CarrierName)?,
        service_level: text(Field::ServiceLevel)?,
        description: None,
        shipped_at,
        weight,
        item,
    })
}

/// A weight cell: digits with at most one `separator` (and a leading `-`, refused), as
/// hundredths rounded half to even.
fn weight(text: &str, separator: char) -> Result<i64, String> {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let well_formed = unsigned.chars().any(|c| c.is_ascii_digit())
        && unsigned.chars().all(|c| c.is_ascii_digit() || c == separator)
        && unsigned.matches(separator).count() <= 1;
    let bad = || format!("must be a decimal number: digits with at most one {separator:?}");
    if !well_formed {
        return Err(bad());
    }
    let value = Decimal::from_str(&text.replace(separator, ".")).map_err(|_| bad())?;
    if value.is_sign_negative() && !value.is_zero() {
        return Err("must not be negative".into());
    }
    weight_hundredths(value.abs())
        .ok_or_else(|| "must be a decimal number of at most 8 digits before the point".into())
}

/// The rows of a stock file, rows of one SKU added up (§7.4), in the order SKUs first appear;
/// every row must name a sku and a whole quantity, a negative one counting as 0.
pub fn read_stock(layout: &ReadLayout, bytes: &[u8]) -> Parsed<StockRow> {
    let table = Table::read(layout, bytes, &[Field::Sku, Field::Quantity])?;
    let mut out: Vec<StockRow> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut bad = Vec::new();
    for (line, cells) in &table.rows {
        let row = Row { table: &table, cells };
        let read = (|| {
            let (sku, quantity) = (row.text(Field::Sku)?, row.text(Field::Quantity)?);
            if sku.is_empty() {
                return Err(format!("has no {}", row.header(Field::Sku)));
            }
            let header = row.header(Field::Quantity);
            let count = quantity
                .parse::<i64>()
                .map_err(|_| format!("has a {header} that is not a whole number: {quantity:?}"))?;
            Ok((sku, count.max(0)))
        })();
        match read {
            Ok((sku, count)) => match at.get(&sku) {
                Some(&i) => out[i].quantity = out[i].quantity.saturating_add(count),
                None => {
                    at.insert(sku.clone(), out.len());
                    out.push(StockRow { sku, quantity: count });
                }
            },
            Err(problem) => bad.push(BadLine { line: *line, problem }),
        }
    }
    if bad.is_empty() { Ok(out) } else { Err(bad) }
}

/// A file's rows that pass the filters, with where each of the layout's columns is.
struct Table<'a> {
    layout: &'a ReadLayout,
    /// Per layout column, its place in a row; `None` when the file's header lacks it.
    places: Vec<Option<usize>>,
    /// The header's line, or 1 without one: what a problem of the whole file names.
    header_line: u64,
    /// The data rows that pass the filters, with the line each starts on.
    rows: Vec<(u64, csv::StringRecord)>,
}

impl<'a> Table<'a> {
    /// Reads a file's rows; a file that is not UTF-8 or not CSV, or whose header lacks the
    /// column of a `required` field or of a filter, is refused whole.
    fn read(layout: &'a ReadLayout, bytes: &[u8], required: &[Field]) -> Result<Table<'a>, Vec<BadLine>> {
        // Spreadsheets save "CSV UTF-8" with a byte order mark.
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        if std::str::from_utf8(bytes).is_err() {
            return Err(vec![BadLine { line: 1, problem: "the file is not UTF-8 text".into() }]);
        }
        let mut records = Records::new(layout.delimiter, bytes);
        let (header_line, places, filters) = if layout.header {
            let (line, header) = match records.next() {
                Some((line, Ok(header))) => (line, header),
                Some((line, Err(problem))) => {
                    return Err(vec![BadLine { line, problem: format!("the header is not CSV: {problem}") }]);
                }
                None => {
                    return Err(vec![BadLine {
                        line: 1,
                        problem: "the file is empty; a header row is required".into(),
                    }]);
                }
            };
            let mut at = HashMap::new();
            for (i, name) in header.iter().enumerate() {
                at.entry(header_key(name)).or_insert(i);
            }
            let place = |header: &str| at.get(&header_key(header)).copied();
            let places: Vec<Option<usize>> = layout.columns.iter().map(|c| place(&c.header)).collect();
            let filters: Vec<Option<usize>> = layout.filters.iter().map(|f| place(&f.header)).collect();
            let required_headers = layout
                .columns
                .iter()
                .zip(&places)
                .filter(|(c, place)| place.is_none() && c.field.is_some_and(|f| required.contains(&f)))
                .map(|(c, _)| c.header.as_str());
            let filter_headers = layout
                .filters
                .iter()
                .zip(&filters)
                .filter(|(_, p)| p.is_none())
                .map(|(f, _)| f.header.as_str());
            let missing: Vec<&str> = required_headers.chain(filter_headers).collect();
            if !missing.is_empty() {
                return Err(vec![BadLine {
                    line,
                    problem: format!("the header has no column {}", missing.join(", ")),
                }]);
            }
            (line, places, filters)
        } else {
            let place = |header: &str| {
                layout.columns.iter().position(|c| header_key(&c.header) == header_key(header))
            };
            let places = (0..layout.columns.len()).map(Some).collect();
            (1, places, layout.filters.iter().map(|f| place(&f.header)).collect())
        };
        let mut rows = Vec::new();
        let mut bad = Vec::new();
        for (line, record) in records {
            let record = match record {
                Ok(record) => record,
                Err(problem) => {
                    bad.push(BadLine { line, problem: format!("is not valid CSV: {problem}") });
                    continue;
                }
            };
            let passes = layout.filters.iter().zip(&filters).all(|(filter, place)| {
                let cell = place.and_then(|p| record.get(p)).map_or("", trim);
                (cell == filter.value) == filter.equals
            });
            if !passes {
                continue;
            }
            if !layout.header && record.len() < layout.columns.len() {
                let problem =
                    format!("has {} cells; the layout has {} columns", record.len(), layout.columns.len());
                bad.push(BadLine { line, problem });
                continue;
            }
            rows.push((line, record));
        }
        if bad.is_empty() { Ok(Table { layout, places, header_line, rows }) } else { Err(bad) }
    }

    /// Whether the file has the column of `field`.
    fn found(&self, field: Field) -> bool {
        self.layout.column(field).is_some_and(|(i, _)| self.places.get(i).copied().flatten().is_some())
    }
}

/// One data row of a table.
struct Row<'t, 'a> {
    table: &'t Table<'a>,
    cells: &'t csv::StringRecord,
}

impl Row<'_, '_> {
    fn column(&self, field: Field) -> Option<(usize, &Column)> {
        self.table.layout.column(field)
    }

    /// How the layout names the column of `field`, for messages.
    fn header(&self, field: Field) -> &str {
        self.column(field).map_or(field.name(), |(_, c)| c.header.as_str())
    }

    /// The cell of `field`, trimmed; empty when the layout or the file has no such column.
    fn raw(&self, field: Field) -> &str {
        let Some((i, _)) = self.column(field) else { return "" };
        self.table.places.get(i).copied().flatten().and_then(|p| self.cells.get(p)).map_or("", trim)
    }

    /// The text of `field` as §5.4 reads it: split (the first tracking number), the prefix
    /// taken off, mapped; a non-empty cell without its prefix makes the row bad.
    fn text(&self, field: Field) -> Result<String, String> {
        let raw = self.raw(field);
        let Some((_, column)) = self.column(field) else { return Ok(String::new()) };
        let cell = match &column.split {
            Some(split) => {
                raw.split(split.as_str()).map(trim).find(|part| !part.is_empty()).unwrap_or_default()
            }
            None => raw,
        };
        let cell = match &column.prefix {
            Some(prefix) if !cell.is_empty() => cell.strip_prefix(prefix.as_str()).ok_or_else(|| {
                format!("{} {:?} does not start with {prefix:?}", column.header, shown(cell))
            })?,
            _ => cell,
        };
        Ok(column.map.get(cell).cloned().unwrap_or_else(|| cell.to_string()))
    }

    /// A date cell of `field` (not empty), read in the column's format or the layout's.
    fn date(&self, field: Field, text: &str) -> Result<i64, String> {
        let layout = self.table.layout;
        let format = self.column(field).and_then(|(_, c)| c.format.as_ref()).unwrap_or(&layout.date_format);
        format.read(text, &layout.time_zone).map_err(|problem| format!("{} {problem}", self.header(field)))
    }
}

/// A cell as a message quotes it: a long one cut.
fn shown(cell: &str) -> &str {
    match cell.char_indices().nth(60) {
        Some((at, _)) => &cell[..at],
        None => cell,
    }
}

/// The non-blank records of a file, each with the line it starts on, or why it is not CSV.
struct Records<'b> {
    reader: csv::Reader<&'b [u8]>,
    bytes: &'b [u8],
    /// Line breaks are counted once: up to this byte, this many lines.
    counted: (usize, u64),
}

impl<'b> Records<'b> {
    fn new(delimiter: u8, bytes: &'b [u8]) -> Records<'b> {
        let reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .delimiter(delimiter)
            .from_reader(bytes);
        Records { reader, bytes, counted: (0, 1) }
    }

    /// The line of the byte at `byte`. A record's line is counted from its first byte: quoted
    /// cells may span lines, and the reader skips blank lines. (The reader's position may
    /// still be on the previous line's end, so line breaks there are stepped over first.)
    fn line_at(&mut self, byte: u64) -> u64 {
        let bytes = self.bytes;
        let mut end = usize::try_from(byte).unwrap_or(usize::MAX).min(bytes.len());
        while end < bytes.len() && matches!(bytes[end], b'\r' | b'\n') {
            end += 1;
        }
        let (from, lines) = self.counted;
        if end >= from {
            self.counted = (end, lines + bytes[from..end].iter().filter(|b| **b == b'\n').count() as u64);
        }
        self.counted.1
    }
}

impl Iterator for Records<'_> {
    type Item = (u64, Result<csv::StringRecord, String>);

    fn next(&mut self) -> Option<Self::Item> {
        let mut record = csv::StringRecord::new();
        loop {
            let line = self.line_at(self.reader.position().byte());
            match self.reader.read_record(&mut record) {
                Ok(false) => return None,
                // Rows whose every cell is empty are skipped (§5.1).
                Ok(true) if record.iter().all(|c| trim(c).is_empty()) => {}
                Ok(true) => {
                    let line = match record.position() {
                        Some(p) => self.line_at(p.byte()),
                        None => line,
                    };
                    return Some((line, Ok(record)));
                }
                Err(e) => return Some((line, Err(e.to_string()))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn layout(kind: super::super::LayoutKind, given: serde_json::Value) -> ReadLayout {
        ReadLayout::of(kind, Some(&given))
    }

    #[test]
    fn file_patterns_match_whole_names_case_insensitively_and_never_partial_files() {
        let layout = layout(
            super::super::LayoutKind::Shipments,
            json!({"file_pattern": "Shipping_Confirmation*.csv"}),
        );
        assert!(layout.matches("Shipping_Confirmation_20260308.csv"));
        assert!(layout.matches("shipping_confirmation.CSV"));
        assert!(!layout.matches("returns.csv"));
        assert!(!layout.matches("Shipping_Confirmation_1.csv.part"));
        assert!(!layout.matches("xShipping_Confirmation_1.csv"));
        let one = super::super::ReadLayout { file_pattern: "a?c*".into(), ..layout.clone() };
        assert!(one.matches("abc") && one.matches("axcdef") && !one.matches("ac"));
        assert!(ReadLayout::default_inventory().matches("stock.csv"));
        assert!(!ReadLayout::default_inventory().matches(".stock.csv"));
        // A pathological pattern costs pattern × name steps, no more.
        let stars = super::super::ReadLayout { file_pattern: "*a*a*a*a*a*a*a*b".into(), ..layout };
        assert!(!stars.matches(&"a".repeat(200)));
    }

    #[test]
    fn without_a_header_row_columns_are_read_by_place_and_short_rows_are_bad() {
        let layout = layout(
            super::super::LayoutKind::Inventory,
            json!({"header": false, "delimiter": "|", "columns": [
                {"header": "Item"}, {"header": "SKU", "field": "sku"}, {"header": "Qty", "field": "quantity"}],
                "filters": [{"header": "item", "not_equals": "skip"}]}),
        );
        let rows = read_stock(&layout, b"x|A|3\nskip|B\ny|A|4|extra\n").unwrap();
        assert_eq!(rows, vec![StockRow { sku: "A".into(), quantity: 7 }]);
        let bad = read_stock(&layout, b"x|A|3\ny|B\n").unwrap_err();
        assert_eq!((bad[0].line, bad[0].problem.as_str()), (2, "has 2 cells; the layout has 3 columns"));
    }

    #[test]
    fn a_layout_naming_orders_by_one_key_names_them_in_the_connections_store() {
        let layout = layout(
            super::super::LayoutKind::Shipments,
            json!({"columns": [
                {"header": "Ref", "field": "external_display_id"}, {"header": "Shop", "field": "store_id"},
                {"header": "Track", "field": "tracking_number", "split": ";"}, {"header": "Wt", "field": "weight"}],
                "decimal_separator": ","}),
        );
        let read = |line: &str| {
            read_shipments(&layout, format!("Ref,Shop,Track,Wt\n{line}\n").as_bytes()).unwrap().remove(0)
        };
        let line = read("#1001,3,; 1Z1 ;1Z2,\"1,255\"").unwrap();
        assert_eq!(
            line.order,
            OrderReference::InStore { key: StoreKey::Display("#1001".into()), store_id: Some(3) }
        );
        assert_eq!(
            (line.reference.as_str(), line.tracking_number.as_str(), line.weight),
            ("Ref #1001", "1Z1", Some(126))
        );
        let unstored = read("#1001,,1Z1,").unwrap();
        assert_eq!(
            unstored.order,
            OrderReference::InStore { key: StoreKey::Display("#1001".into()), store_id: None }
        );
        assert_eq!(read("#1001,x,1Z1,").unwrap_err().problem, "Shop \"x\" is not a number");
        assert_eq!(read(",3,1Z1,").unwrap_err().problem, "has no Ref");
        assert!(read("#1001,3,1Z1,1.5").unwrap_err().problem.starts_with("Wt must be a decimal number"));
        let Err(bad) = read_shipments(&layout, b"Shop,Track\n3,1Z\n") else { panic!("accepted") };
        assert_eq!(bad[0].problem, "the header has no column Ref");
    }

    #[test]
    fn stock_rows_of_one_sku_are_added_up_a_negative_row_counting_as_zero() {
        let rows =
            read_stock(&ReadLayout::default_inventory(), b"sku,quantity\nA,2\nB,1\nA,-4\nA,3\n").unwrap();
        assert_eq!(
            rows,
            vec![StockRow { sku: "A".into(), quantity: 5 }, StockRow { sku: "B".into(), quantity: 1 }]
        );
    }

    #[test]
    fn a_ten_megabyte_line_is_read_without_trouble() {
        let mut file = b"sku,quantity\n".to_vec();
        file.extend(std::iter::repeat_n(b'x', 10 << 20));
        let bad = read_stock(&ReadLayout::default_inventory(), &file).unwrap_err();
        assert_eq!(bad[0].line, 2);
        let Err(header) = read_stock(&ReadLayout::default_inventory(), &file[13..]) else {
            panic!("accepted")
        };
        assert_eq!(header[0].line, 1);
        assert!(header[0].problem.len() < 200, "a problem quotes no whole header");
    }
}
