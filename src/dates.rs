//! Time at the edges of the API: stored timestamps are milliseconds since the Unix epoch;
//! responses render them as `2024-03-05T14:07:09.120Z`; requests send dateStrings, ISO 8601
//! or natural language (CONTRACT §7), parsed here against an explicit "now".

use serde::{Serialize, Serializer};
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{Date, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset};

/// The current instant in stored form.
pub fn now_ms() -> i64 {
    to_ms(OffsetDateTime::now_utc())
}

pub fn to_ms(t: OffsetDateTime) -> i64 {
    (t.unix_timestamp_nanos() / 1_000_000) as i64
}

/// Renders stored milliseconds as ISO 8601 UTC with exactly three fractional digits.
pub fn format_ms(ms: i64) -> String {
    let t = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let f = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    t.format(&f).unwrap_or_default()
}

/// A stored timestamp that serializes as ISO 8601 UTC with milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp(pub i64);

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_ms(self.0))
    }
}

/// Parses a dateString relative to the current time.
pub fn parse_date_string(input: &str) -> Result<i64, String> {
    parse_date_string_at(input, OffsetDateTime::now_utc())
}

/// Parses a dateString: ISO 8601 (date; date-time with or without seconds and fraction; `Z`,
/// an offset, or no zone meaning UTC) first, then natural language in the US dialect
/// (`now`, `yesterday`, `3 days ago`, `last monday`, `March 5`, `5 March 2024 10:00`).
/// A date alone is the start of that day.
pub fn parse_date_string_at(input: &str, now: OffsetDateTime) -> Result<i64, String> {
    let s = input.trim();
    if s.is_empty() {
        return Err("is empty; expected a date or date-time".to_string());
    }
    if let Some(t) = parse_iso(s) {
        return Ok(to_ms(t));
    }
    // Something shaped like an ISO date that did not parse as one is a mistake, not a phrase.
    if looks_like_iso_date(s) {
        return Err(format!(
            "'{}' is not a valid ISO 8601 date or date-time in the years 0000 to 9999 (UTC)",
            truncate(s, 60)
        ));
    }
    let now = now.to_offset(UtcOffset::UTC);
    let not_a_date = || {
        format!(
            "'{}' is not a date: use ISO 8601 (2024-03-05T14:07:09Z) or a phrase like 'yesterday' or '3 days ago'",
            truncate(s, 60)
        )
    };
    // A phrase has a word in it. interim also reads bare numbers ("5" as the year 5, "0.5" as
    // 00:05 today), which no one means as a date and which a number typed by mistake lands on.
    if !s.bytes().any(|b| b.is_ascii_alphabetic()) {
        return Err(not_a_date());
    }
    let phrase = lowercase_words(s).ok_or_else(not_a_date)?;
    if let Some(t) = interim::parse_date_string(&phrase, now, interim::Dialect::Us).ok().and_then(in_utc) {
        return Ok(to_ms(t));
    }
    // interim reads "Jan 5 2024 10:00" as a time of 20:24; with the comma it reads the year.
    if let Some(with_comma) = comma_after_day(&phrase)
        && let Some(t) =
            interim::parse_date_string(&with_comma, now, interim::Dialect::Us).ok().and_then(in_utc)
    {
        return Ok(to_ms(t));
    }
    Err(not_a_date())
}

/// The phrase with its words (runs of ASCII letters) in lower case; `None` when a word is
/// longer than any date word. interim 0.2.2 asserts, instead of checking, that the word
/// after an hour is lower case and under 16 letters: "today 9 PM" panicked inside it. It
/// reads its other words case-insensitively, so lowering them changes only its `T` before a
/// time, which is ISO 8601's (read above, before interim).
fn lowercase_words(s: &str) -> Option<String> {
    const LONGEST: usize = 15;
    let mut run = 0;
    for b in s.bytes() {
        run = if b.is_ascii_alphabetic() { run + 1 } else { 0 };
        if run > LONGEST {
            return None;
        }
    }
    Some(s.to_ascii_lowercase())
}

fn parse_iso(s: &str) -> Option<OffsetDateTime> {
    if let Ok(t) = OffsetDateTime::parse(s, &Rfc3339) {
        return in_utc(t);
    }
    let date_only = format_description!("[year]-[month]-[day]");
    if let Ok(d) = Date::parse(s, &date_only) {
        return Some(PrimitiveDateTime::new(d, Time::MIDNIGHT).assume_utc());
    }
    // Date-times with optional seconds, fraction and zone, `T` or space between.
    let normalized = s.replacen(' ', "T", 1);
    let (body, offset) = split_zone(&normalized)?;
    let formats = [
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond]"),
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]"),
        format_description!("[year]-[month]-[day]T[hour]:[minute]"),
    ];
    formats
        .iter()
        .find_map(|f| PrimitiveDateTime::parse(body, f).ok())
        .and_then(|t| in_utc(t.assume_offset(offset)))
}

/// The instant in UTC when its year there is one ISO 8601 writes with four digits. An offset
/// can carry a date over either end (9999-12-31T23:00-05:00 is in the year 10000 in UTC),
/// which `time` cannot even hold: such a date is refused, not a panic, and every stored
/// instant renders as the API's timestamps do.
fn in_utc(t: OffsetDateTime) -> Option<OffsetDateTime> {
    t.checked_to_offset(UtcOffset::UTC).filter(|t| (0..=9999).contains(&t.year()))
}

/// Splits a trailing `Z`, `+hh:mm`, `+hhmm` or `+hh` zone from an ISO date-time.
fn split_zone(s: &str) -> Option<(&str, UtcOffset)> {
    if let Some(body) = s.strip_suffix(['Z', 'z']) {
        return Some((body, UtcOffset::UTC));
    }
    let time_start = s.find('T')?;
    match s[time_start..].rfind(['+', '-']) {
        None => Some((s, UtcOffset::UTC)),
        Some(rel) => {
            let at = time_start + rel;
            let zone = s[at + 1..].replace(':', "");
            if zone.len() != 2 && zone.len() != 4 || !zone.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let hours: i8 = zone[..2].parse().ok()?;
            let minutes: i8 = if zone.len() == 4 { zone[2..].parse().ok()? } else { 0 };
            let sign = if s.as_bytes()[at] == b'-' { -1 } else { 1 };
            let offset = UtcOffset::from_hms(sign * hours, sign * minutes, 0).ok()?;
            Some((&s[..at], offset))
        }
    }
}

fn looks_like_iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 8 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-'
}

/// "Jan 5 2024 10:00" -> "Jan 5, 2024 10:00"; None when the shape does not fit.
fn comma_after_day(s: &str) -> Option<String> {
    let words: Vec<&str> = s.split_whitespace().collect();
    if words.len() < 3
        || !words[0].chars().all(|c| c.is_ascii_alphabetic())
        || !words[1].chars().all(|c| c.is_ascii_digit())
        || words[2].len() != 4
        || !words[2].chars().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let mut out = format!("{} {}, {}", words[0], words[1], words[2]);
    for w in &words[3..] {
        out.push(' ');
        out.push_str(w);
    }
    Some(out)
}

fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    /// Sunday 2026-11-22 10:00 UTC, as in the crate notes.
    const NOW: OffsetDateTime = datetime!(2026-11-22 10:00:00 UTC);

    fn at(s: &str) -> String {
        format_ms(parse_date_string_at(s, NOW).unwrap_or_else(|e| panic!("{s}: {e}")))
    }

    #[test]
    fn iso_forms_parse_to_utc() {
        let cases = [
            ("2024-03-05", "2024-03-05T00:00:00.000Z"),
            ("2024-03-05T14:07:09Z", "2024-03-05T14:07:09.000Z"),
            ("2024-03-05T14:07:09.12Z", "2024-03-05T14:07:09.120Z"),
            ("2024-03-05T14:07:09+02:00", "2024-03-05T12:07:09.000Z"),
            ("2024-03-05T14:07:09.123+05:30", "2024-03-05T08:37:09.123Z"),
            ("2024-03-05T14:07:09-0500", "2024-03-05T19:07:09.000Z"),
            ("2024-03-05T14:07", "2024-03-05T14:07:00.000Z"),
            ("2024-03-05T14:07:09", "2024-03-05T14:07:09.000Z"),
            ("2024-03-05 14:07:09", "2024-03-05T14:07:09.000Z"),
            ("2024-03-05T14:07+01", "2024-03-05T13:07:00.000Z"),
        ];
        for (input, want) in cases {
            assert_eq!(at(input), want, "input {input}");
        }
    }

    #[test]
    fn natural_language_is_read_against_now() {
        let cases = [
            ("now", "2026-11-22T10:00:00.000Z"),
            ("today", "2026-11-22T10:00:00.000Z"),
            ("yesterday", "2026-11-21T10:00:00.000Z"),
            ("3 days ago", "2026-11-19T10:00:00.000Z"),
            ("last monday", "2026-11-16T00:00:00.000Z"),
            ("March 5", "2026-03-05T00:00:00.000Z"),
            ("5 March 2024 10:00", "2024-03-05T10:00:00.000Z"),
            ("Jan 5 2024 10:00", "2024-01-05T10:00:00.000Z"),
            ("Jan 5, 2024", "2024-01-05T00:00:00.000Z"),
        ];
        for (input, want) in cases {
            assert_eq!(at(input), want, "input {input}");
        }
    }

    #[test]
    fn garbage_is_refused_with_a_hint() {
        let cases = [
            "",
            "   ",
            "not a date",
            "2024-13-45",
            "2024-03-05T25:00Z",
            "12abc",
            "0.5",
            "5",
            "2024",
            "10:00",
        ];
        for input in cases {
            let err = parse_date_string_at(input, NOW).expect_err(input);
            assert!(!err.is_empty());
        }
    }

    #[test]
    fn an_offset_that_carries_a_date_out_of_the_years_0000_to_9999_in_utc_is_refused_not_a_panic() {
        let past_the_ends = [
            "9999-12-31T23:59:59-23:59",
            "9999-12-31T23:59-05",
            "9999-12-31T20:00:00.5-05:00",
            "0000-01-01T00:00:00+01:00",
        ];
        for input in past_the_ends {
            let err = parse_date_string_at(input, NOW).expect_err(input);
            assert!(err.contains("9999"), "{input}: {err}");
        }
        assert_eq!(at("9999-12-31T23:59:59Z"), "9999-12-31T23:59:59.000Z");
        assert_eq!(at("0000-01-01T00:00:00-01:00"), "0000-01-01T01:00:00.000Z");
        assert!(parse_date_string_at("9000 years ago", NOW).is_err(), "words, too, stay in those years");
    }

    #[test]
    fn timestamps_render_with_milliseconds() {
        assert_eq!(format_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_ms(1_709_647_629_120), "2024-03-05T14:07:09.120Z");
        assert_eq!(serde_json::to_string(&Timestamp(1)).unwrap(), "\"1970-01-01T00:00:00.001Z\"");
    }
}
