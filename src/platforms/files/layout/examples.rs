//! The worked examples of files-csv-layouts.md (§9 and §10), byte for byte: the orders of
//! store 3 sent through connection 7, the adapters, and the files written and read.

use serde_json::{Map, Value, json};

use super::*;
use crate::dates::parse_date_string;
use crate::platforms::files::csv::{self, OrderFile};
use crate::platforms::warehouse::{
    BadLine, OrderReference, OutgoingItem, OutgoingOrder, ShipTo, ShipmentLine, StockRow, StoreKey, Units,
};

fn ms(text: &str) -> i64 {
    parse_date_string(text).unwrap()
}

fn item(sku: &str, name: &str, quantity: i64, unit_price: i64, weight: Option<i64>) -> OutgoingItem {
    OutgoingItem {
        sku: Some(sku.into()),
        name: Some(name.into()),
        quantity,
        unit_price: Some(unit_price),
        weight,
        ..OutgoingItem::default()
    }
}

fn some(text: &str) -> Option<String> {
    Some(text.to_string())
}

/// Orders 1042, 1043 and 1044 of §10.
fn orders() -> [OutgoingOrder; 3] {
    let o1042 = OutgoingOrder {
        order_id: 1042,
        external_id: some("5001"),
        external_display_id: some("5001"),
        store_id: 3,
        ordered_at: Some(ms("2026-07-03T02:05:09.000Z")),
        customer_email: some("ada@example.com"),
        ship_to: ShipTo {
            first_name: some("Grace"),
            last_name: some("Hopper"),
            street1: some("7 Harbor St"),
            street2: some("Apt 3"),
            city: some("Boston"),
            region: some("MA"),
            postal_code: some("02110"),
            country: some("US"),
            telephone: some("617-555-0199"),
        },
        service_level: some("UPS Ground"),
        notes: some("Leave at the \"blue\" door, please"),
        items: vec![
            item("MUG-CREME", "Café Crème Mug", 2, 1250, Some(75)),
            item("TWL-BGE", "Linen Towel, Beige Stripe", 3, 999, Some(100)),
        ],
        ..OutgoingOrder::default()
    };
    let o1043 = OutgoingOrder {
        order_id: 1043,
        external_id: some("5002"),
        external_display_id: some("5002"),
        store_id: 3,
        ordered_at: Some(ms("2026-01-15T05:30:00.000Z")),
        customer_email: some("tom@example.com"),
        ship_to: ShipTo {
            first_name: some("Tom"),
            last_name: some("Baker"),
            street1: some("9 Elm Road"),
            city: some("Portland"),
            region: some("OR"),
            postal_code: some("97205"),
            country: some("US"),
            ..ShipTo::default()
        },
        service_level: some("Next Day"),
        gift_message: some("Happy birthday!"),
        items: vec![item("TEA-SMP", "Tea Sampler", 1, 313, None)],
        ..OutgoingOrder::default()
    };
    let o1044 = OutgoingOrder {
        order_id: 1044,
        items: ["S-1", "S-2", "S-3"].map(|sku| item(sku, sku, 1, 100, None)).to_vec(),
        ..o1043.clone()
    };
    [o1042, o1043, o1044]
}

/// The Landmark-like adapter of §10.1.
pub(super) fn landmark() -> Value {
    json!({"connection_string": "sftp://acme:s3cret@ftp.landmark.example/", "file_format": "csv",
     "orders_dir": "Import", "shipments_dir": "Confirmation", "inventory_dir": "Inventory_Levels",
     "orders_layout": {"file_name": "acme-{connection_id}-{batch}.csv",
       "date_format": "YYYY-MM-DD HH:mm:ss", "time_zone": "America/Chicago",
       "columns": [
         {"header": "ShipmentReference", "field": "order_id", "prefix": "OB-"},
         {"header": "OrderDate", "field": "ordered_at"},
         {"header": "ShipToName", "field": "ship_name", "max_length": 50},
         {"header": "ShipToAddress1", "field": "ship_street1"},
         {"header": "ShipToAddress2", "field": "ship_street2"},
         {"header": "ShipToCity", "field": "ship_city"},
         {"header": "ShipToState", "field": "ship_region"},
         {"header": "ShipToPostalCode", "field": "ship_postal_code"},
         {"header": "ShipToCountryCode", "field": "ship_country"},
         {"header": "ShipToPhone", "field": "ship_telephone"},
         {"header": "ShipMethod", "field": "service_level", "map": {"UPS Ground": "LGINTSTD"}, "default": "LGINTSTD"},
         {"header": "ItemSku", "field": "sku"},
         {"header": "ItemQuantity", "field": "quantity"},
         {"header": "ItemUnitPrice", "field": "unit_price"},
         {"header": "ItemDescription", "field": "name", "max_length": 20}]},
     "shipments_layout": {"file_pattern": "Shipping_Confirmation*.csv",
       "date_format": "YYYY-MM-DD HH:mm:ss", "time_zone": "America/Chicago",
       "filters": [{"header": "Is Fulfillment Order", "equals": "Yes"}],
       "columns": [
         {"header": "Reference", "field": "order_id", "prefix": "OB-"},
         {"header": "Tracking Number", "field": "tracking_number", "split": ","},
         {"header": "Carrier", "field": "carrier_name", "map": {"UPSN": "UPS", "FDEG": "FedEx"}},
         {"header": "Service Code", "field": "service_level"},
         {"header": "Processed Date", "field": "shipped_at"},
         {"header": "Component SKU", "field": "sku"},
         {"header": "Quantity", "field": "quantity"}]},
     "inventory_layout": {"filters": [{"header": "FACILITY ID", "equals": "12"}],
       "columns": [{"header": "SKU", "field": "sku"}, {"header": "AVAILABLE", "field": "quantity"}]}})
}

/// The Shipwire-like orders layout of §10.2.
pub(super) fn shipwire_orders() -> Value {
    json!({"delimiter": "\t", "file_name": "shipwire-{connection_id}-{batch}.tsv",
      "date_format": "M/D/YY", "time_zone": "America/Los_Angeles",
      "columns": [
        {"header": "[order_no]", "field": "order_id"},
        {"header": "[external_id]", "field": "external_display_id", "max_length": 32},
        {"header": "[order_date]", "field": "ordered_at"},
        {"header": "[ship_to_name]", "field": "ship_name"},
        {"header": "[ship_to_address_1]", "field": "ship_street1"},
        {"header": "[ship_to_address_2]", "field": "ship_street2"},
        {"header": "[ship_to_city]", "field": "ship_city"},
        {"header": "[ship_to_state]", "field": "ship_region"},
        {"header": "[ship_to_ZIP]", "field": "ship_postal_code"},
        {"header": "[ship_to_country]", "field": "ship_country"},
        {"header": "[ship_to_email]", "field": "customer_email"},
        {"header": "[ship_to_phone]", "field": "ship_telephone", "default": "000-000-0000"},
        {"header": "[ship_to_is_commercial]", "value": "0"},
        {"header": "[sku]", "field": "sku"},
        {"header": "[quantity]", "field": "quantity"},
        {"header": "[shipping_method]", "field": "service_level",
         "map": {"Next Day": "1D", "2-Day": "2D"}, "default": "GD"},
        {"header": "[packing_list_message_1]", "field": "gift_message"}]})
}

/// The WeFulfillIT-style orders layout of §10.3.
pub(super) fn wfi_orders() -> Value {
    json!({"delimiter": "\t", "header": false, "rows": "order", "max_items": 2,
      "line_ending": "crlf", "file_name": "wfi-{date}-{connection_id}-{batch}.txt",
      "time_zone": "America/New_York",
      "columns": [
        {"header": "Name", "field": "ship_name"}, {"header": "Company", "value": ""},
        {"header": "Address 1", "field": "ship_street1"}, {"header": "Address 2", "field": "ship_street2"},
        {"header": "City", "field": "ship_city"}, {"header": "State", "field": "ship_region"},
        {"header": "Zip", "field": "ship_postal_code"}, {"header": "Country", "field": "ship_country"},
        {"header": "Phone", "field": "ship_telephone"}, {"header": "Email", "field": "customer_email"},
        {"header": "Shipping Method", "field": "service_level"},
        {"header": "SKU {n}", "field": "sku"}, {"header": "Qty {n}", "field": "quantity"},
        {"header": "Order Number", "field": "order_id"}]})
}

fn adapter(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("an adapter is an object: {other}"),
    }
}

/// The orders written one after the other; a refusal is kept as the order's error.
fn written(layout: &OrdersLayout, orders: &[OutgoingOrder]) -> (String, Vec<String>) {
    let mut file = OrderWriter::new(layout);
    let refused = orders.iter().filter_map(|o| file.order(o).err()).collect();
    (String::from_utf8(file.finish()).unwrap(), refused)
}

const DEFAULT_1042: &str = "order_id,external_id,external_display_id,store_id,ordered_at,customer_email,ship_first_name,ship_last_name,ship_street1,ship_street2,ship_city,ship_region,ship_postal_code,ship_country,ship_telephone,carrier,service_level,gift_message,notes,line,sku,name,quantity,unit_price,weight
1042,5001,5001,3,2026-07-03T02:05:09.000Z,ada@example.com,Grace,Hopper,7 Harbor St,Apt 3,Boston,MA,02110,US,617-555-0199,,UPS Ground,,\"Leave at the \"\"blue\"\" door, please\",1,MUG-CREME,Café Crème Mug,2,12.50,0.75
1042,5001,5001,3,2026-07-03T02:05:09.000Z,ada@example.com,Grace,Hopper,7 Harbor St,Apt 3,Boston,MA,02110,US,617-555-0199,,UPS Ground,,\"Leave at the \"\"blue\"\" door, please\",2,TWL-BGE,\"Linen Towel, Beige Stripe\",3,9.99,1.00
";

#[test]
fn a_warehouse_without_layouts_writes_todays_file_for_order_1042() {
    let [o1042, ..] = orders();
    let layouts = Layouts::of(&Map::new());
    assert_eq!(written(&layouts.orders, std::slice::from_ref(&o1042)), (DEFAULT_1042.to_string(), vec![]));
    assert_eq!(layouts.orders.file_name(7, 12, 0), "orders-7-12.csv");
    let mut file = OrderFile::new();
    file.order(&o1042);
    assert_eq!(String::from_utf8(file.finish()).unwrap(), DEFAULT_1042, "csv's OrderFile is today's layout");
    let nulls = Layouts::of(&adapter(json!({"orders_layout": null})));
    assert_eq!(written(&nulls.orders, &[o1042]).0, DEFAULT_1042, "a null layout is today's");
}

#[test]
fn landmark_orders_file() {
    let layouts = Layouts::of(&adapter(landmark()));
    let [o1042, o1043, _] = orders();
    let expected = "ShipmentReference,OrderDate,ShipToName,ShipToAddress1,ShipToAddress2,ShipToCity,ShipToState,ShipToPostalCode,ShipToCountryCode,ShipToPhone,ShipMethod,ItemSku,ItemQuantity,ItemUnitPrice,ItemDescription
OB-1042,2026-07-02 21:05:09,Grace Hopper,7 Harbor St,Apt 3,Boston,MA,02110,US,617-555-0199,LGINTSTD,MUG-CREME,2,12.50,Café Crème Mug
OB-1042,2026-07-02 21:05:09,Grace Hopper,7 Harbor St,Apt 3,Boston,MA,02110,US,617-555-0199,LGINTSTD,TWL-BGE,3,9.99,\"Linen Towel, Beige S\"
OB-1043,2026-01-14 23:30:00,Tom Baker,9 Elm Road,,Portland,OR,97205,US,,Next Day,TEA-SMP,1,3.13,Tea Sampler
";
    assert_eq!(written(&layouts.orders, &[o1042, o1043]), (expected.to_string(), vec![]));
    assert_eq!(layouts.orders.file_name(7, 12, ms("2026-11-29T04:10:00Z")), "acme-7-12.csv");
}

const CONFIRMATION: &str = "reference,Is Fulfillment Order,TRACKING NUMBER,Carrier,Service Code,Processed Date,Component SKU,Quantity,Landmark Tracking Number
OB-1042,Yes,\"1Z999AA10123456784, 1Z999AA10123456785\",UPSN,GND,2026-03-08 01:30:00,MUG-CREME,2,LTN1
OB-1042,Yes,\"1Z999AA10123456784, 1Z999AA10123456785\",UPSN,GND,2026-03-08 01:30:00,TWL-BGE,3,LTN1
OB-1043,Yes,794698562713,FDEG,FEDEX_GROUND,2026-03-08 03:30:00,TEA-SMP,1,LTN2
LTL-77,No,,,,2026-03-08 04:00:00,PALLET,1,LTN3
";

#[test]
fn landmark_confirmation_file_is_two_shipments_in_chicago_time() {
    let layouts = Layouts::of(&adapter(landmark()));
    let lines: Vec<ShipmentLine> = read_shipments(&layouts.shipments, CONFIRMATION.as_bytes())
        .unwrap()
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let shipment =
        |line: u64, id: i64, tracking: &str, carrier: &str, service: &str, at: &str, sku: &str, q: i64| {
            ShipmentLine {
                line,
                order: OrderReference::InStore { key: StoreKey::Id(id), store_id: None },
                reference: format!("Reference OB-{id}"),
                tracking_number: tracking.into(),
                carrier_name: some(carrier),
                service_level: some(service),
                description: None,
                shipped_at: Some(ms(at)),
                weight: None,
                item: Some((sku.into(), Units::Count(q))),
            }
        };
    assert_eq!(
        lines,
        vec![
            shipment(2, 1042, "1Z999AA10123456784", "UPS", "GND", "2026-03-08T07:30:00.000Z", "MUG-CREME", 2),
            shipment(3, 1042, "1Z999AA10123456784", "UPS", "GND", "2026-03-08T07:30:00.000Z", "TWL-BGE", 3),
            shipment(
                4,
                1043,
                "794698562713",
                "FedEx",
                "FEDEX_GROUND",
                "2026-03-08T08:30:00.000Z",
                "TEA-SMP",
                1
            ),
        ]
    );
    assert!(layouts.shipments.matches("Shipping_Confirmation_20260308.csv"));
    assert!(!layouts.shipments.matches("returns.csv"));
}

#[test]
fn landmark_confirmation_with_a_bad_date_names_line_4_and_its_date() {
    let layouts = Layouts::of(&adapter(landmark()));
    let file = CONFIRMATION.replace(
        "OB-1043,Yes,794698562713,FDEG,FEDEX_GROUND,2026-03-08 03:30:00,TEA-SMP,1,LTN2",
        "OB-1043,Yes,794698562713,FDEG,FEDEX_GROUND,2026-03-08 3:30,TEA-SMP,1,LTN2",
    );
    let bad: Vec<BadLine> = read_shipments(&layouts.shipments, file.as_bytes())
        .unwrap()
        .into_iter()
        .filter_map(Result::err)
        .collect();
    assert_eq!(
        bad,
        vec![BadLine {
            line: 4,
            problem: "Processed Date \"2026-03-08 3:30\" does not match the date format YYYY-MM-DD HH:mm:ss"
                .into()
        }]
    );
    let report = csv::error_report("Shipping_Confirmation_20260308.csv", &bad);
    assert!(report.contains("line 4: Processed Date \"2026-03-08 3:30\""), "{report}");
}

#[test]
fn landmark_inventory_sums_a_facility_and_counts_negatives_as_zero() {
    let file = "SKU,SKU DESCRIPTION,ON HAND,AVAILABLE,RESERVE,FACILITY ID
MUG-CREME,Café Crème Mug,40,35,5,12
MUG-CREME,Café Crème Mug,10,8,2,14
TWL-BGE,\"Linen Towel, Beige Stripe\",0,-2,0,12
";
    let layouts = Layouts::of(&adapter(landmark()));
    let row = |sku: &str, quantity| StockRow { sku: sku.into(), quantity };
    assert_eq!(
        read_stock(&layouts.inventory, file.as_bytes()),
        Ok(vec![row("MUG-CREME", 35), row("TWL-BGE", 0)])
    );
    let unfiltered = ReadLayout { filters: vec![], ..layouts.inventory };
    assert_eq!(read_stock(&unfiltered, file.as_bytes()), Ok(vec![row("MUG-CREME", 43), row("TWL-BGE", 0)]));
}

#[test]
fn shipwire_tsv_in_los_angeles_dates() {
    let layouts = Layouts::of(&adapter(json!({"orders_layout": shipwire_orders()})));
    let [o1042, o1043, _] = orders();
    let expected = "[order_no]→[external_id]→[order_date]→[ship_to_name]→[ship_to_address_1]→[ship_to_address_2]→[ship_to_city]→[ship_to_state]→[ship_to_ZIP]→[ship_to_country]→[ship_to_email]→[ship_to_phone]→[ship_to_is_commercial]→[sku]→[quantity]→[shipping_method]→[packing_list_message_1]
1042→5001→7/2/26→Grace Hopper→7 Harbor St→Apt 3→Boston→MA→02110→US→ada@example.com→617-555-0199→0→MUG-CREME→2→UPS Ground→
1042→5001→7/2/26→Grace Hopper→7 Harbor St→Apt 3→Boston→MA→02110→US→ada@example.com→617-555-0199→0→TWL-BGE→3→UPS Ground→
1043→5002→1/14/26→Tom Baker→9 Elm Road→→Portland→OR→97205→US→tom@example.com→000-000-0000→0→TEA-SMP→1→1D→Happy birthday!
"
    .replace('→', "\t");
    assert_eq!(written(&layouts.orders, &[o1042, o1043]), (expected, vec![]));
    assert_eq!(layouts.orders.file_name(7, 13, 0), "shipwire-7-13.tsv");
}

#[test]
fn one_row_per_order_without_header_in_crlf_refusing_an_order_over_max_items() {
    let layouts = Layouts::of(&adapter(json!({"orders_layout": wfi_orders()})));
    let expected = "Grace Hopper→→7 Harbor St→Apt 3→Boston→MA→02110→US→617-555-0199→ada@example.com→UPS Ground→MUG-CREME→2→TWL-BGE→3→1042\r
Tom Baker→→9 Elm Road→→Portland→OR→97205→US→→tom@example.com→Next Day→TEA-SMP→1→→→1043\r
"
    .replace('→', "\t");
    let refused = vec!["order has 3 items; orders_layout.max_items is 2".to_string()];
    assert_eq!(written(&layouts.orders, &orders()), (expected, refused));
    assert_eq!(layouts.orders.file_name(7, 14, ms("2026-11-29T04:10:00Z")), "wfi-20261128-7-14.txt");

    // Widened to five, with a header row: five item groups on every row.
    let mut wider = wfi_orders();
    wider["max_items"] = json!(5);
    wider["header"] = json!(true);
    let layouts = Layouts::of(&adapter(json!({"orders_layout": wider})));
    let (file, refused) = written(&layouts.orders, &orders()[2..]);
    assert_eq!(refused, Vec::<String>::new());
    let header = file.lines().next().unwrap();
    assert!(
        header.ends_with(
            "\tSKU 1\tQty 1\tSKU 2\tQty 2\tSKU 3\tQty 3\tSKU 4\tQty 4\tSKU 5\tQty 5\tOrder Number"
        ),
        "{header}"
    );
    assert!(file.ends_with("\tS-1\t1\tS-2\t1\tS-3\t1\t\t\t\t\t1044\r\n"), "{file}");
}

#[test]
fn a_layout_given_in_part_takes_todays_values_for_the_rest() {
    let layouts =
        Layouts::of(&adapter(json!({"orders_layout": {"delimiter": ";", "decimal_separator": ","}})));
    let [o1042, ..] = orders();
    let (file, _) = written(&layouts.orders, &[o1042]);
    assert_eq!(file.lines().next().unwrap(), ORDER_COLUMNS.join(";"));
    assert!(file.contains(";Café Crème Mug;2;12,50;0,75\n"), "{file}");
    assert!(
        file.contains(";Linen Towel, Beige Stripe;3;9,99;1,00\n"),
        "a comma is no delimiter here: {file}"
    );
    let shipments = Layouts::of(&adapter(json!({"shipments_layout": {"delimiter": ";"}}))).shipments;
    assert_eq!(shipments.columns.len(), 10, "today's columns");
    let lines = read_shipments(&shipments, b"order_id;tracking_number\n12;1Z\n").unwrap();
    assert_eq!(lines[0].as_ref().unwrap().order, OrderReference::Order(12));
}
