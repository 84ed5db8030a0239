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
mod reading;
mod rules;
