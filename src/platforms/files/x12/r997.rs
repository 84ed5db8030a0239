//! A warehouse's 997 read (files-x12.md §8.2): what it says of our 940 groups and sets.

use super::problems::SetCheck;
use super::segments::Read;

/// What a warehouse's 997 says of one 940 group of ours (`AK1*OW*{group}`). Whether the group
/// and its sets are ours is the caller's to check: otherwise the file fails (§8.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedAck {
    /// AK102: the group's control number (GS06 of the 940 file).
    pub group: i64,
    /// Every set the 997 names (AK2), in order.
    pub sets: Vec<ReceivedSet>,
    /// When AK9 rejects (`R`, `M`, `W`, `X`): the message for each set of the group that no
    /// AK2 names ("AK9 R 5").
    pub unnamed_rejected: Option<String>,
}

/// One set of ours a 997 names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedSet {
    /// AK202: ST02 of our set.
    pub set: i64,
    /// When AK5 rejects: "AK5 R 5; AK3 N4 6 8; AK4 2 7 'XX'".
    pub rejected: Option<String>,
}

/// Whether an AK5 or AK9 status rejects.
fn rejects(status: &str) -> bool {
    matches!(status, "R" | "M" | "W" | "X")
}

/// A 997 set being read.
#[derive(Debug, Default)]
pub(super) struct Received {
    /// AK1: the group, or why it is not one of ours.
    group: Option<Result<i64, String>>,
    ak1_at: usize,
    sets: Vec<(Result<i64, String>, usize, Option<String>)>,
    /// The open AK2 loop: its quoted AK3/AK4, whether it has had its AK5.
    quoted: Vec<String>,
    open: bool,
    ak9: Option<Option<String>>,
}

impl Received {
    pub fn segment(&mut self, seg: &Read<'_>, pos: usize, check: &mut SetCheck<'_>) {
        match seg.id_bytes() {
            b"AK1" => {
                check.required(seg, pos, &[1, 2]);
                self.ak1_at = seg.n;
                let code = seg.trimmed(1).unwrap_or_default();
                let number = seg.trimmed(2).unwrap_or_default();
                self.group = Some(match positive(&number) {
                    Some(n) if code == "OW" => Ok(n),
                    _ => Err(format!(
                        "AK1 names group {code} {number}, which is no 940 group orderbridge wrote"
                    )),
                });
            }
            b"AK2" => {
                self.close_loop(seg, pos, check);
                check.required(seg, pos, &[1, 2]);
                let code = seg.trimmed(1).unwrap_or_default();
                let number = seg.trimmed(2).unwrap_or_default();
                let set = match positive(&number) {
                    Some(n) if code == "940" => Ok(n),
                    _ => Err(format!("AK2 names set {code} {number}, which is no 940 set orderbridge wrote")),
                };
                self.sets.push((set, seg.n, None));
                self.quoted.clear();
                self.open = true;
            }
            b"AK3" if self.open => {
                let parts = [1, 2, 4].iter().filter_map(|i| seg.trimmed(*i)).collect::<Vec<_>>();
                self.quoted.push(format!("AK3 {}", parts.join(" ")));
            }
            b"AK4" if self.open => {
                let mut parts = [1, 3].iter().filter_map(|i| seg.trimmed(*i)).collect::<Vec<_>>();
                if let Some(bad) = seg.text(4) {
                    parts.push(format!("'{bad}'"));
                }
                self.quoted.push(format!("AK4 {}", parts.join(" ")));
            }
            b"AK5" if self.open => {
                check.required(seg, pos, &[1]);
                self.open = false;
                let status = seg.trimmed(1).unwrap_or_default();
                if rejects(&status) {
                    let mut message = codes(seg, "AK5", 2..=6);
                    for quote in self.quoted.drain(..) {
                        message.push_str("; ");
                        message.push_str(&quote);
                    }
                    if let Some(last) = self.sets.last_mut() {
                        last.2 = Some(message);
                    }
                }
            }
            b"AK9" => {
                self.close_loop(seg, pos, check);
                check.required(seg, pos, &[1, 2, 3, 4]);
                let status = seg.trimmed(1).unwrap_or_default();
                self.ak9 = Some(rejects(&status).then(|| codes(seg, "AK9", 5..=9)));
            }
            _ => {}
        }
    }

    /// An AK2 loop ended at `seg` without its AK5.
    fn close_loop(&mut self, seg: &Read<'_>, pos: usize, check: &mut SetCheck<'_>) {
        if self.open {
            check.missing("AK5", pos, seg, "the AK2 loop before it has no AK5".to_string());
            self.open = false;
        }
    }

    /// The set's SE: what it acknowledges, when the set is whole.
    pub fn end(mut self, se: &Read<'_>, pos: usize, check: &mut SetCheck<'_>) -> Option<ReceivedAck> {
        self.close_loop(se, pos, check);
        if self.group.is_none() {
            check.missing("AK1", 2, se, "the set has no AK1".to_string());
        }
        if self.ak9.is_none() {
            check.missing("AK9", pos, se, "the set has no AK9".to_string());
        }
        let (Some(group), Some(ak9)) = (self.group, self.ak9) else { return None };
        let group = match group {
            Ok(group) => group,
            Err(message) => {
                check.business_at(self.ak1_at, "AK1", message);
                return None;
            }
        };
        let mut sets = Vec::with_capacity(self.sets.len());
        for (set, n, rejected) in self.sets {
            match set {
                Ok(set) => sets.push(ReceivedSet { set, rejected }),
                Err(message) => check.business_at(n, "AK2", message),
            }
        }
        Some(ReceivedAck { group, sets, unnamed_rejected: ak9 })
    }
}

/// `AK5 R 5`: the segment's status and its codes.
fn codes(seg: &Read<'_>, id: &str, codes: std::ops::RangeInclusive<usize>) -> String {
    let mut out = format!("{id} {}", seg.trimmed(1).unwrap_or_default());
    for code in codes.filter_map(|i| seg.trimmed(i)) {
        out.push(' ');
        out.push_str(&code);
    }
    out
}

/// A control number as a 997 quotes it: decimal digits (zero-padded or not), from 1.
fn positive(text: &str) -> Option<i64> {
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| text.parse().ok()).flatten().filter(|n| *n >= 1)
}
