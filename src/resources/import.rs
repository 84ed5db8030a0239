//! Getting orders and shipments in (CONTRACT §9): NDJSON or a JSON array, from a file or
//! stdin (`orderbridge import`) or from an admin's `POST /import/orders|shipments`. Every
//! record is validated as the API would; any bad record writes nothing and the 422 maps
//! each bad record's line (NDJSON) or position (JSON array), 1-based, to its problems.
//! Records are written in one transaction as they are validated, so memory stays flat; the
//! transaction rolls back at the end when any record was bad.

use std::io::BufRead;

use rocket::data::{Data, FromData, Outcome, ToByteUnit};
use rocket::request::Request;
use rocket::serde::json::Json;
use rocket::{Route, State, post, routes};
use rusqlite::Connection;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::config::Config;
use crate::dates::now_ms;
use crate::db::Pool;
use crate::fields::{Schema, Slots};
use crate::http::api::ApiResult;
use crate::http::auth::AdminUser;
use crate::http::error::{ApiError, Details, stash};
use crate::orders::model::{NewOrder, ORDER_SCHEMA, Template};
use crate::orders::write::{OrderWriter, Written};
use crate::shipments::{NewShipment, ShipmentWriter};

/// The most bad records a 422 lists (the import fails either way).
pub const MAX_REPORTED: usize = 1000;

pub fn routes() -> Vec<Route> {
    routes![orders, shipments]
}

/// One record: its line (NDJSON) or position (JSON array), and its text or why it could not
/// be read. The text is parsed on the import's parsing thread, by the kind of record.
pub type Record = (usize, Result<String, String>);

/// The records of a body or file, read one at a time (on the import's parsing thread).
pub type Records = Box<dyn Iterator<Item = Record> + Send>;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub created: u64,
    pub updated: u64,
}

impl Counts {
    fn add(&mut self, written: Written) {
        match written {
            Written::Created => self.created += 1,
            Written::Updated => self.updated += 1,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    Orders,
    Shipments,
}

fn not_json(e: serde_json::Error) -> Details {
    Details::from([("record".to_string(), format!("is not valid JSON: {e}"))])
}

fn not_an_object() -> Details {
    Details::from([("record".to_string(), "must be a JSON object".to_string())])
}

/// A record's text as a decoded object, or why it is not one.
fn parse_object(text: &str) -> Result<Map<String, Value>, Details> {
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(not_an_object()),
        Err(e) => Err(not_json(e)),
    }
}

/// A record's text read into `schema`'s slots (`fields::slots`), with `parse_object`'s
/// problems when it is not an object.
fn parse_slots(text: &str, schema: &'static Schema) -> Result<Slots, Details> {
    match Slots::parse(text, schema) {
        Ok(Some(slots)) => Ok(slots),
        Ok(None) => Err(not_an_object()),
        Err(e) => Err(not_json(e)),
    }
}

fn ndjson(lines: impl Iterator<Item = std::io::Result<String>>) -> impl Iterator<Item = Record> {
    lines.enumerate().filter_map(|(i, line)| match line {
        Ok(line) if line.trim().is_empty() => None,
        Ok(line) => Some((i + 1, Ok(line))),
        Err(e) => Some((i + 1, Err(format!("could not be read: {e}")))),
    })
}

/// Records from a file, as `orderbridge import` reads it: `read_body`, its refusal in words.
pub fn read_records(reader: impl BufRead + Send + 'static) -> Result<Records, String> {
    read_body(reader).map_err(|e| describe(&e))
}

/// Records from an import body: a JSON array when it starts with `[`, else NDJSON (blank
/// lines skipped, still counted). NDJSON is streamed line by line; a JSON array is read
/// element by element into raw text (one copy of the input) and each record parsed only when
/// its turn comes. A body that cannot be read, or an array that is not JSON, is a 400.
pub fn read_body(mut reader: impl BufRead + Send + 'static) -> ApiResult<Records> {
    let reading = |e: std::io::Error| ApiError::bad_request(format!("The body could not be read: {e}."));
    let first = loop {
        let buf = reader.fill_buf().map_err(reading)?;
        let Some(&byte) = buf.first() else { break None };
        if byte.is_ascii_whitespace() {
            reader.consume(1);
        } else {
            break Some(byte);
        }
    };
    if first == Some(b'[') {
        let raw: Vec<Box<RawValue>> = serde_json::from_reader(reader)
            .map_err(|e| ApiError::bad_request(format!("The body is not a valid JSON array: {e}.")))?;
        Ok(Box::new(raw.into_iter().enumerate().map(|(i, r)| (i + 1, Ok(Box::<str>::from(r).into_string())))))
    } else {
        Ok(Box::new(ndjson(reader.lines())))
    }
}

fn summarize(problems: &Details) -> String {
    problems.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join("; ")
}

/// Collects the problems of bad records, keyed by line.
#[derive(Default)]
struct Bad(Details);

impl Bad {
    fn record(&mut self, line: usize, problems: &Details) {
        if self.0.len() < MAX_REPORTED {
            self.0.insert(line.to_string(), summarize(problems));
        }
    }
}

/// A kind of record an import writes: how a record is read, checked against what it refers
/// to, and written. Orders and shipments are the two; the loop below is theirs alike.
pub trait Importer {
    type Record;
    /// What checking found the record refers to (the order's customer, the shipment's order).
    type Checked;
    /// Reads one record's text (a JSON object) into what `check` and `write` take.
    fn parse(text: &str) -> Result<Self::Record, Details>;
    fn check(&mut self, record: &Self::Record) -> rusqlite::Result<Result<Self::Checked, Details>>;
    fn write(&mut self, record: &Self::Record, checked: Self::Checked) -> rusqlite::Result<Written>;
}

/// An order as the import's parsing thread leaves it: validated, and its document rendered
/// but for its ids and times of writing, which the writer fills in.
pub struct ParsedOrder {
    pub order: NewOrder,
    pub document: Template,
}

impl Importer for OrderWriter<'_> {
    type Record = ParsedOrder;
    type Checked = i64;

    fn parse(text: &str) -> Result<ParsedOrder, Details> {
        let order = NewOrder::from_slots(parse_slots(text, &ORDER_SCHEMA)?)?;
        Ok(ParsedOrder { document: order.template(), order })
    }

    fn check(&mut self, parsed: &ParsedOrder) -> rusqlite::Result<Result<i64, Details>> {
        OrderWriter::check(self, &parsed.order)
    }

    fn write(&mut self, parsed: &ParsedOrder, customer_id: i64) -> rusqlite::Result<Written> {
        Ok(self.write_with(&parsed.order, Some(&parsed.document), customer_id)?.written)
    }
}

impl Importer for ShipmentWriter<'_> {
    type Record = NewShipment;
    type Checked = crate::shipments::model::OrderRef;

    fn parse(text: &str) -> Result<NewShipment, Details> {
        NewShipment::from_record(parse_object(text)?)
    }

    fn check(&mut self, shipment: &NewShipment) -> rusqlite::Result<Result<Self::Checked, Details>> {
        ShipmentWriter::check(self, shipment)
    }

    fn write(&mut self, shipment: &NewShipment, order: Self::Checked) -> rusqlite::Result<Written> {
        Ok(ShipmentWriter::write(self, shipment, order)?.1)
    }
}

/// Records parsed ahead of the writer at most.
const PARSED_AHEAD: usize = 256;

/// Checks and writes `records` in the caller's transaction, which it neither begins nor
/// commits. Every record is checked; once one is bad nothing more is written, and the
/// problems of every bad line come back for the caller to roll back with.
///
/// Records are read and parsed on a thread of their own, a bounded queue ahead of the one
/// that checks and writes them: parsing JSON and writing SQLite each took about half of an
/// import's time, and now overlap (`examples/bench/`: ~20,000 to ~25,500 records/s on 2 cores).
pub fn apply<W: Importer>(
    writer: &mut W,
    records: impl IntoIterator<Item = Record, IntoIter: Send>,
    progress: &mut dyn FnMut(usize),
) -> ApiResult<Counts>
where
    W::Record: Send,
{
    let records = records.into_iter();
    std::thread::scope(|scope| {
        let (parsed, queue) = std::sync::mpsc::sync_channel(PARSED_AHEAD);
        std::thread::Builder::new()
            .name("orderbridge-import".into())
            .spawn_scoped(scope, move || {
                for (line, record) in records {
                    // The writer gone (it failed): stop reading.
                    let record = record
                        .map_err(|problem| Details::from([("record".to_string(), problem)]))
                        .and_then(|text| W::parse(&text));
                    if parsed.send((line, record)).is_err() {
                        return;
                    }
                }
            })
            .map_err(|e| ApiError::internal(format!("cannot start an import thread: {e}")))?;
        let mut bad = Bad::default();
        let mut counts = Counts::default();
        for (n, (line, parsed)) in queue.into_iter().enumerate() {
            match parsed {
                Err(problems) => bad.record(line, &problems),
                Ok(parsed) => match writer.check(&parsed)? {
                    Err(problems) => bad.record(line, &problems),
                    Ok(checked) if bad.0.is_empty() => counts.add(writer.write(&parsed, checked)?),
                    Ok(_) => {}
                },
            }
            progress(n + 1);
        }
        if bad.0.is_empty() { Ok(counts) } else { Err(ApiError::Validation(bad.0)) }
    })
}

/// Imports orders in one transaction; `progress` hears the number of records seen.
pub fn import_orders(
    conn: &mut Connection,
    records: impl IntoIterator<Item = Record, IntoIter: Send>,
    progress: &mut dyn FnMut(usize),
) -> ApiResult<Counts> {
    let tx = crate::db::write(conn)?;
    let mut writer = OrderWriter::new(&tx, now_ms());
    let counts = apply(&mut writer, records, progress)?;
    writer.finish()?;
    tx.commit()?;
    Ok(counts)
}

/// Imports shipments in one transaction; `progress` hears the number of records seen.
pub fn import_shipments(
    conn: &mut Connection,
    records: impl IntoIterator<Item = Record, IntoIter: Send>,
    progress: &mut dyn FnMut(usize),
) -> ApiResult<Counts> {
    let tx = crate::db::write(conn)?;
    let mut writer = ShipmentWriter::new(&tx, now_ms());
    let counts = apply(&mut writer, records, progress)?;
    writer.finish()?;
    tx.commit()?;
    Ok(counts)
}

pub fn import(
    conn: &mut Connection,
    what: What,
    records: impl IntoIterator<Item = Record, IntoIter: Send>,
    progress: &mut dyn FnMut(usize),
) -> ApiResult<Counts> {
    match what {
        What::Orders => import_orders(conn, records, progress),
        What::Shipments => import_shipments(conn, records, progress),
    }
}

/// An import body: NDJSON or a JSON array up to `import_body_limit` bytes, spooled to an
/// unnamed temporary file beside the database as it arrives. The records are then read from
/// the file one at a time on a database thread, so a 64 MiB body is never held in memory,
/// and a slow upload never holds the write lock.
pub struct ImportBody(std::fs::File);

const ACCEPTED: [&str; 7] = [
    "application/json",
    "application/x-ndjson",
    "application/ndjson",
    "application/jsonl",
    "application/x-jsonlines",
    "application/jsonlines",
    "text/plain",
];

#[rocket::async_trait]
impl<'r> FromData<'r> for ImportBody {
    type Error = ApiError;

    async fn from_data(req: &'r Request<'_>, data: Data<'r>) -> Outcome<'r, Self> {
        if let Some(ct) = req.content_type() {
            let media = format!("{}/{}", ct.top(), ct.sub()).to_ascii_lowercase();
            if !ACCEPTED.contains(&media.as_str()) {
                let e = ApiError::UnsupportedMediaType(format!(
                    "Send the records as NDJSON (application/x-ndjson) or a JSON array (application/json); got {media}."
                ));
                return Outcome::Error(stash(req, e));
            }
        }
        let default;
        let config = match req.rocket().state::<Config>() {
            Some(config) => config,
            None => {
                default = Config::default();
                &default
            }
        };
        match spool(data, config).await {
            Ok(file) => Outcome::Success(ImportBody(file)),
            Err(e) => Outcome::Error(stash(req, e)),
        }
    }
}

/// Copies the body into an unnamed temporary file (gone when closed, even after a crash)
/// in the database's folder, rewound for reading.
async fn spool(data: Data<'_>, config: &Config) -> ApiResult<std::fs::File> {
    use tokio::io::{AsyncSeekExt, AsyncWriteExt};
    let folder = match config.database.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let failed = |e: std::io::Error| {
        log::error!("import: cannot spool the body to a temporary file in {}: {e}", folder.display());
        ApiError::internal("The body could not be stored for import.")
    };
    let file = tokio::task::spawn_blocking({
        let folder = folder.clone();
        move || tempfile::tempfile_in(folder)
    })
    .await
    .map_err(|e| ApiError::internal(format!("spooling: {e}")))?
    .map_err(failed)?;
    let mut writer = tokio::io::BufWriter::with_capacity(1 << 20, tokio::fs::File::from_std(file));
    let copied = data.open(config.import_body_limit.bytes()).stream_to(&mut writer).await;
    let copied = copied.map_err(|e| ApiError::bad_request(format!("The body could not be read: {e}.")))?;
    if !copied.complete {
        return Err(ApiError::PayloadTooLarge);
    }
    writer.flush().await.map_err(failed)?;
    let mut file = writer.into_inner();
    file.rewind().await.map_err(failed)?;
    Ok(file.into_std().await)
}

async fn run(admin: AdminUser, what: What, body: ImportBody, pool: &Pool) -> ApiResult<Json<Counts>> {
    let counts = admin
        .0
        .run(pool, move |conn, _| {
            let records = read_body(std::io::BufReader::with_capacity(1 << 20, body.0))?;
            import(conn, what, records, &mut |_| {})
        })
        .await?;
    Ok(Json(counts))
}

/// `POST /import/orders` (admins).
#[post("/import/orders", data = "<body>")]
async fn orders(admin: AdminUser, body: ImportBody, pool: &State<Pool>) -> ApiResult<Json<Counts>> {
    run(admin, What::Orders, body, pool).await
}

/// `POST /import/shipments` (admins).
#[post("/import/shipments", data = "<body>")]
async fn shipments(admin: AdminUser, body: ImportBody, pool: &State<Pool>) -> ApiResult<Json<Counts>> {
    run(admin, What::Shipments, body, pool).await
}

/// `orderbridge import orders|shipments FILE` (`-` for stdin), with progress on stderr.
pub fn import_file(pool: &Pool, what: What, path: &str) -> Result<Counts, String> {
    let reader: Box<dyn BufRead + Send> = if path == "-" {
        Box::new(std::io::BufReader::new(std::io::stdin()))
    } else {
        let file = std::fs::File::open(path).map_err(|e| format!("cannot open {path}: {e}"))?;
        Box::new(std::io::BufReader::with_capacity(1 << 20, file))
    };
    let records = read_records(reader)?;
    let mut conn = pool.get().map_err(|e| format!("database: {e}"))?;
    let mut bar = crate::progress::Progress::new("records read", None, 10_000);
    let mut progress = |n: usize| {
        if n.is_multiple_of(1_000) {
            bar.set(n as u64);
        }
    };
    let result = import(&mut conn, what, records, &mut progress);
    match &result {
        Ok(counts) => bar.finish(&format!("read {} records", counts.created + counts.updated)),
        Err(_) => bar.finish("stopped: nothing was imported"),
    }
    result.map_err(|e| describe(&e))
}

/// A CLI-friendly account of an import failure: one line per bad record.
pub fn describe(e: &ApiError) -> String {
    match e {
        ApiError::Validation(details) => {
            let mut lines: Vec<(usize, &String)> =
                details.iter().map(|(k, v)| (k.parse().unwrap_or(0), v)).collect();
            lines.sort();
            let shown: Vec<String> =
                lines.iter().take(50).map(|(line, p)| format!("  line {line}: {p}")).collect();
            let more = if lines.len() > 50 {
                format!("\n  ... and {} more", lines.len() - 50)
            } else {
                String::new()
            };
            format!("nothing was imported; bad records:\n{}{more}", shown.join("\n"))
        }
        other => other.body().error.message,
    }
}
