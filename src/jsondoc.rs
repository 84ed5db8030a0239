//! A small JSON writer for the documents orders and shipments are served from. Rendering by
//! hand keeps decimals as two-digit numbers (`12.50`) and costs no intermediate values, which
//! matters when a million orders are seeded.

use std::fmt::Write;

use crate::{dates, money};

/// Appends `s` as a JSON string literal.
pub fn write_str(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Appends an integer, or null.
pub fn write_int(out: &mut String, value: Option<i64>) {
    match value {
        Some(n) => {
            let _ = write!(out, "{n}");
        }
        None => out.push_str("null"),
    }
}

/// Appends a stored timestamp as ISO 8601 UTC with milliseconds, or null.
pub fn write_timestamp(out: &mut String, ms: Option<i64>) {
    match ms {
        Some(ms) => {
            out.push('"');
            out.push_str(&dates::format_ms(ms));
            out.push('"');
        }
        None => out.push_str("null"),
    }
}

/// Writes one JSON object into a buffer, key by key. Keys are literals of our own code.
pub struct Obj<'a> {
    out: &'a mut String,
    first: bool,
}

impl<'a> Obj<'a> {
    pub fn new(out: &'a mut String) -> Self {
        out.push('{');
        Obj { out, first: true }
    }

    fn key(&mut self, key: &str) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        self.out.push('"');
        self.out.push_str(key);
        self.out.push_str("\":");
    }

    pub fn null(&mut self, key: &str) {
        self.key(key);
        self.out.push_str("null");
    }

    pub fn str(&mut self, key: &str, value: Option<&str>) {
        self.key(key);
        match value {
            Some(s) => write_str(self.out, s),
            None => self.out.push_str("null"),
        }
    }

    pub fn int(&mut self, key: &str, value: Option<i64>) {
        self.key(key);
        write_int(self.out, value);
    }

    pub fn bool(&mut self, key: &str, value: Option<bool>) {
        self.key(key);
        self.out.push_str(match value {
            Some(true) => "true",
            Some(false) => "false",
            None => "null",
        });
    }

    /// A decimal as a JSON number with two fractional digits.
    pub fn money(&mut self, key: &str, hundredths: Option<i64>) {
        self.key(key);
        match hundredths {
            Some(h) => money::write(self.out, h),
            None => self.out.push_str("null"),
        }
    }

    /// A decimal as text with two fractional digits (`"1.25"`).
    pub fn money_text(&mut self, key: &str, hundredths: i64) {
        self.key(key);
        self.out.push('"');
        money::write(self.out, hundredths);
        self.out.push('"');
    }

    /// A stored timestamp as ISO 8601 UTC with milliseconds.
    pub fn timestamp(&mut self, key: &str, ms: Option<i64>) {
        self.key(key);
        write_timestamp(self.out, ms);
    }

    /// Already-rendered JSON (a nested document).
    pub fn raw(&mut self, key: &str, json: &str) {
        self.key(key);
        self.out.push_str(json);
    }

    /// Starts a value by hand: the caller appends exactly one JSON value.
    pub fn value(&mut self, key: &str) -> &mut String {
        self.key(key);
        self.out
    }

    pub fn end(self) {
        self.out.push('}');
    }
}

/// Appends an object of string keys to string-or-null values, keys in the given order.
pub fn write_string_map<'a>(out: &mut String, entries: impl IntoIterator<Item = (&'a str, Option<&'a str>)>) {
    out.push('{');
    for (i, (key, value)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_str(out, key);
        out.push(':');
        match value {
            Some(v) => write_str(out, v),
            None => out.push_str("null"),
        }
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_valid_json_with_escapes_and_two_digit_money() {
        let mut out = String::new();
        let mut o = Obj::new(&mut out);
        o.str("s", Some("a\"b\\c\nd\u{1}é"));
        o.str("n", None);
        o.int("i", Some(-3));
        o.bool("b", Some(true));
        o.money("m", Some(1250));
        o.money_text("w", 125);
        o.timestamp("t", Some(1_709_647_629_120));
        o.raw("r", "[1,2]");
        o.end();
        assert!(out.contains("\"m\":12.50"), "{out}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["s"], "a\"b\\c\nd\u{1}é");
        assert_eq!(v["w"], "1.25");
        assert_eq!(v["t"], "2024-03-05T14:07:09.120Z");
        assert_eq!(v["r"][1], 2);
        assert!(v["n"].is_null());
    }
}
