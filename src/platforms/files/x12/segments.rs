//! X12 at the level of segments: the one place elements are joined into bytes (files-x12.md
//! §4.2) and the one place bytes are cut into segments and elements. Reading works on the
//! file's bytes in place: a segment is a slice of them, its elements are found when asked
//! for, so a huge segment costs no copy.

/// The three separator characters of an interchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Separators {
    pub element: u8,
    pub component: u8,
    pub terminator: u8,
}

impl Separators {
    /// Whether `byte` is one of the three.
    pub fn contains(&self, byte: u8) -> bool {
        byte == self.element || byte == self.component || byte == self.terminator
    }
}

/// A segment to write: its id and its elements. Values are already what may be written
/// (text through §4.4, codes and numbers as they are).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    id: &'static str,
    elements: Vec<String>,
}

impl Segment {
    pub fn new(id: &'static str) -> Segment {
        Segment { id, elements: Vec::new() }
    }

    /// Adds the next element.
    pub fn el(mut self, value: impl Into<String>) -> Segment {
        self.elements.push(value.into());
        self
    }

    /// Adds the next element, empty when `value` is absent.
    pub fn opt(self, value: Option<impl Into<String>>) -> Segment {
        match value {
            Some(v) => self.el(v),
            None => self.el(""),
        }
    }

    /// Adds `count` empty elements.
    pub fn skip(mut self, count: usize) -> Segment {
        self.elements.extend(std::iter::repeat_n(String::new(), count));
        self
    }

    /// Appends the segment: elements joined by the element separator, trailing empty ones
    /// left out, the terminator, and a line feed when `newline`.
    pub fn write_to(&self, out: &mut Vec<u8>, separators: &Separators, newline: bool) {
        let kept = self.elements.iter().rposition(|e| !e.is_empty()).map_or(0, |last| last + 1);
        out.extend_from_slice(self.id.as_bytes());
        for element in &self.elements[..kept] {
            out.push(separators.element);
            out.extend_from_slice(element.as_bytes());
        }
        out.push(separators.terminator);
        if newline {
            out.push(b'\n');
        }
    }
}

/// A segment read: its place in the file (1 = the ISA) and its bytes without terminator or
/// surrounding whitespace.
#[derive(Debug, Clone, Copy)]
pub struct Read<'a> {
    pub n: usize,
    raw: &'a [u8],
    separator: u8,
}

impl<'a> Read<'a> {
    pub fn new(n: usize, raw: &'a [u8], separator: u8) -> Read<'a> {
        Read { n, raw, separator }
    }

    /// The segment id (element 0) as bytes.
    pub fn id_bytes(&self) -> &'a [u8] {
        self.raw.split(|b| *b == self.separator).next().unwrap_or_default()
    }

    /// The segment id as a person reads it: at most 8 characters of it.
    pub fn id(&self) -> String {
        let id = self.id_bytes();
        String::from_utf8_lossy(&id[..id.len().min(8)]).into_owned()
    }

    pub fn is(&self, id: &str) -> bool {
        self.id_bytes() == id.as_bytes()
    }

    /// Element `i` (1 = the first after the id), `None` when absent or empty.
    pub fn el(&self, i: usize) -> Option<&'a [u8]> {
        self.raw.split(|b| *b == self.separator).nth(i).filter(|e| !e.is_empty())
    }

    /// Every element after the id, empty ones included, found in one pass.
    pub fn elements(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let separator = self.separator;
        self.raw.split(move |b| *b == separator).skip(1)
    }

    /// Element `i` as text (bytes not UTF-8 shown as U+FFFD), `None` when absent or empty.
    pub fn text(&self, i: usize) -> Option<String> {
        self.el(i).map(|e| String::from_utf8_lossy(e).into_owned())
    }

    /// Element `i` with surrounding spaces removed, as text; `None` when that leaves nothing.
    pub fn trimmed(&self, i: usize) -> Option<String> {
        self.text(i).map(|t| t.trim().to_string()).filter(|t| !t.is_empty())
    }

    /// Whether element `i` is exactly `value`.
    pub fn el_is(&self, i: usize, value: &str) -> bool {
        self.el(i) == Some(value.as_bytes())
    }
}

/// Whitespace around a segment, which a reader ignores (unless it is a separator).
fn is_space(byte: u8, separators: &Separators) -> bool {
    matches!(byte, b' ' | b'\r' | b'\n' | b'\t') && !separators.contains(byte)
}

/// The segments of `bytes` after the ISA, numbered from `first`: each cut at the terminator,
/// whitespace around it removed; a segment that is only whitespace is none. The last piece,
/// with no terminator after it, comes as `Err` (a file cut short) when it holds anything.
pub fn split<'a>(
    bytes: &'a [u8],
    separators: Separators,
    first: usize,
) -> impl Iterator<Item = Result<Read<'a>, Read<'a>>> + 'a {
    let mut rest = bytes;
    let mut n = first;
    std::iter::from_fn(move || {
        loop {
            if rest.is_empty() {
                return None;
            }
            let (piece, ended) = match rest.iter().position(|b| *b == separators.terminator) {
                Some(end) => {
                    let piece = &rest[..end];
                    rest = &rest[end + 1..];
                    (piece, true)
                }
                None => {
                    let piece = rest;
                    rest = &[];
                    (piece, false)
                }
            };
            let start = piece.iter().position(|b| !is_space(*b, &separators));
            let Some(start) = start else { continue };
            let end = piece.iter().rposition(|b| !is_space(*b, &separators)).map_or(start, |e| e + 1);
            let segment = Read::new(n, &piece[start..end], separators.element);
            n += 1;
            return Some(if ended { Ok(segment) } else { Err(segment) });
        }
    })
}

/// A date element, `CCYYMMDD`, when it is a real date.
pub fn date(element: &[u8]) -> Option<jiff::civil::Date> {
    if element.len() != 8 {
        return None;
    }
    let year = digits(&element[0..4])?;
    let month = digits(&element[4..6])?;
    let day = digits(&element[6..8])?;
    jiff::civil::Date::new(i16::try_from(year).ok()?, i8::try_from(month).ok()?, i8::try_from(day).ok()?).ok()
}

/// A time element, `HHMM` or `HHMMSS`, when it is a real time.
pub fn time(element: &[u8]) -> Option<jiff::civil::Time> {
    if element.len() != 4 && element.len() != 6 {
        return None;
    }
    let hour = digits(&element[0..2])?;
    let minute = digits(&element[2..4])?;
    let second = element.get(4..6).map_or(Some(0), digits)?;
    jiff::civil::Time::new(
        i8::try_from(hour).ok()?,
        i8::try_from(minute).ok()?,
        i8::try_from(second).ok()?,
        0,
    )
    .ok()
}

/// Decimal digits as a number.
fn digits(bytes: &[u8]) -> Option<u32> {
    if bytes.is_empty() || bytes.len() > 9 || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(bytes.iter().fold(0u32, |n, b| n * 10 + u32::from(b - b'0')))
}

/// A number element (`R` or `N`): an optional minus, digits, an optional point.
pub fn number(element: &[u8]) -> Option<rust_decimal::Decimal> {
    let text = std::str::from_utf8(element).ok()?.trim();
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let shape = !unsigned.is_empty()
        && unsigned.len() <= 28
        && unsigned.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && unsigned.bytes().filter(|b| *b == b'.').count() <= 1
        && unsigned.bytes().any(|b| b.is_ascii_digit());
    shape.then(|| text.parse().ok()).flatten()
}

/// An element as a person reads it in a message: at most 40 characters.
pub fn shown(element: &[u8]) -> String {
    String::from_utf8_lossy(&element[..element.len().min(40)]).into_owned()
}
