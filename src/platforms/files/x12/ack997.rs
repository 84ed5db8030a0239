//! 997 functional acknowledgements orderbridge writes (files-x12.md §8.1): one set for each
//! group it read, built by the reader and written here. What a warehouse's 997 says of our
//! 940s is read in `r997`.

use super::segments::Segment;

/// The 997 answering a file read: one set per group read other than `FA`, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    pub groups: Vec<AckGroup>,
}

/// What orderbridge says of one group read. Received values are already through §4.4 with
/// orderbridge's separators, so they can be written as they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckGroup {
    /// GS01 and GS06 received (AK1).
    pub group_code: String,
    pub group_control: String,
    pub sets: Vec<AckSet>,
    /// AK902: GE01 as received (the count of sets received when GE01 is not a number).
    pub included: String,
    /// AK903: the sets received.
    pub received: usize,
    pub accepted: bool,
    /// AK905…: `2` version, `4` GE02, `5` GE01.
    pub codes: Vec<u8>,
}

/// What orderbridge says of one set read (AK2 … AK5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckSet {
    pub set_code: String,
    pub set_control: String,
    pub segments: Vec<Ak3>,
    pub accepted: bool,
    /// AK502…: `1` not supported, `2` no SE, `3` SE02, `4` SE01, `5` segments in error.
    pub codes: Vec<u8>,
}

/// A segment in error (AK3) and its elements in error (AK4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ak3 {
    pub id: String,
    /// The segment's position in its set, ST = 1.
    pub position: usize,
    /// `3` missing, `8` element errors.
    pub code: u8,
    pub elements: Vec<Ak4>,
}

/// An element in error: its position, the code (`1` missing, `6` invalid character, `8`
/// date, `9` time) and the bad value when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ak4 {
    pub position: usize,
    pub code: u8,
    pub bad: Option<String>,
}

/// AK5 or AK9's verdict.
fn verdict(accepted: bool) -> &'static str {
    if accepted { "A" } else { "R" }
}

/// The 997 set's segments between ST and SE for `group` (§8.1).
pub(super) fn segments(group: &AckGroup) -> Vec<Segment> {
    let mut out = vec![Segment::new("AK1").el(group.group_code.as_str()).el(group.group_control.as_str())];
    for set in &group.sets {
        out.push(Segment::new("AK2").el(set.set_code.as_str()).el(set.set_control.as_str()));
        for ak3 in &set.segments {
            out.push(
                Segment::new("AK3")
                    .el(ak3.id.as_str())
                    .el(ak3.position.to_string())
                    .skip(1)
                    .el(ak3.code.to_string()),
            );
            for ak4 in &ak3.elements {
                let ak4s = Segment::new("AK4").el(ak4.position.to_string()).skip(1).el(ak4.code.to_string());
                out.push(ak4s.opt(ak4.bad.as_deref()));
            }
        }
        let ak5 =
            set.codes.iter().fold(Segment::new("AK5").el(verdict(set.accepted)), |s, c| s.el(c.to_string()));
        out.push(ak5);
    }
    let accepted = if group.accepted { group.sets.len() } else { 0 };
    let ak9 = Segment::new("AK9")
        .el(verdict(group.accepted))
        .el(group.included.as_str())
        .el(group.received.to_string())
        .el(accepted.to_string());
    out.push(group.codes.iter().fold(ak9, |s, c| s.el(c.to_string())));
    out
}
