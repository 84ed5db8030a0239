//! The envelope of a document written (files-x12.md §3, §4.1): one interchange (ISA … IEA)
//! holding one functional group (GS … GE) of 940 or 997 sets, written a piece at a time so a
//! send of many orders is never held whole.

use jiff::Timestamp;

use super::X12Settings;
use super::ack997::{self, AckGroup};
use super::segments::Segment;
use super::w940;
use crate::platforms::warehouse::OutgoingOrder;

/// The largest control number; after it the counter starts again at 1 (§3).
pub const MAX_CONTROL: i64 = 999_999_999;

/// The kind of group a document written holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupKind {
    /// 940 warehouse shipping orders, group `OW`.
    Orders,
    /// 997 functional acknowledgements, group `FA`.
    Acks,
}

impl GroupKind {
    /// GS01.
    pub const fn group_code(self) -> &'static str {
        match self {
            GroupKind::Orders => "OW",
            GroupKind::Acks => "FA",
        }
    }

    /// ST01 of its sets, which also starts the file's name.
    pub const fn set_code(self) -> &'static str {
        match self {
            GroupKind::Orders => "940",
            GroupKind::Acks => "997",
        }
    }
}

/// The name of a document written (§2): `940-7-12.edi`, `997-7-8.edi`.
pub fn file_name(kind: GroupKind, connection_id: i64, control: i64, settings: &X12Settings) -> String {
    format!("{}-{connection_id}-{control}.{}", kind.set_code(), settings.file_extension)
}

/// One set written: its number in the group (ST02 as an integer: a 997 received names it)
/// and its bytes, ST to SE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenSet {
    pub set: i64,
    pub bytes: Vec<u8>,
}

/// A document being written: [`head`](Interchange::head) (ISA and GS), then each set, then
/// [`finish`](Interchange::finish) (GE and IEA). The bytes of the parts, in that order, are
/// the file.
#[derive(Debug)]
pub struct Interchange {
    /// A copy of the warehouse's settings (a few hundred bytes, once per document), so a
    /// document being written can live beside them.
    settings: X12Settings,
    kind: GroupKind,
    control: i64,
    sets: i64,
    head: Vec<u8>,
}

impl Interchange {
    /// Begins a document numbered `control` (1 to 999999999), made at `made_at_ms` (ms since
    /// the epoch; its date and time in `time_zone` go into ISA09/10 and GS04/05). The error
    /// says which of the two is out of range.
    pub fn new(
        settings: &X12Settings,
        kind: GroupKind,
        control: i64,
        made_at_ms: i64,
    ) -> Result<Interchange, String> {
        if !(1..=MAX_CONTROL).contains(&control) {
            return Err(format!("the control number {control} is not from 1 to {MAX_CONTROL}"));
        }
        let made = Timestamp::from_millisecond(made_at_ms)
            .map_err(|_| format!("the time {made_at_ms} ms is out of range"))?
            .to_zoned_datetime(settings.time_zone.clone());
        let (year, month, day) = (made.year(), made.month(), made.day());
        let (hour, minute) = (made.hour(), made.minute());
        if !(1000..=9999).contains(&year) {
            return Err(format!("the year {year} cannot be written in GS04"));
        }
        let s = settings;
        let isa = Segment::new("ISA")
            .el("00")
            .el(" ".repeat(10))
            .el("00")
            .el(" ".repeat(10))
            .el(s.sender_qualifier.as_str())
            .el(format!("{:<15}", s.sender_id))
            .el(s.receiver_qualifier.as_str())
            .el(format!("{:<15}", s.receiver_id))
            .el(format!("{:02}{month:02}{day:02}", year % 100))
            .el(format!("{hour:02}{minute:02}"))
            .el("U")
            .el("00401")
            .el(format!("{control:09}"))
            .el("0")
            .el(s.usage.as_str())
            .el(char::from(s.separators.component).to_string());
        let gs = Segment::new("GS")
            .el(kind.group_code())
            .el(s.gs_sender_id.as_str())
            .el(s.gs_receiver_id.as_str())
            .el(format!("{year:04}{month:02}{day:02}"))
            .el(format!("{hour:02}{minute:02}"))
            .el(control.to_string())
            .el("X")
            .el("004010");
        let mut head = Vec::with_capacity(200);
        for segment in [isa, gs] {
            segment.write_to(&mut head, &s.separators, s.newline);
        }
        Ok(Interchange { settings: settings.clone(), kind, control, sets: 0, head })
    }

    /// The ISA and GS segments.
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// The next set: the 940 of `order` (§5), or why it cannot be written (§5.3; the set
    /// number is not used then).
    pub fn set_940(&mut self, order: &OutgoingOrder) -> Result<WrittenSet, String> {
        if self.kind != GroupKind::Orders {
            return Err("a 940 belongs in an OW group".to_string());
        }
        let body = w940::segments(&self.settings, order)?;
        Ok(self.set(body))
    }

    /// The next set: the 997 answering one group received (§8.1).
    pub fn set_997(&mut self, group: &AckGroup) -> Result<WrittenSet, String> {
        if self.kind != GroupKind::Acks {
            return Err("a 997 belongs in an FA group".to_string());
        }
        Ok(self.set(ack997::segments(group)))
    }

    /// The sets written so far.
    pub fn sets(&self) -> i64 {
        self.sets
    }

    /// ST, `body`, SE, as the group's next set.
    fn set(&mut self, body: Vec<Segment>) -> WrittenSet {
        self.sets += 1;
        let st02 = format!("{:04}", self.sets);
        let count = body.len() + 2;
        let mut bytes = Vec::with_capacity(64 * count);
        let s = &self.settings;
        let st = Segment::new("ST").el(self.kind.set_code()).el(st02.as_str());
        let se = Segment::new("SE").el(count.to_string()).el(st02);
        for segment in std::iter::once(&st).chain(&body).chain(std::iter::once(&se)) {
            segment.write_to(&mut bytes, &s.separators, s.newline);
        }
        WrittenSet { set: self.sets, bytes }
    }

    /// The GE and IEA segments that close the document.
    pub fn finish(self) -> Vec<u8> {
        let s = &self.settings;
        let mut tail = Vec::with_capacity(40);
        Segment::new("GE").el(self.sets.to_string()).el(self.control.to_string()).write_to(
            &mut tail,
            &s.separators,
            s.newline,
        );
        Segment::new("IEA").el("1").el(format!("{:09}", self.control)).write_to(
            &mut tail,
            &s.separators,
            s.newline,
        );
        tail
    }
}
