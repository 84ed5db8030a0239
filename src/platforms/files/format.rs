//! What a file warehouse's files say: its CSV layouts (files-csv-layouts.md; orderbridge's
//! own CSV when it has none) or X12 EDI (files-x12.md). The transport (`warehouse.rs`) moves
//! bytes; this turns a send's orders into one document, a file read into records, and names
//! what is written. Nothing here opens a file or a session.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::layout::{self, Layouts, OrderWriter};
use super::x12::{self, Ack, Contents, GroupKind, Interchange, X12Settings};
use crate::platforms::PlatformError;
use crate::platforms::warehouse::{
    Acknowledged, BadLine, Counter, Documents, Inbox, LineRead, OutgoingOrder, Parsed, Remark, Reports,
    SendKey, StockRow,
};

/// A file warehouse's language.
pub enum Format {
    Csv(Box<Layouts>),
    X12(Arc<X12Settings>),
}

/// What a file read holds: its records (or its bad lines), what else it says, and the 997 that
/// answers it (X12).
pub struct FileRead<T> {
    pub records: Parsed<T>,
    pub reports: Reports,
    pub ack: Option<Ack>,
}

/// A send's document being written: an order file of a layout, or a 940 interchange.
pub enum Document {
    Csv(OrderWriter),
    X12 { interchange: Box<Interchange>, parts: Vec<(i64, i64)>, head: Option<Vec<u8>>, buffer: Vec<u8> },
}

/// How X12 numbers run at this warehouse.
fn counter(settings: &X12Settings) -> Counter {
    Counter { first: settings.first_control_number, last: x12::envelope::MAX_CONTROL }
}

impl Format {
    /// The format an adapter (validated) says.
    pub fn of(adapter: &Map<String, Value>) -> Format {
        match X12Settings::of(adapter) {
            Some(settings) => Format::X12(Arc::new(settings)),
            None => Format::Csv(Box::new(Layouts::of(adapter))),
        }
    }

    /// Why `order` cannot be written in this format, if it cannot: more items than a layout's
    /// `max_items`, or an address an X12 element cannot hold (files-x12.md §5.3).
    pub fn refusal(&self, order: &OutgoingOrder) -> Option<String> {
        match self {
            Format::Csv(layouts) => layouts.orders.refusal(order),
            Format::X12(settings) => x12::check_order(settings, order).err(),
        }
    }

    /// Opens send `send`'s document: its file name and its writer. An X12 interchange takes
    /// its control number (and the time it was made) from `documents`, recorded with the
    /// send before a byte is written, so a resend writes the same bytes under the same name.
    pub async fn begin(
        &self,
        send: SendKey,
        documents: &dyn Documents,
    ) -> Result<(String, Document), PlatformError> {
        match self {
            Format::Csv(layouts) => {
                let name = layouts.orders.file_name(send.connection_id, send.number, send.created_at);
                Ok((documents.named(send, name).await?, Document::Csv(OrderWriter::new(&layouts.orders))))
            }
            Format::X12(settings) => {
                let numbered = documents.of_send(send, counter(settings)).await?;
                let name = x12::file_name(GroupKind::Orders, send.connection_id, numbered.number, settings);
                let interchange = Interchange::new(settings, GroupKind::Orders, numbered.number, numbered.at)
                    .map_err(|problem| {
                        PlatformError::BadData(format!("The 940 cannot be made: {problem}."))
                    })?;
                let head = Some(interchange.head().to_vec());
                let interchange = Box::new(interchange);
                Ok((name, Document::X12 { interchange, parts: Vec::new(), head, buffer: Vec::new() }))
            }
        }
    }

    /// Whether a settled file named `name` in `inbox` is one this warehouse reads: a CSV
    /// layout's `file_pattern` (`*.csv` by default), every file for X12.
    pub fn reads(&self, inbox: Inbox, name: &str) -> bool {
        match (self, inbox) {
            (Format::Csv(layouts), Inbox::Shipments) => layouts.shipments.matches(name),
            (Format::Csv(layouts), Inbox::Stock) => layouts.inventory.matches(name),
            (Format::X12(_), _) => true,
        }
    }

    /// A shipment file's lines (X12: the 945s' shipments and the orders the 997s turn back).
    pub fn read_shipments(&self, file: &str, bytes: &[u8]) -> FileRead<LineRead> {
        match self {
            Format::Csv(layouts) => plain(layout::read_shipments(&layouts.shipments, bytes)),
            Format::X12(settings) => {
                let reading = x12::read(settings, bytes, Inbox::Shipments);
                let ack = reading.ack.filter(|_| settings.send_997);
                match reading.outcome {
                    Ok(Contents::Shipments { shipments, acks }) => {
                        // Each shipment is dropped once it is lines: a file's shipments are never
                        // held twice.
                        let mut lines = Vec::with_capacity(shipments.len());
                        for shipment in shipments {
                            let reference = format!("order {}", shipment.order_id);
                            lines.extend(shipment.lines(&reference).into_iter().map(Ok));
                        }
                        let acknowledged = acknowledged(file, &acks);
                        FileRead {
                            records: Ok(lines),
                            reports: Reports { acknowledged, remarks: Vec::new() },
                            ack,
                        }
                    }
                    Ok(Contents::Stock { .. }) => failed(vec![not_here("an 846", "shipments_dir")], ack),
                    Err(problems) => failed(problems.iter().map(bad).collect(), ack),
                }
            }
        }
    }

    /// A stock file's levels (X12: an 846's, each SKU summed over its locations, with the line
    /// items it could not use named).
    pub fn read_stock(&self, bytes: &[u8]) -> FileRead<StockRow> {
        match self {
            Format::Csv(layouts) => plain(layout::read_stock(&layouts.inventory, bytes)),
            Format::X12(settings) => {
                let reading = x12::read(settings, bytes, Inbox::Stock);
                let ack = reading.ack.filter(|_| settings.send_997);
                match reading.outcome {
                    Ok(Contents::Stock { levels, skipped }) => {
                        let remarks = skipped
                            .into_iter()
                            .map(|s| Remark {
                                of_sku: s.sku.is_some(),
                                reference: s.sku.unwrap_or_default(),
                                message: s.message,
                            })
                            .collect();
                        FileRead {
                            records: Ok(levels),
                            reports: Reports { acknowledged: Vec::new(), remarks },
                            ack,
                        }
                    }
                    Ok(Contents::Shipments { .. }) => {
                        failed(vec![not_here("a 945 or 997", "inventory_dir")], ack)
                    }
                    Err(problems) => failed(problems.iter().map(bad).collect(), ack),
                }
            }
        }
    }

    /// The 997 answering a file read, as a document of its own: its name and bytes, numbered by
    /// `documents` (committed before it is written).
    pub async fn acknowledgement(
        &self,
        ack: &Ack,
        connection_id: i64,
        documents: &dyn Documents,
    ) -> Result<Option<(String, Vec<u8>)>, PlatformError> {
        let Format::X12(settings) = self else { return Ok(None) };
        if ack.groups.is_empty() {
            return Ok(None);
        }
        let numbered = documents.next(counter(settings)).await?;
        let mut interchange = Interchange::new(settings, GroupKind::Acks, numbered.number, numbered.at)
            .map_err(|problem| PlatformError::BadData(format!("The 997 cannot be made: {problem}.")))?;
        let mut bytes = interchange.head().to_vec();
        for group in &ack.groups {
            let set = interchange
                .set_997(group)
                .map_err(|problem| PlatformError::BadData(format!("The 997 cannot be made: {problem}.")))?;
            bytes.extend(set.bytes);
        }
        bytes.extend(interchange.finish());
        Ok(Some((x12::file_name(GroupKind::Acks, connection_id, numbered.number, settings), bytes)))
    }

    /// Whether a refused file fails the step (CSV), or is only named in the run (X12, §9).
    pub fn refusal_fails_the_step(&self) -> bool {
        matches!(self, Format::Csv(_))
    }

    /// The text of `{name}.errors.txt`: a CSV file's bad lines under a heading; an X12 file's
    /// problems one per line (files-x12.md §9).
    pub fn report(&self, file: &str, bad: &[BadLine]) -> String {
        match self {
            Format::Csv(_) => super::csv::error_report(file, bad),
            Format::X12(_) => bad.iter().map(|b| format!("{}\n", line_text(b))).collect(),
        }
    }
}

/// A bad line as its own line of a report.
fn line_text(bad: &BadLine) -> String {
    match bad.line {
        0 => bad.problem.clone(),
        n => format!("line {n}: {}", bad.problem),
    }
}

fn plain<T>(records: Parsed<T>) -> FileRead<T> {
    FileRead { records, reports: Reports::default(), ack: None }
}

fn failed<T>(bad: Vec<BadLine>, ack: Option<Ack>) -> FileRead<T> {
    FileRead { records: Err(bad), reports: Reports::default(), ack }
}

/// An X12 problem as a bad line of its file: it names its own place.
fn bad(problem: &x12::Problem) -> BadLine {
    BadLine { line: 0, problem: problem.to_string() }
}

fn not_here(what: &str, folder: &str) -> BadLine {
    BadLine { line: 0, problem: format!("the file holds {what}, which does not belong in {folder}") }
}

/// What the warehouse's 997s say of our 940s: each set named (accepted or rejected), and a
/// rejected group's sets that no AK2 names.
fn acknowledged(file: &str, acks: &[x12::ReceivedAck]) -> Vec<Acknowledged> {
    let words = |codes: &String| format!("the warehouse rejected the 940 (997 in {file}): {codes}");
    let mut out = Vec::new();
    for ack in acks {
        for set in &ack.sets {
            out.push(Acknowledged {
                document: ack.group,
                part: Some(set.set),
                reference: format!("the 997's AK1*OW*{} AK2*940*{:04}", ack.group, set.set),
                rejected: set.rejected.as_ref().map(words),
            });
        }
        if let Some(codes) = &ack.unnamed_rejected {
            out.push(Acknowledged {
                document: ack.group,
                part: None,
                reference: format!("the 997's AK1*OW*{}", ack.group),
                rejected: Some(words(codes)),
            });
        }
    }
    out
}

impl Document {
    /// Adds an order; why it cannot be written, if it cannot (it is then not in the document).
    pub fn add(&mut self, order: &OutgoingOrder) -> Result<(), String> {
        match self {
            Document::Csv(writer) => writer.order(order),
            Document::X12 { interchange, parts, buffer, .. } => {
                let set = interchange.set_940(order)?;
                parts.push((order.order_id, set.set));
                buffer.extend(set.bytes);
                Ok(())
            }
        }
    }

    /// What is written so far, once it is at least `size` bytes.
    pub fn chunk(&mut self, size: usize) -> Option<Vec<u8>> {
        match self {
            Document::Csv(writer) => writer.chunk(size),
            Document::X12 { head, buffer, .. } => {
                let ready = head.as_ref().map_or(0, Vec::len) + buffer.len();
                (ready >= size).then(|| {
                    let mut out = head.take().unwrap_or_default();
                    out.append(buffer);
                    out
                })
            }
        }
    }

    /// The rest of the document, and where each order stands in it (X12: its set number).
    pub fn finish(self) -> (Vec<u8>, Vec<(i64, i64)>) {
        match self {
            Document::Csv(writer) => (writer.finish(), Vec::new()),
            Document::X12 { interchange, parts, head, mut buffer } => {
                let mut out = head.unwrap_or_default();
                out.append(&mut buffer);
                out.extend(interchange.finish());
                (out, parts)
            }
        }
    }
}
