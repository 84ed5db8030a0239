//! Decimal amounts as integer hundredths: parsed from JSON numbers or decimal text without a
//! float round trip of the result, and rendered with exactly two fractional digits.

use std::fmt::Write;

use serde_json::Value;

/// Parses a decimal with at most `int_digits` integer digits and 2 fractional digits
/// (`decimal (8.2)` has 6 integer digits) into hundredths. Accepts `12.5`, `"12.50"`, `12`.
pub fn parse(value: &Value, int_digits: u32) -> Result<i64, String> {
    let text = match value {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.trim().to_string(),
        _ => return Err("must be a decimal number".to_string()),
    };
    parse_text(&text, int_digits)
}

/// Parses decimal text (`-12.5`, `0.07`, `3`) into hundredths.
pub fn parse_text(text: &str, int_digits: u32) -> Result<i64, String> {
    let bad =
        || format!("must be a decimal number with at most {int_digits} digits before the point and 2 after");
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (int_part, frac_part) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int_part.is_empty() && frac_part.is_empty() || !digits(int_part) || !digits(frac_part) {
        return Err(bad());
    }
    if frac_part.len() > 2 {
        return Err("must have at most 2 decimal places".to_string());
    }
    let int_part = int_part.trim_start_matches('0');
    if int_part.len() > int_digits as usize {
        return Err(bad());
    }
    let whole: i64 = if int_part.is_empty() { 0 } else { int_part.parse().map_err(|_| bad())? };
    let frac: i64 = match frac_part.len() {
        0 => 0,
        1 => frac_part.parse::<i64>().map_err(|_| bad())? * 10,
        _ => frac_part.parse().map_err(|_| bad())?,
    };
    let hundredths = whole * 100 + frac;
    Ok(if negative { -hundredths } else { hundredths })
}

/// Appends hundredths as `12.50` (also the text of a decimal-text field).
pub fn write(out: &mut String, hundredths: i64) {
    let sign = if hundredths < 0 { "-" } else { "" };
    let abs = hundredths.unsigned_abs();
    let _ = write!(out, "{sign}{}.{:02}", abs / 100, abs % 100);
}

/// Hundredths as a JSON number with no trailing zeros (12.5, 3), as platforms that take a
/// number for an amount want it.
pub fn json_number(hundredths: i64) -> serde_json::Value {
    let value = rust_decimal::Decimal::new(hundredths, 2).normalize();
    serde_json::from_str(&value.to_string()).unwrap_or(serde_json::Value::Null)
}

/// Hundredths as text with two fractional digits.
pub fn format(hundredths: i64) -> String {
    let mut out = String::with_capacity(12);
    write(&mut out, hundredths);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_numbers_and_text_to_hundredths() {
        let cases = [
            (json!(12.5), 1250),
            (json!("12.50"), 1250),
            (json!(12), 1200),
            (json!("0.07"), 7),
            (json!(".5"), 50),
            (json!("-3.10"), -310),
            (json!(999999.99), 99_999_999),
            (json!("000123.4"), 12_340),
        ];
        for (input, want) in cases {
            assert_eq!(parse(&input, 6), Ok(want), "input {input}");
        }
    }

    #[test]
    fn refuses_extra_digits_and_garbage() {
        for input in [
            json!(1.234),
            json!("1000000.00"),
            json!("abc"),
            json!(""),
            json!("."),
            json!(true),
            json!("1e3"),
        ] {
            assert!(parse(&input, 6).is_err(), "input {input}");
        }
        assert_eq!(parse(&json!("99999999.99"), 8), Ok(9_999_999_999));
        assert!(parse(&json!("100000000"), 8).is_err());
    }

    #[test]
    fn renders_exactly_two_digits() {
        assert_eq!(format(1250), "12.50");
        assert_eq!(format(0), "0.00");
        assert_eq!(format(7), "0.07");
        assert_eq!(format(-310), "-3.10");
        assert_eq!(format(-5), "-0.05");
    }
}
