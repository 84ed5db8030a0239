//! The demo's 3PLs that speak their own language (files-csv-layouts.md §10.1, files-x12.md):
//! one demo folder warehouse takes Landmark-like CSV files, another X12. On a database just
//! seeded, the first `… West` folder warehouse speaks Landmark's CSV and a new folder warehouse
//! X12 (for the first customer's marketplace store); the simulated
//! 3PL behind each reads what orderbridge wrote with its own parsing, never orderbridge's
//! format code, and answers as the 3PL would: a Landmark confirmation file per order file,
//! or a 997 for each 940 at once and a 945 per order a few seconds later.

use std::path::Path;
use std::time::SystemTime;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

/// How long an order file waits at a demo 3PL before it ships, as at the demo's other
/// warehouses.
const SHIP_AFTER: std::time::Duration = std::time::Duration::from_secs(6);

/// The demo X12 warehouse's interchange ids: orderbridge's and the 3PL's.
const OURS: &str = "ORDERBRIDGE";
const THEIRS: &str = "DEMO3PL";

/// The Landmark-like adapter of files-csv-layouts.md §10.1 at `connection_string`: the demo's
/// Landmark warehouse, and the tests' example of a 3PL's layouts.
pub fn landmark(connection_string: &str) -> Value {
    json!({"connection_string": connection_string, "file_format": "csv",
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

fn x12(connection_string: &str) -> Value {
    json!({"connection_string": connection_string, "file_format": "x12",
           "x12": {"sender_id": OURS, "receiver_id": THEIRS, "scac": {"UPS Ground": "UPSN"}, "newline": true}})
}

/// On a database just seeded: the first `… West` folder warehouse speaks Landmark's CSV, and
/// the first customer's marketplace store sends its orders to a new folder warehouse that
/// speaks X12 (its other connections switched off). Returns how many warehouses speak a
/// format of their own.
pub fn speak(conn: &Connection, seeded: bool) -> rusqlite::Result<usize> {
    if !seeded {
        return Ok(0);
    }
    let mut spoken = 0;
    let west: Option<(i64, String)> = conn
        .query_row(
            "SELECT id, ob_open(adapter) FROM warehouses WHERE platform = 'folder' AND name LIKE '% West' ORDER BY id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    if let Some((id, adapter)) = west {
        let adapter = landmark(&connection_string(&adapter));
        conn.execute(
            "UPDATE warehouses SET adapter = ob_seal(?2), name = 'Landmark-like 3PL (CSV layout)' WHERE id = ?1",
            params![id, adapter.to_string()],
        )?;
        spoken += 1;
    }
    // The first customer's folder warehouse shows where the demo keeps its folders.
    let first: Option<(i64, String, i64)> = conn
        .query_row(
            "SELECT w.customer_id, ob_open(w.adapter), s.id FROM warehouses w
               JOIN stores s ON s.customer_id = w.customer_id AND s.platform = 'sellbrite'
              WHERE w.platform = 'folder' ORDER BY w.customer_id, w.id, s.id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    if let Some((customer, adapter, store)) = first {
        let url = connection_string(&adapter);
        let Some(folder) = url.rsplit_once('/').map(|(parent, _)| format!("{parent}/edi-3pl")) else {
            return Ok(spoken);
        };
        let now = crate::dates::now_ms();
        let tx = conn.unchecked_transaction()?;
        tx.execute(
            "INSERT INTO warehouses (customer_id, name, description, platform, adapter, created_at, enabled_at)
             VALUES (?1, 'EDI 3PL (X12)', 'a 3PL that takes X12 940s and answers with 997s and 945s', 'folder', ob_seal(?2), ?3, ?3)",
            params![customer, x12(&folder).to_string(), now],
        )?;
        let warehouse = tx.last_insert_rowid();
        tx.execute("UPDATE connections SET enabled_at = NULL WHERE store_id = ?1", [store])?;
        super::demo_rows::connect(&tx, (customer, store, warehouse), "EDI 3PL fulfillment", false, now)?;
        tx.commit()?;
        spoken += 1;
    }
    Ok(spoken)
}

/// The `connection_string` of a stored adapter's JSON.
fn connection_string(adapter: &str) -> String {
    let adapter: Value = serde_json::from_str(adapter).unwrap_or(Value::Null);
    adapter["connection_string"].as_str().unwrap_or_default().to_string()
}

/// What the 3PL behind a demo folder warehouse does, by its adapter; `None` for orderbridge's
/// own CSV (the demo's plain worker).
pub fn serve(folder: &Path, adapter: &Value) -> Option<std::io::Result<usize>> {
    match adapter.get("file_format").and_then(Value::as_str) {
        Some("x12") => Some(edi(folder)),
        _ if adapter.get("orders_layout").is_some_and(Value::is_object) => Some(confirm_landmark(folder)),
        _ => None,
    }
}

/// The files directly in `dir` older than `age`, by name, not hidden.
fn waiting(dir: &Path, age: std::time::Duration, suffix: &str) -> std::io::Result<Vec<String>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| {
            e.metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|at| SystemTime::now().duration_since(at).unwrap_or_default() >= age)
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && n.ends_with(suffix))
        .collect();
    names.sort();
    Ok(names)
}

/// Writes `bytes` as `dir/name` under a dot name first, as a 3PL's uploader would.
fn put(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let temp = dir.join(format!(".{name}"));
    std::fs::write(&temp, bytes)?;
    std::fs::rename(temp, dir.join(name))
}

fn file_away(dir: &Path, into: &str, name: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir.join(into))?;
    std::fs::rename(dir.join(name), dir.join(into).join(name))
}

/// A tracking number for an order reference, the same each time.
fn tracking(reference: &str) -> String {
    let n: u64 = reference.bytes().fold(7, |n, b| n.wrapping_mul(31).wrapping_add(u64::from(b)));
    format!("1ZDEMO{:010}", n % 10_000_000_000)
}

/// Chicago wall time now, as Landmark writes it.
fn chicago_now() -> String {
    let zone = jiff::tz::TimeZone::get("America/Chicago").unwrap_or(jiff::tz::TimeZone::UTC);
    jiff::Timestamp::now().to_zoned_datetime(zone).strftime("%Y-%m-%d %H:%M:%S").to_string()
}

/// Landmark: each order file in `Import` that has waited is confirmed whole in
/// `Confirmation/Shipping_Confirmation_{file}`, one row per component, and filed away.
fn confirm_landmark(folder: &Path) -> std::io::Result<usize> {
    let (orders, confirmations) = (folder.join("Import"), folder.join("Confirmation"));
    let mut shipped = 0;
    for name in waiting(&orders, SHIP_AFTER, ".csv")? {
        let mut reader = csv::Reader::from_path(orders.join(&name)).map_err(std::io::Error::other)?;
        let headers = reader.headers().map_err(std::io::Error::other)?.clone();
        let at = |column: &str| headers.iter().position(|h| h == column);
        let (Some(reference), Some(sku), Some(quantity)) =
            (at("ShipmentReference"), at("ItemSku"), at("ItemQuantity"))
        else {
            file_away(&orders, "unreadable", &name)?;
            continue;
        };
        let mut out = csv::Writer::from_writer(Vec::new());
        let header = [
            "Reference",
            "Is Fulfillment Order",
            "Tracking Number",
            "Carrier",
            "Service Code",
            "Processed Date",
            "Component SKU",
            "Quantity",
        ];
        out.write_record(header).map_err(std::io::Error::other)?;
        let mut seen = std::collections::BTreeSet::new();
        let now = chicago_now();
        for record in reader.records() {
            let record = record.map_err(std::io::Error::other)?;
            let (r, s, q) = (&record[reference], &record[sku], &record[quantity]);
            seen.insert(r.to_string());
            out.write_record([r, "Yes", &tracking(r), "UPSN", "GND", &now, s, q])
                .map_err(std::io::Error::other)?;
        }
        let bytes = out.into_inner().map_err(|e| std::io::Error::other(e.to_string()))?;
        put(&confirmations, &format!("Shipping_Confirmation_{name}"), &bytes)?;
        file_away(&orders, "received", &name)?;
        shipped += seen.len();
    }
    Ok(shipped)
}

/// A 940 set as the 3PL reads it: the depositor order number and its lines (quantity, SKU).
struct WarehouseOrder {
    reference: String,
    lines: Vec<(String, String)>,
}

/// A 940 interchange: its group's control number, and each set (ST02, the order).
struct Interchange940 {
    group: String,
    sets: Vec<(String, WarehouseOrder)>,
}

/// Reads a 940 by the separators its ISA declares: the element separator after `ISA`, the
/// segment terminator after the 16th element.
fn read_940(text: &str) -> Option<Interchange940> {
    let text = text.trim_start();
    let element = text.chars().nth(3)?;
    let terminator = text.chars().nth(105)?;
    let mut group = None;
    let mut sets: Vec<(String, WarehouseOrder)> = Vec::new();
    for segment in text.split(terminator).map(str::trim).filter(|s| !s.is_empty()) {
        let e: Vec<&str> = segment.split(element).collect();
        match (e[0], sets.last_mut()) {
            ("GS", _) => group = e.get(6).map(|g| g.to_string()),
            ("ST", _) => sets.push((
                e.get(2)?.to_string(),
                WarehouseOrder { reference: String::new(), lines: Vec::new() },
            )),
            ("W05", Some((_, order))) => order.reference = e.get(2)?.to_string(),
            ("W01", Some((_, order))) => order.lines.push((e.get(1)?.to_string(), e.get(5)?.to_string())),
            _ => {}
        }
    }
    Some(Interchange940 { group: group?, sets })
}

/// The 3PL's interchange around `body` (a group of kind `group`, each set's segments).
fn envelope(control: u64, group: &str, sets: &[(&str, Vec<String>)]) -> String {
    let now = jiff::Timestamp::now().to_zoned_datetime(jiff::tz::TimeZone::UTC);
    let (date, time, day) = (now.strftime("%y%m%d"), now.strftime("%H%M"), now.strftime("%Y%m%d"));
    let mut out = format!(
        "ISA*00*          *00*          *ZZ*{THEIRS:<15}*ZZ*{OURS:<15}*{date}*{time}*U*00401*{control:09}*0*P*>~\nGS*{group}*{THEIRS}*{OURS}*{day}*{time}*{control}*X*004010~\n"
    );
    for (n, (kind, segments)) in sets.iter().enumerate() {
        out.push_str(&format!("ST*{kind}*{:04}~\n", n + 1));
        for segment in segments {
            out.push_str(segment);
            out.push_str("~\n");
        }
        out.push_str(&format!("SE*{}*{:04}~\n", segments.len() + 2, n + 1));
    }
    out.push_str(&format!("GE*{}*{control}~\nIEA*1*{control:09}~\n", sets.len()));
    out
}

/// The 3PL's next control number: the time, so two runs of the demo do not repeat one soon.
fn control() -> u64 {
    let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    (now.as_millis() as u64 / 10) % 1_000_000_000
}

/// The X12 3PL: each 940 in `orders` is acknowledged with a 997 at once and set aside; each
/// one set aside that has waited is shipped with a 945 per order. orderbridge's own 997s are
/// read and filed away.
fn edi(folder: &Path) -> std::io::Result<usize> {
    let (orders, shipments) = (folder.join("orders"), folder.join("shipments"));
    for name in waiting(&orders, std::time::Duration::ZERO, ".edi")? {
        let text = std::fs::read_to_string(orders.join(&name))?;
        if !name.starts_with("940-") {
            file_away(&orders, "received", &name)?;
            continue;
        }
        let Some(interchange) = read_940(&text) else {
            file_away(&orders, "unreadable", &name)?;
            continue;
        };
        let mut ack = vec![format!("AK1*OW*{}", interchange.group)];
        for (st02, _) in &interchange.sets {
            ack.push(format!("AK2*940*{st02}"));
            ack.push("AK5*A".into());
        }
        let n = interchange.sets.len();
        ack.push(format!("AK9*A*{n}*{n}*{n}"));
        let control = control();
        put(&shipments, &format!("997-{control}.edi"), envelope(control, "FA", &[("997", ack)]).as_bytes())?;
        file_away(&orders, "acknowledged", &name)?;
    }
    let acknowledged = orders.join("acknowledged");
    let mut shipped = 0;
    for name in waiting(&acknowledged, SHIP_AFTER, ".edi")? {
        let text = std::fs::read_to_string(acknowledged.join(&name))?;
        let Some(interchange) = read_940(&text) else { continue };
        let now = jiff::Timestamp::now().to_zoned_datetime(jiff::tz::TimeZone::UTC);
        let (day, time) = (now.strftime("%Y%m%d").to_string(), now.strftime("%H%M").to_string());
        let sets: Vec<(&str, Vec<String>)> = interchange
            .sets
            .iter()
            .map(|(_, order)| {
                let mut segments = vec![
                    format!("W06*F*{0}*{day}*SHIP{0}", order.reference),
                    format!("G62*11*{day}*8*{time}"),
                    "W27*U*UPSN*GROUND".into(),
                    "LX*1".into(),
                    format!("MAN*CP*{}", tracking(&order.reference)),
                ];
                for (quantity, sku) in &order.lines {
                    segments.push(format!("W12*CC*{quantity}*{quantity}**EA**SK*{sku}"));
                }
                ("945", segments)
            })
            .collect();
        shipped += sets.len();
        let control = control();
        put(&shipments, &format!("945-{control}.edi"), envelope(control, "SW", &sets).as_bytes())?;
        file_away(&acknowledged, "../received", &name)?;
    }
    Ok(shipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_3pl_reads_a_940_by_the_separators_its_isa_declares() {
        let text = "ISA*00*          *00*          *ZZ*ORDERBRIDGE    *ZZ*DEMO3PL        *260308*1430*U*00401*000000007*0*P*>|GS*OW*ORDERBRIDGE*DEMO3PL*20260308*1430*7*X*004010|ST*940*0001|W05*N*12|LX*1|W01*2*EA**SK*MUG|SE*5*0001|GE*1*7|IEA*1*000000007|";
        let read = read_940(text).unwrap();
        assert_eq!(read.group, "7");
        assert_eq!(read.sets.len(), 1);
        assert_eq!((read.sets[0].0.as_str(), read.sets[0].1.reference.as_str()), ("0001", "12"));
        assert_eq!(read.sets[0].1.lines, [("2".to_string(), "MUG".to_string())]);
    }

    #[test]
    fn its_interchanges_count_their_segments_and_sets() {
        let text = envelope(42, "FA", &[("997", vec!["AK1*OW*7".into(), "AK9*A*1*1*1".into()])]);
        assert!(
            text.contains("ST*997*0001~\nAK1*OW*7~\nAK9*A*1*1*1~\nSE*4*0001~\nGE*1*42~\nIEA*1*000000042~"),
            "{text}"
        );
        assert_eq!(text.lines().next().unwrap().len(), 106);
    }
}
