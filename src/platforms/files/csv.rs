//! orderbridge's warehouse CSV files (CONTRACT §11, "File warehouses") as a warehouse
//! without layouts writes and reads them: today's layouts (`layout`, files-csv-layouts.md §9),
//! and the report of a file's bad lines. RFC 4180 with a header row; columns are found by
//! name in any order, and unknown columns are ignored; a UTF-8 byte order mark at the start
//! of a file is not part of it.

pub use super::layout::ORDER_COLUMNS;
use super::layout::{self, OrderWriter, OrdersLayout, ReadLayout};
pub use crate::platforms::warehouse::{
    BadLine, LineRead, OrderReference, OutgoingItem, OutgoingOrder, ShipTo, ShipmentLine, StockRow, Units,
};

/// Today's order file being written, handed out in chunks so a large one is never held whole.
pub struct OrderFile(OrderWriter);

impl OrderFile {
    /// A file with its header row.
    pub fn new() -> OrderFile {
        OrderFile(OrderWriter::new(&OrdersLayout::default()))
    }

    /// The order's rows: one per item, the order's columns repeated, `line` counting from 1;
    /// an order without items is one row with the item columns empty. Today's file takes
    /// every order: it has a row per item, so no `max_items` to exceed.
    pub fn order(&mut self, order: &OutgoingOrder) {
        self.0.rows(order);
    }

    /// What is written so far, once it is at least `size` bytes.
    pub fn chunk(&mut self, size: usize) -> Option<Vec<u8>> {
        self.0.chunk(size)
    }

    /// The rest of the file.
    pub fn finish(self) -> Vec<u8> {
        self.0.finish()
    }
}

impl Default for OrderFile {
    fn default() -> Self {
        OrderFile::new()
    }
}

/// The lines of a shipment file read as today's layout says, each read into a shipment line
/// or found bad; a header that cannot name an order refuses the file whole.
pub fn read_shipments(bytes: &[u8]) -> Result<Vec<LineRead>, Vec<BadLine>> {
    layout::read_shipments(&ReadLayout::default_shipments(), bytes)
}

/// The rows of a stock file read as today's layout says: every line must name a sku and a
/// whole quantity; rows of one SKU are added up.
pub fn read_stock(bytes: &[u8]) -> Result<Vec<StockRow>, Vec<BadLine>> {
    layout::read_stock(&ReadLayout::default_inventory(), bytes)
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
