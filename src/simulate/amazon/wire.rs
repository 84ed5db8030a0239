//! What every answer of the simulated SP-API is made of: Amazon's error body and its
//! date-times.

use serde_json::json;

use crate::simulate::http::Response;

/// Amazon's error body.
pub(super) fn error(status: u16, code: &str, message: &str, details: &str) -> Response {
    Response::json(status, &json!({"errors": [{"code": code, "message": message, "details": details}]}))
}

/// 400 `InvalidInput`.
pub(super) fn bad_request(message: &str) -> Response {
    error(400, "InvalidInput", message, "")
}

/// An ISO 8601 date-time of Amazon's answers, from simulator seconds.
pub(super) fn iso(secs: i64) -> String {
    let at = time::OffsetDateTime::from_unix_timestamp(secs).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let f = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    at.format(&f).unwrap_or_default()
}

/// Seconds of an ISO 8601 date-time in a query or a body.
pub(super) fn parse_iso(text: &str) -> Option<i64> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .ok()
        .map(|t| t.unix_timestamp())
}
