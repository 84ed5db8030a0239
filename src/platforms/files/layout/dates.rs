//! Date formats of a layout (§5.2): the named ones and patterns of tokens, written as wall
//! time in the layout's IANA time zone and read back with the offset in force then. A wall
//! time in a spring-forward gap moves later by the gap, one that occurs twice is the earlier
//! (jiff's "compatible" disambiguation, Temporal's).

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::TimeZone;

use crate::dates;

/// How a date cell is written and read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DateFormat {
    /// CONTRACT §4's form, always UTC, written; any dateString read.
    Iso8601,
    /// Whole seconds since the epoch.
    Unix,
    /// Whole milliseconds since the epoch.
    UnixMs,
    /// Wall time in the time zone, as the pattern's tokens say (`"date"` is `YYYY-MM-DD`).
    Pattern { text: String, tokens: Vec<Token> },
}

/// A piece of a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    Year4,
    Year2,
    Month2,
    Month1,
    Day2,
    Day1,
    Hour,
    Minute,
    Second,
    Literal(char),
}

/// The tokens, in the order a pattern tries them at each position.
const TOKENS: [(&str, Token); 9] = [
    ("YYYY", Token::Year4),
    ("YY", Token::Year2),
    ("MM", Token::Month2),
    ("M", Token::Month1),
    ("DD", Token::Day2),
    ("D", Token::Day1),
    ("HH", Token::Hour),
    ("mm", Token::Minute),
    ("ss", Token::Second),
];

impl DateFormat {
    /// A `date_format` or column `format`, or why it is none.
    pub fn parse(text: &str) -> Result<DateFormat, String> {
        match text {
            "iso8601" => return Ok(DateFormat::Iso8601),
            "unix" => return Ok(DateFormat::Unix),
            "unix_ms" => return Ok(DateFormat::UnixMs),
            "date" => return DateFormat::parse("YYYY-MM-DD"),
            _ => {}
        }
        let mut tokens = Vec::new();
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            if let Some((name, token)) = TOKENS.iter().find(|(name, _)| rest.starts_with(name)) {
                tokens.push(*token);
                rest = &rest[name.len()..];
                continue;
            }
            if c.is_alphabetic() && c != 'T' {
                return Err(format!(
                    "is not a date format: {c:?} is neither a token (YYYY YY MM M DD D HH mm ss) nor T; use iso8601, date, unix, unix_ms or a pattern such as YYYY-MM-DD HH:mm:ss"
                ));
            }
            tokens.push(Token::Literal(c));
            rest = &rest[c.len_utf8()..];
        }
        let has = |wanted: &[Token]| tokens.iter().any(|t| wanted.contains(t));
        if !(has(&[Token::Year4, Token::Year2])
            && has(&[Token::Month2, Token::Month1])
            && has(&[Token::Day2, Token::Day1]))
        {
            return Err("is not a date format: a pattern needs a year, a month and a day (YYYY or YY, MM or M, DD or D)".into());
        }
        Ok(DateFormat::Pattern { text: text.to_string(), tokens })
    }

    /// The instant `ms` as this format writes it in `zone`.
    pub fn write(&self, ms: i64, zone: &TimeZone) -> String {
        let tokens = match self {
            DateFormat::Iso8601 => return dates::format_ms(ms),
            DateFormat::Unix => return ms.div_euclid(1000).to_string(),
            DateFormat::UnixMs => return ms.to_string(),
            DateFormat::Pattern { tokens, .. } => tokens,
        };
        let instant = Timestamp::from_millisecond(ms).unwrap_or(Timestamp::UNIX_EPOCH);
        let wall = zone.to_datetime(instant);
        let mut out = String::with_capacity(tokens.len() + 8);
        for token in tokens {
            match *token {
                Token::Year4 => out.push_str(&format!("{:04}", wall.year())),
                Token::Year2 => out.push_str(&format!("{:02}", i32::from(wall.year()).rem_euclid(100))),
                Token::Month2 => out.push_str(&format!("{:02}", wall.month())),
                Token::Month1 => out.push_str(&wall.month().to_string()),
                Token::Day2 => out.push_str(&format!("{:02}", wall.day())),
                Token::Day1 => out.push_str(&wall.day().to_string()),
                Token::Hour => out.push_str(&format!("{:02}", wall.hour())),
                Token::Minute => out.push_str(&format!("{:02}", wall.minute())),
                Token::Second => out.push_str(&format!("{:02}", wall.second())),
                Token::Literal(c) => out.push(c),
            }
        }
        out
    }

    /// The instant a cell (trimmed, not empty) names, read in `zone` where it carries no
    /// offset; or what is wrong with it, a phrase that quotes the cell.
    pub fn read(&self, cell: &str, zone: &TimeZone) -> Result<i64, String> {
        match self {
            DateFormat::Iso8601 => match local_iso(cell) {
                Some(wall) => in_zone(cell, wall?, zone),
                None => dates::parse_date_string(cell),
            },
            DateFormat::Unix => whole(cell)?.checked_mul(1000).ok_or_else(|| out_of_range(cell)),
            DateFormat::UnixMs => whole(cell),
            DateFormat::Pattern { text, tokens } => {
                let wall = pattern_fields(cell, tokens)
                    .ok_or_else(|| format!("{:?} does not match the date format {text}", shown(cell)))?;
                in_zone(cell, wall, zone)
            }
        }
    }
}

/// The wall time a cell names: year, month, day, hour, minute, second, millisecond.
type Wall = [i64; 7];

/// The instant of a wall time in `zone`; a date that does not exist (February 30, hour 24)
/// is none.
fn in_zone(
    cell: &str,
    [year, month, day, hour, minute, second, ms]: Wall,
    zone: &TimeZone,
) -> Result<i64, String> {
    let small = |n: i64| i8::try_from(n).ok();
    let wall = (|| {
        DateTime::new(
            i16::try_from(year).ok()?,
            small(month)?,
            small(day)?,
            small(hour)?,
            small(minute)?,
            small(second)?,
            i32::try_from(ms * 1_000_000).ok()?,
        )
        .ok()
    })()
    .ok_or_else(|| format!("{:?} is not a date that exists", shown(cell)))?;
    let instant = zone.to_ambiguous_timestamp(wall).compatible().map_err(|_| out_of_range(cell))?;
    Ok(instant.as_millisecond())
}

/// The wall time of a cell read as `tokens`, when the whole cell matches them.
fn pattern_fields(cell: &str, tokens: &[Token]) -> Option<Wall> {
    let mut wall: Wall = [0, 1, 1, 0, 0, 0, 0];
    let mut rest = cell;
    for token in tokens {
        let (at, digits, most) = match *token {
            Token::Literal(c) => {
                rest = rest.strip_prefix(c)?;
                continue;
            }
            Token::Year4 => (0, 4, 4),
            Token::Year2 => (0, 2, 2),
            Token::Month2 => (1, 2, 2),
            Token::Month1 => (1, 1, 2),
            Token::Day2 => (2, 2, 2),
            Token::Day1 => (2, 1, 2),
            Token::Hour => (3, 2, 2),
            Token::Minute => (4, 2, 2),
            Token::Second => (5, 2, 2),
        };
        let taken = rest.bytes().take(most).take_while(u8::is_ascii_digit).count();
        if taken < digits {
            return None;
        }
        let value: i64 = rest[..taken].parse().ok()?;
        wall[at] = if *token == Token::Year2 { 2000 + value } else { value };
        rest = &rest[taken..];
    }
    rest.is_empty().then_some(wall)
}

/// An ISO 8601 date or date-time without an offset (`2026-03-08`, `2026-03-08T01:30`,
/// `2026-03-08 01:30:00.5`): its wall time, or why it is no date; `None` when the cell is not
/// of that shape (it has an offset, or is a phrase).
fn local_iso(cell: &str) -> Option<Result<Wall, String>> {
    let bytes = cell.as_bytes();
    let digits = |from: usize, n: usize| -> Option<i64> {
        let part = bytes.get(from..from + n)?;
        part.iter().all(u8::is_ascii_digit).then(|| part.iter().fold(0, |n, b| n * 10 + i64::from(b - b'0')))
    };
    let at = |i: usize, b: u8| bytes.get(i) == Some(&b);
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    if !(at(4, b'-') && at(7, b'-')) {
        return None;
    }
    let mut wall: Wall = [year, month, day, 0, 0, 0, 0];
    if bytes.len() == 10 {
        return Some(Ok(wall));
    }
    if !(at(10, b'T') || at(10, b' ')) || !at(13, b':') {
        return None;
    }
    wall[3] = digits(11, 2)?;
    wall[4] = digits(14, 2)?;
    let mut end = 16;
    if at(16, b':') {
        wall[5] = digits(17, 2)?;
        end = 19;
        if at(19, b'.') {
            let fraction = bytes.get(20..).unwrap_or_default();
            if fraction.is_empty() || !fraction.iter().all(u8::is_ascii_digit) {
                return None;
            }
            // Milliseconds: the first three digits, the rest cut.
            wall[6] =
                (0..3).map(|i| fraction.get(i).map_or(0, |b| i64::from(b - b'0'))).fold(0, |n, d| n * 10 + d);
            end = bytes.len();
        }
    }
    (end == bytes.len()).then_some(Ok(wall))
}

/// Whole digits, as `unix` and `unix_ms` read them.
fn whole(cell: &str) -> Result<i64, String> {
    if cell.is_empty() || !cell.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{:?} is not a whole number of seconds or milliseconds since 1970", shown(cell)));
    }
    cell.parse().map_err(|_| out_of_range(cell))
}

fn out_of_range(cell: &str) -> String {
    format!("{:?} is out of range", shown(cell))
}

/// A cell as an error message quotes it: a long one cut.
fn shown(cell: &str) -> &str {
    match cell.char_indices().nth(60) {
        Some((at, _)) => &cell[..at],
        None => cell,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chicago() -> TimeZone {
        TimeZone::get("America/Chicago").unwrap()
    }

    fn iso(ms: i64) -> String {
        dates::format_ms(ms)
    }

    #[test]
    fn chicago_wall_times_read_with_the_offset_in_force_and_a_gap_moves_later() {
        let format = DateFormat::parse("YYYY-MM-DD HH:mm:ss").unwrap();
        for (wall, instant) in [
            ("2026-03-08 01:30:00", "2026-03-08T07:30:00.000Z"),
            ("2026-03-08 03:30:00", "2026-03-08T08:30:00.000Z"),
            ("2026-03-08 02:30:00", "2026-03-08T08:30:00.000Z"),
            ("2026-11-01 01:30:00", "2026-11-01T06:30:00.000Z"),
        ] {
            assert_eq!(iso(format.read(wall, &chicago()).unwrap()), instant, "{wall}");
        }
    }

    #[test]
    fn instants_are_written_as_wall_time_in_the_zone() {
        let format = DateFormat::parse("YYYY-MM-DD HH:mm:ss").unwrap();
        let at = |text: &str| dates::parse_date_string(text).unwrap();
        assert_eq!(format.write(at("2026-07-03T02:05:09Z"), &chicago()), "2026-07-02 21:05:09");
        assert_eq!(format.write(at("2026-01-15T05:30:00Z"), &chicago()), "2026-01-14 23:30:00");
        let us = DateFormat::parse("M/D/YY").unwrap();
        assert_eq!(
            us.write(at("2026-07-03T02:05:09Z"), &TimeZone::get("America/Los_Angeles").unwrap()),
            "7/2/26"
        );
        assert_eq!(
            DateFormat::Iso8601.write(at("2026-07-03T02:05:09Z"), &chicago()),
            "2026-07-03T02:05:09.000Z"
        );
        assert_eq!(DateFormat::Unix.write(1_500, &chicago()), "1");
        assert_eq!(
            DateFormat::parse("date").unwrap().write(at("2026-07-03T02:05:09Z"), &TimeZone::UTC),
            "2026-07-03"
        );
    }

    #[test]
    fn patterns_take_the_first_token_at_each_place_and_refuse_other_letters() {
        for good in ["M/D/YY", "YYYY-MM-DD HH:mm:ss", "YYYYMMDD", "DD.MM.YYYY", "YYYY-MM-DDTHH:mm"] {
            assert!(DateFormat::parse(good).is_ok(), "{good}");
        }
        for bad in ["yyyy-MM-dd", "YYYY-MM-DD hh:mm", "HH:mm", "YYYY-MM", "YYYYY-MM-DD", ""] {
            assert!(DateFormat::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_read_date_must_match_the_whole_pattern_and_exist() {
        let format = DateFormat::parse("YYYY-MM-DD HH:mm:ss").unwrap();
        for bad in
            ["2026-03-08 3:30", "2026-02-30 00:00:00", "2026-03-08 24:00:00", "2026-03-08 01:30:00x", ""]
        {
            assert!(format.read(bad, &TimeZone::UTC).is_err(), "{bad}");
        }
        let us = DateFormat::parse("M/D/YY").unwrap();
        assert_eq!(iso(us.read("12/31/26", &TimeZone::UTC).unwrap()), "2026-12-31T00:00:00.000Z");
        assert_eq!(iso(us.read("1/2/26", &TimeZone::UTC).unwrap()), "2026-01-02T00:00:00.000Z");
    }

    #[test]
    fn iso_dates_without_an_offset_are_in_the_zone_and_with_one_are_what_they_say() {
        let read = |cell: &str| iso(DateFormat::Iso8601.read(cell, &chicago()).unwrap());
        assert_eq!(read("2026-03-08T01:30:00"), "2026-03-08T07:30:00.000Z");
        assert_eq!(read("2026-03-08 01:30:00.250"), "2026-03-08T07:30:00.250Z");
        assert_eq!(read("2026-03-08"), "2026-03-08T06:00:00.000Z");
        assert_eq!(read("2026-03-08T01:30:00Z"), "2026-03-08T01:30:00.000Z");
        assert_eq!(read("2026-03-08T01:30:00-05:00"), "2026-03-08T06:30:00.000Z");
        assert!(DateFormat::Iso8601.read("2026-02-30T00:00:00", &chicago()).is_err());
        assert_eq!(iso(DateFormat::Unix.read("1772668800", &chicago()).unwrap()), "2026-03-05T00:00:00.000Z");
        assert!(DateFormat::Unix.read("-1", &chicago()).is_err());
        assert!(DateFormat::UnixMs.read("99999999999999999999", &chicago()).is_err());
    }
}
