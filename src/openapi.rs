//! `GET /openapi.json`: the OpenAPI 3.1 description of every route, kept true by
//! `tests/api/openapi.rs` (every mounted route is described; real answers validate against
//! the described schemas).

use rocket::get;
use rocket::http::ContentType;

const DOCUMENT: &str = include_str!("openapi.json");

#[get("/openapi.json")]
pub fn document() -> (ContentType, &'static str) {
    (ContentType::JSON, DOCUMENT)
}
