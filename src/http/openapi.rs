//! `GET /openapi.json`: the OpenAPI 3.1 description of every route, kept true by
//! `tests/api/openapi.rs` (every mounted route is described; real answers validate against
//! the described schemas) and by `.ci/schemathesis` (requests generated from the document
//! are answered as it says).
//!
//! Request bodies are described as JSON, urlencoded and multipart forms, as the API takes
//! them; a form's schema names its fields as a form sends them (`adapter[access_token]`,
//! `bundle[0][qty]`, `product_ids[]`), text, an empty value standing for null. Some client generators cannot take several body types for one operation (the
//! Python `openapi-python-client` emits code that does not import); `?bodies=json` serves
//! the same document with JSON bodies only, for them.

use std::sync::OnceLock;

use rocket::get;
use rocket::http::ContentType;

const DOCUMENT: &str = include_str!("openapi.json");

#[get("/openapi.json?<bodies>")]
pub fn document(bodies: Option<&str>) -> (ContentType, &'static str) {
    match bodies {
        Some("json") => (ContentType::JSON, json_bodies_only()),
        _ => (ContentType::JSON, DOCUMENT),
    }
}

/// The document with each request body's JSON form only.
fn json_bodies_only() -> &'static str {
    static ONLY_JSON: OnceLock<String> = OnceLock::new();
    ONLY_JSON.get_or_init(|| {
        let Ok(mut doc) = serde_json::from_str::<serde_json::Value>(DOCUMENT) else {
            return DOCUMENT.to_string();
        };
        if let Some(paths) = doc.get_mut("paths").and_then(|p| p.as_object_mut()) {
            for operation in paths.values_mut().filter_map(|p| p.as_object_mut()).flat_map(|p| p.values_mut())
            {
                if let Some(content) =
                    operation.pointer_mut("/requestBody/content").and_then(|c| c.as_object_mut())
                    && content.contains_key("application/json")
                {
                    content.retain(|kind, _| kind == "application/json");
                }
            }
        }
        doc.to_string()
    })
}
