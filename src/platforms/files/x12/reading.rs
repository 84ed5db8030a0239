//! Reading one file of X12 (files-x12.md §7.1, §9): the ISA's separators, the envelope's
//! counts and control numbers, each set handed to the reader of its kind, every problem
//! found (all or nothing), and the 997 that answers the file.
//!
//! The file is walked once, in place; what is kept is what the sets say (shipments, levels,
//! acknowledgements) and a bounded list of problems, so a file of one huge segment
//! costs no more than its bytes.

use std::collections::BTreeMap;

use super::X12Settings;
use super::ack997::{Ack, AckGroup, AckSet, Ak3};
use super::problems::{Problem, Problems, SetCheck, place};
use super::r846::{Set846, Skipped, Stock};
use super::r945::{Set945, Shipment945};
use super::r997::{Received, ReceivedAck};
use super::segments::{self, Read, Separators};
use super::text::clean;
use crate::platforms::warehouse::{Inbox, StockRow};

/// What a file read holds, or every problem found in it, and the 997 to answer it with.
#[derive(Debug)]
pub struct Reading {
    pub outcome: Result<Contents, Vec<Problem>>,
    /// The 997 to write when `send_997` is on; `None` for a file that could not be read, is
    /// not for this warehouse, or holds only `FA` groups.
    pub ack: Option<Ack>,
}

/// What a whole, faultless file holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Contents {
    /// From `shipments_dir`: the 945s' shipments, one per order and tracking number, and
    /// what the warehouse's 997s say of our 940s.
    Shipments { shipments: Vec<Shipment945>, acks: Vec<ReceivedAck> },
    /// From `inventory_dir`: levels summed per SKU (SKU order), and the LIN loops skipped.
    Stock { levels: Vec<StockRow>, skipped: Vec<Skipped> },
}

/// How a group's sets are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    S945,
    S846,
    S997,
    /// A group of a kind this folder does not take: its envelope is checked, no more.
    Foreign,
}

/// A set being read.
enum SetState {
    S945(Box<Set945>),
    S846(Box<Set846>),
    S997(Box<Received>),
    Skip,
}

struct OpenSet {
    st_n: usize,
    set_code: String,
    set_control: String,
    /// Segments so far, ST included.
    count: usize,
    state: SetState,
    segments: Vec<Ak3>,
    codes: Vec<u8>,
    errors: bool,
}

struct OpenGroup {
    gs_n: usize,
    use_: Use,
    group_code: String,
    group_control: String,
    sets: Vec<AckSet>,
    codes: Vec<u8>,
}

/// What the sets of the file hold so far.
#[derive(Default)]
struct Found {
    shipments: Vec<Shipment945>,
    acks: Vec<ReceivedAck>,
    stock: Stock,
}

/// Reads a file from `inbox`'s folder. Never panics, whatever the bytes.
pub fn read(settings: &X12Settings, bytes: &[u8], inbox: Inbox) -> Reading {
    let mut problems = Problems::default();
    let (acks, found) = walk(settings, bytes, inbox, &mut problems);
    let ack =
        acks.filter(|groups| settings.send_997 && !problems.fatal && !groups.is_empty()).map(|mut groups| {
            if problems.syntax {
                for group in &mut groups {
                    group.accepted = false;
                    for set in &mut group.sets {
                        set.accepted = false;
                    }
                }
            }
            Ack { groups }
        });
    let outcome = if problems.any {
        Err(problems.list)
    } else {
        Ok(match inbox {
            Inbox::Shipments => Contents::Shipments { shipments: merge(found.shipments), acks: found.acks },
            Inbox::Stock => {
                let (levels, skipped) = found.stock.finish();
                Contents::Stock { levels, skipped }
            }
        })
    };
    Reading { outcome, ack }
}

/// The ISA of a file: its separators, the elements that matter, and the bytes after it.
struct Isa<'a> {
    separators: Separators,
    segment: Read<'a>,
    rest: &'a [u8],
}

/// Finds the ISA at the start of `bytes` (after a byte order mark and whitespace).
fn isa(bytes: &[u8]) -> Result<Isa<'_>, String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let start = bytes.iter().position(|b| !matches!(b, b' ' | b'\r' | b'\n' | b'\t')).unwrap_or(bytes.len());
    let bytes = &bytes[start..];
    if !bytes.starts_with(b"ISA") {
        return Err("the file does not start with an ISA segment".to_string());
    }
    let cut_short = || "the file ends inside its ISA segment".to_string();
    let element = *bytes.get(3).ok_or_else(cut_short)?;
    // ISA16 is the character after the 16th element separator; the terminator follows it.
    let sixteenth = bytes.iter().enumerate().filter(|(_, b)| **b == element).nth(15).map(|(i, _)| i);
    let sixteenth = sixteenth.ok_or_else(cut_short)?;
    let component = *bytes.get(sixteenth + 1).ok_or_else(cut_short)?;
    let terminator = *bytes.get(sixteenth + 2).ok_or_else(cut_short)?;
    if element == component || element == terminator || component == terminator {
        return Err(format!(
            "the ISA's separators {:?}, {:?} and {:?} are not three different characters",
            char::from(element),
            char::from(component),
            char::from(terminator)
        ));
    }
    let separators = Separators { element, component, terminator };
    Ok(Isa {
        separators,
        segment: Read::new(1, &bytes[..sixteenth + 2], element),
        rest: &bytes[sixteenth + 3..],
    })
}

/// Whether the interchange is for this warehouse (§7.1); the error says why not.
fn for_us(settings: &X12Settings, isa: &Read<'_>) -> Result<(), String> {
    let checks = [
        (8, settings.sender_id.as_str(), "sender_id"),
        (6, settings.receiver_id.as_str(), "receiver_id"),
        (15, settings.usage.as_str(), "usage"),
    ];
    for (i, want, key) in checks {
        let got = isa.trimmed(i).unwrap_or_default();
        if got != want {
            return Err(format!(
                "the interchange is not for this warehouse: ISA{i:02} is '{got}', not the {key} '{want}'"
            ));
        }
    }
    Ok(())
}

/// Two control numbers are the same: equal as numbers, or as text when not numbers.
fn same_number(a: Option<String>, b: Option<String>) -> bool {
    match (&a, &b) {
        (Some(x), Some(y)) => match (x.parse::<u64>(), y.parse::<u64>()) {
            (Ok(x), Ok(y)) => x == y,
            _ => x == y,
        },
        _ => false,
    }
}

/// The file's segments through the envelope: the 997's groups (`None` when the interchange
/// could not be read or is not ours) and what the sets hold.
fn walk(
    settings: &X12Settings,
    bytes: &[u8],
    inbox: Inbox,
    problems: &mut Problems,
) -> (Option<Vec<AckGroup>>, Found) {
    let mut found = Found::default();
    let isa = match isa(bytes) {
        Ok(isa) => isa,
        Err(message) => {
            problems.fatal(None, message);
            return (None, found);
        }
    };
    if let Err(message) = for_us(settings, &isa.segment) {
        problems.fatal(place(&isa.segment, None), message);
        return (None, found);
    }
    let separators = isa.separators;
    let clean_value =
        |value: Option<String>| value.and_then(|v| clean(&v, &settings.separators)).unwrap_or_default();
    let mut acks: Vec<AckGroup> = Vec::new();
    let mut group: Option<OpenGroup> = None;
    let mut set: Option<OpenSet> = None;
    let mut groups = 0usize;
    let mut ended = false;
    // The segment terminator may be a line feed, and a file's last line may lack one.
    let lenient_end = matches!(separators.terminator, b'\n' | b'\r');
    for piece in segments::split(isa.rest, separators, 2) {
        let seg = match piece {
            Ok(seg) => seg,
            Err(seg) if lenient_end => seg,
            Err(seg) => {
                problems.fatal(
                    place(&seg, None),
                    "the file ends inside this segment (no terminator)".to_string(),
                );
                break;
            }
        };
        if ended {
            problems.fatal(place(&seg, None), "the file goes on after its IEA".to_string());
            break;
        }
        match seg.id_bytes() {
            b"ST" => {
                let Some(g) = group.as_mut() else {
                    problems.fatal(
                        place(&seg, None),
                        "ST outside a functional group (no GS before it)".to_string(),
                    );
                    continue;
                };
                if let Some(open) = set.take() {
                    close_missing_se(open, &seg, g, problems, settings, &mut found);
                }
                set = Some(open_set(&seg, g, &clean_value, problems));
            }
            b"SE" => match (set.take(), group.as_mut()) {
                (Some(mut open), Some(g)) => {
                    open.count += 1;
                    close_set(open, &seg, g, problems, settings, &mut found);
                }
                _ => problems.syntax(place(&seg, None), "SE without an ST before it".to_string()),
            },
            b"GS" => {
                if let Some(g) = &group {
                    problems.fatal(
                        place(&seg, None),
                        format!("GS inside the group of segment {} (no GE before it)", g.gs_n),
                    );
                    continue;
                }
                groups += 1;
                group = Some(open_group(&seg, inbox, &clean_value, problems));
            }
            b"GE" => {
                let Some(mut g) = group.take() else {
                    problems.fatal(place(&seg, None), "GE without a GS before it".to_string());
                    continue;
                };
                if let Some(open) = set.take() {
                    close_missing_se(open, &seg, &mut g, problems, settings, &mut found);
                }
                if let Some(ack) = close_group(g, &seg, &clean_value, problems) {
                    acks.push(ack);
                }
            }
            b"IEA" => {
                ended = true;
                if let Some(g) = &group {
                    problems.fatal(place(&seg, None), format!("the group of segment {} has no GE", g.gs_n));
                }
                if !same_number(seg.trimmed(2), isa.segment.trimmed(13)) {
                    let message = format!(
                        "IEA02 is '{}'; ISA13 is '{}'",
                        seg.trimmed(2).unwrap_or_default(),
                        isa.segment.trimmed(13).unwrap_or_default()
                    );
                    problems.fatal(place(&seg, None), message);
                }
                if !same_number(seg.trimmed(1), Some(groups.to_string())) {
                    let message = format!(
                        "IEA01 is '{}'; the interchange has {groups} group{}",
                        seg.trimmed(1).unwrap_or_default(),
                        if groups == 1 { "" } else { "s" }
                    );
                    problems.fatal(place(&seg, None), message);
                }
            }
            _ => {
                // A set is only ever open inside a group.
                if let Some(open) = set.as_mut() {
                    open.count += 1;
                    feed(open, &seg, problems, settings);
                }
                // Outside a set: a TA1 or other envelope matter, read past.
            }
        }
    }
    if !ended && !problems.fatal {
        problems.fatal(None, "the file ends without an IEA segment".to_string());
    }
    let acks = (!problems.fatal).then_some(acks);
    (acks, found)
}

/// Starts a group at its GS.
fn open_group(
    seg: &Read<'_>,
    inbox: Inbox,
    clean_value: &dyn Fn(Option<String>) -> String,
    problems: &mut Problems,
) -> OpenGroup {
    let code = seg.trimmed(1).unwrap_or_default();
    let use_ = match (inbox, code.as_str()) {
        (Inbox::Shipments, "SW") => Use::S945,
        (Inbox::Shipments, "FA") => Use::S997,
        (Inbox::Stock, "IB") => Use::S846,
        (Inbox::Shipments, _) => {
            let message = format!("GS01 is '{code}'; shipments_dir takes groups SW (945) and FA (997)");
            problems.push(place(seg, None), message, true);
            Use::Foreign
        }
        (Inbox::Stock, _) => {
            let message = format!("GS01 is '{code}'; inventory_dir takes groups IB (846)");
            problems.push(place(seg, None), message, true);
            Use::Foreign
        }
    };
    let mut codes = Vec::new();
    let version = seg.trimmed(8).unwrap_or_default();
    if !matches!(version.as_str(), "004010" | "004010UCS" | "004010VICS") {
        problems.syntax(place(seg, None), format!("GS08 is '{version}'; orderbridge reads version 004010"));
        codes.push(2);
    }
    OpenGroup {
        gs_n: seg.n,
        use_,
        group_code: clean_value(seg.trimmed(1)),
        group_control: clean_value(seg.trimmed(6)),
        sets: Vec::new(),
        codes,
    }
}

/// Ends a group at its GE: its counts and control number, and its part of the 997 (none for
/// a group of 997s).
fn close_group(
    mut g: OpenGroup,
    ge: &Read<'_>,
    clean_value: &dyn Fn(Option<String>) -> String,
    problems: &mut Problems,
) -> Option<AckGroup> {
    let received = g.sets.len();
    let ge01 = ge.trimmed(1);
    if !same_number(ge01.clone(), Some(received.to_string())) {
        let message = format!(
            "GE01 is '{}'; the group has {received} set{}",
            ge01.clone().unwrap_or_default(),
            if received == 1 { "" } else { "s" }
        );
        problems.syntax(place(ge, None), message);
        g.codes.push(5);
    }
    let gs06 = g.group_control.clone();
    if !same_number(ge.trimmed(2), Some(gs06.clone())) {
        problems.syntax(
            place(ge, None),
            format!("GE02 is '{}'; GS06 is '{gs06}'", ge.trimmed(2).unwrap_or_default()),
        );
        g.codes.push(4);
    }
    if g.use_ == Use::S997 {
        return None;
    }
    let included = ge01
        .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        .map_or(received.to_string(), |n| clean_value(Some(n)));
    g.codes.sort_unstable();
    let accepted = g.codes.is_empty() && g.sets.iter().all(|s| s.accepted);
    Some(AckGroup {
        group_code: g.group_code,
        group_control: g.group_control,
        sets: g.sets,
        included,
        received,
        accepted,
        codes: g.codes,
    })
}

/// Starts a set at its ST.
fn open_set(
    seg: &Read<'_>,
    g: &OpenGroup,
    clean_value: &dyn Fn(Option<String>) -> String,
    problems: &mut Problems,
) -> OpenSet {
    let st01 = seg.trimmed(1).unwrap_or_default();
    let expected = match g.use_ {
        Use::S945 => Some("945"),
        Use::S846 => Some("846"),
        Use::S997 => Some("997"),
        Use::Foreign => None,
    };
    let mut codes = Vec::new();
    let mut state = match g.use_ {
        Use::S945 => SetState::S945(Box::default()),
        Use::S846 => SetState::S846(Box::default()),
        Use::S997 => SetState::S997(Box::default()),
        Use::Foreign => SetState::Skip,
    };
    let st02 = seg.trimmed(2);
    if let Some(expected) = expected
        && st01 != expected
    {
        let message = format!("ST01 is '{st01}'; a {} group holds {expected} sets", g.group_code);
        problems.syntax(place(seg, st02.as_deref()), message);
        codes.push(1);
        state = SetState::Skip;
    }
    OpenSet {
        st_n: seg.n,
        set_code: clean_value(Some(st01)),
        set_control: clean_value(st02),
        count: 1,
        state,
        segments: Vec::new(),
        codes,
        errors: false,
    }
}

/// The check a set reader reports to, for `open`.
fn check_of<'p>(open: &mut OpenSet, settings: &X12Settings, problems: &'p mut Problems) -> SetCheck<'p> {
    SetCheck {
        st02: open.set_control.clone(),
        separators: settings.separators,
        problems,
        segments: std::mem::take(&mut open.segments),
        errors: open.errors,
    }
}

/// Hands a segment inside a set to its reader.
fn feed(open: &mut OpenSet, seg: &Read<'_>, problems: &mut Problems, settings: &X12Settings) {
    let position = open.count;
    let mut check = check_of(open, settings, problems);
    match &mut open.state {
        SetState::S945(s) => s.segment(settings, seg, position, &mut check),
        SetState::S846(s) => s.segment(settings, seg, position, &mut check),
        SetState::S997(s) => s.segment(seg, position, &mut check),
        SetState::Skip => {}
    }
    open.errors = check.errors;
    open.segments = check.segments;
}

/// A set whose SE is missing, ended by `at` (the next ST, a GE or the IEA).
fn close_missing_se(
    mut open: OpenSet,
    at: &Read<'_>,
    g: &mut OpenGroup,
    problems: &mut Problems,
    settings: &X12Settings,
    found: &mut Found,
) {
    let st02 = open.set_control.clone();
    problems.syntax(place(at, None), format!("set {st02} (segment {}) has no SE", open.st_n));
    open.codes.push(2);
    open.state = SetState::Skip;
    close_set(open, at, g, problems, settings, found);
}

/// Ends a set at its SE (or where it was cut off): its counts, its reader's verdict, and its
/// AK2 … AK5.
fn close_set(
    mut open: OpenSet,
    se: &Read<'_>,
    g: &mut OpenGroup,
    problems: &mut Problems,
    settings: &X12Settings,
    found: &mut Found,
) {
    let st02 = open.set_control.clone();
    if se.is("SE") {
        let count = open.count;
        let se01 = se.trimmed(1).unwrap_or_default();
        if !same_number(Some(se01.clone()), Some(count.to_string())) {
            problems.syntax(place(se, Some(&st02)), format!("SE01 is {se01}; the set has {count} segments"));
            open.codes.push(4);
        }
        let se02 = se.trimmed(2).unwrap_or_default();
        if se02 != st02 {
            problems.syntax(place(se, Some(&st02)), format!("SE02 is {se02}; ST02 is {st02}"));
            open.codes.push(3);
        }
    }
    let position = open.count;
    let state = std::mem::replace(&mut open.state, SetState::Skip);
    let mut check = check_of(&mut open, settings, problems);
    match state {
        SetState::S945(s) => found.shipments.extend(s.end(settings, se, position, &mut check)),
        SetState::S846(s) => s.end(settings, se, &mut check, &mut found.stock),
        SetState::S997(s) => found.acks.extend(s.end(se, position, &mut check)),
        SetState::Skip => {}
    }
    let errors = check.errors;
    let segments = check.segments;
    if errors {
        open.codes.push(5);
    }
    open.codes.sort_unstable();
    open.codes.dedup();
    g.sets.push(AckSet {
        set_code: open.set_code,
        set_control: open.set_control,
        accepted: open.codes.is_empty(),
        segments,
        codes: open.codes,
    });
}

/// Shipments of one order with one tracking number, from several packages or sets, as one:
/// their items added; one of them with no items ships every unit left.
fn merge(shipments: Vec<Shipment945>) -> Vec<Shipment945> {
    let mut merged: Vec<Shipment945> = Vec::with_capacity(shipments.len());
    let mut index: BTreeMap<(i64, String), usize> = BTreeMap::new();
    for shipment in shipments {
        let key = (shipment.order_id, shipment.tracking_number.clone());
        match index.get(&key).and_then(|i| merged.get_mut(*i)) {
            Some(kept) => kept.add(shipment),
            None => {
                index.insert(key, merged.len());
                merged.push(shipment);
            }
        }
    }
    merged
}
