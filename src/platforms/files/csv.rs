//! orderbridge's warehouse CSV files (CONTRACT §11, "File warehouses"): the order file it
//! writes, and the shipment and stock files it reads. RFC 4180 with a header row; columns
//! are found by name in any order, and unknown columns are ignored; a UTF-8 byte order mark
//! at the start of a file is not part of it.

use std::collections::HashMap;

pub use crate::platforms::warehouse::{
    BadLine, LineRead, OrderReference, OutgoingItem, OutgoingOrder, ShipTo, ShipmentLine, StockRow, Units,
};
use crate::{dates, money};

/// The columns of an order file, in order.
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

/// Text for a file cell: empty for null.
fn cell(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or_default()
}

fn date_cell(ms: Option<i64>) -> String {
    ms.map(dates::format_ms).unwrap_or_default()
}

fn money_cell(hundredths: Option<i64>) -> String {
    hundredths.map(money::format).unwrap_or_default()
}

/// An order file being written, handed out in chunks so a large one is never held whole.
pub struct OrderFile {
    buffer: Vec<u8>,
}

impl OrderFile {
    /// A file with its header row.
    pub fn new() -> OrderFile {
        let mut file = OrderFile { buffer: Vec::with_capacity(64 * 1024) };
        file.record(ORDER_COLUMNS.iter().copied());
        file
    }

    fn record<'a>(&mut self, fields: impl IntoIterator<Item = &'a str>) {
        // One record per writer: csv quotes it (RFC 4180) into our buffer, which we can then
        // hand out in pieces. Writing into a Vec cannot fail.
        let mut out = csv::WriterBuilder::new().buffer_capacity(1024).from_writer(&mut self.buffer);
        let _ = out.write_record(fields);
        let _ = out.flush();
    }

    /// The order's rows: one per item, the order's columns repeated, `line` counting from 1;
    /// an order without items is one row with the item columns empty.
    pub fn order(&mut self, order: &OutgoingOrder) {
        let (id, store, ordered_at) =
            (order.order_id.to_string(), order.store_id.to_string(), date_cell(order.ordered_at));
        let a = &order.ship_to;
        let head: [&str; 19] = [
            &id,
            cell(&order.external_id),
            cell(&order.external_display_id),
            &store,
            &ordered_at,
            cell(&order.customer_email),
            cell(&a.first_name),
            cell(&a.last_name),
            cell(&a.street1),
            cell(&a.street2),
            cell(&a.city),
            cell(&a.region),
            cell(&a.postal_code),
            cell(&a.country),
            cell(&a.telephone),
            cell(&order.carrier),
            cell(&order.service_level),
            cell(&order.gift_message),
            cell(&order.notes),
        ];
        if order.items.is_empty() {
            self.record(head.into_iter().chain([""; 6]));
        }
        for (at, item) in order.items.iter().enumerate() {
            let (line, quantity) = ((at + 1).to_string(), item.quantity.to_string());
            let (price, weight) = (money_cell(item.unit_price), money_cell(item.weight));
            let item = [line.as_str(), cell(&item.sku), cell(&item.name), &quantity, &price, &weight];
            self.record(head.into_iter().chain(item));
        }
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

impl Default for OrderFile {
    fn default() -> Self {
        OrderFile::new()
    }
}

/// The positions of the named columns in a header.
struct Header(HashMap<String, usize>);

impl Header {
    fn read(record: &csv::StringRecord) -> Header {
        let mut at = HashMap::new();
        for (i, name) in record.iter().enumerate() {
            // Stray spaces are not part of the name.
            let name = name.trim().to_ascii_lowercase();
            at.entry(name).or_insert(i);
        }
        Header(at)
    }

    fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    fn get(&self, record: &csv::StringRecord, name: &str) -> String {
        self.0.get(name).and_then(|&i| record.get(i)).map(|s| s.trim().to_string()).unwrap_or_default()
    }
}

fn reader(bytes: &[u8]) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(bytes)
}

/// Reads the rows of a file with its header; a line that is not CSV is a bad line.
/// The data records of a file with the line each starts on.
type Numbered = Vec<(u64, csv::StringRecord)>;

fn rows(bytes: &[u8], required: &[&str]) -> Result<(Header, Numbered), Vec<BadLine>> {
    // Spreadsheets save "CSV UTF-8" with a byte order mark.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if std::str::from_utf8(bytes).is_err() {
        return Err(vec![BadLine { line: 1, problem: "the file is not UTF-8 text".into() }]);
    }
    let mut reader = reader(bytes);
    let mut record = csv::StringRecord::new();
    let header = match reader.read_record(&mut record) {
        Ok(true) => Header::read(&record),
        Ok(false) => {
            return Err(vec![BadLine {
                line: 1,
                problem: "the file is empty; a header row is required".into(),
            }]);
        }
        Err(e) => return Err(vec![BadLine { line: 1, problem: format!("the header is not CSV: {e}") }]),
    };
    let missing: Vec<&str> = required.iter().copied().filter(|c| !header.has(c)).collect();
    if !missing.is_empty() {
        return Err(vec![BadLine {
            line: 1,
            problem: format!("the header has no column {}", missing.join(", ")),
        }]);
    }
    let mut out = Vec::new();
    let mut bad = Vec::new();
    // A record's line is counted from its first byte: quoted fields may span lines, and
    // blank lines are skipped by the reader.
    // (The reader's position may still be on the previous line's end, so line breaks at
    // the position are stepped over first.)
    // Positions only grow, so the line breaks are counted once: up to the last position
    // asked about, then on from there.
    let mut counted = (0usize, 1u64);
    let mut line_at = |byte: u64| {
        let mut end = usize::try_from(byte).unwrap_or(usize::MAX).min(bytes.len());
        while end < bytes.len() && matches!(bytes[end], b'\r' | b'\n') {
            end += 1;
        }
        let (from, lines) = counted;
        if end >= from {
            counted = (end, lines + bytes[from..end].iter().filter(|b| **b == b'\n').count() as u64);
        }
        counted.1
    };
    loop {
        let line = line_at(reader.position().byte());
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) if record.iter().all(|c| c.trim().is_empty()) => {}
            Ok(true) => out.push((record.position().map_or(line, |p| line_at(p.byte())), record.clone())),
            Err(e) => bad.push(BadLine { line, problem: format!("is not valid CSV: {e}") }),
        }
    }
    if bad.is_empty() { Ok((header, out)) } else { Err(bad) }
}

/// The lines of a shipment file, each read into a shipment line or found bad; a header that
/// cannot name an order refuses the file whole. Which orders the lines name is the engine's to
/// find.
pub fn read_shipments(bytes: &[u8]) -> Result<Vec<LineRead>, Vec<BadLine>> {
    let (header, records) = rows(bytes, &["tracking_number"])?;
    if !(header.has("order_id") || header.has("external_id") && header.has("store_id")) {
        return Err(vec![BadLine {
            line: 1,
            problem: "the header needs an order_id column, or external_id with store_id".into(),
        }]);
    }
    Ok(records
        .into_iter()
        .map(|(line, r)| shipment_line(line, &header, &r).map_err(|problem| BadLine { line, problem }))
        .collect())
}

/// One line of a shipment file, or what is wrong with it.
fn shipment_line(line: u64, header: &Header, record: &csv::StringRecord) -> Result<ShipmentLine, String> {
    let get = |name: &str| header.get(record, name);
    let (order_id, external_id, store_id) = (get("order_id"), get("external_id"), get("store_id"));
    let (order, reference) = if !order_id.is_empty() {
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
    };
    let tracking_number = get("tracking_number");
    if tracking_number.is_empty() {
        return Err("has no tracking_number".into());
    }
    let shipped_at = match get("shipped_at") {
        text if text.is_empty() => None,
        text => Some(dates::parse_date_string(&text).map_err(|problem| format!("shipped_at {problem}"))?),
    };
    let weight = match get("weight") {
        text if text.is_empty() => None,
        text => match money::parse_text(&text, 8) {
            Ok(w) if w >= 0 => Some(w),
            Ok(_) => return Err("weight must not be negative".into()),
            Err(problem) => return Err(format!("weight {problem}")),
        },
    };
    let item = match (get("sku"), get("quantity")) {
        (sku, _) if sku.is_empty() => None,
        (sku, quantity) if quantity.is_empty() => Some((sku, Units::Count(1))),
        (sku, quantity) => match quantity.parse::<i64>() {
            Ok(q) if q >= 1 => Some((sku, Units::Count(q))),
            _ => return Err(format!("quantity {quantity:?} is not a whole number of at least 1")),
        },
    };
    let text = |name: &str| Some(get(name)).filter(|t| !t.is_empty());
    Ok(ShipmentLine {
        line,
        order,
        reference,
        tracking_number,
        carrier_name: text("carrier_name"),
        service_level: text("service_level"),
        description: None,
        shipped_at,
        weight,
        item,
    })
}

/// The rows of a stock file: every line must name a sku and a whole quantity.
pub fn read_stock(bytes: &[u8]) -> Result<Vec<StockRow>, Vec<BadLine>> {
    let (header, records) = rows(bytes, &["sku", "quantity"])?;
    let mut out = Vec::with_capacity(records.len());
    let mut bad = Vec::new();
    for (line, r) in records {
        let sku = header.get(&r, "sku");
        let quantity = header.get(&r, "quantity");
        if sku.is_empty() {
            bad.push(BadLine { line, problem: "has no sku".into() });
            continue;
        }
        match quantity.parse::<i64>() {
            Ok(q) => out.push(StockRow { sku, quantity: q.max(0) }),
            Err(_) => bad.push(BadLine {
                line,
                problem: format!("has a quantity that is not a whole number: {quantity:?}"),
            }),
        }
    }
    if bad.is_empty() { Ok(out) } else { Err(bad) }
}

/// The text of a `{name}.errors.txt`: one bad line per line.
pub fn error_report(file: &str, bad: &[BadLine]) -> String {
    let mut out = format!("{file}: {} bad line(s); nothing in this file was imported.\n", bad.len());
    for b in bad {
        out.push_str(&format!("line {}: {}\n", b.line, b.problem));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_files_quote_per_rfc_4180_and_start_with_the_header() {
        let order = OutgoingOrder {
            order_id: 7,
            store_id: 2,
            ship_to: ShipTo { last_name: Some("Ann \"the\" Smith, Jr.".into()), ..ShipTo::default() },
            items: vec![
                OutgoingItem {
                    sku: Some("A".into()),
                    quantity: 2,
                    unit_price: Some(1250),
                    ..OutgoingItem::default()
                },
                OutgoingItem { sku: Some("B".into()), quantity: 1, ..OutgoingItem::default() },
            ],
            ..OutgoingOrder::default()
        };
        let mut file = OrderFile::new();
        file.order(&order);
        file.order(&OutgoingOrder { order_id: 8, store_id: 2, ..OutgoingOrder::default() });
        let text = String::from_utf8(file.finish()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], ORDER_COLUMNS.join(","));
        assert!(lines[1].starts_with("7,,,2,"), "{text}");
        assert!(lines[1].contains("\"Ann \"\"the\"\" Smith, Jr.\""), "{text}");
        assert!(lines[1].ends_with(",1,A,,2,12.50,"), "{text}");
        assert!(lines[2].ends_with(",2,B,,1,,"), "{text}");
        assert!(lines[3].starts_with("8,") && lines[3].ends_with(",,,,,,"), "an order without items: {text}");
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn shipment_columns_are_found_by_name_in_any_order_and_lines_count_the_header() {
        let file =
            "\u{feff}Tracking_Number,extra,order_id,sku,quantity\r\n1Z9,x,12,A-1,2\r\n\r\n1Z9,y,12,B-2,1\n";
        let rows: Vec<ShipmentLine> =
            read_shipments(file.as_bytes()).unwrap().into_iter().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].line, &rows[0].order, &rows[0].item),
            (2, &OrderReference::Order(12), &Some(("A-1".to_string(), Units::Count(2))))
        );
        assert_eq!(rows[1].line, 4, "the blank line is counted, not returned");
        assert_eq!(rows[1].tracking_number, "1Z9");
    }

    #[test]
    fn a_shipment_line_reads_into_its_values_or_says_what_is_wrong_with_it() {
        let header = "order_id,external_id,store_id,tracking_number,shipped_at,weight,sku,quantity\n";
        let read = |line: &str| read_shipments(format!("{header}{line}\n").as_bytes()).unwrap().remove(0);
        let good = read("12,,,1Z,2026-03-05T00:00:00Z,1.5,A,").unwrap();
        assert_eq!(
            (good.shipped_at, good.weight, good.item),
            (Some(1_772_668_800_000), Some(150), Some(("A".to_string(), Units::Count(1))))
        );
        let external = read(",X-1,3,1Z,,,,").unwrap();
        assert_eq!(external.order, OrderReference::External { store_id: 3, external_id: "X-1".into() });
        assert_eq!((external.shipped_at, external.weight, external.item), (None, None, None));
        let unusable = read(",X-1,three,1Z,,,,").unwrap();
        assert_eq!(unusable.order, OrderReference::Stranger);
        assert_eq!(unusable.reference, r#"external_id "X-1" of store "three""#);
        for (line, problem) in [
            ("x,,,1Z,,,,", "order_id \"x\" is not a number"),
            ("12,,,,,,,", "has no tracking_number"),
            ("12,,,1Z,someday,,,", "shipped_at "),
            ("12,,,1Z,,-1,,", "weight must not be negative"),
            ("12,,,1Z,,heavy,,", "weight must be"),
            ("12,,,1Z,,,A,*", "quantity \"*\" is not a whole number of at least 1"),
            ("12,,,1Z,,,A,0", "quantity \"0\" is not a whole number of at least 1"),
        ] {
            let bad = read(line).unwrap_err();
            assert_eq!(bad.line, 2, "{line}");
            assert!(bad.problem.starts_with(problem), "{line}: {}", bad.problem);
        }
    }

    #[test]
    fn a_shipment_file_without_a_way_to_name_the_order_is_refused_at_the_header() {
        let Err(bad) = read_shipments(b"tracking_number,sku\n1Z,A\n") else { panic!("accepted") };
        assert_eq!(bad[0].line, 1);
        assert!(bad[0].problem.contains("order_id"), "{bad:?}");
        let Err(empty) = read_shipments(b"") else { panic!("accepted") };
        assert_eq!(empty[0].line, 1);
        let Err(binary) = read_shipments(&[0xff, 0xfe, b'a']) else { panic!("accepted") };
        assert!(binary[0].problem.contains("UTF-8"));
    }

    #[test]
    fn a_byte_order_mark_starts_no_column_name_and_only_at_the_start_is_ignored() {
        let rows = read_stock("\u{feff}sku,quantity\nA,1\n".as_bytes()).unwrap();
        assert_eq!(rows, vec![StockRow { sku: "A".into(), quantity: 1 }]);
        let Err(bad) = read_stock("sku,\u{feff}quantity\nA,1\n".as_bytes()) else { panic!("accepted") };
        assert!(bad[0].problem.contains("quantity"), "{bad:?}");
    }

    #[test]
    fn stock_rows_need_a_sku_and_a_whole_number_and_negative_counts_are_zero() {
        let rows = read_stock(b"quantity,sku\n5,A\n-3,B\n").unwrap();
        assert_eq!(
            rows,
            vec![StockRow { sku: "A".into(), quantity: 5 }, StockRow { sku: "B".into(), quantity: 0 }]
        );
        let bad = read_stock(b"sku,quantity\n,1\nC,2.5\n").unwrap_err();
        assert_eq!(bad.iter().map(|b| b.line).collect::<Vec<_>>(), vec![2, 3]);
    }
}
