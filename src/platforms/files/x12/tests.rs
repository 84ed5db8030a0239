//! The worked examples of files-x12.md §11 byte for byte, the rules around them, and hostile
//! input.

use serde_json::{Value, json};

use super::*;
use crate::platforms::warehouse::{Inbox, OutgoingItem, OutgoingOrder, ShipTo, StockRow};

/// Ms since the epoch of a UTC date and time.
fn ms(text: &str) -> i64 {
    text.parse::<jiff::Timestamp>().map(|t| t.as_millisecond()).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn adapter(x12: Value) -> serde_json::Map<String, Value> {
    let Value::Object(map) = json!({"file_format": "x12", "x12": x12}) else { unreachable!() };
    map
}

/// The configuration of §11.
fn settings() -> X12Settings {
    settings_of(json!({"sender_id": "ACMEOB", "receiver_id": "WHSE3PL", "scac": {"UPS Ground": "UPSN"}}))
}

fn settings_of(x12: Value) -> X12Settings {
    X12Settings::of(&adapter(x12)).expect("an x12 adapter")
}

/// The order 1234 of §11.
fn order_1234() -> OutgoingOrder {
    OutgoingOrder {
        order_id: 1234,
        external_display_id: Some("101".into()),
        ordered_at: Some(ms("2024-03-05T00:00:00Z")),
        customer_email: Some("ada@example.com".into()),
        notes: Some("Leave at the *blue* door~ please".into()),
        service_level: Some("UPS Ground".into()),
        ship_to: ShipTo {
            first_name: Some("Grace".into()),
            last_name: Some("Hopper".into()),
            street1: Some("7 Harbor St".into()),
            street2: Some("Apt 3".into()),
            city: Some("Boston".into()),
            region: Some("Massachusetts".into()),
            postal_code: Some("02110".into()),
            country: Some("US".into()),
            telephone: Some("617-555-0199".into()),
        },
        items: vec![
            OutgoingItem {
                sku: Some("MUG-CREME".into()),
                name: Some("Café Crème Mug".into()),
                quantity: 2,
                upc: Some("0123456789012".into()),
                ..Default::default()
            },
            OutgoingItem {
                sku: Some("TWL-BGE".into()),
                name: Some("Linen Towel, Beige Stripe".into()),
                quantity: 3,
                upc: Some("098765432109".into()),
                ..Default::default()
            },
        ],
        ..Default::default()
    }
}

/// The annex's text: one segment per line, as the file holds it (no line feeds).
fn file(annex: &str) -> Vec<u8> {
    annex.lines().map(str::trim_end).collect::<String>().into_bytes()
}

const EXAMPLE_940: &str = "\
ISA*00*          *00*          *ZZ*ACMEOB         *ZZ*WHSE3PL        *260308*1430*U*00401*000000007*0*P*>~
GS*OW*ACMEOB*WHSE3PL*20260308*1430*7*X*004010~
ST*940*0001~
W05*N*1234~
N1*ST*Grace Hopper~
N3*7 Harbor St*Apt 3~
N4*Boston*MA*02110*US~
PER*IC**TE*617-555-0199*EM*ada@example.com~
N9*CO*101~
G62*04*20240305~
NTE*WHI*Leave at the  blue  door  please~
W66*PP*U***UPS Ground*****UPSN~
LX*1~
W01*2*EA**SK*MUG-CREME*EN*0123456789012~
G69*Cafe Creme Mug~
LX*2~
W01*3*EA**SK*TWL-BGE*UP*098765432109~
G69*Linen Towel, Beige Stripe~
W76*5~
SE*18*0001~
GE*1*7~
IEA*1*000000007~";

const EXAMPLE_945: &str = "\
ISA*00*          *00*          *ZZ*WHSE3PL        *ZZ*ACMEOB         *260308*1430*U*00401*000000512*0*P*>~
GS*SW*WHSE3PL*ACMEOB*20260308*1430*512*X*004010~
ST*945*0001~
W06*F*1234*20260308*SHIP1234~
N1*ST*Jane Doe~
G62*11*20260308*8*1430~
W27*U*UPSN*GROUND~
LX*1~
MAN*CP*1Z999AA10123456784~
W12*CC*2*2**EA**SK*MUG-CREME~
W12*CC*3*3**EA**SK*TWL-BGE~
W03*5*1.5*LB~
SE*11*0001~
GE*1*512~
IEA*1*000000512~";

const EXAMPLE_997: &str = "\
ISA*00*          *00*          *ZZ*ACMEOB         *ZZ*WHSE3PL        *260308*1431*U*00401*000000008*0*P*>~
GS*FA*ACMEOB*WHSE3PL*20260308*1431*8*X*004010~
ST*997*0001~
AK1*SW*512~
AK2*945*0001~
AK5*A~
AK9*A*1*1*1~
SE*6*0001~
GE*1*8~
IEA*1*000000008~";

const EXAMPLE_846: &str = "\
ISA*00*          *00*          *ZZ*WHSE3PL        *ZZ*ACMEOB         *260308*1430*U*00401*000000513*0*P*>~
GS*IB*WHSE3PL*ACMEOB*20260308*1430*513*X*004010~
ST*846*0001~
BIA*00*MM*INV1*20260308~
LIN*1*SK*MUG-CREME~
QTY*33*40*EA~
QTY*17*45*EA~
LIN*2*SK*MUG-CREME~
QTY*33*8*EA~
LIN*3*VN*TWL-BGE~
QTY*33*0*EA~
SE*10*0001~
GE*1*513~
IEA*1*000000513~";

/// A whole document: head, one 940 per order, tail.
fn write_940s(
    settings: &X12Settings,
    control: i64,
    at: i64,
    orders: &[OutgoingOrder],
) -> (Vec<u8>, Vec<i64>) {
    let mut doc = Interchange::new(settings, GroupKind::Orders, control, at).expect("a document");
    let mut bytes = doc.head().to_vec();
    let mut sets = Vec::new();
    for order in orders {
        let set = doc.set_940(order).expect("a 940");
        sets.push(set.set);
        bytes.extend(set.bytes);
    }
    bytes.extend(doc.finish());
    (bytes, sets)
}

/// The 997 answering `ack`.
fn write_997(settings: &X12Settings, control: i64, at: i64, ack: &Ack) -> Vec<u8> {
    let mut doc = Interchange::new(settings, GroupKind::Acks, control, at).expect("a document");
    let mut bytes = doc.head().to_vec();
    for group in &ack.groups {
        bytes.extend(doc.set_997(group).expect("a 997").bytes);
    }
    bytes.extend(doc.finish());
    bytes
}

fn lines(problems: &[Problem]) -> Vec<String> {
    problems.iter().map(ToString::to_string).collect()
}

#[test]
fn the_940_of_order_1234_is_the_annexs_byte_for_byte() {
    let s = settings();
    let (bytes, sets) = write_940s(&s, 7, ms("2026-03-08T14:30:00Z"), &[order_1234()]);
    assert_eq!(String::from_utf8_lossy(&bytes), String::from_utf8_lossy(&file(EXAMPLE_940)));
    assert_eq!(sets, vec![1]);
    assert_eq!(file_name(GroupKind::Orders, 7, 7, &s), "940-7-7.edi");
    assert_eq!(file_name(GroupKind::Acks, 7, 8, &s), "997-7-8.edi");
    assert_eq!(file_name(GroupKind::Orders, 7, 12, &s), "940-7-12.edi");
}

#[test]
fn the_945_of_the_annex_is_one_shipment_of_order_1234_and_its_997_is_the_annexs() {
    let s = settings();
    let reading = read(&s, &file(EXAMPLE_945), Inbox::Shipments);
    let Ok(Contents::Shipments { shipments, acks }) = reading.outcome else {
        panic!("{:?}", reading.outcome)
    };
    assert!(acks.is_empty());
    assert_eq!(
        shipments,
        vec![Shipment945 {
            order_id: 1234,
            tracking_number: "1Z999AA10123456784".into(),
            carrier_name: Some("UPS".into()),
            service_level: Some("GROUND".into()),
            shipped_at: Some(ms("2026-03-08T14:30:00Z")),
            weight: Some("1.5".parse().expect("a decimal")),
            items: Some(vec![("MUG-CREME".into(), 2), ("TWL-BGE".into(), 3)]),
        }]
    );
    let lines = shipments[0].lines("945.edi");
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0].weight, Some(150));
    let ack = reading.ack.expect("a 997");
    let bytes = write_997(&s, 8, ms("2026-03-08T14:31:00Z"), &ack);
    assert_eq!(String::from_utf8_lossy(&bytes), String::from_utf8_lossy(&file(EXAMPLE_997)));
}

#[test]
fn a_945_whose_se01_is_wrong_imports_nothing_and_is_rejected() {
    let s = settings();
    let bytes = file(&EXAMPLE_945.replace("SE*11*0001", "SE*12*0001"));
    let reading = read(&s, &bytes, Inbox::Shipments);
    let Err(problems) = reading.outcome else { panic!("read") };
    assert_eq!(lines(&problems), vec!["segment 13 (SE), set 0001: SE01 is 12; the set has 11 segments"]);
    let ack = write_997(&s, 8, ms("2026-03-08T14:31:00Z"), &reading.ack.expect("a 997"));
    let ack = String::from_utf8_lossy(&ack);
    assert!(ack.contains("~AK2*945*0001~AK5*R*4~AK9*R*1*1*0~SE*6*0001~"), "{ack}");
}

#[test]
fn the_846_of_the_annex_sums_locations_and_reads_only_the_available_quantity() {
    let reading = read(&settings(), &file(EXAMPLE_846), Inbox::Stock);
    let Ok(Contents::Stock { levels, skipped }) = reading.outcome else { panic!("{:?}", reading.outcome) };
    let row = |sku: &str, quantity| StockRow { sku: sku.into(), quantity };
    assert_eq!(levels, vec![row("MUG-CREME", 48), row("TWL-BGE", 0)]);
    assert!(skipped.is_empty());
    let ack = reading.ack.expect("a 997");
    assert_eq!(ack.groups.len(), 1);
    assert!(ack.groups[0].accepted);
    assert_eq!(ack.groups[0].group_code, "IB");
}

/// A 997 from the warehouse for our group 7, its set 0001 carrying `body`.
fn warehouse_997(body: &str) -> Vec<u8> {
    let count = body.matches('~').count() + 2;
    format!(
        "ISA*00*          *00*          *ZZ*WHSE3PL        *ZZ*ACMEOB         *260308*1500*U*00401*000000088*0*P*>~\
         GS*FA*WHSE3PL*ACMEOB*20260308*1500*88*X*004010~ST*997*0001~{body}SE*{count}*0001~GE*1*88~IEA*1*000000088~"
    )
    .into_bytes()
}

#[test]
fn a_warehouse_997_that_rejects_our_940_names_the_set_and_quotes_its_errors() {
    let bytes = warehouse_997("AK1*OW*7~AK2*940*0001~AK3*N4*6**8~AK4*2**7*XX~AK5*R*5~AK9*R*1*1*0~");
    let reading = read(&settings(), &bytes, Inbox::Shipments);
    let Ok(Contents::Shipments { shipments, acks }) = reading.outcome else {
        panic!("{:?}", reading.outcome)
    };
    assert!(shipments.is_empty());
    assert_eq!(
        acks,
        vec![ReceivedAck {
            group: 7,
            sets: vec![ReceivedSet { set: 1, rejected: Some("AK5 R 5; AK3 N4 6 8; AK4 2 7 'XX'".into()) }],
            unnamed_rejected: Some("AK9 R".into()),
        }]
    );
    assert!(reading.ack.is_none(), "a 997 is never acknowledged");
}

#[test]
fn a_warehouse_997_that_accepts_changes_nothing_and_one_not_about_a_940_fails_as_business() {
    let bytes = warehouse_997("AK1*OW*7~AK2*940*0001~AK5*A~AK9*A*1*1*1~");
    let reading = read(&settings(), &bytes, Inbox::Shipments);
    let Ok(Contents::Shipments { acks, .. }) = reading.outcome else { panic!("{:?}", reading.outcome) };
    assert_eq!(acks[0].sets, vec![ReceivedSet { set: 1, rejected: None }]);
    assert_eq!(acks[0].unnamed_rejected, None);

    let bytes = warehouse_997("AK1*SW*7~AK5*A~AK9*A*1*1*1~");
    let Err(problems) = read(&settings(), &bytes, Inbox::Shipments).outcome else { panic!("read") };
    assert!(problems.iter().all(|p| p.business), "{problems:?}");

    let bytes = warehouse_997("AK2*940*0001~AK5*A~");
    let reading = read(&settings(), &bytes, Inbox::Shipments);
    let Err(problems) = reading.outcome else { panic!("read") };
    assert_eq!(
        lines(&problems),
        vec!["segment 6 (SE), set 0001: the set has no AK1", "segment 6 (SE), set 0001: the set has no AK9"]
    );
}

/// The problems `validate` finds in an adapter, as (path, message).
fn problems_of(adapter: Value) -> Vec<(String, String)> {
    crate::fields::adapter_problems(validate, adapter)
}

/// The paths of the problems found in an x12 adapter whose `x12` is the base plus `patch`.
fn paths_of(patch: Value) -> Vec<String> {
    let mut x12 = json!({"sender_id": "ACMEOB", "receiver_id": "WHSE3PL"});
    if let (Value::Object(base), Value::Object(patch)) = (&mut x12, patch) {
        base.extend(patch);
    }
    problems_of(json!({"file_format": "x12", "x12": x12})).into_iter().map(|(path, _)| path).collect()
}

#[test]
fn a_valid_x12_object_and_a_csv_adapter_without_one_pass() {
    assert_eq!(paths_of(json!({})), Vec::<String>::new());
    let all = json!({
        "sender_qualifier": "01", "receiver_qualifier": "ZZ", "gs_sender_id": "ACME", "gs_receiver_id": "WH 3",
        "version": "004010", "usage": "T", "element_separator": "|", "component_separator": "^",
        "segment_terminator": "~", "newline": true, "file_extension": "x12", "first_control_number": 999999999,
        "send_997": false, "reference_prefix": "AC-", "depositor_name": "Acme", "depositor_code": "AC",
        "product_qualifier": "VN", "product_qualifiers": ["SK"], "stock_quantity_qualifiers": ["33", "17"],
        "time_zone": "America/New_York", "scac": {"UPS Ground": "UPSN"}, "scac_names": {"UPSN": "UPS"}
    });
    assert_eq!(paths_of(all), Vec::<String>::new());
    assert!(problems_of(json!({"file_format": "csv"})).is_empty());
    assert!(problems_of(json!({})).is_empty());
    assert!(problems_of(json!({"x12": null})).is_empty());
}

#[test]
fn each_rule_of_the_x12_object_names_its_path() {
    let x = |key: &str| format!("adapter[x12][{key}]");
    let cases: Vec<(&str, Value, String)> = vec![
        ("an unknown key", json!({"sender_idd": "X"}), x("sender_idd")),
        ("an id of 1 character", json!({"sender_id": "A"}), x("sender_id")),
        ("an id of 16 characters", json!({"receiver_id": "ABCDEFGHIJKLMNOP"}), x("receiver_id")),
        ("an id outside ASCII", json!({"sender_id": "ACMÉ"}), x("sender_id")),
        ("an id with a leading space", json!({"sender_id": " ACME"}), x("sender_id")),
        ("an id with a separator", json!({"receiver_id": "WH*3"}), x("receiver_id")),
        (
            "an id with a configured separator",
            json!({"element_separator": "|", "receiver_id": "WH|3"}),
            x("receiver_id"),
        ),
        ("a GS id too short", json!({"gs_sender_id": "A"}), x("gs_sender_id")),
        ("a GS id with a trailing space", json!({"gs_receiver_id": "WH "}), x("gs_receiver_id")),
        ("a lower-case qualifier", json!({"sender_qualifier": "zz"}), x("sender_qualifier")),
        ("a qualifier of 3", json!({"receiver_qualifier": "ZZZ"}), x("receiver_qualifier")),
        ("another version", json!({"version": "005010"}), x("version")),
        ("another usage", json!({"usage": "I"}), x("usage")),
        ("a letter as separator", json!({"element_separator": "E"}), x("element_separator")),
        ("two characters as separator", json!({"component_separator": "::"}), x("component_separator")),
        ("a space as terminator", json!({"segment_terminator": " "}), x("segment_terminator")),
        ("a newline as terminator", json!({"segment_terminator": "\n"}), x("segment_terminator")),
        (
            "a terminator equal to the element separator",
            json!({"segment_terminator": "*"}),
            x("segment_terminator"),
        ),
        (
            "a component equal to a custom element separator",
            json!({"element_separator": "^", "component_separator": "^"}),
            x("component_separator"),
        ),
        ("newline not a boolean", json!({"newline": "yes"}), x("newline")),
        ("send_997 not a boolean", json!({"send_997": 2}), x("send_997")),
        ("an extension of 6", json!({"file_extension": "edifac"}), x("file_extension")),
        ("an extension with a dot", json!({"file_extension": ".edi"}), x("file_extension")),
        ("a control number of 0", json!({"first_control_number": 0}), x("first_control_number")),
        (
            "a control number of 10 digits",
            json!({"first_control_number": 1_000_000_000}),
            x("first_control_number"),
        ),
        ("a control number as a fraction", json!({"first_control_number": 1.5}), x("first_control_number")),
        ("a prefix of 13", json!({"reference_prefix": "ABCDEFGHIJKLM"}), x("reference_prefix")),
        ("a prefix with an underscore", json!({"reference_prefix": "AC_"}), x("reference_prefix")),
        ("an empty depositor name", json!({"depositor_name": ""}), x("depositor_name")),
        ("a depositor name of 61", json!({"depositor_name": "N".repeat(61)}), x("depositor_name")),
        (
            "a depositor code of 1",
            json!({"depositor_name": "Acme", "depositor_code": "A"}),
            x("depositor_code"),
        ),
        ("a depositor code without a name", json!({"depositor_code": "AC"}), x("depositor_code")),
        ("a product qualifier of 1", json!({"product_qualifier": "S"}), x("product_qualifier")),
        ("empty product qualifiers", json!({"product_qualifiers": []}), x("product_qualifiers")),
        (
            "a bad stock qualifier",
            json!({"stock_quantity_qualifiers": ["33", "x"]}),
            x("stock_quantity_qualifiers"),
        ),
        (
            "stock qualifiers not an array",
            json!({"stock_quantity_qualifiers": "33"}),
            x("stock_quantity_qualifiers"),
        ),
        ("an unknown zone", json!({"time_zone": "Mars/Olympus"}), x("time_zone")),
        ("scac not an object", json!({"scac": ["UPSN"]}), x("scac")),
        ("a scac value not a SCAC", json!({"scac": {"UPS": "upsn"}}), x("scac")),
        ("a scac value not a string", json!({"scac": {"UPS": 1}}), x("scac")),
        ("a scac_names key not a SCAC", json!({"scac_names": {"UPSNX": "UPS"}}), x("scac_names")),
    ];
    for (what, patch, path) in cases {
        assert_eq!(paths_of(patch), vec![path], "{what}");
    }
    let missing = problems_of(json!({"file_format": "x12", "x12": {}}));
    let paths: Vec<_> = missing.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, vec!["adapter[x12][receiver_id]", "adapter[x12][sender_id]"]);
}

#[test]
fn x12_goes_with_file_format_x12_only() {
    let paths = |adapter: Value| problems_of(adapter).into_iter().map(|(p, _)| p).collect::<Vec<_>>();
    assert_eq!(paths(json!({"file_format": "x12"})), vec!["adapter[x12]"]);
    assert_eq!(paths(json!({"file_format": "x12", "x12": "yes"})), vec!["adapter[x12]"]);
    assert_eq!(paths(json!({"file_format": "x12", "x12": null})), vec!["adapter[x12]"]);
    assert_eq!(
        paths(json!({"file_format": "csv", "x12": {"sender_id": "AB", "receiver_id": "CD"}})),
        vec!["adapter[x12]"]
    );
    assert_eq!(paths(json!({"x12": {}})), vec!["adapter[x12]"]);
}

#[test]
fn settings_take_the_defaults_of_the_annex() {
    let s = settings();
    assert_eq!((s.gs_sender_id.as_str(), s.gs_receiver_id.as_str()), ("ACMEOB", "WHSE3PL"));
    assert_eq!(
        (s.sender_qualifier.as_str(), s.usage.as_str(), s.file_extension.as_str()),
        ("ZZ", "P", "edi")
    );
    assert_eq!(s.separators, Separators { element: b'*', component: b'>', terminator: b'~' });
    assert!(!s.newline && s.send_997);
    assert_eq!(s.first_control_number, 1);
    assert_eq!(s.product_qualifiers, vec!["SK", "VN"]);
    assert_eq!(s.stock_quantity_qualifiers, vec!["33"]);
    assert!(X12Settings::of(&serde_json::Map::new()).is_none());
}

#[test]
fn text_is_written_as_ascii_without_separators() {
    let seps = settings().separators;
    assert_eq!(text::clean("Café Crème", &seps).as_deref(), Some("Cafe Creme"));
    assert_eq!(text::clean("door*2~", &seps).as_deref(), Some("door 2"));
    assert_eq!(text::clean(" a\tb>c\n ", &seps).as_deref(), Some("a b c"));
    assert_eq!(text::clean("ﬁne 日本", &seps).as_deref(), Some("fine ??"));
    assert_eq!(text::clean("Ｗｉｄｅ", &seps).as_deref(), Some("Wide"));
    assert_eq!(text::clean(" ~*\u{7f} ", &seps), None);
}

#[test]
fn regions_are_two_letters_or_a_us_or_canadian_name() {
    let code = |r: &str| regions::code(r);
    assert_eq!(code("ma").as_deref(), Some("MA"));
    assert_eq!(code("MASSACHUSETTS").as_deref(), Some("MA"));
    assert_eq!(code("district of columbia").as_deref(), Some("DC"));
    assert_eq!(code("U.S. Virgin Islands").as_deref(), Some("VI"));
    assert_eq!(code("Virgin Islands").as_deref(), Some("VI"));
    assert_eq!(code("Newfoundland and Labrador").as_deref(), Some("NL"));
    let seps = settings().separators;
    let quebec = text::clean("Québec", &seps).unwrap_or_default();
    assert_eq!(code(&quebec).as_deref(), Some("QC"));
    assert_eq!(code("Bayern"), None);
    assert_eq!(code("M1"), None);
}

#[test]
fn orders_that_do_not_fit_are_refused_with_the_field_and_the_limit() {
    let s = settings();
    let refused = |change: &dyn Fn(&mut OutgoingOrder)| {
        let mut order = order_1234();
        change(&mut order);
        check_order(&s, &order).err().unwrap_or_default()
    };
    assert_eq!(check_order(&s, &order_1234()), Ok(()));
    assert_eq!(
        refused(&|o| o.ship_to.street1 = Some("S".repeat(60))),
        "shipping_address.street1 is 60 characters; N301 takes at most 55"
    );
    assert_eq!(
        refused(&|o| o.ship_to.region = Some("Bayern".into())),
        "shipping_address.region 'Bayern' is not a 2-letter code or a US or Canadian region name; N402 takes 2 characters"
    );
    assert_eq!(
        refused(&|o| o.ship_to.city = Some("B".into())),
        "shipping_address.city is 1 character; N401 takes at least 2"
    );
    assert_eq!(refused(&|o| o.ship_to.city = None), "shipping_address.city is missing; N401 is required");
    assert_eq!(
        refused(&|o| o.ship_to.postal_code = Some("~*".into())),
        "shipping_address.postal_code is missing; N403 is required"
    );
    assert_eq!(
        refused(&|o| o.ship_to.country = Some("USAX".into())),
        "shipping_address.country is 4 characters; N404 takes at most 3"
    );
    assert_eq!(
        refused(&|o| o.ship_to.street2 = Some("S".repeat(56))),
        "shipping_address.street2 is 56 characters; N302 takes at most 55"
    );
    assert!(
        refused(&|o| {
            o.ship_to.first_name = None;
            o.ship_to.last_name = None
        })
        .contains("N102 is required")
    );
    assert!(refused(&|o| o.ship_to.first_name = Some("G".repeat(60))).contains("N102 takes at most 60"));
    assert!(refused(&|o| o.ship_to.telephone = Some("1".repeat(81))).contains("at most 80"));
    assert!(
        refused(&|o| o.customer_email = Some("e".repeat(81))).contains("customer_email is 81 characters")
    );
    assert!(refused(&|o| o.items.clear()).contains("no items"));
    assert_eq!(refused(&|o| o.items[1].sku = None), "order_items[1].sku is missing; W0105 is required");
    assert_eq!(
        refused(&|o| o.items[0].sku = Some("K".repeat(49))),
        "order_items[0].sku is 49 characters; W0105 takes at most 48"
    );
    // Not address data: cut, or left out, never refused.
    assert_eq!(
        check_order(&s, &OutgoingOrder { external_display_id: Some("D".repeat(31)), ..order_1234() }),
        Ok(())
    );
    let mut long_name = order_1234();
    long_name.items[0].name = Some("N".repeat(100));
    long_name.notes = Some("x".repeat(1000));
    assert_eq!(check_order(&s, &long_name), Ok(()));
    // A region may be absent.
    let mut no_region = order_1234();
    no_region.ship_to.region = None;
    let (bytes, _) = write_940s(&s, 9, 0, &[no_region]);
    assert!(String::from_utf8_lossy(&bytes).contains("~N4*Boston**02110*US~"));
}

#[test]
fn descriptions_are_cut_and_optional_segments_follow_the_order() {
    let s = settings_of(json!({
        "sender_id": "ACMEOB", "receiver_id": "WHSE3PL", "depositor_name": "Acme Goods", "depositor_code": "AC1",
        "reference_prefix": "AC-", "scac": {"fedex": "FDEG"}, "time_zone": "America/New_York"
    }));
    let mut order = order_1234();
    order.external_display_id = Some("D".repeat(31));
    order.customer_email = None;
    order.ordered_at = Some(ms("2024-03-05T03:00:00Z"));
    order.carrier = Some("FedEx".into());
    order.service_level = Some("Home Delivery with a very long name indeed".into());
    order.notes = Some(format!("{}{}", "a".repeat(79), " b"));
    order.gift_message = Some("Happy birthday!".into());
    order.items[0].name = Some(format!("{}   {}", "n".repeat(44), "tail"));
    order.items[0].upc = Some("12345".into());
    let (bytes, _) = write_940s(&s, 3, ms("2026-07-01T03:30:00Z"), &[order]);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    // 03:30 UTC is 23:30 the day before in New York (EDT).
    assert!(text.contains("*260630*2330*"), "{text}");
    assert!(text.contains("~GS*OW*ACMEOB*WHSE3PL*20260630*2330*3*X*004010~"), "{text}");
    assert!(text.contains("~W05*N*AC-1234~N1*DE*Acme Goods*ZZ*AC1~N1*ST*Grace Hopper~"), "{text}");
    assert!(text.contains("~PER*IC**TE*617-555-0199~"), "{text}");
    assert!(!text.contains("~N9*"), "{text}");
    assert!(text.contains("~G62*04*20240304~"), "{text}");
    assert!(
        text.contains(&format!("~NTE*WHI*{}~NTE*WHI*b~NTE*GEN*Happy birthday!~", "a".repeat(79))),
        "{text}"
    );
    assert!(text.contains("~W66*PP*U***FedEx Home Delivery with a very lon*****FDEG~"), "{text}");
    assert!(text.contains(&format!("~W01*2*EA**SK*MUG-CREME~G69*{}~", "n".repeat(44))), "{text}");
    // Neither routing nor SCAC: W66 keeps its two codes.
    let mut plain = order_1234();
    plain.service_level = None;
    let (bytes, _) = write_940s(&settings(), 3, 0, &[plain]);
    assert!(String::from_utf8_lossy(&bytes).contains("~W66*PP*U~"));
}

#[test]
fn a_send_of_several_orders_numbers_its_sets_and_refuses_a_set_of_the_wrong_kind() {
    let s = settings();
    let mut second = order_1234();
    second.order_id = 1235;
    let (bytes, sets) = write_940s(&s, 12, 0, &[order_1234(), second]);
    assert_eq!(sets, vec![1, 2]);
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("~ST*940*0002~W05*N*1235~"));
    assert!(text.ends_with("~GE*2*12~IEA*1*000000012~"), "{text}");
    let mut acks = Interchange::new(&s, GroupKind::Acks, 1, 0).expect("a document");
    assert!(acks.set_940(&order_1234()).is_err());
    assert!(Interchange::new(&s, GroupKind::Orders, 0, 0).is_err());
    assert!(Interchange::new(&s, GroupKind::Orders, 1_000_000_000, 0).is_err());
}

/// The annex's 945 with other separators: element `|`, component `^`, terminator `t`.
fn with_separators(annex: &str, element: char, component: char, terminator: &str) -> Vec<u8> {
    annex
        .lines()
        .map(|line| {
            let line = line.trim_end().trim_end_matches('~').replace('*', &element.to_string());
            let line = match line.strip_suffix('>') {
                Some(isa) if line.starts_with("ISA") => format!("{isa}{component}"),
                _ => line,
            };
            format!("{line}{terminator}")
        })
        .collect::<String>()
        .into_bytes()
}

/// The shipments of a file read from `shipments_dir`, or its problems as lines.
fn shipments_of(s: &X12Settings, bytes: &[u8]) -> Result<Vec<Shipment945>, Vec<String>> {
    match read(s, bytes, Inbox::Shipments).outcome {
        Ok(Contents::Shipments { shipments, .. }) => Ok(shipments),
        Ok(other) => panic!("{other:?}"),
        Err(problems) => Err(lines(&problems)),
    }
}

#[test]
fn any_separators_the_isa_declares_are_read_with_or_without_newlines() {
    let s = settings();
    let expected = shipments_of(&s, &file(EXAMPLE_945)).expect("the annex's 945");
    for (element, component, terminator) in
        [('|', '^', "~"), ('^', ':', "'"), ('*', '>', "\n"), ('*', '>', "~\r\n"), ('!', '>', "\r")]
    {
        let bytes = with_separators(EXAMPLE_945, element, component, terminator);
        assert_eq!(shipments_of(&s, &bytes), Ok(expected.clone()), "{element} {component} {terminator:?}");
    }
    // A byte order mark, whitespace around segments, and a last line without its line feed.
    let mut bytes = b"\xEF\xBB\xBF \r\n".to_vec();
    bytes.extend(with_separators(EXAMPLE_945, '*', '>', "\n  "));
    assert_eq!(shipments_of(&s, &bytes), Ok(expected.clone()));
    let bytes = with_separators(EXAMPLE_945, '*', '>', "\n");
    assert_eq!(shipments_of(&s, bytes.strip_suffix(b"\n").unwrap_or_default()), Ok(expected));
}

#[test]
fn what_we_write_with_other_separators_and_newlines_reads_back() {
    let s = settings_of(json!({
        "sender_id": "ACMEOB", "receiver_id": "WHSE3PL", "element_separator": "|", "component_separator": "^",
        "segment_terminator": "!", "newline": true
    }));
    let (bytes, _) = write_940s(&s, 7, ms("2026-03-08T14:30:00Z"), &[order_1234()]);
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.starts_with("ISA|00|          |00|          |ZZ|ACMEOB         |ZZ|WHSE3PL        |260308|1430|U|00401|000000007|0|P|^!\nGS|OW|"), "{text}");
    assert!(text.contains("\nNTE|WHI|Leave at the *blue* door~ please!\n"), "{text}");
    assert_eq!(text.lines().count(), 22);
    assert!(text.lines().all(|l| l.ends_with('!')));
    assert_eq!(text.lines().next().map(str::len), Some(106));
    // Read as the warehouse would (its ids swapped): a 940 group is no group a shipments
    // folder takes, but the envelope and its counts are right.
    let warehouse = settings_of(json!({"sender_id": "WHSE3PL", "receiver_id": "ACMEOB"}));
    let reading = read(&warehouse, &bytes, Inbox::Shipments);
    let Err(problems) = reading.outcome else { panic!("a 940 is not a shipment") };
    assert_eq!(
        lines(&problems),
        vec!["segment 2 (GS): GS01 is 'OW'; shipments_dir takes groups SW (945) and FA (997)"]
    );
    let ack = reading.ack.expect("a 997 accepting the syntax");
    assert!(ack.groups[0].accepted && ack.groups[0].sets[0].accepted);
}

#[test]
fn the_isa_must_be_there_whole_and_for_this_warehouse_else_no_997() {
    let s = settings();
    let whole = file(EXAMPLE_945);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("nothing", Vec::new(), "the file does not start with an ISA segment"),
        ("another document", b"order_id,sku\n1,A\n".to_vec(), "the file does not start with an ISA segment"),
        ("an ISA cut short", whole[..60].to_vec(), "the file ends inside its ISA segment"),
        ("an ISA cut before its terminator", whole[..105].to_vec(), "the file ends inside its ISA segment"),
        (
            "separators not distinct",
            String::from_utf8_lossy(&whole).replacen("*>~", "*~~", 1).into_bytes(),
            "the ISA's separators '*', '~' and '~' are not three different characters",
        ),
        (
            "another receiver",
            String::from_utf8_lossy(&whole).replacen("ACMEOB         ", "SOMEONE        ", 1).into_bytes(),
            "segment 1 (ISA): the interchange is not for this warehouse: ISA08 is 'SOMEONE', not the sender_id 'ACMEOB'",
        ),
        (
            "a test interchange",
            String::from_utf8_lossy(&whole).replacen("*0*P*>~", "*0*T*>~", 1).into_bytes(),
            "segment 1 (ISA): the interchange is not for this warehouse: ISA15 is 'T', not the usage 'P'",
        ),
        ("no IEA", whole[..whole.len() - 16].to_vec(), "the file ends without an IEA segment"),
        (
            "an IEA cut short",
            whole[..whole.len() - 3].to_vec(),
            "segment 15 (IEA): the file ends inside this segment (no terminator)",
        ),
        (
            "IEA02 not ISA13",
            String::from_utf8_lossy(&whole).replace("IEA*1*000000512", "IEA*1*000000513").into_bytes(),
            "segment 15 (IEA): IEA02 is '000000513'; ISA13 is '000000512'",
        ),
    ];
    for (what, bytes, first) in cases {
        let reading = read(&s, &bytes, Inbox::Shipments);
        let Err(problems) = reading.outcome else { panic!("{what}: read") };
        assert_eq!(lines(&problems).first().map(String::as_str), Some(first), "{what}");
        assert!(reading.ack.is_none(), "{what}: no 997");
    }
}

#[test]
fn group_and_set_counts_are_checked_and_answered_in_the_997() {
    let s = settings();
    let answer = |annex: &str| {
        let reading = read(&s, &file(annex), Inbox::Shipments);
        let problems = reading.outcome.err().map(|p| lines(&p)).unwrap_or_default();
        let ack = reading.ack.map(|ack| write_997(&s, 8, 0, &ack)).unwrap_or_default();
        let ack = String::from_utf8_lossy(&ack).into_owned();
        let body = ack.split_once("ST*997*0001~").map(|(_, b)| b.to_string()).unwrap_or_default();
        (problems, body.split_once("~SE*").map(|(b, _)| b.to_string()).unwrap_or_default())
    };
    assert_eq!(
        answer(&EXAMPLE_945.replace("GE*1*512", "GE*2*512")),
        (
            vec!["segment 14 (GE): GE01 is '2'; the group has 1 set".into()],
            "AK1*SW*512~AK2*945*0001~AK5*R~AK9*R*2*1*0*5".into()
        )
    );
    assert_eq!(
        answer(&EXAMPLE_945.replace("GE*1*512", "GE*1*511")),
        (
            vec!["segment 14 (GE): GE02 is '511'; GS06 is '512'".into()],
            "AK1*SW*512~AK2*945*0001~AK5*R~AK9*R*1*1*0*4".into()
        )
    );
    assert_eq!(
        answer(&EXAMPLE_945.replace("*X*004010~", "*X*005010~")),
        (
            vec!["segment 2 (GS): GS08 is '005010'; orderbridge reads version 004010".into()],
            "AK1*SW*512~AK2*945*0001~AK5*R~AK9*R*1*1*0*2".into()
        )
    );
    assert_eq!(
        answer(&EXAMPLE_945.replace("SE*11*0001", "SE*11*0002")),
        (
            vec!["segment 13 (SE), set 0001: SE02 is 0002; ST02 is 0001".into()],
            "AK1*SW*512~AK2*945*0001~AK5*R*3~AK9*R*1*1*0".into()
        )
    );
    assert_eq!(
        answer(&EXAMPLE_945.replace("ST*945*0001", "ST*846*0001")),
        (
            vec!["segment 3 (ST), set 0001: ST01 is '846'; a SW group holds 945 sets".into()],
            "AK1*SW*512~AK2*846*0001~AK5*R*1~AK9*R*1*1*0".into()
        )
    );
    assert_eq!(
        answer(&EXAMPLE_945.replace("SE*11*0001~\n", "")),
        (
            vec!["segment 13 (GE): set 0001 (segment 3) has no SE".into()],
            "AK1*SW*512~AK2*945*0001~AK5*R*2~AK9*R*1*1*0".into()
        )
    );
    // §6.2: an element missing, a quantity not a number, a date and a time that are none.
    let (problems, body) = answer(
        &EXAMPLE_945
            .replace("W12*CC*3*3**EA", "W12*CC*3*x**EA")
            .replace("MAN*CP*1Z", "MAN**1Z")
            .replace("G62*11*20260308*8*1430", "G62*11*20260231*8*2460"),
    );
    assert_eq!(
        problems,
        vec![
            "segment 6 (G62), set 0001: G6202 '20260231' is not a date (CCYYMMDD)",
            "segment 6 (G62), set 0001: G6204 '2460' is not a time (HHMM or HHMMSS)",
            "segment 9 (MAN), set 0001: MAN01 is missing",
            "segment 11 (W12), set 0001: W1203 'x' is not a number",
        ]
    );
    assert_eq!(
        body,
        "AK1*SW*512~AK2*945*0001~AK3*G62*4**8~AK4*2**8*20260231~AK4*4**9*2460~AK3*MAN*7**8~AK4*1**1~AK3*W12*9**8~AK4*3**6*x~AK5*R*5~AK9*R*1*1*0"
    );
    let (problems, body) =
        answer(&EXAMPLE_945.replace("W06*F*1234*20260308*SHIP1234~\n", "").replace("SE*11", "SE*10"));
    assert_eq!(problems, vec!["segment 12 (SE), set 0001: the set has no W06"]);
    assert_eq!(body, "AK1*SW*512~AK2*945*0001~AK3*W06*2**3~AK5*R*5~AK9*R*1*1*0");
}

/// The annex's 945 with its set's body (W06 to W03) replaced, the counts kept right.
fn shipment_file(body: &str) -> Vec<u8> {
    let count = body.matches('~').count() + 2;
    let head = EXAMPLE_945.lines().take(3).collect::<String>();
    format!("{head}{body}SE*{count}*0001~GE*1*512~IEA*1*000000512~").into_bytes()
}

#[test]
fn a_945_names_its_order_its_tracking_and_its_units() {
    let s = settings_of(json!({
        "sender_id": "ACMEOB", "receiver_id": "WHSE3PL", "reference_prefix": "AC-",
        "scac_names": {"ZZZZ": "Zeta Freight"}, "time_zone": "Europe/Berlin"
    }));
    let one = |body: &str| shipments_of(&s, &shipment_file(body));
    // Two packages, one by bill of lading, one tracking number twice; W0603's date at
    // midnight in the zone; a package without W12 ships everything left.
    let shipments = one(
        "W06*F*AC-77*20260308~N9*BM*BOL1~W27*M*ZZZZ~LX*1~W12*CC*1*1**EA**VN*A~LX*2~MAN*CP*T2~\
         W12*CC*1*2**EA**ZZ*x*********SK*B~LX*3~MAN*GM*x~MAN*CP*T2~W12*CC*1*1**EA**SK*B~W12*CC*0*0**EA**SK*C~LX*4~MAN*CP*T3~W03*9*2.5*LB~",
    )
    .expect("shipments");
    let summary: Vec<_> = shipments
        .iter()
        .map(|s| (s.order_id, s.tracking_number.as_str(), s.items.clone(), s.weight))
        .collect();
    assert_eq!(
        summary,
        vec![
            (77, "BOL1", Some(vec![("A".into(), 1)]), None),
            (77, "T2", Some(vec![("B".into(), 3)]), None),
            (77, "T3", None, None),
        ]
    );
    assert_eq!(shipments[0].carrier_name.as_deref(), Some("Zeta Freight"));
    assert_eq!(shipments[0].service_level, None);
    assert_eq!(shipments[0].shipped_at, Some(ms("2026-03-07T23:00:00Z")));
    // A set with no date ships when the file is read.
    let shipments = one("W06*F*AC-77~W27*M*FDXE*2DAY~LX*1~MAN*CP*T~").expect("a shipment");
    assert_eq!((shipments[0].shipped_at, shipments[0].carrier_name.as_deref()), (None, Some("FedEx")));
    assert_eq!(shipments[0].service_level.as_deref(), Some("2DAY"));
    let shipments =
        one("W06*F*AC-77~W27*M*ABCD~LX*1~MAN*CP*T~G62*11*20260308*8*143015~").expect("a shipment");
    assert_eq!(shipments[0].carrier_name.as_deref(), Some("ABCD"));
    assert_eq!(shipments[0].shipped_at, None, "a G62 inside a package is not the heading's");
    // Business problems: the file fails, its 997 accepts.
    for (body, problem) in [
        (
            "W06*F*77~LX*1~MAN*CP*T~",
            "segment 4 (W06), set 0001: unknown order: W0602 '77' names no order orderbridge sent",
        ),
        (
            "W06*F*AC-077~LX*1~MAN*CP*T~",
            "segment 4 (W06), set 0001: unknown order: W0602 'AC-077' names no order orderbridge sent",
        ),
        ("W06*F*AC-7~LX*1~W12*CC*1*1**EA**SK*A~", "segment 7 (SE), set 0001: no tracking number for LX 1"),
        (
            "W06*F*AC-7~LX*1~MAN*CP*T~W12*CC*1*1**CA**SK*A~",
            "segment 7 (W12), set 0001: unit CA: orderbridge counts eaches",
        ),
        (
            "W06*F*AC-7~LX*1~MAN*CP*T~W12*CC*1*1**EA**UP*123~",
            "segment 7 (W12), set 0001: W12 has no SK or VN product id",
        ),
        (
            "W06*F*AC-7~LX*1~MAN*CP*T~W12*CC*0*0**EA**SK*A~",
            "segment 8 (SE), set 0001: no units shipped for tracking number T",
        ),
        (
            "W06*F*AC-7~LX*1~MAN*CP*T~W12*CC*1*1.5**EA**SK*A~",
            "segment 7 (W12), set 0001: W1203 1.5 is not a whole number of units of 0 or more",
        ),
    ] {
        let reading = read(&s, &shipment_file(body), Inbox::Shipments);
        let Err(problems) = reading.outcome else { panic!("{body}: read") };
        assert_eq!(lines(&problems), vec![problem], "{body}");
        assert!(problems[0].business);
        assert!(reading.ack.is_some_and(|a| a.groups[0].accepted), "{body}");
    }
}

#[test]
fn a_file_of_945s_and_997s_reads_both_and_answers_only_the_945s() {
    let s = settings();
    let annex = String::from_utf8_lossy(&file(EXAMPLE_945)).into_owned();
    let (head, _) = annex.split_once("GE*1*512~").unwrap_or_default();
    let both = format!(
        "{head}GE*1*512~GS*FA*WHSE3PL*ACMEOB*20260308*1500*513*X*004010~ST*997*0001~AK1*OW*7~AK2*940*0001~AK5*A~\
         AK2*940*0002~AK5*R*5~AK9*P*3*3*2~SE*8*0001~GE*1*513~IEA*2*000000512~"
    );
    let reading = read(&s, both.as_bytes(), Inbox::Shipments);
    let Ok(Contents::Shipments { shipments, acks }) = reading.outcome else {
        panic!("{:?}", reading.outcome)
    };
    assert_eq!(shipments.len(), 1);
    assert_eq!(acks[0].sets[1], ReceivedSet { set: 2, rejected: Some("AK5 R 5".into()) });
    assert_eq!(reading.ack.map(|a| a.groups.len()), Some(1));
    // An 846 has no place among shipments, nor a 945 among stock.
    let reading = read(&s, &file(EXAMPLE_846), Inbox::Shipments);
    assert!(reading.outcome.is_err());
    let reading = read(&s, &file(EXAMPLE_945), Inbox::Stock);
    let Err(problems) = reading.outcome else { panic!("read") };
    assert_eq!(lines(&problems), vec!["segment 2 (GS): GS01 is 'SW'; inventory_dir takes groups IB (846)"]);
}

#[test]
fn an_846_skips_loops_without_sku_or_quantity_and_fails_on_fractions_and_other_units() {
    let s = settings();
    let stock = |body: &str| {
        let count = body.matches('~').count() + 2;
        let head = EXAMPLE_846.lines().take(3).collect::<String>();
        let bytes = format!("{head}{body}SE*{count}*0001~GE*1*513~IEA*1*000000513~").into_bytes();
        match read(&s, &bytes, Inbox::Stock).outcome {
            Ok(Contents::Stock { levels, skipped }) => Ok((levels, skipped)),
            Ok(other) => panic!("{other:?}"),
            Err(problems) => Err(lines(&problems)),
        }
    };
    let (levels, skipped) = stock(
        "BIA*00*MM*INV1*20260308~LIN*1*UP*123~QTY*33*4~LIN*2*UP*1*SK*A~QTY*17*5~LIN*3*SK*B~QTY*33*-3*EA~LIN*4*SK*C~QTY*33*1~QTY*33*9~",
    )
    .expect("levels");
    assert_eq!(
        levels,
        vec![StockRow { sku: "B".into(), quantity: 0 }, StockRow { sku: "C".into(), quantity: 1 }]
    );
    assert_eq!(
        skipped,
        vec![
            Skipped { sku: None, message: "LIN 1 (segment 5) has no SK or VN product id".into() },
            Skipped { sku: Some("A".into()), message: "LIN 2 (segment 7) of A has no QTY 33".into() },
        ]
    );
    assert_eq!(
        stock("BIA*00*MM*INV1*20260308~LIN*1*SK*A~QTY*33*1.5~"),
        Err(vec!["segment 6 (QTY), set 0001: QTY02 1.5 is not a whole number of units".into()])
    );
    assert_eq!(
        stock("BIA*00*MM*INV1*20260308~LIN*1*SK*A~QTY*33*2*CA~"),
        Err(vec!["segment 6 (QTY), set 0001: unit CA: orderbridge counts eaches".into()])
    );
    assert_eq!(
        stock("BIA*00*MM*INV1*2026~LIN*1*SK*A~QTY*33*two~"),
        Err(vec![
            "segment 4 (BIA), set 0001: BIA04 '2026' is not a date (CCYYMMDD)".into(),
            "segment 6 (QTY), set 0001: QTY02 'two' is not a number".into()
        ])
    );
    assert_eq!(
        stock("LIN*1*SK*A~QTY*33*2~"),
        Err(vec!["segment 6 (SE), set 0001: the set has no BIA".into()])
    );
}

#[test]
fn huge_and_endless_input_is_a_problem_never_a_panic() {
    let s = settings();
    // One segment of 10 MB inside a set.
    let big = shipment_file(&format!("W06*F*{}~LX*1~MAN*CP*T~", "9".repeat(10 << 20)));
    let Err(problems) = shipments_of(&s, &big) else { panic!("read") };
    assert!(problems[0].starts_with("segment 4 (W06), set 0001: unknown order"), "{}", &problems[0][..80]);
    assert!(problems[0].len() < 400);
    // 64 MiB of one segment after the ISA, never ended.
    let mut endless = file(EXAMPLE_945)[..106].to_vec();
    endless.extend(std::iter::repeat_n(b'A', 64 << 20));
    let Err(problems) = shipments_of(&s, &endless) else { panic!("read") };
    assert_eq!(problems, vec!["segment 2 (AAAAAAAA): the file ends inside this segment (no terminator)"]);
    // 64 MiB of one element separator-free ISA.
    let mut no_isa_end = b"ISA*".to_vec();
    no_isa_end.extend(std::iter::repeat_n(b'0', 64 << 20));
    assert_eq!(shipments_of(&s, &no_isa_end), Err(vec!["the file ends inside its ISA segment".into()]));
}

mod hostile {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = read(&settings(), &bytes, Inbox::Shipments);
            let _ = read(&settings(), &bytes, Inbox::Stock);
        }

        #[test]
        fn a_damaged_945_never_panics(at in 0usize..700, cut in 0usize..40, junk in proptest::collection::vec(any::<u8>(), 0..8)) {
            let mut bytes = file(EXAMPLE_945);
            let at = at.min(bytes.len());
            let end = (at + cut).min(bytes.len());
            bytes.splice(at..end, junk);
            let reading = read(&settings(), &bytes, Inbox::Shipments);
            if let Some(ack) = reading.ack {
                let _ = write_997(&settings(), 1, 0, &ack);
            }
        }

        #[test]
        fn a_damaged_846_or_997_never_panics(at in 0usize..500, junk in proptest::collection::vec(any::<u8>(), 1..6)) {
            for (annex, inbox) in [(EXAMPLE_846, Inbox::Stock), (EXAMPLE_997, Inbox::Shipments)] {
                let mut bytes = file(annex);
                let at = at.min(bytes.len());
                bytes.splice(at..at, junk.iter().copied());
                let _ = read(&settings(), &bytes, inbox);
            }
        }
    }
}

/// A second opinion: the independent X12 004010 parser of the `x12-types` crate reads what we
/// write, and the annex's 945, as we do. It takes only `*` and `~` with a line feed or none.
mod second_opinion {
    use x12_types::util::Parser;
    use x12_types::v004010::{_940, _945, _997, Transmission};

    use super::*;

    #[test]
    fn our_940_parses_with_its_order_and_items() {
        let (bytes, _) =
            write_940s(&settings(), 7, ms("2026-03-08T14:30:00Z"), &[order_1234(), order_1234()]);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let parsed = Transmission::<_940>::parse(&text);
        let Ok((rest, parsed)) = parsed else { panic!("{parsed:?}") };
        assert!(rest.is_empty(), "{rest}");
        let group = &parsed.functional_group[0];
        assert_eq!(group.segments.len(), 2);
        let set = &group.segments[0];
        assert_eq!(set._020._02.to_string(), "1234");
        let items: Vec<_> = set
            ._0300_loop
            .iter()
            .flat_map(|lx| &lx._0310_loop)
            .map(|w| (w._020._01.to_string(), w._020._05.as_ref().map(ToString::to_string)))
            .collect();
        assert_eq!(
            items,
            vec![("2".to_string(), Some("MUG-CREME".to_string())), ("3".into(), Some("TWL-BGE".into()))]
        );
        assert_eq!(set._0500._01.to_string(), "18");
        assert_eq!(parsed.iea._02.to_string(), "000000007");
    }

    #[test]
    fn our_997s_parse_and_the_annexs_945_reads_the_same() {
        let s = settings();
        let reading = read(&s, &file(EXAMPLE_945), Inbox::Shipments);
        let bytes = write_997(&s, 8, 0, &reading.ack.expect("a 997"));
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let parsed = Transmission::<_997>::parse(&text);
        let Ok((rest, parsed)) = parsed else { panic!("{parsed:?}") };
        assert!(rest.is_empty(), "{rest}");
        let set = &parsed.functional_group[0].segments[0];
        assert_eq!((set.ak1._01.to_string(), set.ak1._02.to_string()), ("SW".to_string(), "512".to_string()));
        assert_eq!(set.loop_ak2[0].ak5._01.to_string(), "A");

        // A rejecting 997 with AK3 and AK4, a line feed after each segment.
        let damaged = EXAMPLE_945.replace("W12*CC*3*3**EA", "W12*CC*3*x**EA");
        let reading = read(&s, &file(&damaged), Inbox::Shipments);
        let newline = settings_of(json!({"sender_id": "ACMEOB", "receiver_id": "WHSE3PL", "newline": true}));
        let bytes = write_997(&newline, 9, 0, &reading.ack.expect("a 997"));
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let parsed = Transmission::<_997>::parse(&text);
        let Ok((rest, parsed)) = parsed else { panic!("{parsed:?}") };
        assert!(rest.is_empty(), "{rest}");
        let set = &parsed.functional_group[0].segments[0];
        let ak2 = &set.loop_ak2[0];
        assert_eq!(ak2.ak5._01.to_string(), "R");
        assert_eq!(ak2.loop_ak3[0].ak3._01.to_string(), "W12");
        assert_eq!(set.ak9._01.to_string(), "R");

        let annex = String::from_utf8_lossy(&file(EXAMPLE_945)).into_owned();
        let parsed = Transmission::<_945>::parse(&annex);
        let Ok((_, parsed)) = parsed else { panic!("{parsed:?}") };
        let set = &parsed.functional_group[0].segments[0];
        let Ok(Contents::Shipments { shipments, .. }) = read(&s, annex.as_bytes(), Inbox::Shipments).outcome
        else {
            panic!("read")
        };
        assert_eq!(set.w06._02.to_string(), shipments[0].order_id.to_string());
        let lx = &set.loop_lx[0];
        assert_eq!(
            lx.man[0]._02.as_ref().map(ToString::to_string),
            Some(shipments[0].tracking_number.clone())
        );
        let units: Vec<_> = lx
            .loop_w12
            .iter()
            .map(|w| w.w12._03.as_ref().map(ToString::to_string).unwrap_or_default())
            .collect();
        let ours: Vec<_> = shipments[0].items.iter().flatten().map(|(_, n)| n.to_string()).collect();
        assert_eq!(units, ours);
    }
}

#[test]
fn no_997_when_send_997_is_off_and_envelope_nesting_is_checked() {
    let quiet = settings_of(json!({"sender_id": "ACMEOB", "receiver_id": "WHSE3PL", "send_997": false}));
    let reading = read(&quiet, &file(EXAMPLE_945), Inbox::Shipments);
    assert!(reading.outcome.is_ok() && reading.ack.is_none());
    let s = settings();
    let cases = [
        (
            EXAMPLE_945.replace("IEA*1*", "IEA*2*"),
            "segment 15 (IEA): IEA01 is '2'; the interchange has 1 group",
        ),
        (EXAMPLE_945.replace("GE*1*512~\n", ""), "segment 14 (IEA): the group of segment 2 has no GE"),
        (
            EXAMPLE_945.replace("GS*SW*WHSE3PL*ACMEOB*20260308*1430*512*X*004010~\n", ""),
            "segment 2 (ST): ST outside a functional group (no GS before it)",
        ),
        (format!("{EXAMPLE_945}\nST*945*0002~"), "segment 16 (ST): the file goes on after its IEA"),
    ];
    for (annex, first) in cases {
        let reading = read(&s, &file(&annex), Inbox::Shipments);
        let Err(problems) = reading.outcome else { panic!("{first}: read") };
        assert_eq!(lines(&problems).first().map(String::as_str), Some(first));
        assert!(reading.ack.is_none(), "{first}: no 997");
    }
}
