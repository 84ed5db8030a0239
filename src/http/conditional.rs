//! Conditional requests (RFC 9110 §13): every successful `GET` (a listing page, an order, a
//! shipment, a product, any document) carries a weak `ETag`, and a request whose
//! `If-None-Match` still names it gets `304 Not Modified` with no body, so a client that polls
//! downloads a page again only when something on it changed.
//!
//! The tag is a digest of exactly what the answer shows (its content type and body), so it
//! changes whenever anything on the page changes and never otherwise, and it reveals nothing
//! but that page: a tag tied to the database's write generation would change with every
//! other customer's writes, telling a customer user that someone else wrote. For the same
//! reason there is no `Last-Modified`: the records carry no modification time of their own,
//! and the last write anywhere is not the caller's to know. `If-Modified-Since` is therefore
//! never a reason for a 304 (RFC 9110 §13.1.3: it is ignored without a `Last-Modified`).
//!
//! Bodies the handlers render themselves (`JsonText`, `Tagged`: listing pages, orders) are
//! tagged where they are made, once, and go to hyper in one piece; the fairing tags the rest
//! (serde bodies) and answers 304 for both.

use std::io::Cursor;
use std::sync::Arc;

use bytes::Bytes;
use rocket::fairing::{Fairing, Info, Kind};
use rocket::http::{ContentType, Header, Method, Status};
use rocket::response::{self, Responder};
use rocket::{Request, Response};

/// What `Cache-Control` says of every tagged answer: clients may keep it, and must ask again
/// (with the tag) before using it.
const CACHE_CONTROL: &str = "private, no-cache";

/// The largest piece of a response body handed to the server at once.
const MAX_CHUNK: usize = 1 << 20;

/// A JSON body already rendered as text.
pub struct JsonText(pub String);

impl<'r> Responder<'r, 'static> for JsonText {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        Tagged::json(self.0).respond_to(req)
    }
}

/// A rendered JSON body and its tag. Cloning shares the bytes (the page cache keeps one).
#[derive(Clone, Debug)]
pub struct Tagged {
    body: Bytes,
    tag: Arc<str>,
}

impl Tagged {
    pub fn json(text: String) -> Tagged {
        Tagged::json_bytes(text.into_bytes())
    }

    /// JSON written as bytes (a listing page, assembled from stored documents).
    pub fn json_bytes(body: Vec<u8>) -> Tagged {
        let body = Bytes::from(body);
        let tag = etag(JSON, &body).into();
        Tagged { body, tag }
    }

    /// The bytes this answer holds, for the page cache's budget.
    pub fn len(&self) -> usize {
        self.body.len()
    }

    pub fn is_empty(&self) -> bool {
        self.body.is_empty()
    }
}

const JSON: &str = "application/json";

impl<'r> Responder<'r, 'static> for Tagged {
    fn respond_to(self, _: &'r Request<'_>) -> response::Result<'static> {
        // Rocket hands a body to hyper in 4 KiB chunks by default: a page of orders would go
        // out in ~75 writes. The bytes are already in memory, so send them in as few as possible.
        let len = self.body.len();
        Response::build()
            .header(ContentType::JSON)
            .header(Header::new("ETag", self.tag.to_string()))
            .header(Header::new("Cache-Control", CACHE_CONTROL))
            .sized_body(len, Cursor::new(self.body))
            .max_chunk_size(len.clamp(4096, MAX_CHUNK))
            .ok()
    }
}

/// The fairing that tags the bodies no handler tagged and answers 304.
pub struct Conditional;

#[rocket::async_trait]
impl Fairing for Conditional {
    fn info(&self) -> Info {
        Info { name: "conditional GET (ETag, 304)", kind: Kind::Response }
    }

    async fn on_response<'r>(&self, request: &'r Request<'_>, response: &mut Response<'r>) {
        if !matches!(request.method(), Method::Get | Method::Head) || response.status() != Status::Ok {
            return;
        }
        let tag = match response.headers().get_one("ETag") {
            Some(tag) => tag.to_string(),
            None => {
                let Ok(body) = response.body_mut().to_bytes().await else {
                    // The body could not be read back (a failed stream): answer it as it was, untagged.
                    return;
                };
                let content_type = response.headers().get_one("Content-Type").unwrap_or_default().to_string();
                let tag = etag(&content_type, &body);
                response.set_header(Header::new("ETag", tag.clone()));
                response.set_header(Header::new("Cache-Control", CACHE_CONTROL));
                let len = body.len();
                response.set_sized_body(len, Cursor::new(body));
                response.set_max_chunk_size(len.clamp(4096, MAX_CHUNK));
                tag
            }
        };
        if request.headers().get("If-None-Match").any(|listed| names(listed, &tag)) {
            response.set_status(Status::NotModified);
            response.remove_header("Content-Type");
            response.set_sized_body(0, Cursor::new(Vec::new()));
        }
    }
}

/// A weak tag (`W/"…"`): the same JSON may be written differently by another release. XXH3
/// is stable across releases and machines, so a tag outlives a restart.
///
/// The body is digested in one call, seeded with the content type's digest: the streaming
/// hasher cost twice as much on a 300 KiB page (7% of a session page's CPU in perf).
fn etag(content_type: &str, body: &[u8]) -> String {
    use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};
    format!("W/\"{:016x}\"", xxh3_64_with_seed(body, xxh3_64(content_type.as_bytes())))
}

/// Whether an `If-None-Match` value names `tag`: `*`, or a list of tags compared weakly
/// (RFC 9110 §8.8.3.2: `W/"x"` and `"x"` match).
fn names(if_none_match: &str, tag: &str) -> bool {
    let opaque = |t: &str| t.trim().trim_start_matches("W/").to_string();
    let ours = opaque(tag);
    if_none_match.split(',').any(|listed| listed.trim() == "*" || opaque(listed) == ours)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_follow_the_content_and_nothing_else() {
        let a = etag("application/json", br#"{"id":1}"#);
        assert_eq!(a, etag("application/json", br#"{"id":1}"#));
        assert_ne!(a, etag("application/json", br#"{"id":2}"#));
        assert_ne!(a, etag("text/html", br#"{"id":1}"#));
        // Moving a byte from the content type to the body changes the tag.
        assert_ne!(etag("application/jso", br#"n{"id":1}"#), a);
        assert!(a.starts_with("W/\"") && a.ends_with('"'));
    }

    #[test]
    fn a_rendered_body_is_tagged_as_the_fairing_would_tag_it() {
        let text = r#"{"order":{"id":7}}"#;
        assert_eq!(&*Tagged::json(text.to_string()).tag, etag(JSON, text.as_bytes()));
    }

    #[test]
    fn if_none_match_compares_weakly_and_takes_lists_and_the_star() {
        let tag = "W/\"00000000000000ab\"";
        assert!(names(tag, tag));
        assert!(names("\"00000000000000ab\"", tag));
        assert!(names("W/\"x\", W/\"00000000000000ab\"", tag));
        assert!(names("*", tag));
        assert!(!names("W/\"00000000000000ac\"", tag));
        assert!(!names("", tag));
    }
}
