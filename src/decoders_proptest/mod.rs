//! Property tests that no decoder panics (issue 12): the body decoders (JSON object, form
//! fields with bracket names, typed `Fields` reads), dateStrings, decimals, the listing query
//! and its plan, the import records and their validation, and the warehouse CSV readers.
//! Each is fed arbitrary text or bytes and, to get deep into it, input built from its own
//! vocabulary. Every rejection must be a 4xx in the contract's error body (or, for decoders
//! that answer with a `String` or bad lines, a non-empty explanation).
//!
//! The case counts are small so `cargo test` stays fast; `examples/fuzz_decoders.rs` runs the
//! same decoders over a million cases each.
//!
//! `generators` makes the inputs, `checks` holds one check per decoder (shared with the
//! example), and this file runs them as property tests.

mod checks;
mod generators;

pub(crate) use checks::*;
pub(crate) use generators::*;

// The properties below are tests only; the example uses the generators and checks.
#[cfg(test)]
use proptest::collection::vec;
use proptest::prelude::*;
#[cfg(test)]
use serde_json::Value;

#[cfg(test)]
use crate::dates::{format_ms, parse_date_string_at};
#[cfg(test)]
use crate::http::body::fields_to_object;

fn config(cases: u32) -> ProptestConfig {
    // No regression files in the source tree: a failure prints its minimal input, which
    // then belongs in a plain test beside the decoder.
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

// ---------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn json_bodies_never_panic(text in prop_oneof![text(), json_like()]) {
        check_json_body(&text)?;
    }

    #[test]
    fn json_objects_decode_and_read(object in json_object()) {
        check_json_body(&Value::Object(object).to_string())?;
    }

    #[test]
    fn form_fields_with_bracket_names_never_panic(fields in form_fields()) {
        check_form(&fields)?;
    }

    #[test]
    fn date_strings_never_panic(input in date_string()) {
        check_date(&input)?;
    }

    #[test]
    fn decimals_never_panic(text in decimal_text()) {
        check_decimal(&text)?;
    }

    #[test]
    fn listing_queries_never_panic(raw in query_string(), scope in prop::option::of(any::<i64>())) {
        check_query(&raw, scope)?;
    }

    #[test]
    fn import_bodies_never_panic(text in import_text()) {
        check_import_text(&text)?;
    }

    #[test]
    fn import_bytes_never_panic(bytes in vec(any::<u8>(), 0..64)) {
        check_import_bytes(bytes)?;
    }

    #[test]
    fn import_records_never_panic(order in order_record(), shipment in shipment_record()) {
        check_order_record(order.clone())?;
        check_shipment_record(order)?;
        check_order_record(shipment.clone())?;
        check_shipment_record(shipment)?;
    }

    #[test]
    fn warehouse_csv_files_never_panic(bytes in any_warehouse_file()) {
        check_shipments_csv(&bytes)?;
        check_stock_csv(&bytes)?;
    }
}

/// A form name nested deeper than any body needs is refused, not recursed into until the
/// stack runs out.
#[test]
fn deeply_nested_form_names_are_refused_not_overflowed() {
    let name = format!("a{}", "[b]".repeat(100_000));
    let result = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || fields_to_object(&[(name, "1".to_string())]).map(drop))
        .expect("thread")
        .join()
        .expect("no stack overflow or panic");
    let e = result.expect_err("refused");
    assert_eq!(e.status().code, 400);
}

/// interim asserts that the word after an hour is lower case and under 16 letters; these
/// panicked inside it (a 500 from any dateString parameter or field).
#[test]
fn a_word_after_an_hour_is_read_or_refused_without_a_panic() {
    let at = |s: &str| parse_date_string_at(s, NOW).map(format_ms);
    assert_eq!(at("today 9 PM"), Ok("2026-11-22T21:00:00.000Z".to_string()));
    assert_eq!(at("Yesterday 10 AM"), Ok("2026-11-21T10:00:00.000Z".to_string()));
    for input in ["now 0 T", "yesterday 10 AMX", "now 5 abcdefghijklmnopq", "abcdefghijklmnopqrstuvwxyz"] {
        assert!(at(input).is_err(), "{input}: {:?}", at(input));
    }
}
