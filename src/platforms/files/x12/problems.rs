//! What is wrong with a file read (files-x12.md §9): each problem as its line of
//! `{name}.errors.txt`, whether it is a syntax error (the 997 rejects) or a business one
//! (the 997 accepts), and the AK3/AK4 a set's reader reports. Bounded: a file of a million
//! bad segments keeps a few hundred lines.

use std::fmt;

use super::ack997::{Ak3, Ak4};
use super::segments::{Read, Separators};
use super::text::clean;

/// Problems kept of one file: enough for a person to see what is wrong.
const MAX_PROBLEMS: usize = 200;
/// The longest problem message kept, in bytes.
const MAX_MESSAGE: usize = 300;
/// Segments in error a 997 names per set.
const MAX_AK3: usize = 50;

/// Where a problem was found: the segment's place in the file (1 = the ISA), its id, and
/// the set (ST02) it is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentPlace {
    pub n: usize,
    pub id: String,
    pub set: Option<String>,
}

/// One thing wrong with a file; its `Display` is the line of `{name}.errors.txt` (§9).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub place: Option<SegmentPlace>,
    pub message: String,
    /// A business problem: the file fails, but its 997 accepts it (§9).
    pub business: bool,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.place {
            Some(SegmentPlace { n, id, set: Some(set) }) => write!(f, "segment {n} ({id}), set {set}: ")?,
            Some(SegmentPlace { n, id, set: None }) => write!(f, "segment {n} ({id}): ")?,
            None => {}
        }
        f.write_str(&self.message)
    }
}

/// The problems of a file so far.
#[derive(Debug, Default)]
pub(super) struct Problems {
    pub list: Vec<Problem>,
    /// A syntax error: every set of the file is rejected in its 997.
    pub syntax: bool,
    /// The interchange cannot be read or answered: no 997.
    pub fatal: bool,
    pub any: bool,
}

impl Problems {
    pub fn push(&mut self, place: Option<SegmentPlace>, mut message: String, business: bool) {
        self.any = true;
        // A message quotes what it read, and a value may be megabytes long.
        if message.len() > MAX_MESSAGE {
            let cut = (0..=MAX_MESSAGE).rev().find(|i| message.is_char_boundary(*i)).unwrap_or(0);
            message.truncate(cut);
            message.push('…');
            message.shrink_to_fit();
        }
        if self.list.len() < MAX_PROBLEMS {
            self.list.push(Problem { place, message, business });
        } else if self.list.len() == MAX_PROBLEMS {
            let message = format!("more problems follow; the first {MAX_PROBLEMS} are listed");
            self.list.push(Problem { place: None, message, business });
        }
    }

    pub fn syntax(&mut self, place: Option<SegmentPlace>, message: String) {
        self.syntax = true;
        self.push(place, message, false);
    }

    pub fn fatal(&mut self, place: Option<SegmentPlace>, message: String) {
        self.fatal = true;
        self.push(place, message, false);
    }
}

/// The place of `seg`, inside `set` or not.
pub(super) fn place(seg: &Read<'_>, set: Option<&str>) -> Option<SegmentPlace> {
    Some(SegmentPlace { n: seg.n, id: seg.id(), set: set.map(str::to_string) })
}

/// What a set reader reports: syntax errors (AK3/AK4 and a problem line) and business
/// problems.
pub(super) struct SetCheck<'p> {
    pub st02: String,
    pub separators: Separators,
    pub problems: &'p mut Problems,
    pub segments: Vec<Ak3>,
    pub errors: bool,
}

impl SetCheck<'_> {
    /// The AK3 of the segment at `position`, added when new.
    fn ak3(&mut self, id: String, position: usize, code: u8) -> Option<&mut Ak3> {
        self.errors = true;
        self.problems.syntax = true;
        let found = self.segments.iter().position(|a| a.position == position && a.code == code);
        let index = match found {
            Some(index) => index,
            None if self.segments.len() < MAX_AK3 => {
                self.segments.push(Ak3 { id, position, code, elements: Vec::new() });
                self.segments.len() - 1
            }
            None => return None,
        };
        self.segments.get_mut(index)
    }

    /// Element `element` of `seg` (at `position` in the set) is wrong: AK4 `code` (with the
    /// bad value unless it is missing), and `message`.
    pub fn element(&mut self, seg: &Read<'_>, position: usize, element: usize, code: u8, message: String) {
        let separators = self.separators;
        let bad = seg
            .el(element)
            .filter(|_| code != 1)
            .and_then(|bad| clean(&String::from_utf8_lossy(&bad[..bad.len().min(99)]), &separators));
        if let Some(ak3) = self.ak3(seg.id(), position, 8) {
            ak3.elements.push(Ak4 { position: element, code, bad });
        }
        let set = self.st02.clone();
        self.problems.push(place(seg, Some(&set)), message, false);
    }

    /// Each of `elements` of `seg` must be present (AK4 code 1).
    pub fn required(&mut self, seg: &Read<'_>, position: usize, elements: &[usize]) {
        for &i in elements {
            if seg.el(i).is_none() {
                let message = format!("{}{i:02} is missing", seg.id());
                self.element(seg, position, i, 1, message);
            }
        }
    }

    /// A mandatory segment `id` is missing (AK3 code 3), noticed at `at`.
    pub fn missing(&mut self, id: &str, position: usize, at: &Read<'_>, message: String) {
        self.ak3(id.to_string(), position, 3);
        let set = self.st02.clone();
        self.problems.push(place(at, Some(&set)), message, false);
    }

    /// A business problem at `seg`.
    pub fn business(&mut self, seg: &Read<'_>, message: String) {
        let set = self.st02.clone();
        self.problems.push(place(seg, Some(&set)), message, true);
    }

    /// A business problem at the segment numbered `n`, whose id is `id`.
    pub fn business_at(&mut self, n: usize, id: &str, message: String) {
        let place = SegmentPlace { n, id: id.to_string(), set: Some(self.st02.clone()) };
        self.problems.push(Some(place), message, true);
    }

    /// Whether this set has syntax errors of its own.
    pub fn has_errors(&self) -> bool {
        self.errors
    }
}
